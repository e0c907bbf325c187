"""`MCPSamplingModel`: inside an MCP server, a model that asks the connected client's model (MCP sampling).

An agent running in an MCP server's tool can use the client's model instead of one of its own: each request is
sent back to the client as `sampling/createMessage` over the server's session (the MCP SDK's `ServerSession`,
e.g. `ctx.session` of a FastMCP tool), and the client's answer is the model's response. Needs the MCP Python SDK
(the `mcp` extra).
"""

from __future__ import annotations as _annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import KW_ONLY, dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

from ..exceptions import UnexpectedModelBehavior
from ..messages import (
    BinaryContent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    UserPromptPart,
)
from ..settings import ModelSettings
from ._model import Model, RunContext
from ._request_parameters import ModelRequestParameters
from ._streamed_response import StreamedResponse

try:
    from mcp import types as mcp_types
except ImportError as _error:  # pragma: no cover - the MCP tests need the SDK
    # A ModuleNotFoundError naming `mcp`, so that tools (and the wheel check) see which distribution is missing.
    raise ModuleNotFoundError(
        'edgewise.agent.models.mcp_sampling needs the MCP Python SDK: install the `mcp` extra, '
        '`pip install "edgewise-agent[mcp]"`.',
        name='mcp',
    ) from _error

if TYPE_CHECKING:
    from mcp.server.session import ServerSession

__all__ = ('MCPSamplingModel', 'MCPSamplingModelSettings')


class MCPSamplingModelSettings(ModelSettings, total=False):
    """Settings of a request through MCP sampling (prefixed `mcp_`, so they merge with other models' settings)."""

    mcp_model_preferences: mcp_types.ModelPreferences
    """Which model the client should pick (hints, and the weight of cost, speed and intelligence)."""


_SamplingContent = mcp_types.TextContent | mcp_types.ImageContent


@dataclass
class MCPSamplingModel(Model):
    """A model that sends each request to the MCP client connected to `session`, as `sampling/createMessage`.

    The client picks the model (see `MCPSamplingModelSettings.mcp_model_preferences`) and may show the request to
    its user first. Instructions and system prompts become the request's one system prompt; user prompts (text and
    images) and earlier responses (their text) become its messages. Streaming is not supported.
    """

    session: ServerSession
    """The MCP server's session with the client (the SDK's `ServerSession`) that sampling requests go through."""

    _: KW_ONLY

    default_max_tokens: int = 16_384
    """The `maxTokens` of a request whose settings set no `max_tokens` (MCP sampling requires one)."""

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        """The client's answer to `messages`.

        Raises:
            UnexpectedModelBehavior: the client answered in another role than `assistant`, or with content other
                than text (or a history response holds a part other than text or thinking).
            NotImplementedError: a user prompt holds content other than text or an image.
        """
        system_prompt, sampling_messages = _sampling_request(messages)
        prepared, _ = self.prepare_request(model_settings, model_request_parameters)
        settings = cast(MCPSamplingModelSettings, prepared or {})
        result = await self.session.create_message(
            sampling_messages,
            max_tokens=settings.get('max_tokens', self.default_max_tokens),
            system_prompt=system_prompt,
            temperature=settings.get('temperature'),
            model_preferences=settings.get('mcp_model_preferences'),
            stop_sequences=settings.get('stop_sequences'),
        )
        # Edgewise's own MCP client answers with text as the assistant; other clients may not.
        if result.role != 'assistant':  # pragma: no cover
            raise UnexpectedModelBehavior(
                f'Unexpected result from MCP sampling, expected "assistant" role, got {result.role}.'
            )
        content = result.content
        if not isinstance(content, mcp_types.TextContent):  # pragma: no cover
            raise UnexpectedModelBehavior(
                f'Unexpected result from MCP sampling: {type(content).__name__}, expected text content.'
            )
        return ModelResponse(parts=[TextPart(content=content.text)], model_name=result.model)

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        """Not supported: MCP sampling answers with whole messages.

        Raises:
            NotImplementedError: always.
        """
        raise NotImplementedError('MCP Sampling does not support streaming')
        yield  # pragma: no cover - makes this a generator

    @property
    def provider(self) -> None:
        """No provider: the client's model answers."""
        return None

    @property
    def model_name(self) -> str:
        """`'mcp-sampling'` (the client names the model it used in each response's `model_name`)."""
        return 'mcp-sampling'

    @property
    def system(self) -> str:
        """`'MCP'`."""
        return 'MCP'


def _sampling_request(messages: list[ModelMessage]) -> tuple[str, list[mcp_types.SamplingMessage]]:
    """The system prompt (instructions and system prompt parts, joined) and the sampling messages of a history."""
    system_prompt: list[str] = []
    sampling: list[mcp_types.SamplingMessage] = []

    def add(role: Literal['user', 'assistant'], content: _SamplingContent) -> None:
        sampling.append(mcp_types.SamplingMessage(role=role, content=content))

    for message in messages:
        if isinstance(message, ModelResponse):
            add('assistant', mcp_types.TextContent(type='text', text=_response_text(message)))
            continue
        assert isinstance(message, ModelRequest)
        if message.instructions is not None:
            system_prompt.append(message.instructions)
        for part in message.parts:
            if isinstance(part, SystemPromptPart):
                system_prompt.append(part.content)
            elif isinstance(part, UserPromptPart):
                for chunk in [part.content] if isinstance(part.content, str) else part.content:
                    add('user', _user_content(chunk))
    return ''.join(system_prompt), sampling


def _user_content(chunk: object) -> _SamplingContent:
    if isinstance(chunk, str):
        return mcp_types.TextContent(type='text', text=chunk)
    if isinstance(chunk, BinaryContent) and chunk.is_image:
        return mcp_types.ImageContent(type='image', data=chunk.base64, mimeType=chunk.media_type)
    raise NotImplementedError(
        f'MCP sampling takes text and images from the user, not {type(chunk).__name__}: send it another way '
        '(e.g. as text), or use a model of your own.'
    )


def _response_text(response: ModelResponse) -> str:
    texts: list[str] = []
    for part in response.parts:
        if isinstance(part, TextPart):
            texts.append(part.content)
        elif not isinstance(part, ThinkingPart):
            raise UnexpectedModelBehavior(f'Unexpected part type: {type(part).__name__}, expected TextPart')
    return ''.join(texts)
