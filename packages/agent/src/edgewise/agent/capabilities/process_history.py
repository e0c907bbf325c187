"""`ProcessHistory`: a function that rewrites the message history before every model request."""

from __future__ import annotations as _annotations

import inspect
import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from typing_extensions import deprecated

from .._utils import get_first_param_type
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
    """Whether the first parameter of `function` (or of a callable object's `__call__`) is annotated `RunContext`.

    Raises:
        UserError: its annotations name something not defined at run time (see `get_first_param_type`).
    """
    annotation = get_first_param_type(function)
    return annotation is RunContext or typing.get_origin(annotation) is RunContext


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
    # Read from the processor's annotations at its first call (as pydantic-ai does: an annotation that does not
    # resolve fails the run, not the agent's construction).
    _takes_ctx: bool | None = field(default=None, init=False, repr=False)

    async def before_model_request(
        self, ctx: RunContext[AgentDepsT], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        """Run the processor on the messages about to be sent.

        Raises:
            UserError: the processor's annotations name something not defined at run time.
        """
        takes_ctx = self._takes_ctx
        if takes_ctx is None:
            takes_ctx = self._takes_ctx = takes_run_context(self.processor)
        args = (ctx, request_context.messages) if takes_ctx else (request_context.messages,)
        result = self.processor(*args)
        if inspect.isawaitable(result):
            result = await result
        request_context.messages = result
        return request_context


@deprecated('`HistoryProcessor` is deprecated, use `ProcessHistory` instead.')
@dataclass
class HistoryProcessor(ProcessHistory[AgentDepsT]):
    """Deprecated name of `ProcessHistory`."""
