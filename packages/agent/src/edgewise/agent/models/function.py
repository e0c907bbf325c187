"""`FunctionModel`: a model whose answers come from a function you write; for tests and offline examples."""

from __future__ import annotations as _annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeAlias

import anyio.to_thread

from ..exceptions import UserError
from ..messages import ModelMessage, ModelRequest, ModelResponse
from ..settings import ModelSettings
from ..tools import ToolDefinition
from . import Model, ModelRequestParameters
from ._usage_estimate import UsageEstimator

__all__ = ('FunctionModel', 'AgentInfo', 'FunctionDef', 'StreamFunctionDef', 'DeltaToolCall', 'DeltaToolCalls')


@dataclass(kw_only=True)
class AgentInfo:
    """What the function of a `FunctionModel` is told about the request besides the messages."""

    function_tools: list[ToolDefinition]
    """The function tools the model may call."""
    allow_text_output: bool
    """Whether plain text is an acceptable final answer."""
    output_tools: list[ToolDefinition]
    """The output tools the model may call to answer."""
    model_settings: ModelSettings | None
    """The request's settings."""
    model_request_parameters: ModelRequestParameters = field(default_factory=ModelRequestParameters)
    """All the request's parameters."""
    instructions: str | None = None
    """The instructions of the request."""


@dataclass(kw_only=True)
class DeltaToolCall:
    """A piece of a streamed tool call (used by `stream_function`s)."""

    name: str | None = None
    """The tool name, if known in this piece."""
    json_args: str | None = None
    """A chunk of the JSON arguments."""
    tool_call_id: str | None = None
    """The tool call id, if known in this piece."""


DeltaToolCalls: TypeAlias = dict[int, DeltaToolCall]
"""Pieces of streamed tool calls, by index."""
FunctionDef: TypeAlias = Callable[[list[ModelMessage], AgentInfo], ModelResponse | Awaitable[ModelResponse]]
"""A function answering requests: `(messages, info) -> ModelResponse`, sync or async."""
StreamFunctionDef: TypeAlias = Callable[[list[ModelMessage], AgentInfo], AsyncIterator[str | DeltaToolCalls]]
"""An async generator streaming an answer as text chunks or tool call pieces."""


class FunctionModel(Model):
    """A model answering with `function(messages, info)`; sync functions run in a worker thread."""

    function: FunctionDef | None
    """Answers non-streamed requests."""
    stream_function: StreamFunctionDef | None
    """Answers streamed requests (used from the streaming release on)."""

    def __init__(
        self,
        function: FunctionDef | None = None,
        *,
        stream_function: StreamFunctionDef | None = None,
        model_name: str | None = None,
        settings: ModelSettings | None = None,
    ) -> None:
        """Make a model of `function` and/or `stream_function`.

        Args:
            function: Answers requests; may be omitted when only `stream_function` is given.
            stream_function: Streams answers; may be omitted when `function` is given.
            model_name: The model's name; `function:<function name>:<stream function name>` if `None`.
            settings: Default settings of requests to this model.

        Raises:
            TypeError: neither function is given.
        """
        if function is None and stream_function is None:
            raise TypeError('Either `function` or `stream_function` must be provided')
        self.function = function
        self.stream_function = stream_function
        fn_name = getattr(function, '__name__', '') if function is not None else ''
        stream_name = getattr(stream_function, '__name__', '') if stream_function is not None else ''
        self._model_name = model_name or f'function:{fn_name}:{stream_name}'
        self._settings = settings
        self._is_async = inspect.iscoroutinefunction(function)
        self._estimator = UsageEstimator()

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        """Answer with the function; fill in the model name and, if the function set none, estimated usage."""
        function = self.function
        if function is None:
            raise UserError(
                f'FunctionModel {self._model_name!r} has only a `stream_function`; non-streamed runs need `function`.'
            )
        last = messages[-1] if messages else None
        info = AgentInfo(
            function_tools=model_request_parameters.function_tools,
            allow_text_output=model_request_parameters.allow_text_output,
            output_tools=model_request_parameters.output_tools,
            model_settings=model_settings,
            model_request_parameters=model_request_parameters,
            instructions=last.instructions if isinstance(last, ModelRequest) else None,
        )
        if self._is_async:
            response = await function(messages, info)  # type: ignore[misc]
        else:
            response = await anyio.to_thread.run_sync(function, messages, info)
        if not isinstance(response, ModelResponse):
            raise UserError(
                f'The function of FunctionModel {self._model_name!r} returned {response!r}, not a ModelResponse.'
            )
        if response.model_name is None:
            response.model_name = self._model_name
        usage = response.usage
        if not (usage.input_tokens or usage.output_tokens or usage.details):
            response.usage = self._estimator.estimate(messages, response)
        return response

    @property
    def model_name(self) -> str:
        """`function:<function name>:<stream function name>`, unless given."""
        return self._model_name

    @property
    def system(self) -> str:
        """Always `'function'`."""
        return 'function'
