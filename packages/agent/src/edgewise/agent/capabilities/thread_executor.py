"""`UseThreadExecutor`: the runs of an agent call their sync functions in the given `concurrent.futures.Executor`.

`ThreadExecutor`, its name before pydantic-ai 2.x, still imports from here and from `capabilities` (with a
`PydanticAIDeprecationWarning`).
"""

from __future__ import annotations as _annotations

import warnings
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._threads import using_thread_executor
from .._warnings import PydanticAIDeprecationWarning
from .abstract import AbstractCapability

if TYPE_CHECKING:  # (`concurrent.futures` is not loaded with the agent)
    from concurrent.futures import Executor

__all__ = ('UseThreadExecutor', 'run_thread_executor')


@dataclass
class UseThreadExecutor(AbstractCapability[Any]):
    """Run the sync tools, output functions and `FunctionModel` functions of the agent's runs in `executor` (a
    bounded `ThreadPoolExecutor`, say) rather than in anyio's worker threads.

    `Agent.using_thread_executor(executor)` does the same for every run inside a `with` block. The executor stays
    the caller's to shut down. Not buildable from an agent spec.
    """

    executor: Executor
    """Where the sync functions run."""

    @classmethod
    def get_serialization_name(cls) -> str | None:
        """`None`: an executor cannot be given in an agent spec."""
        return None


def run_thread_executor(capability: AbstractCapability[Any] | None) -> AbstractContextManager[None]:
    """Within the block, the executor of the run whose capabilities are `capability` (one capability or a
    `CombinedCapability`): the last `UseThreadExecutor`'s, the run's own coming after the agent's. Without one, the
    executor in effect outside stays."""
    if capability is None:
        return _NO_EXECUTOR
    members = getattr(capability, 'capabilities', [capability])
    executors = [c.executor for c in members if isinstance(c, UseThreadExecutor)]
    return using_thread_executor(executors[-1]) if executors else _NO_EXECUTOR


_NO_EXECUTOR: AbstractContextManager[None] = nullcontext()


def renamed_thread_executor() -> type[UseThreadExecutor]:
    """`UseThreadExecutor`, reached by its old name `ThreadExecutor`: warns that it was renamed."""
    warnings.warn(
        '`ThreadExecutor` has been renamed to `UseThreadExecutor`; import the new name, the old one will go away.',
        PydanticAIDeprecationWarning,
        stacklevel=3,
    )
    return UseThreadExecutor


def __getattr__(name: str) -> Any:
    if name == 'ThreadExecutor':
        return renamed_thread_executor()
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
