"""`RunContext.load_capability`: loading a deferred capability (`defer_loading=True`) from code, as pydantic-ai 2.68.

A load is recorded without a `load_capability` call: a `CapabilityLoadDeltaPart` naming the capability, then a
`ToolAvailabilityDeltaPart` naming its tools (when it has some and they are listed already), on the model request
that follows. It can only be made where a model request follows:

- from a tool function, or a tool hook (`after_tool_execute`, say): on the next request, or dropped with the step
  when that ends the run (the step's `ToolManager.capability_loads`);
- from the hooks the agent loop opens a *load window* for (`capability_load_window`): `before_run` (the run's first
  request), `before_model_request` (the request being prepared) and `after_model_request` on a response whose tool
  calls the run answers (the next request). The loop decides what becomes of the loads the window collected.

Lives beside `RunContext` (which calls it) and below the loop (which opens the windows).
"""

from __future__ import annotations as _annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeAlias

from .._messages.capability_loading import LOAD_CAPABILITY_TOOL_NAME
from .._messages.model_messages import (
    CapabilityLoadDeltaPart,
    LoadCapabilityCallPart,
    ModelResponse,
    ToolAvailabilityDeltaPart,
    ToolCallPart,
)
from ..exceptions import UserError

__all__ = ('CapabilityLoadRecord', 'capability_load_window', 'durable_unit', 'load_capability')

CapabilityLoadRecord: TypeAlias = CapabilityLoadDeltaPart | ToolAvailabilityDeltaPart
"""A part recording a load from code: the load, or the reveal of the capability's tools."""


@dataclass(frozen=True)
class _LoadWindow:
    queue: object
    """The `pending_messages` of the run whose hooks run inside (by identity: a run nested in a hook has its own)."""
    loads: list[CapabilityLoadRecord]
    """Where the loads made inside go."""
    response: ModelResponse | None
    """The response an `after_model_request` hook handles: its own `load_capability` calls load already."""


_window: ContextVar[_LoadWindow | None] = ContextVar('edgewise_capability_load_window', default=None)
_in_durable_unit: ContextVar[bool] = ContextVar('edgewise_in_durable_unit', default=False)


@contextmanager
def durable_unit() -> Iterator[None]:
    """Inside the block, code runs in a durable engine's recorded unit (a DBOS step): recovery replays the unit's
    recorded result without running the code again, so a load made there would be lost and `load_capability`
    refuses it."""
    token = _in_durable_unit.set(True)
    try:
        yield
    finally:
        _in_durable_unit.reset(token)


@contextmanager
def capability_load_window(
    queue: object, loads: list[CapabilityLoadRecord], *, response: ModelResponse | None = None
) -> Iterator[list[CapabilityLoadRecord]]:
    """Inside the block, the hooks of the run whose queue is `queue` (`RunContext.pending_messages`) may call
    `load_capability`; the loads go into `loads` (given back), for the caller to record on the request that follows.

    Args:
        queue: The run's `pending_messages`.
        loads: The list the loads go into (the step's `ToolManager.capability_loads` for `after_model_request`).
        response: For `after_model_request`: the response handled, whose `load_capability` calls count as loads.
    """
    token = _window.set(_LoadWindow(queue, loads, response))
    try:
        yield loads
    finally:
        _window.reset(token)


def load_capability(ctx: Any, capability: Any) -> bool:
    """`RunContext.load_capability` (see there); `ctx` is the `RunContext` (typed loosely: it is defined above)."""
    window = _window.get()
    if window is not None and window.queue is not ctx.pending_messages:
        window = None  # the window of another run (this one runs inside its hook)
    manager = ctx.tool_manager
    if window is None and (ctx.tool_call_id is None or ctx.pending_messages is None or manager is None):
        raise UserError(
            '`ctx.load_capability()` can only be called where a model request follows: from a `before_run` or '
            '`before_model_request` hook, from `after_model_request` on a response with tool calls the run answers, '
            'from a tool function, or from a tool hook such as `after_tool_execute`.'
        )
    if _in_durable_unit.get():
        raise UserError(
            '`ctx.load_capability()` is not supported inside a durable execution activity, step, or task, '
            'whose recorded result is replayed without re-running your code. '
            'Load the capability from a tool hook such as `after_tool_execute` instead.'
        )
    if window is None:
        handled = _last_response_parts(ctx)
        # Output tools are not among the step's function tools (which are listed by the names the model calls).
        if any(
            isinstance(p, ToolCallPart)
            and p.tool_call_id == ctx.tool_call_id
            and p.tool_name not in (manager.tools or {})
            for p in handled
        ):
            raise UserError('`ctx.load_capability()` cannot be called from an output tool, which ends the run.')
        queued: list[CapabilityLoadRecord] = manager.capability_loads
    else:
        handled = [] if window.response is None else list(window.response.parts)
        queued = window.loads
    capability_id = _registered_id(ctx.capabilities, capability)
    if (
        capability_id in ctx.active_capability_ids
        or any(isinstance(r, CapabilityLoadDeltaPart) and capability_id in r.loaded for r in queued)
        or any(_asks_for(p, capability_id) for p in handled)
    ):
        return False
    queued.append(CapabilityLoadDeltaPart(loaded=[capability_id], tool_call_id=ctx.tool_call_id))
    if owned := [name for name, tool_def in ctx.tools.items() if tool_def.capability_id == capability_id]:
        queued.append(ToolAvailabilityDeltaPart(tools_added=owned, tool_call_id=ctx.tool_call_id))
    return True


def _asks_for(part: Any, capability_id: str) -> bool:
    """Whether `part` is the model's `load_capability` call for `capability_id` (a plain `ToolCallPart` still, in
    a response the hooks handle)."""
    if isinstance(part, LoadCapabilityCallPart):
        return part.capability_id == capability_id
    if not isinstance(part, ToolCallPart) or part.tool_name != LOAD_CAPABILITY_TOOL_NAME:
        return False
    try:
        return part.args_as_dict(raise_if_invalid=True).get('id') == capability_id
    except ValueError:
        return False


def _last_response_parts(ctx: Any) -> list[Any]:
    response = next((m for m in reversed(ctx.messages) if isinstance(m, ModelResponse)), None)
    return [] if response is None else list(response.parts)


def _registered_id(registry: dict[str, Any], capability: Any) -> str:
    """The id `capability` (an id, or the capability) has in the run's registry (`RunContext.capabilities`).

    Raises:
        UserError: the run has no such capability.
    """
    if isinstance(capability, str):
        if capability not in registry:
            raise UserError(f'No capability with id {capability!r} is registered in this run.')
        return capability
    if capability.id is not None and capability.id in registry:
        return str(capability.id)  # by id: a copy made for the run (`for_run`) is the same capability
    found = next((key for key, listed in registry.items() if listed is capability), None)
    if found is None:
        raise UserError(f'Capability {type(capability).__name__}(id={capability.id!r}) is not registered in this run.')
    return found
