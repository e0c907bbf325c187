"""`TestModel`: a model that calls every tool with arguments made up from their schemas, then answers.

It needs no script: good for checking that an agent's tools and output are wired correctly.
"""

from __future__ import annotations as _annotations

import base64
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from datetime import datetime, timezone
from typing import Any, Literal

import pydantic_core

from .._message_flow.events import ModelResponseStreamEvent
from .._tools.definition import ToolDefinition
from .._utils import field_defaults
from ..exceptions import UserError
from ..messages import (
    BinaryImage,
    FilePart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from ..native_tools import SUPPORTED_NATIVE_TOOLS, AbstractNativeTool
from ..profiles import ModelProfile, ModelProfileSpec
from ..settings import ModelSettings
from ..usage import RequestUsage
from ._in_memory_batch import InMemoryBatchModel
from ._model import RunContext
from ._native_support import resolve_model_tools
from ._request_parameters import ModelRequestParameters
from ._schema_data import _chars as _chars  # re-exported: tests written for pydantic-ai import it from here
from ._schema_data import _JsonSchemaTestData as _JsonSchemaTestData  # also imported from here by tests
from ._streamed_response import StreamedResponse
from ._thinking import resolve_thinking
from ._usage_estimate import UsageEstimator, estimate_tokens

__all__ = ('TestModel', 'TestStreamedResponse')

TEST_PROFILE = ModelProfile(supports_json_schema_output=True, supports_json_object_output=True)
"""The profile of `TestModel` and `FunctionModel` given none: native and prompted output work, image output does
not (give a profile with `supports_image_output=True` to test it)."""

_TEST_PNG = base64.b64decode(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVR4nGNgAAIAAAUAAXpeqz8AAAAASUVORK5CYII='
)
"""A 1x1 transparent PNG: the image `TestModel` answers with when only an image is an acceptable output."""


class TestModel(InMemoryBatchModel):
    """Calls the function tools (all, or those named in `call_tools`) once, then gives the output.

    The output is text when text is an accepted output (`custom_output_text`, or a JSON object of what each
    tool returned), else an output tool call with `custom_output_args` (or arguments made up from its
    schema); `custom_output_args` also picks the output tool when text is accepted too. When only an image is
    (`output_type=BinaryImage`, with a profile that has `supports_image_output=True`), the output is a
    `FilePart` holding a 1x1 PNG.
    """

    _default_profile = TEST_PROFILE

    __test__ = False  # not a pytest test class, despite its name

    call_tools: list[str] | Literal['all']
    """The function tools to call."""
    custom_output_text: str | None
    """The text answer, when text output is allowed."""
    custom_output_args: Any
    """The arguments of the output tool call."""
    seed: int
    """Varies the made-up arguments."""
    last_model_request_parameters: ModelRequestParameters | None
    """The parameters of the last request, for tests to inspect."""

    def __init__(
        self,
        *,
        call_tools: list[str] | Literal['all'] = 'all',
        custom_output_text: str | None = None,
        custom_output_args: Any = None,
        seed: int = 0,
        model_name: str = 'test',
        profile: ModelProfileSpec | None = None,
        settings: ModelSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            call_tools: The names of the function tools to call, or `'all'`.
            custom_output_text: The text answer (when text output is allowed).
            custom_output_args: The output tool's arguments (when the output is a tool call).
            seed: Varies the made-up arguments.
            model_name: The model's name.
            profile: What the model accepts (its output mode by default, image output...); `TEST_PROFILE` if `None`.
            settings: Default settings of requests to this model.
        """
        self.call_tools = call_tools
        self.custom_output_text = custom_output_text
        self.custom_output_args = custom_output_args
        self.seed = seed
        self._model_name = model_name
        # pydantic-ai's docs set `_system` to make the test model pass for another provider's family
        self._system = 'test'
        super().__init__(settings=settings, profile=profile)
        self.last_model_request_parameters = None
        self._estimator = UsageEstimator()

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        """Answer the request as described in the class docstring."""
        return self._respond(messages, model_settings, model_request_parameters)

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        """Stream the same answer as `request`: each text part starts empty, then comes word by word (a word
        with the space after it; a single word of more than two characters in two halves), each tool call in one
        piece, as pydantic-ai's `TestModel` streams."""
        response = self._respond(messages, model_settings, model_request_parameters)
        # As pydantic-ai's: the input is estimated from the conversation at the start, the output counted as the
        # words arrive (the model's estimator remembers the conversation, so each request counts new messages only).
        stream = TestStreamedResponse(model_request_parameters, self._model_name, response)
        stream._usage = self._estimator.estimate(messages, ModelResponse(parts=[]))
        try:
            yield stream
        finally:
            await stream.close()

    @classmethod
    def supported_native_tools(cls) -> frozenset[type[AbstractNativeTool]]:
        """Every native tool passes the model's check, but a request with any is a `UserError`: TestModel cannot
        pretend to run them (pydantic-ai's behaviour)."""
        return SUPPORTED_NATIVE_TOOLS

    def _respond(
        self, messages: list[ModelMessage], settings: ModelSettings | None, params: ModelRequestParameters
    ) -> ModelResponse:
        """The answer to a request, with its estimated usage."""
        if params.function_tools or params.native_tools or params.revealed_tool_names:
            params = resolve_model_tools(
                params,
                lambda: (
                    self.supported_native_tools() & self.profile.get('supported_native_tools', SUPPORTED_NATIVE_TOOLS)
                ),
                self.tool_deferral_mode,
                self.tool_addition_mode,
            )
        else:  # no tool to resolve: the supported native tools and the modes play no part
            params = resolve_model_tools(params, SUPPORTED_NATIVE_TOOLS)
        if settings:  # (without a setting there is no `thinking` to resolve, and no `service_tier` to check)
            params = resolve_thinking(settings, params, self.profile)
        self.last_model_request_parameters = params
        if params.native_tools:
            raise UserError('TestModel does not support built-in tools')
        parts = self._parts(messages, params)
        # Estimated from the parts before the response is made, so that it is made with its usage: the same count as
        # from the response's parts, which making it leaves as they are (none is a tool part of a typed kind).
        usage = self._estimator.estimate_answer(messages, parts)
        return _response(parts, usage, self._model_name, self._system)

    def _check_tools_to_call(self, params: ModelRequestParameters, callable_tools: list[ToolDefinition]) -> None:
        if self.call_tools == 'all':
            return
        known = {t.name for t in callable_tools}
        if unknown := [name for name in self.call_tools if name not in known]:
            name = unknown[0]
            if any(t.name == name for t in params.function_tools):  # a hidden tool: the model is not sent it
                raise UserError(  # (pydantic-ai 2.x's wording)
                    f'Tool {name!r} has visibility {params.visibility_of(name)!r}; it must be revealed or configured '
                    'without deferred loading before `TestModel` can call it.'
                )
            raise UserError(
                f'TestModel was configured to call unknown tool {name!r}: the request offers '
                f'{sorted(known) or "no function tools"}.'
            )

    def _parts(self, messages: list[ModelMessage], params: ModelRequestParameters) -> list[ModelResponsePart]:
        # Every tool the model is sent can be called: a `'via_history'` one too (its definition is in the history).
        callable_tools: list[ToolDefinition] = []
        tools: list[ToolDefinition] = []
        if params.function_tools:  # (a request without tools has none to call, check or retry)
            callable_tools = [t for t in params.function_tools if params.visibility_of(t.name) != 'withheld']
            tools = [t for t in callable_tools if self.call_tools == 'all' or t.name in self.call_tools]
        # As pydantic-ai's TestModel: the tools are called once per conversation, before any response (so a
        # run continuing a message history answers at once), and a retried tool call gets a fresh call id.
        if (tools or self.call_tools != 'all') and not any(isinstance(m, ModelResponse) for m in messages):
            self._check_tools_to_call(params, callable_tools)
            if tools:
                return [self._call(t) for t in tools]
        if tools:
            last = messages[-1] if messages else None
            last_parts = last.parts if isinstance(last, ModelRequest) else []
            retried = {p.tool_name for p in last_parts if isinstance(p, RetryPromptPart) and p.tool_name}
            if retried & {t.name for t in tools}:
                return [ToolCallPart(t.name, self.gen_tool_args(t)) for t in tools if t.name in retried]
        output_tools = params.output_tools
        if self.custom_output_text is not None:
            # as pydantic-ai's TestModel: a test asking for text where only an output tool is accepted is wrong
            assert params.allow_text_output or params.output_object is not None, (
                'Plain response not allowed, but `custom_output_text` is set.'
            )
        if params.allow_image_output and not output_tools and not params.allow_text_output:
            return [FilePart(BinaryImage(_TEST_PNG, media_type='image/png'))]
        # Text when text is an accepted output, unless output tool arguments were asked for.
        if output_tools and (self.custom_output_args is not None or not params.allow_text_output):
            tool = output_tools[self.seed % len(output_tools)]  # the seed picks among several, as pydantic-ai
            args = self.custom_output_args
            if args is not None and tool.outer_typed_dict_key:
                args = {tool.outer_typed_dict_key: args}
            return [self._call(tool, args)]
        if params.output_object is not None and self.custom_output_text is not None:
            return [TextPart(self.custom_output_text)]  # the JSON text as given, as pydantic-ai's TestModel
        if params.output_object is not None:
            args = self.custom_output_args
            if args is None:
                args = _JsonSchemaTestData(params.output_object.json_schema, self.seed).generate()
            return [TextPart(pydantic_core.to_json(args).decode())]
        if self.custom_output_text is not None:
            return [TextPart(self.custom_output_text)]
        returns: dict[str, Any] = {}
        for m in messages:
            if isinstance(m, ModelRequest):
                for p in m.parts:
                    if isinstance(p, ToolReturnPart):
                        returns[p.tool_name] = p.content
        if not returns:
            return [TextPart('success (no tool calls)')]
        return [TextPart(pydantic_core.to_json(returns).decode())]

    def gen_tool_args(self, tool_def: ToolDefinition) -> Any:
        """Arguments for a call of `tool_def` made up from its schema (they validate against it), varied by `seed`."""
        return _JsonSchemaTestData(tool_def.parameters_json_schema, self.seed).generate()

    def _call(self, tool: ToolDefinition, args: Any = None) -> ToolCallPart:
        if args is None:
            args = self.gen_tool_args(tool)
        return ToolCallPart(tool.name, args, tool_call_id=f'pyd_ai_tool_call_id__{tool.name}')

    @property
    def model_name(self) -> str:
        """`'test'`, unless given."""
        return self._model_name

    @property
    def system(self) -> str:
        """`'test'`, unless `_system` was set to pose as another provider's model."""
        return self._system


_RESPONSE_DEFAULTS, _factories = field_defaults(ModelResponse)
_RESPONSE_FACTORIES = tuple((name, factory) for name, factory in _factories if name not in ('usage', 'timestamp'))


def _response(
    parts: list[ModelResponsePart], usage: RequestUsage, model_name: str, provider_name: str
) -> ModelResponse:
    """`ModelResponse(parts=parts, usage=usage, model_name=model_name, provider_name=provider_name)`, without the
    keyword handling of its `__init__` (a test model makes one per request): the same `__dict__`, in the order of the
    fields, then its `__post_init__`."""
    response: ModelResponse = object.__new__(ModelResponse)
    values = _RESPONSE_DEFAULTS.copy()
    values['parts'] = parts
    values['usage'] = usage
    values['model_name'] = model_name
    values['provider_name'] = provider_name
    values['timestamp'] = datetime.now(timezone.utc)  # (what its factory gives, without a frame of its own)
    for name, factory in _RESPONSE_FACTORIES:
        values[name] = factory()
    response.__dict__ = values
    response.__post_init__()
    return response


def _text_chunks(text: str) -> list[str]:
    """The chunks `TestModel` streams `text` in: split on single spaces, each space kept with the word before it,
    and a text of one word longer than two characters cut in two halves."""
    *words, last = text.split(' ')
    chunks = [f'{word} ' for word in words]
    chunks.append(last)
    if len(chunks) == 1 and len(text) > 2:
        middle = len(text) // 2
        chunks = [text[:middle], text[middle:]]
    return chunks


class TestStreamedResponse(StreamedResponse):
    """Streams a response built whole: the events its parts would arrive as, counting the output tokens."""

    __test__ = False  # not a test class, whatever its name

    def __init__(
        self,
        model_request_parameters: ModelRequestParameters,
        _model_name: str,
        _structured_response: ModelResponse,
        _messages: Iterable[ModelMessage] = (),
        _provider_name: str = 'test',
        _provider_url: str | None = None,
    ) -> None:
        # The keyword names are pydantic-ai's (its class is a dataclass of private fields). As in pydantic-ai,
        # the usage starts as the estimate of `_messages` (the conversation) and grows with each word streamed.
        super().__init__(model_request_parameters)
        self._model_name = _model_name
        self._response = _structured_response
        self._provider_name = _provider_name
        self._provider_url = _provider_url
        self._usage = UsageEstimator().estimate(list(_messages), ModelResponse(parts=[]))

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        manager = self._parts_manager
        for i, part in enumerate(self._response.parts):
            if isinstance(part, TextPart):
                yield manager.text_start(i)
                for chunk in _text_chunks(part.content):
                    self._usage.output_tokens += estimate_tokens(chunk)
                    if (event := manager.text_delta(i, chunk)) is not None:
                        yield event
            elif isinstance(part, ToolCallPart):
                event = manager.tool_call_delta(i, part.tool_name, part.args, part.tool_call_id)
                assert event is not None
                yield event
            else:
                yield manager.whole_part(i, part)  # a file (the image `TestModel` makes), in one piece

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def provider_name(self) -> str | None:
        return self._provider_name

    @property
    def provider_url(self) -> str | None:
        return self._provider_url
