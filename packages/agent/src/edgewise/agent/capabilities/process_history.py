"""`ProcessHistory`: a function that rewrites the message history before every model request."""

from __future__ import annotations as _annotations

import inspect
import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from typing_extensions import deprecated

from ..messages import ModelMessage
from ..tools import AgentDepsT, RunContext
from .abstract import AbstractCapability, ModelRequestContext

__all__ = ('ProcessHistory', 'HistoryProcessor', 'HistoryProcessorFunc', 'takes_run_context')

HistoryProcessorFunc: TypeAlias = (
    Callable[[list[ModelMessage]], list[ModelMessage]]
    | Callable[[list[ModelMessage]], Awaitable[list[ModelMessage]]]
    | Callable[[RunContext[Any], list[ModelMessage]], list[ModelMessage]]
    | Callable[[RunContext[Any], list[ModelMessage]], Awaitable[list[ModelMessage]]]
)
"""A history processor: `(messages) -> messages` or `(ctx, messages) -> messages`, sync or async."""


def takes_run_context(function: Callable[..., Any]) -> bool:
    """Whether the first parameter of `function` (or of a callable object's `__call__`) is annotated `RunContext`."""
    target = function if inspect.isfunction(function) or inspect.ismethod(function) else type(function).__call__
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return False
    if not parameters or parameters[0].annotation is inspect.Parameter.empty:
        return False
    annotation: Any = parameters[0].annotation
    if isinstance(annotation, str):
        text: str = annotation
        try:
            annotation = typing.get_type_hints(target).get(parameters[0].name, text)
        except Exception:
            return text.split('[')[0].rsplit('.', 1)[-1] == 'RunContext'
    origin: Any = typing.get_origin(annotation) or annotation
    return origin is RunContext


@dataclass
class ProcessHistory(AbstractCapability[AgentDepsT]):
    """Rewrite the message history before every model request (`Agent(capabilities=[ProcessHistory(fn)])`).

    The processor's result is sent to the model and replaces the run's history; it must not be empty and
    must end with a `ModelRequest`.
    """

    @classmethod
    def get_serialization_name(cls) -> str | None:
        """`None`: it takes a function, so it cannot come from a spec."""
        return None

    processor: HistoryProcessorFunc
    """The function: `(messages) -> messages` or `(ctx, messages) -> messages`, sync or async."""
    _takes_ctx: bool = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._takes_ctx = takes_run_context(self.processor)

    async def before_model_request(
        self, ctx: RunContext[AgentDepsT], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        """Run the processor on the messages about to be sent."""
        args = (ctx, request_context.messages) if self._takes_ctx else (request_context.messages,)
        result = self.processor(*args)
        if inspect.isawaitable(result):
            result = await result
        request_context.messages = result
        return request_context


@deprecated('`HistoryProcessor` is deprecated, use `ProcessHistory` instead.')
@dataclass
class HistoryProcessor(ProcessHistory[AgentDepsT]):
    """Deprecated name of `ProcessHistory`."""
