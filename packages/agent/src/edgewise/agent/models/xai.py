"""xAI: `XaiModel`, Grok over xAI's REST Responses API (`POST https://api.x.ai/v1/responses`), streamed or not.

pydantic-ai's `XaiModel` speaks xAI's gRPC API through the `xai-sdk` package; Edgewise has no gRPC, so this one
speaks the Responses API xAI serves over HTTP (the wire format of `OpenAIResponsesModel`), with the same name, the
same settings (`XaiModelSettings`, mapped to the REST request's fields) and the same server-side tools: web search,
X search, code execution, MCP servers and collections search (`FileSearchTool`).
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal, cast

from ..native_tools import (
    AbstractNativeTool,
    CodeExecutionTool,
    FileSearchTool,
    MCPServerTool,
    WebSearchTool,
    XSearchTool,
)
from ..profiles import ModelProfileSpec
from ..profiles.grok import GrokModelProfile, GrokReasoningEffort
from ..providers import Provider
from ..settings import ModelSettings, ThinkingEffort
from ._request_parameters import ModelRequestParameters
from .openai import OpenAIResponsesModel

__all__ = ('XaiModel', 'XaiModelName', 'XaiModelSettings')

XaiModelName = (
    str
    | Literal[
        'grok-4.7',
        'grok-4.3',
        'grok-3',
        'grok-3-mini',
        'grok-4-1-fast-reasoning',
        'grok-4-1-fast-non-reasoning',
        'grok-4.20-multi-agent',
        'grok-build-0.1',
    ]
)
"""The name of an xAI model: any string, the known ones listed for completion."""


class XaiModelSettings(ModelSettings, total=False):
    """Settings of an xAI request: the common ones and xAI's own (`xai_`-prefixed), each sent as a field of the
    Responses request."""

    xai_logprobs: bool
    """Return the log probabilities of the output tokens (`logprobs`)."""
    xai_top_logprobs: int
    """How many most likely tokens to return at each position, 0 to 20 (`top_logprobs`)."""
    xai_user: str
    """An id of the end user, for xAI's abuse monitoring (`user`)."""
    xai_store_messages: bool
    """Whether xAI stores the conversation, to continue it by response id (`store`)."""
    xai_previous_response_id: str
    """The id of a stored response this request continues (`previous_response_id`)."""
    xai_include_encrypted_content: bool
    """Return the reasoning encrypted, to send it back (`include: ['reasoning.encrypted_content']`)."""
    xai_include_code_execution_output: bool
    """Return the outputs of code execution (`include: ['code_interpreter_call.outputs']`)."""
    xai_include_web_search_output: bool
    """Return the sources of web searches (`include: ['web_search_call.action.sources']`)."""
    xai_include_inline_citations: bool
    """Put citations inline in the text (`include: ['inline_citations']`)."""
    xai_include_mcp_output: bool
    """Return the results of MCP tool calls (`include: ['mcp_call.outputs']`)."""
    xai_include_x_search_output: bool
    """Return the results of X searches (`include: ['x_search_call.outputs']`)."""
    xai_include_collections_search_output: bool
    """Return the results of collections searches (`include: ['collections_search_call.outputs']`)."""
    xai_include_attachment_search_output: bool
    """Return the results of attachment searches (`include: ['attachment_search_call.outputs']`)."""
    xai_reasoning_effort: GrokReasoningEffort
    """How hard a Grok reasoning model thinks (`reasoning.effort`); without it, the unified `thinking` setting."""
    xai_max_turns: int
    """The most turns xAI's server-side tool loop may take (`max_turns`); it does not bound your own tools."""
    xai_agent_count: int
    """The number of agents of a multi-agent model such as `grok-4.20-multi-agent` (`agent_count`; 4 or 16)."""


_RENAMED = {
    'xai_user': 'openai_user',
    'xai_store_messages': 'openai_store',
    'xai_previous_response_id': 'openai_previous_response_id',
    'xai_reasoning_effort': 'openai_reasoning_effort',
}
_FIELDS = {'xai_logprobs': 'logprobs', 'xai_top_logprobs': 'top_logprobs', 'xai_max_turns': 'max_turns',
           'xai_agent_count': 'agent_count'}  # fmt: skip
_INCLUDES = {
    'xai_include_encrypted_content': 'reasoning.encrypted_content',
    'xai_include_code_execution_output': 'code_interpreter_call.outputs',
    'xai_include_web_search_output': 'web_search_call.action.sources',
    'xai_include_inline_citations': 'inline_citations',
    'xai_include_mcp_output': 'mcp_call.outputs',
    'xai_include_x_search_output': 'x_search_call.outputs',
    'xai_include_collections_search_output': 'collections_search_call.outputs',
    'xai_include_attachment_search_output': 'attachment_search_call.outputs',
}


def reasoning_effort(thinking: bool | ThinkingEffort, profile: GrokModelProfile) -> GrokReasoningEffort | None:
    """The `reasoning_effort` a Grok model takes for a unified thinking level (`None`: send none)."""
    efforts = profile.get('grok_reasoning_efforts', frozenset())
    if not efforts:
        return None
    if thinking is False:
        if 'none' in efforts:
            return 'none'
        thinking = 'minimal'  # a model that cannot stop reasoning reasons as little as it can
    if thinking is True:
        thinking = 'medium'
    if thinking in ('minimal', 'low'):
        return 'low'
    if thinking == 'medium':
        return 'medium' if 'medium' in efforts else 'high'
    return 'high'


class XaiModel(OpenAIResponsesModel):
    """A Grok model on xAI's Responses API (`POST {base_url}/responses`), streamed or not.

    `XaiModel('grok-4.3')` reads `XAI_API_KEY`.
    """

    _default_provider = 'xai'
    supported_tool_deferral_modes = frozenset()

    def __init__(
        self,
        model_name: XaiModelName,
        *,
        provider: Literal['xai'] | Provider[Any] = 'xai',
        profile: ModelProfileSpec | None = None,
        settings: ModelSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The model's name (`'grok-4.3'`).
            provider: The provider or its name (`'xai'`, or an `XaiProvider` of your own).
            profile: The model's profile (or a function of the name giving it); the provider's by default.
            settings: Default settings of this model's requests (`XaiModelSettings`).
        """
        super().__init__(model_name, provider=provider, profile=profile, settings=settings)

    @classmethod
    def supported_native_tools(cls) -> frozenset[type[AbstractNativeTool]]:
        """Web search, X search, code execution, MCP servers and collections search (xAI's server-side tools)."""
        return frozenset({WebSearchTool, CodeExecutionTool, MCPServerTool, XSearchTool, FileSearchTool})

    @property
    def system(self) -> str:
        """`'xai'`, whichever provider the requests go through."""
        return 'xai'

    def _body(
        self, messages: list[Any], settings: Any, params: ModelRequestParameters, *, stream: bool
    ) -> dict[str, Any]:
        merged: dict[str, Any] = {_RENAMED.get(k, k): v for k, v in cast(Mapping[str, Any], settings).items()}
        thinking = params.thinking
        if thinking is None and cast(Mapping[str, Any], settings).get('thinking') is False:
            thinking = False  # dropped for a model that always reasons, which then reasons as little as it can
        if 'openai_reasoning_effort' not in merged and thinking is not None:
            effort = reasoning_effort(thinking, cast(GrokModelProfile, self.profile))
            if effort is not None:
                merged['openai_reasoning_effort'] = effort
        params = dataclasses.replace(params, thinking=None)
        body = super()._body(messages, merged, params, stream=stream)
        for key, name in _FIELDS.items():
            if key in merged:
                body[name] = merged[key]
        include = [value for key, value in _INCLUDES.items() if merged.get(key)]
        if include:
            body['include'] = [*body.get('include', ()), *(i for i in include if i not in body.get('include', ()))]
        x_searches = [_x_search(tool) for tool in params.native_tools if isinstance(tool, XSearchTool)]
        if x_searches:
            body['tools'] = [*body.get('tools', ()), *x_searches]
            body.setdefault('tool_choice', 'auto')
        return body


def _x_search(tool: XSearchTool) -> dict[str, Any]:
    """xAI's `x_search` tool of an `XSearchTool`."""
    search: dict[str, Any] = {'type': 'x_search'}
    if tool.allowed_x_handles:
        search['allowed_x_handles'] = list(tool.allowed_x_handles)
    if tool.excluded_x_handles:
        search['excluded_x_handles'] = list(tool.excluded_x_handles)
    if tool.from_date is not None:
        search['from_date'] = tool.from_date.date().isoformat()
    if tool.to_date is not None:
        search['to_date'] = tool.to_date.date().isoformat()
    if tool.enable_image_understanding:
        search['enable_image_understanding'] = True
    if tool.enable_video_understanding:
        search['enable_video_understanding'] = True
    return search
