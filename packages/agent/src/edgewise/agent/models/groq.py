"""Groq's Chat Completions API: `GroqModel`, with Groq's reasoning formats and the searches of its `compound-` models.

Groq speaks the Chat Completions wire format (`OpenAIChatModel` does the common part) over plain httpx; no Groq SDK
is needed. What differs: the unified `thinking` setting becomes `reasoning_format` (not `reasoning_effort`), the
searches a `compound-` model runs itself come back in `executed_tools` and are read as `NativeToolCallPart` /
`NativeToolReturnPart` pairs (tool name `'web_search'`), only common and `groq_` settings are sent, and a tool
call Groq refuses for its arguments (`tool_use_failed`) comes back as a response for the agent to retry.
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal, cast

import pydantic_core

from ..exceptions import ModelHTTPError
from ..messages import (
    ModelMessage,
    ModelResponse,
    ModelResponsePart,
    ModelResponseStreamEvent,
    NativeToolCallPart,
    NativeToolReturnPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    generate_tool_call_id,
)
from ..native_tools import AbstractNativeTool, WebSearchTool
from ..profiles import ModelProfileSpec
from ..profiles.groq import GroqModelProfile
from ..providers import Provider
from ..settings import ModelSettings
from . import _http
from ._provider_model import ProviderModel
from ._request_parameters import ModelRequestParameters
from ._sse import ServerSentEvent
from ._streamed_response import StreamedResponse
from .openai import OpenAIChatModel, OpenAIStreamedResponse

__all__ = ('GroqModel', 'GroqModelName', 'GroqModelSettings', 'GroqStreamedResponse')

GroqModelName = str
"""The name of a model on Groq (`'llama-3.3-70b-versatile'`, `'qwen/qwen3-32b'`, `'compound-beta'`, ...)."""


class GroqModelSettings(ModelSettings, total=False):
    """Settings of a Groq request: the common ones, and Groq's own (all `groq_`-prefixed)."""

    groq_reasoning_format: Literal['hidden', 'raw', 'parsed']
    """How a reasoning model's reasoning comes back: left out (`'hidden'`), in `<think>` tags in the content
    (`'raw'`), or in a field of its own (`'parsed'`); without it, the unified `thinking` setting decides."""


class GroqModel(OpenAIChatModel):
    """A model on Groq (`POST {base_url}/chat/completions`), streamed or not.

    `GroqModel('llama-3.3-70b-versatile')` reads `GROQ_API_KEY`. A `WebSearchTool` is accepted by the `compound-`
    models, which search the web whenever they see fit (nothing is added to the request for it).
    """

    _default_provider = 'groq'

    def __init__(
        self,
        model_name: GroqModelName,
        *,
        provider: str | Provider[Any] = 'groq',
        profile: ModelProfileSpec | None = None,
        settings: ModelSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The model's name on Groq.
            provider: The provider or its name (`'groq'`, or a `GroqProvider` of your own).
            profile: The model's profile (or a function of the name giving it); the provider's by default.
            settings: Default settings of this model's requests (`GroqModelSettings`).
        """
        super().__init__(model_name, provider=provider, profile=profile, settings=settings)

    @classmethod
    def supported_native_tools(cls) -> frozenset[type[AbstractNativeTool]]:
        """Web search, on the models that always have it (`compound-`)."""
        return frozenset[type[AbstractNativeTool]]({WebSearchTool})

    def _native_tools(self) -> frozenset[type[AbstractNativeTool]]:
        if not cast(GroqModelProfile, self.profile).get('groq_always_has_web_search_builtin_tool', False):
            return frozenset()
        return ProviderModel._native_tools(self)

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        """Send the conversation and return the model's response.

        A tool call Groq refused because its arguments did not match the tool's schema (`tool_use_failed`) comes
        back as that call (or as the text the model wrote), with `finish_reason='error'`, so that the agent can
        ask the model to try again.

        Raises:
            ModelHTTPError: the API answered with a status of 400 or more (after retries), for another reason.
            ModelAPIError: the API could not be reached or timed out (after retries).
        """
        try:
            return await super().request(messages, model_settings, model_request_parameters)
        except ModelHTTPError as e:
            failed = failed_generation(e.body)
            if failed is None:
                raise
            return ModelResponse(
                parts=[failed] if failed else [],
                model_name=e.model_name,
                provider_name=self._provider.name,
                finish_reason='error',
            )

    def _body(
        self, messages: list[ModelMessage], settings: Any, params: ModelRequestParameters, *, stream: bool
    ) -> dict[str, Any]:
        # Groq takes the common settings and its own: OpenAI's (`openai_*`, the service tier they carry) are not
        # sent, thinking goes in `reasoning_format` rather than in `reasoning_effort`, and web search in nothing
        # (the models that have it always do).
        own = {k: v for k, v in settings.items() if not k.startswith('openai_') and k != 'service_tier'}
        plain = dataclasses.replace(params, thinking=None, native_tools=[])
        body = super()._body(messages, own, plain, stream=stream)
        if (reasoning_format := reasoning_format_of(settings, params)) is not None:
            body['reasoning_format'] = reasoning_format
        return body

    def _parse(self, data: Any) -> ModelResponse:
        response = super()._parse(data)
        message = data['choices'][0].get('message') or {}
        if message.get('refusal'):
            return response
        native: list[ModelResponsePart] = []
        for tool in message.get('executed_tools') or ():
            native.extend(executed_tool_parts(tool, self._provider.name))
        if native:
            # The searches go after the reasoning field (if any) and before the content that draws on them.
            first = response.parts[0] if response.parts else None
            at = 1 if isinstance(first, ThinkingPart) and first.id != 'content' else 0
            response.parts = [*response.parts[:at], *native, *response.parts[at:]]
        return response

    def _stream_response(
        self, params: ModelRequestParameters, sse: _http.SSEStream, settings: Mapping[str, Any]
    ) -> StreamedResponse:
        return GroqStreamedResponse(
            params, sse=sse, model_name=self._model_name, profile=self.profile, provider_name=self._provider.name
        )


def reasoning_format_of(settings: Mapping[str, Any], params: ModelRequestParameters) -> str | None:
    """The `reasoning_format` of a request: `groq_reasoning_format` if set, else the one the unified `thinking`
    asks for (`'hidden'` for `False`, which Groq cannot switch off, `'parsed'` otherwise), else none."""
    if given := settings.get('groq_reasoning_format'):
        return str(given)
    if params.thinking is None:
        return None
    return 'hidden' if params.thinking is False else 'parsed'


def failed_generation(body: object) -> TextPart | ToolCallPart | Literal[''] | None:
    """What the model generated, in a `tool_use_failed` error body: the tool call (if it is one), else its text
    (`''` for none); `None` for any other error."""
    error = body.get('error', body) if isinstance(body, dict) else None
    if not (
        isinstance(error, dict)
        and error.get('code') == 'tool_use_failed'
        and error.get('type') == 'invalid_request_error'
        and isinstance(error.get('message'), str)
        and isinstance(generated := error.get('failed_generation'), str)
    ):
        return None
    try:
        call = pydantic_core.from_json(generated)
    except ValueError:
        call = None
    if isinstance(call, dict) and isinstance(call.get('name'), str) and isinstance(call.get('arguments'), dict):
        return ToolCallPart(call['name'], call['arguments'])
    return TextPart(generated) if generated else ''


def _search_output(tool: Mapping[str, Any]) -> Any:
    results = tool.get('search_results')
    if isinstance(results, dict) and (results.get('results') or results.get('images')):
        return results
    return tool.get('output')


def _search_call(tool: Mapping[str, Any], provider_name: str, tool_call_id: str) -> NativeToolCallPart:
    arguments = tool.get('arguments')
    try:
        args = pydantic_core.from_json(arguments) if arguments else None
    except ValueError:
        args = arguments  # kept as the model wrote it
    return NativeToolCallPart(WebSearchTool.kind, args, tool_call_id, provider_name=provider_name)


def executed_tool_parts(tool: Mapping[str, Any], provider_name: str) -> list[ModelResponsePart]:
    """The call and return parts of one of a message's `executed_tools` (searches; other kinds are not mapped)."""
    if tool.get('type') != 'search':
        return []
    tool_call_id = generate_tool_call_id()
    return [
        _search_call(tool, provider_name, tool_call_id),
        NativeToolReturnPart(WebSearchTool.kind, _search_output(tool), tool_call_id, provider_name=provider_name),
    ]


class GroqStreamedResponse(OpenAIStreamedResponse):
    """A streamed Groq response: Chat Completions chunks, with the `compound-` models' searches and Groq's usage.

    A search arrives twice in `delta.executed_tools`: first with its arguments (the call), then with its results
    (the return, paired with that call). A `tool_use_failed` error in the stream ends it with the refused call
    (or text) as the last part, for the agent to retry.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._search_call_id: str | None = None
        self._failed = False

    def _event(self, event: ServerSentEvent) -> list[ModelResponseStreamEvent]:
        if self._failed:
            return []
        if 'tool_use_failed' in event.data:
            try:
                data = pydantic_core.from_json(event.data)
            except ValueError:
                data = None
            if (failed := failed_generation(data)) is not None:
                self._failed = True
                return self._failed_events(failed)
        return super()._event(event)

    def _failed_events(self, failed: TextPart | ToolCallPart | Literal['']) -> list[ModelResponseStreamEvent]:
        manager = self._parts_manager
        if isinstance(failed, ToolCallPart):
            event = manager.tool_call_delta('tool_use_failed', failed.tool_name, failed.args, failed.tool_call_id)
        else:
            event = manager.text_delta('tool_use_failed', failed.content) if failed else None
        return [event] if event is not None else []

    def _chunk(self, chunk: dict[str, Any]) -> list[ModelResponseStreamEvent]:
        if not chunk.get('usage') and isinstance(x_groq := chunk.get('x_groq'), dict) and x_groq.get('usage'):
            chunk = {**chunk, 'usage': x_groq['usage']}  # Groq's own place for a stream's usage
        events: list[ModelResponseStreamEvent] = []
        choices = chunk.get('choices') or ()
        delta = (choices[0].get('delta') or {}) if choices else {}
        for tool in delta.get('executed_tools') or ():
            if tool.get('type') == 'search':
                events.append(self._search_event(tool))
        events.extend(super()._chunk(chunk))
        return events

    def _search_event(self, tool: Mapping[str, Any]) -> ModelResponseStreamEvent:
        index = tool.get('index', 0)
        output = _search_output(tool)
        if output:
            tool_call_id, self._search_call_id = self._search_call_id or generate_tool_call_id(), None
            part: ModelResponsePart = NativeToolReturnPart(
                WebSearchTool.kind, output, tool_call_id, provider_name=self._provider_name
            )
            return self._parts_manager.handle_part(vendor_part_id=f'executed_tools-{index}-return', part=part)
        self._search_call_id = generate_tool_call_id()
        part = _search_call(tool, self._provider_name, self._search_call_id)
        return self._parts_manager.handle_part(vendor_part_id=f'executed_tools-{index}-call', part=part)
