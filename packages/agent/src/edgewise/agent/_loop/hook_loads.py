"""Capability loads from hooks (`RunContext.load_capability` called in a load window, see
`models._capability_loads`), recorded on the request they go with, as pydantic-ai 2.68 records them.

- `before_run`: the loads wait in `GraphAgentDeps.loads_ahead` and go on the run's first request before its tools
  are listed (`record_loads_ahead`), so that request has the capability in full; the reveal of its tools follows
  once they are listed (`reveal_loads_ahead`).
- `before_model_request`: on the request being prepared, whose tools then include the capability's and which
  states its instructions (`record_request_loads`, `loaded_instructions`); its settings, native tools and hooks
  apply from the next request.
- `after_model_request` on a response with tool calls the run answers (`response_load_window`): into the step's
  `ToolManager.capability_loads`, as a tool's load, for the next request (dropped when the step ends the run).
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from .._messages.capability_loading import refresh_loaded_capabilities
from .._run.deps import GraphAgentDeps
from .._run.state import GraphAgentState
from ..messages import (
    CapabilityLoadDeltaEvent,
    CapabilityLoadDeltaPart,
    ModelRequest,
    ModelResponse,
    ToolAvailabilityDeltaEvent,
    ToolAvailabilityDeltaPart,
)
from ..models import ModelRequestParameters
from ..models._capability_loads import CapabilityLoadRecord, capability_load_window
from ..tools import RunContext

__all__ = ('record_loads_ahead', 'record_request_loads', 'response_load_window', 'reveal_loads_ahead')


def record_loads_ahead(deps: GraphAgentDeps[Any, Any], request: ModelRequest) -> list[CapabilityLoadRecord]:
    """Put the loads `before_run` made on `request`, the run's first (before its tools are listed); returns them."""
    loads, deps.loads_ahead = deps.loads_ahead or [], None
    request.parts = [*request.parts, *loads]
    deps.tool_deltas = True
    return loads


def reveal_loads_ahead(
    deps: GraphAgentDeps[Any, Any], request: ModelRequest, loads: list[CapabilityLoadRecord]
) -> list[Any]:
    """Name, after each load of `loads` on `request`, the capability's tools (listed now); returns the events."""
    step_tools = deps.step_tools or {}
    recorded: list[Any] = []
    for record in loads:
        recorded.append(record)
        if isinstance(record, CapabilityLoadDeltaPart) and (
            owned := [name for name, d in step_tools.items() if d.capability_id in record.loaded]
        ):
            recorded.append(ToolAvailabilityDeltaPart(tools_added=owned, tool_call_id=record.tool_call_id))
            deps.discovered_tool_names.update(owned)
    if len(recorded) > len(loads):
        at = next(i for i, part in enumerate(request.parts) if part is loads[0])
        request.parts = [*request.parts[:at], *recorded, *request.parts[at + len(loads) :]]
    return load_events(recorded)


async def record_request_loads(
    state: GraphAgentState,
    deps: GraphAgentDeps[Any, Any],
    run_ctx: RunContext[Any],
    request: ModelRequest,
    loads: list[CapabilityLoadRecord],
    params: ModelRequestParameters,
) -> ModelRequestParameters:
    """Put the loads `before_model_request` hooks made on `request`, the request being prepared: the capabilities'
    tools are shown (their instruction blocks, `capability:<id>`, are stated on it after the hooks). Returns the
    request's parameters."""
    request.parts = [*request.parts, *loads]
    deps.tool_deltas = True
    refresh_loaded_capabilities(deps.capabilities, deps.loaded_capability_ids, state.message_history)
    loaded = [cid for record in loads if isinstance(record, CapabilityLoadDeltaPart) for cid in record.loaded]
    owned = [d for d in (deps.step_tools or {}).values() if d.capability_id in loaded]
    shown = {d.name for d in params.function_tools}
    owned_names = {d.name for d in owned}
    deps.discovered_tool_names.update(owned_names)
    # the request holds the capability's tools hidden (`defer_loading=True`, to be `'withheld'`): shown from now on
    tools = [
        *(dataclasses.replace(d, defer_loading=False) if d.name in owned_names and d.defer_loading else d
          for d in params.function_tools),
        *(dataclasses.replace(d, defer_loading=False) for d in owned if d.name not in shown),
    ]  # fmt: skip
    # (their instructions are stated on `request` once the hooks are done, as every loaded block: `loaded_instructions`)
    deps.event_buffer.extend(load_events(loads))
    return dataclasses.replace(
        params, function_tools=tools, revealed_tool_names=params.revealed_tool_names | {d.name for d in owned}
    )


def response_load_window(
    deps: GraphAgentDeps[Any, Any], run_ctx: RunContext[Any], response: ModelResponse
) -> AbstractContextManager[Any]:
    """Where `after_model_request` hooks of `response` may load a capability: when the run answers its tool calls
    (one that is not an output tool's) with another request; otherwise (a final response) nowhere."""
    manager = deps.tool_manager
    outputs = deps.output_schema.tools
    if manager is None or not any(call.tool_name not in outputs for call in response.tool_calls):
        return nullcontext()
    return capability_load_window(run_ctx.pending_messages, manager.capability_loads, response=response)


def load_events(records: Sequence[Any]) -> list[Any]:
    """The events of the load records `records`, in order."""
    return [
        CapabilityLoadDeltaEvent(part=r)
        if isinstance(r, CapabilityLoadDeltaPart)
        else ToolAvailabilityDeltaEvent(part=r)
        for r in records
    ]
