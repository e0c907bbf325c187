"""What a toolset's methods do when its classes keep their default ones, known without calling them: an agent run
asks a toolset for its step's toolset and its instructions before every request, and enters it around the run."""

from __future__ import annotations as _annotations

from typing import Any

from .abstract import AbstractToolset
from .function import FunctionToolset
from .wrapper import WrapperToolset

__all__ = ('enters_nothing', 'gives_no_instructions', 'same_every_step')

_NO_INSTRUCTIONS = AbstractToolset.get_instructions
_WRAPPED_INSTRUCTIONS = WrapperToolset.get_instructions
_FUNCTION_INSTRUCTIONS = FunctionToolset.get_instructions
_ITSELF = AbstractToolset.for_run_step
_WRAPPED_STEP = WrapperToolset.for_run_step
_NO_ENTER, _NO_EXIT = AbstractToolset.__aenter__, AbstractToolset.__aexit__
_WRAPPED_ENTER, _WRAPPED_EXIT = WrapperToolset.__aenter__, WrapperToolset.__aexit__


def gives_no_instructions(toolset: AbstractToolset[Any]) -> bool:
    """Whether `toolset.get_instructions(ctx)` returns `None` whatever `ctx` is: a chain of wrappers that hand the
    question on, ending with a toolset of the default method or function tools without instructions. Any other
    toolset (one whose method is overridden) may have some: it is asked."""
    method = type(toolset).get_instructions
    while method is _WRAPPED_INSTRUCTIONS:
        toolset = toolset.wrapped  # type: ignore[attr-defined]
        method = type(toolset).get_instructions
    return method is _NO_INSTRUCTIONS or (
        method is _FUNCTION_INSTRUCTIONS and not toolset._instructions  # type: ignore[attr-defined]
    )


def same_every_step(toolset: AbstractToolset[Any]) -> bool:
    """Whether `toolset.for_run_step(ctx)` returns `toolset` itself whatever `ctx` is: a chain of wrappers that hand
    the question on, ending with a toolset of the default method. Any other toolset is asked."""
    method = type(toolset).for_run_step
    while method is _WRAPPED_STEP:
        toolset = toolset.wrapped  # type: ignore[attr-defined]
        method = type(toolset).for_run_step
    return method is _ITSELF


def enters_nothing(toolset: AbstractToolset[Any]) -> bool:
    """Whether entering and leaving `toolset` do nothing: a chain of wrappers that only enter the toolset they wrap
    (the `ToolSearchToolset` of every run), ending with a toolset of the default methods."""
    kind = type(toolset)
    while kind.__aenter__ is _WRAPPED_ENTER and kind.__aexit__ is _WRAPPED_EXIT:
        toolset = toolset.wrapped  # type: ignore[attr-defined]
        kind = type(toolset)
    return kind.__aenter__ is _NO_ENTER and kind.__aexit__ is _NO_EXIT
