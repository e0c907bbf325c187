"""Whether a toolset is known to have no instructions without asking it (an agent run asks before every request)."""

from __future__ import annotations as _annotations

from typing import Any

from .abstract import AbstractToolset
from .function import FunctionToolset
from .wrapper import WrapperToolset

__all__ = ('gives_no_instructions',)

_NONE = AbstractToolset.get_instructions
_WRAPPED = WrapperToolset.get_instructions
_FUNCTIONS = FunctionToolset.get_instructions


def gives_no_instructions(toolset: AbstractToolset[Any]) -> bool:
    """Whether `toolset.get_instructions(ctx)` returns `None` whatever `ctx` is, judged from its classes alone: a
    chain of wrappers that hand the question on, ending with a toolset of the default method or function tools
    without instructions. Any other toolset (one whose method is overridden) may have some: it is asked."""
    method = type(toolset).get_instructions
    while method is _WRAPPED:
        toolset = toolset.wrapped  # type: ignore[attr-defined]
        method = type(toolset).get_instructions
    return method is _NONE or (method is _FUNCTIONS and not toolset._instructions)  # type: ignore[attr-defined]
