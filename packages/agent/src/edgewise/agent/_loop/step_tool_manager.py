"""The tools of each step of an agent run: the step's `ToolManager` (function tools, through the capabilities'
`prepare_tools` hooks) and the output tools (through their `prepare_output_tools` hooks)."""

from __future__ import annotations as _annotations

import dataclasses
from typing import Any, TypeAlias

from .._messages.capability_loading import refresh_loaded_capabilities
from .._messages.tool_parts import TOOL_SEARCH_NATIVE_KIND, TOOL_SEARCH_TOOL_KIND
from .._run.deps import GraphAgentDeps
from .._run.state import GraphAgentState
from .._tools.definition import ToolDefinition
from .._tools.tool_kinds import parse_tool_kind
from .._utils import field_defaults
from ..exceptions import UserError
from ..messages import (
    InstructionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ToolReturnPart,
)
from ..models._instruction_history import RECORD_PARTS
from ..models._request_parameters import ModelRequestParameters, resolve_return_schema
from ..native_tools._tool_search import ToolSearchTool
from ..tool_manager import TOOL_HOOKS, ToolManager
from ..toolsets._default_methods import gives_no_instructions
from ..toolsets._tool_search import discovered_tool_names
from .instruction_window import update_instruction_history

__all__ = (
    'prepare_step_tools',
    'run_tool_manager',
    'prepare_output_tools',
    'unhooked_output_tools',
    'request_instructions',
    'asks_for_instructions',
    'offer_provider_tool_search',
    'withhold_unevidenced_reveals',
)


async def prepare_step_tools(
    state: GraphAgentState, deps: GraphAgentDeps[Any, Any], step: int | None = None
) -> dict[str, ToolDefinition]:
    """The function tools of run step `step` (default: the current one) by name; `deps.tool_manager` becomes the
    step's manager, and `deps.request_tools` the definitions of the request's function tools (the hidden ones too,
    `defer_loading=True`: the model resolves them `'withheld'` or `'deferred'`, and the request hooks see them).

    A step's toolsets are prepared once: asked again for the step last prepared, this returns its tools as they
    are. A toolset whose listing does not change (the same mapping as at the last step, as function tools without
    `prepare` give) costs no work past the listing.
    """
    step = state.run_step if step is None else step
    if step == deps.tools_step and deps.step_tools is not None:
        return deps.step_tools
    deps.tools_step = step
    if deps.capabilities:  # the deferred capabilities the history has loaded decide the step's tools and hooks
        refresh_loaded_capabilities(deps.capabilities, deps.loaded_capability_ids, state.message_history)
    if deps.defers_tools or deps.tool_deltas:
        _refresh_discovered(state, deps)
    ctx = deps.run_context(state, max_retries=deps.default_tool_retries)
    if ctx.run_step != step:  # prepared ahead, for the request a resumed run is about to send
        ctx = dataclasses.replace(ctx, run_step=step)
    last: ToolManager[Any] | None = deps.tool_manager
    manager = run_tool_manager(deps) if last is None else last
    deps.tool_manager = manager = await manager.for_run_step(ctx)
    if last is not None and last is not manager:
        # The last step's manager and its context hold each other: a cycle the garbage collector would have to
        # find (and keep its step's messages and usage alive until then). The run is done with its context.
        last.ctx = None
    deps.toolset = manager.toolset
    listing = manager.tools
    if listing is deps.listing and deps.step_tools is not None:
        return deps.step_tools
    assert listing is not None  # set by `for_run_step`
    deps.listing = listing
    deps.step_tool_functions = listing
    seen = _last_seen
    if seen is not None and seen.listing is listing:
        step_tools, deps.request_tools, deps.tool_kinds, defers = seen.derived
    else:
        step_tools = {name: resolve_return_schema(tool.tool_def) for name, tool in listing.items()}
        request_tools = list(step_tools.values())
        tool_kinds = {name: d.tool_kind for name, d in step_tools.items() if d.tool_kind is not None}
        _check_tool_kinds(tool_kinds)
        defers = any(d.defer_loading or d.with_native == TOOL_SEARCH_NATIVE_KIND for d in step_tools.values())
        deps.request_tools, deps.tool_kinds = request_tools, tool_kinds
        _remember(listing, (step_tools, request_tools, tool_kinds, defers))
    deps.step_tools = step_tools
    if defers and not (deps.defers_tools or deps.tool_deltas):
        _refresh_discovered(state, deps)  # the first step with deferred tools
    deps.defers_tools = defers
    return step_tools


_MANAGER_DEFAULTS, _MANAGER_FACTORIES = field_defaults(ToolManager)


def run_tool_manager(deps: GraphAgentDeps[Any, Any]) -> ToolManager[Any]:
    """The run's tool manager before its first step: `ToolManager(deps.toolset, deps.root_capability,
    default_max_retries=..., validation_context=..., tracing=..., deferrals_are_span_errors=..., hooked=...,
    carry_over=False)` (the run keeps the retry counts in its state), without the keyword handling of its `__init__`
    (a run makes one): the same `__dict__`, in the order of the fields."""
    manager: ToolManager[Any] = object.__new__(ToolManager)
    values = _MANAGER_DEFAULTS.copy()
    values['toolset'] = deps.toolset
    values['root_capability'] = deps.root_capability
    for name, factory in _MANAGER_FACTORIES:
        values[name] = factory()
    values['default_max_retries'] = deps.default_tool_retries
    values['validation_context'] = deps.validation_context
    values['tracing'] = deps.tracing
    values['deferrals_are_span_errors'] = deps.instrumentation.version < 5
    values['hooked'] = deps.hooked & TOOL_HOOKS
    values['carry_over'] = False
    manager.__dict__ = values
    return manager


def _check_tool_kinds(tool_kinds: dict[str, str]) -> None:
    """Refuse a tool whose `tool_kind` is not a defined `ToolKind` (checked as a run collects its tools, so that a
    stored definition still loads without the module that defines its kind).

    Raises:
        UserError: a tool's kind is not defined in this process.
    """
    for name, kind in tool_kinds.items():
        if parse_tool_kind(kind) is None:
            raise UserError(
                f'Tool {name!r} declares `tool_kind={kind!r}`, which is not a defined `ToolKind`. '
                'Import the module that defines the kind before running the agent.'
            )


_Derived: TypeAlias = tuple[dict[str, ToolDefinition], list[ToolDefinition], dict[str, str], bool]
"""What `prepare_step_tools` makes of a listing: the step's definitions, those shown, the tool kinds, whether some
tool is deferred."""


class _Seen:
    """A listing and what `prepare_step_tools` made of it (read only, by every run that gets the same listing)."""

    __slots__ = ('derived', 'listing')

    def __init__(self, listing: dict[str, Any], derived: _Derived) -> None:
        self.listing = listing
        self.derived = derived


_last_seen: _Seen | None = None
"""The last listing made into a step's tools: a toolset that lists the same tools again gives the very same dict
(see `prepare_step_tools`), and the next run of the same agent finds its definitions made already."""


def _remember(listing: dict[str, Any], derived: _Derived) -> None:
    global _last_seen
    _last_seen = _Seen(listing, derived)


def asks_for_instructions(deps: GraphAgentDeps[Any, Any]) -> bool:
    """Whether the run's instruction blocks have to be asked for (`GraphAgentDeps.instruction_parts`): the agent has
    instructions of its own, or its toolset may have some. Else there are none, and no coroutine is made for them."""
    return bool(deps.instructions) or not gives_no_instructions(deps.toolset)


def request_instructions(
    state: GraphAgentState, deps: GraphAgentDeps[Any, Any], request: ModelRequest, parts: list[InstructionPart]
) -> list[InstructionPart] | None:
    """Set the instructions of `request`, the one the current step sends (its toolsets already prepared), from the
    run's instruction blocks `parts`, recording on it the instruction window's baseline or changes when a block is
    `on_change='append'` (`instruction_window`). Returns the blocks joined into them
    (`ModelRequestParameters.instruction_parts`), `None` when there are none.

    Raises:
        UserError: the run has nothing to send: no message history, no user prompt and no instructions.
    """
    if deps.tool_deltas or (parts and any(part.on_change == 'append' for part in parts)):
        # a block that appends its changes, or a history that may hold an instruction window (pydantic-ai 2.68)
        parts = update_instruction_history(state.message_history, parts, request)
        deps.tool_deltas = deps.tool_deltas or any(isinstance(part, RECORD_PARTS) for part in request.parts)
    request.instructions = InstructionPart.join(parts) if parts else None  # (an agent without instructions)
    if not request.instructions and not request.parts and len(state.message_history) == 1:
        raise UserError('No message history, user prompt, or instructions provided')
    return parts or None


def offer_provider_tool_search(params: ModelRequestParameters, deps: GraphAgentDeps[Any, Any]) -> None:
    """Offer the provider's tool search in a request of a step with deferred tools (the implicit tool search adds
    an optional `ToolSearchTool`): the model's check of its native tools keeps it when its provider runs the search,
    with the hidden tools the search covers `'deferred'` (their schemas held back), and drops it otherwise (leaving
    `search_tools`, the hidden tools `'withheld'`)."""
    if deps.implicit_tool_search and not any(isinstance(t, ToolSearchTool) for t in params.native_tools):
        params.native_tools = [*params.native_tools, ToolSearchTool(optional=True)]


def withhold_unevidenced_reveals(
    messages: list[ModelMessage], params: ModelRequestParameters, deps: GraphAgentDeps[Any, Any]
) -> ModelRequestParameters:
    """`params` for the history as the request hooks left it (`messages`): a tool that a search or a tool's reveal
    showed, whose reveal the processed history no longer holds (a delta dropped, a search return left without its
    call), is hidden again (as pydantic-ai 2.x derives what a request reveals from the history it sends). The run's
    `discovered_tool_names` follows the processed history."""
    shown = deps.discovered_tool_names
    if not shown:
        return params
    still = discovered_tool_names(_without_orphaned_search_returns(messages))
    # a loaded capability's tools stay shown: the load in the history is what reveals them
    loaded = deps.loaded_capability_ids
    lost = {
        name
        for name in shown - still
        if (d := (deps.step_tools or {}).get(name)) is None or d.capability_id not in loaded
    }
    if not lost:
        return params
    shown.difference_update(lost)
    tools: list[ToolDefinition] = []
    for t in params.function_tools:
        if t.name in lost and t.with_native == TOOL_SEARCH_NATIVE_KIND and not t.defer_loading:
            t = dataclasses.replace(t, defer_loading=True)  # hidden again, among the tools the search covers
        tools.append(t)
    return dataclasses.replace(params, function_tools=tools, revealed_tool_names=params.revealed_tool_names - lost)


def _without_orphaned_search_returns(messages: list[ModelMessage]) -> list[ModelMessage]:
    # A search return whose call is gone from the history is dropped before the request is sent: it reveals nothing.
    call_ids = {
        p.tool_call_id for m in messages if isinstance(m, ModelResponse) for p in m.parts if hasattr(p, 'tool_call_id')
    }
    kept: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelRequest) and any(_orphaned(p, call_ids) for p in message.parts):
            message = dataclasses.replace(message, parts=[p for p in message.parts if not _orphaned(p, call_ids)])
        kept.append(message)
    return kept


def _orphaned(part: Any, call_ids: set[str]) -> bool:
    return (
        isinstance(part, ToolReturnPart)
        and part.tool_kind == TOOL_SEARCH_TOOL_KIND
        and part.tool_call_id not in call_ids
    )


def _refresh_discovered(state: GraphAgentState, deps: GraphAgentDeps[Any, Any]) -> None:
    found = discovered_tool_names(state.message_history)
    if found != deps.discovered_tool_names:
        deps.discovered_tool_names.clear()
        deps.discovered_tool_names.update(found)


def unhooked_output_tools(deps: GraphAgentDeps[Any, Any]) -> list[ToolDefinition] | None:
    """The output tools of this step when no capability's `prepare_output_tools` hook can change them (no hook, or no
    output tool), with `deps.step_output_tools` cleared; else `None` (`prepare_output_tools` runs the hooks). Asked
    before awaiting those: most requests need no coroutine for their output tools."""
    tool_defs = deps.output_schema.tool_defs
    root = deps.root_capability
    if root is None or not tool_defs or not root.overrides('prepare_output_tools'):
        deps.step_output_tools = None
        return list(tool_defs)
    return None


async def prepare_output_tools(state: GraphAgentState, deps: GraphAgentDeps[Any, Any]) -> list[ToolDefinition]:
    """The output tools of this step: the output schema's, through the capabilities' `prepare_output_tools`
    hooks (with the output retry count in the run context). `deps.step_output_tools` names them. Asked when
    `unhooked_output_tools` gives `None` (a hook may change them).

    Raises:
        UserError: a hook returned an output tool the schema does not have.
    """
    tool_defs = deps.output_schema.tool_defs
    root = deps.root_capability
    assert root is not None  # (see `unhooked_output_tools`)
    ctx = deps.run_context(state, retry=state.retries, max_retries=deps.max_result_retries)
    prepared: list[ToolDefinition] = await root.prepare_output_tools(ctx, list(tool_defs))
    names = {tool_def.name for tool_def in prepared}
    if names - deps.output_schema.tools.keys():
        raise UserError(
            'Prepare function cannot add or rename tools. Use `FunctionToolset.add_function()` or '
            '`RenamedToolset` instead.'
        )
    deps.step_output_tools = names
    return prepared
