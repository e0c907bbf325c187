"""`DeferredCapabilityLoaderToolset`: the `load_capability` tool, with which the model loads a deferred capability
(as pydantic-ai 1.107's module of this name)."""

from __future__ import annotations as _annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import TypeAdapter

from .._functions.runners import normalize_instructions
from .._messages.capability_loading import (
    CAPABILITY_LOAD_TOOL_KIND,
    LOAD_CAPABILITY_TOOL_NAME,
    LoadCapabilityArgs,
    LoadCapabilityReturn,
)
from .._messages.content import ToolReturn
from .._messages.instructions import InstructionPart
from .._messages.model_messages import ModelResponse
from .._messages.tool_parts import ToolCallPart
from .._tools.definition import ToolDefinition
from ..exceptions import ModelRetry, UserError
from ..models._model import AgentDepsT, RunContext
from ._capability_owned import CapabilityOwnedToolset
from .abstract import AbstractToolset, ToolsetTool
from .wrapper import WrapperToolset

__all__ = (
    'LOAD_CAPABILITY_ALREADY_ACTIVE_MESSAGE_TEMPLATE',
    'LOAD_CAPABILITY_ALREADY_AVAILABLE_MESSAGE_TEMPLATE',
    'LOAD_CAPABILITY_DUPLICATE_CALL_MESSAGE_TEMPLATE',
    'LOAD_CAPABILITY_LOADED_MESSAGE_TEMPLATE',
    'LOAD_CAPABILITY_TOOL_DESCRIPTION',
    'LOAD_CAPABILITY_TOOL_NAME',
    'DeferredCapabilityLoaderToolset',
    'capability_instructions',
)

LOAD_CAPABILITY_TOOL_DESCRIPTION = (
    'Load a listed capability whenever it is plausibly relevant to the task.'
    ' Loading makes the capability instructions and any tools it provides available.'
)
"""The `load_capability` tool's description (pydantic-ai 2.x's)."""

LOAD_CAPABILITY_ALREADY_ACTIVE_MESSAGE_TEMPLATE = (
    'Capability {capability_id!r} is already active. '
    'Use its existing instructions and any tools it provides; do not call `load_capability` for it again.'
)
"""What the model is told (as a retry) when it loads a capability already in effect (pydantic-ai 2.68's)."""

LOAD_CAPABILITY_ALREADY_AVAILABLE_MESSAGE_TEMPLATE = LOAD_CAPABILITY_ALREADY_ACTIVE_MESSAGE_TEMPLATE
"""The name pydantic-ai 2.33 gave `LOAD_CAPABILITY_ALREADY_ACTIVE_MESSAGE_TEMPLATE`."""

LOAD_CAPABILITY_DUPLICATE_CALL_MESSAGE_TEMPLATE = (
    'Capability {capability_id!r} is already being loaded by an earlier `load_capability` call in this response; '
    'do not call `load_capability` for it again.'
)
"""What the model is told (as a retry) for a second `load_capability` call of one capability in the same response:
the first of them, in the order the model made them, loads it, whichever runs first."""

LOAD_CAPABILITY_LOADED_MESSAGE_TEMPLATE = 'Capability {capability_id!r} loaded. Its instructions, if any, follow.'
"""The `message` of a load's return (pydantic-ai 2.68's): the instructions follow as the block `capability:<id>`,
stated after the return in the system voice, never in the tool output."""


@cache
def _args() -> tuple[Any, dict[str, Any]]:
    # The validator and schema of `load_capability`, built on first use rather than at import.
    adapter = TypeAdapter(LoadCapabilityArgs)
    return adapter.validator, {**adapter.json_schema(), 'title': 'LoadCapabilityArgs'}


@dataclass
class DeferredCapabilityLoaderToolset(WrapperToolset[AgentDepsT]):
    """The wrapped tools after the `load_capability` tool, which loads a deferred capability of the run: it adds
    the id to `ctx.loaded_capability_ids` and returns a confirmation (the run states the capability's instructions
    after it, as the block `capability:<id>`)."""

    async def get_tools(self, ctx: RunContext[AgentDepsT]) -> dict[str, ToolsetTool[AgentDepsT]]:
        """`load_capability`, then the wrapped tools.

        Raises:
            UserError: a wrapped tool is named `load_capability`.
        """
        tools = await self.wrapped.get_tools(ctx)
        if LOAD_CAPABILITY_TOOL_NAME in tools:
            raise UserError(
                f"Tool name '{LOAD_CAPABILITY_TOOL_NAME}' is reserved for deferred capability loading. "
                'Rename your tool to avoid conflicts.'
            )
        validator, schema = _args()
        tool_def = ToolDefinition(
            name=LOAD_CAPABILITY_TOOL_NAME,
            description=LOAD_CAPABILITY_TOOL_DESCRIPTION,
            parameters_json_schema=schema,
            tool_kind=CAPABILITY_LOAD_TOOL_KIND,
        )
        load = ToolsetTool(toolset=self, tool_def=tool_def, max_retries=1, args_validator=validator)
        return {LOAD_CAPABILITY_TOOL_NAME: load, **tools}

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDepsT], tool: ToolsetTool[AgentDepsT]
    ) -> Any:
        """Load the capability for `load_capability`; call the wrapped toolset for the other tools."""
        if tool.toolset is self and tool.tool_def.tool_kind == CAPABILITY_LOAD_TOOL_KIND:
            return await self._load(tool_args['id'], ctx)
        return await self.wrapped.call_tool(name, tool_args, ctx, tool)

    async def _load(
        self, capability_id: str, ctx: RunContext[AgentDepsT]
    ) -> LoadCapabilityReturn | ToolReturn[LoadCapabilityReturn]:
        capability = ctx.capabilities.get(capability_id)
        if capability is None:
            raise ModelRetry(f'No capability found with id {capability_id!r}.')
        # The calls of one response may run in parallel: the first of them in the model's order loads the capability.
        loaded_here = _step_loads(ctx)
        if capability_id in loaded_here:  # (by an earlier call of the response, which already ran)
            raise ModelRetry(LOAD_CAPABILITY_DUPLICATE_CALL_MESSAGE_TEMPLATE.format(capability_id=capability_id))
        if capability_id in ctx.active_capability_ids:
            raise ModelRetry(LOAD_CAPABILITY_ALREADY_ACTIVE_MESSAGE_TEMPLATE.format(capability_id=capability_id))
        if _first_load_call(ctx, capability_id) not in (None, ctx.tool_call_id):  # that call has not run yet
            raise ModelRetry(LOAD_CAPABILITY_DUPLICATE_CALL_MESSAGE_TEMPLATE.format(capability_id=capability_id))
        ctx.loaded_capability_ids.add(capability_id)
        loaded_here.add(capability_id)
        message = LOAD_CAPABILITY_LOADED_MESSAGE_TEMPLATE.format(capability_id=capability_id)
        content: LoadCapabilityReturn = {'message': message}
        # its tools are available from now on: the run records them in a `ToolAvailabilityDeltaPart` (pydantic-ai 2.x)
        owned = [name for name, tool_def in ctx.tools.items() if tool_def.capability_id == capability_id]
        return ToolReturn(return_value=content, tools=owned) if owned else content


def _step_loads(ctx: RunContext[Any]) -> set[str]:
    """The capabilities the `load_capability` calls of the step `ctx` is at have loaded so far (kept on the step's
    tool manager, by step: a manager is copied from the last step's; a set of its own without one)."""
    manager = ctx.tool_manager
    if manager is None:
        return set()
    kept: tuple[int, set[str]] | None = manager.__dict__.get('_step_capability_loads')
    if kept is None or kept[0] != ctx.run_step:
        kept = manager.__dict__['_step_capability_loads'] = (ctx.run_step, set())
    return kept[1]


def _first_load_call(ctx: RunContext[Any], capability_id: str) -> str | None:
    """The id of the first `load_capability` call for `capability_id` in the response being executed (the last one
    in the history), if it has one."""
    response = next((m for m in reversed(ctx.messages) if isinstance(m, ModelResponse)), None)
    for part in response.parts if response is not None else ():
        if isinstance(part, ToolCallPart) and part.tool_name == LOAD_CAPABILITY_TOOL_NAME:
            try:
                args = part.args_as_dict(raise_if_invalid=True)
            except ValueError:
                continue
            if args.get('id') == capability_id:
                return part.tool_call_id
    return None


async def capability_instructions(toolset: AbstractToolset[Any], capability: Any, ctx: RunContext[Any]) -> str:
    """The instructions of the deferred `capability` (its own, then those of its toolsets among `toolset`'s), joined
    by blank lines: the text of its block `capability:<id>` once loaded (`''` for none)."""
    texts: list[str] = []
    for item in normalize_instructions(capability.get_instructions()):
        result = item if isinstance(item, str) else await item.run(ctx)
        text = result.content if isinstance(result, InstructionPart) else result
        if text and text.strip():
            texts.append(text.strip())
    visited: list[AbstractToolset[Any]] = []
    toolset.apply(visited.append)
    for owned in visited:
        if isinstance(owned, CapabilityOwnedToolset) and owned.capability is capability:
            found: Any = await owned.wrapped.get_instructions(ctx)
            for item in [found] if isinstance(found, str) else found or ():
                text = item if isinstance(item, str) else getattr(item, 'content', None)  # an `InstructionPart`
                if text and text.strip():
                    texts.append(text)
    return '\n\n'.join(texts).strip()
