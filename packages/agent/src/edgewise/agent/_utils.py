"""Helpers under the private module name pydantic-ai gives them, for code that imports them from there.

Where sync functions run (`disable_threads`, `using_thread_executor`, `run_in_executor`) lives in
`edgewise.agent._threads`; `Some` is defined here.
"""

from __future__ import annotations as _annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from ._threads import disable_threads, using_thread_executor
from ._threads import run_in_thread as run_in_executor

__all__ = ('Some', 'disable_threads', 'run_in_executor', 'using_thread_executor')

T = TypeVar('T')


@dataclass(frozen=True)
class Some(Generic[T]):
    """A value that is there, even when it is `None`: `Some(None)` set, and `None` (no `Some`) unset."""

    value: T
    """The value."""
