"""The setup of a model request step (`ModelRequestNode`): the usage limits checked, the request added to the
history, the step's model, tools and instructions, and the request's parameters and settings (through the
capabilities' `before_model_request` hooks)."""

from __future__ import annotations as _annotations

from typing import Any

from edgewise.graph import GraphRunContext

from .._message_flow.pending import delivered_events, take_pending
from .._output.schema import output_template
from .._run.deps import GraphAgentDeps, resolve_native_tools, stored_through
from .._run.state import GraphAgentState
from ..messages import (
    InstructionPart,
    ModelRequest,
    ModelResponse,
    ToolAvailabilityDeltaPart,
)
from ..models import ModelRequestParameters
from ..models._request_parameters import agent_request_parameters
from ..toolsets._capability_owned import tool_defs_from_pre_definition_load_returns
from ..toolsets._tool_search import discovered_tool_names
from .history import has_tool_deltas, record_settings_change, request_has_tool_deltas
from .hook_loads import record_loads_ahead, reveal_loads_ahead
from .loaded_instructions import blocks_after_hooks, blocks_for_hooks, loaded_blocks, state_loaded_blocks
from .node_support import add_enqueued_events, load_prices_for, now, prices_wanted
from .request_hooks import run_request_hooks
from .step_tool_manager import (
    asks_for_instructions,
    offer_provider_tool_search,
    prepare_output_tools,
    prepare_step_tools,
    request_instructions,
    unhooked_output_tools,
)

__all__ = ('prepare_request', 'prepare_resume', 'request_parameters')


async def prepare_request(
    node: Any, ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[Any, Any]], *, streaming: bool = False
) -> ModelRequestParameters:
    """Check the usage limits, add the request to the history and build the request's parameters and settings
    (then run the capabilities' `before_model_request` hooks, such as history processors)."""
    state, deps = ctx.state, ctx.deps
    history = state.message_history
    deps.usage_limits.check_before_request(state.usage, history)
    if deps.model_choice is not None:  # a capability's selector may pick the model of each step
        deps.model = await deps.model_choice.for_step(state.run_step + 1, deps.model, history, state.usage)
        deps.model_id = deps.model_choice.model_id
    if prices_wanted(system := deps.model.system):  # (a test model's run awaits nothing)
        await load_prices_for(system)
    request = node.request
    request.timestamp = now()
    if deps.persistence is not None:  # (`deps.durable`) the next snapshot stores the messages from this request on
        state.message_offset = len(history)
        state.response_in_node = False
    history.append(request)
    # A request made by the caller (`AgentRun.next`) may hold a request-scoped system prompt for later requests to drop.
    deps.tool_deltas = deps.tool_deltas or request_has_tool_deltas(request)
    queue = state.pending_messages  # enqueued 'asap': after the request in the history, sent merged with it
    if queue and (delivered := take_pending(queue, 'asap', state.run_id, state.conversation_id)):
        queued = [message for item in delivered for message in item.messages]
        history.extend(queued)
        deps.merge_adjacent = True
        deps.tool_deltas = deps.tool_deltas or has_tool_deltas(queued)
        add_enqueued_events(node, delivered_events(delivered))
    if request is not deps.resumed_request or history[-1] is request:  # resent and followed: ids kept (pydantic-ai)
        request.run_id = request.run_id or state.run_id
        request.conversation_id = request.conversation_id or state.conversation_id
    state.run_step += 1
    deps.request_model = None
    loads_ahead = record_loads_ahead(deps, request) if deps.loads_ahead else None  # from `before_run` hooks
    await prepare_step_tools(state, deps)
    if loads_ahead:
        add_enqueued_events(node, reveal_loads_ahead(deps, request, loads_ahead))
    if deps.loaded_capability_ids:  # (else no capability's tools to reveal)
        _backfill_capability_reveals(state, deps)
    blocks = await deps.instruction_parts(state) if asks_for_instructions(deps) else []
    instruction_parts = request_instructions(state, deps, request, blocks)
    return await request_parameters(node, ctx, streaming, instruction_parts=instruction_parts)


def _state_blocks(state: GraphAgentState, deps: GraphAgentDeps[Any, Any], blocks: dict[str, str]) -> None:
    """State the loaded capabilities' `blocks` that changed on the request being sent, and withdraw those stated of
    capabilities the run no longer has loaded (see `state_loaded_blocks`). Without a loaded capability, the history
    is read for such blocks once a run (`blocks_checked`): a run unloads none but by a compaction, which ends what was
    stated."""
    deps.blocks_checked = True
    target = next(m for m in reversed(state.message_history) if isinstance(m, ModelRequest))
    eager = [key for key, capability in deps.capabilities.items() if capability.defer_loading is not True]
    deps.tool_deltas = state_loaded_blocks(state.message_history, blocks, target, eager=eager) or deps.tool_deltas


def _backfill_capability_reveals(state: GraphAgentState, deps: GraphAgentDeps[Any, Any]) -> None:
    """Record the tools of the capabilities a history loaded without saying which tools that revealed (its
    `load_capability` returns came before they were followed by a `ToolAvailabilityDeltaPart`): one delta part, in
    a request after this step's, naming them (as pydantic-ai 2.x), so that later requests read them from the
    history. Called only for a run with loaded capabilities."""
    owned = tool_defs_from_pre_definition_load_returns(deps.run_context(state), (deps.step_tools or {}).values())
    missing = [name for name in owned if name not in deps.discovered_tool_names]
    if not missing:
        return
    deps.discovered_tool_names.update(discovered_tool_names(state.message_history))  # a history not read yet
    missing = sorted(name for name in missing if name not in deps.discovered_tool_names)
    if missing:
        state.message_history.append(ModelRequest(parts=[ToolAvailabilityDeltaPart(tools_added=missing)]))
        deps.discovered_tool_names.update(missing)
        deps.merge_adjacent = deps.tool_deltas = True


async def prepare_resume(
    node: Any, ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[Any, Any]], *, streaming: bool
) -> tuple[ModelResponse, ModelRequestParameters]:
    """For a run whose history ends with a suspended response (an earlier run's): check the usage limits, take
    that response off the history (the whole turn is recorded in its place) and build the parameters. The
    request that began the turn keeps its instructions, and the capabilities' request hooks do not run: the
    provider is sent the turn as it was."""
    state, deps = ctx.state, ctx.deps
    history = state.message_history
    deps.usage_limits.check_before_request(state.usage, history)
    await load_prices_for(deps.model.system)
    suspended = history.pop()
    assert isinstance(suspended, ModelResponse)
    stored_through(ctx, len(history))  # the next snapshot stores the history from the turn's place on
    deps.new_message_index = min(deps.new_message_index, len(history))  # the whole turn is a new message
    state.run_step += 1
    deps.request_model = None
    await prepare_step_tools(state, deps)
    instructions = next((m.instructions for m in reversed(history) if isinstance(m, ModelRequest)), None)
    instruction_parts = [InstructionPart(instructions)] if instructions else None  # the turn's, as it was sent
    return suspended, await request_parameters(node, ctx, streaming, hooks=False, instruction_parts=instruction_parts)


async def request_parameters(
    node: Any,
    ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[Any, Any]],
    streaming: bool,
    *,
    hooks: bool = True,
    instruction_parts: list[InstructionPart] | None = None,
) -> ModelRequestParameters:
    """The request's parameters and settings (kept for the request), through the capabilities'
    `before_model_request` hooks when `hooks`; `instruction_parts`: the request's instruction blocks."""
    state, deps = ctx.state, ctx.deps
    schema = deps.output_schema
    mode = schema.mode
    prompted = mode == 'prompted' or mode == 'native'
    output_tools = unhooked_output_tools(deps)
    if output_tools is None:  # a capability's hook may change them
        output_tools = await prepare_output_tools(state, deps)
    params = agent_request_parameters(
        function_tools=list(deps.request_tools),
        output_mode=mode,
        output_object=schema.object_def,
        output_tools=output_tools,
        prompted_output_template=output_template(schema, deps.model.profile) if prompted else None,
        # As in pydantic-ai: native and prompted output arrive as text, so the model is told text is allowed.
        allow_text_output=schema.allow_text_output or prompted,
        allow_image_output=schema.allows_image,
        instruction_parts=instruction_parts,
    )
    loaded = deps.loaded_capability_ids
    if deps.defers_tools or deps.tool_deltas or loaded:  # a loaded capability's tools are revealed, none hidden
        owned = {name for name, d in (deps.step_tools or {}).items() if d.capability_id in loaded}
        params.revealed_tool_names = deps.discovered_tool_names | owned
    if deps.native_tools:
        params.native_tools = await resolve_native_tools(deps.native_tools, deps.run_context(state))
    if deps.defers_tools:
        offer_provider_tool_search(params, deps)
    params = deps.model.customize_request_parameters(params)
    settings = deps.model_settings
    blocks: dict[str, str] = {}
    if deps.settings_resolver is not None or deps.request_hooks or (hooks and loaded):
        run_ctx = deps.run_context(state)
        if deps.settings_resolver is not None:
            settings = deps.settings_resolver(run_ctx)
        blocks = await loaded_blocks(deps, run_ctx) if hooks and loaded else {}
        if deps.request_hooks and hooks:
            params = blocks_for_hooks(params, blocks)
            settings, params = await run_request_hooks(ctx, run_ctx, settings, params, streaming=streaming)
            if params.instruction_visibility:
                params, blocks = blocks_after_hooks(params, blocks)
            if loaded:  # (a hook may have loaded a capability)
                blocks = await loaded_blocks(deps, run_ctx, known=blocks)
    # (without a loaded block: the history may state blocks of capabilities no longer loaded)
    if blocks or (hooks and deps.tool_deltas and not deps.blocks_checked):
        _state_blocks(state, deps, blocks)
    node.__dict__['_settings'] = settings
    state.last_max_tokens = (settings or {}).get('max_tokens')
    change = record_settings_change(state.message_history, deps.request_model or deps.model, settings, deps.tool_deltas)
    if change is not None:
        deps.tool_deltas = True  # the history now holds a part `Model.prepare_messages` drops
        add_enqueued_events(node, [change])
    return params
