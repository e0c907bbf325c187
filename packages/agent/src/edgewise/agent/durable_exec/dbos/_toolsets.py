"""The toolsets `DBOSDurability` makes durable inside a DBOS workflow, as pydantic-ai 2.x's DBOS integration does:

- an MCP server: its tool listing (`{prefix}__mcp_server__{id}.get_tools`, once per run when the server caches its
  tools), its instructions (`.get_instructions`, when it includes them) and each tool call (`.call_tool`) are steps;
- a dynamic toolset (`@agent.toolset`, a function in `toolsets=`): its listing and instructions
  (`{prefix}__dynamic_toolset__{id}.get_tools`) and each tool call (`.call_tool`) are steps, the function being run
  again inside each step (so a recovered run lists the recorded tools, whatever the function would build now).

Outside a workflow (or inside a step) both are the toolsets they wrap.
"""

from __future__ import annotations as _annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import dbos as _dbos
import pydantic
from pydantic_core import SchemaValidator, core_schema
from typing_extensions import TypedDict

from ..._tools.definition import ToolDefinition
from ...exceptions import UserError
from ...toolsets import AbstractToolset
from ...toolsets.abstract import ToolsetInstructions, ToolsetTool
from ._agent import StepConfig, _WorkflowStepToolset, recorded_call

if TYPE_CHECKING:
    from ...mcp._server import MCPServer
    from ...models import RunContext
    from ...toolsets._dynamic import DynamicToolset

__all__ = ('DBOSMCPToolset', 'DBOSDynamicToolset')

# Each tool's definition and retry budget, by name.
_TOOLS = pydantic.TypeAdapter(dict[str, tuple[ToolDefinition, int]])


class _Listing(TypedDict):
    tools: dict[str, tuple[ToolDefinition, int]]
    instructions: ToolsetInstructions


_LISTING = pydantic.TypeAdapter(_Listing)
# Arguments are only parsed in the workflow; the tool's own validator checks them inside the call's step.
_ANY_ARGS: Any = SchemaValidator(core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema()))


def _in_workflow() -> bool:
    return _dbos.DBOS.workflow_id is not None and _dbos.DBOS.step_id is None


def _options(config: StepConfig, name: str) -> Any:
    return {**config, 'name': name}


class DBOSMCPToolset(_WorkflowStepToolset):
    """An MCP server whose tool listing, instructions and tool calls are DBOS steps inside a workflow."""

    def __init__(self, wrapped: MCPServer, step_name_prefix: str, step_config: StepConfig) -> None:
        """Wrap `wrapped`; its steps are named `{step_name_prefix}.get_tools`, `.get_instructions` and `.call_tool`."""
        super().__init__(wrapped, f'{step_name_prefix}.call_tool', step_config)
        self.server = wrapped
        self.step_name_prefix = step_name_prefix
        self.step_config = step_config
        self._listed: dict[str, tuple[ToolDefinition, int]] | None = None

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        """The server's tools; in a workflow, listed in a step (once per run when the server caches its tools)."""
        if not _in_workflow():
            return await self.wrapped.get_tools(ctx)
        listed = self._listed if self.server.cache_tools else None
        if listed is None:

            async def step() -> str:
                tools = await self.wrapped.get_tools(ctx)
                return _TOOLS.dump_json({name: (t.tool_def, t.max_retries) for name, t in tools.items()}).decode()

            options = _options(self.step_config, f'{self.step_name_prefix}.get_tools')
            listed = self._listed = _TOOLS.validate_json(await _dbos.DBOS.run_step_async(options, step))
        self.server._run_model = ctx.model  # its sampling requests go to the run's model, as when it lists tools
        tools: dict[str, ToolsetTool[Any]] = {}
        for name, (tool_def, max_retries) in listed.items():
            tools[name] = tool = self.server.tool_for_tool_def(tool_def)
            tool.max_retries = max_retries
        return tools

    async def get_instructions(self, ctx: RunContext[Any]) -> ToolsetInstructions:
        """The server's instructions, if it includes them; in a workflow, read in a step (which connects to it)."""
        if not self.server.include_instructions:
            return None
        if not _in_workflow():
            return await self.wrapped.get_instructions(ctx)

        async def step() -> str | None:
            async with self.server:
                return await self.server.get_instructions(ctx)

        options = _options(self.step_config, f'{self.step_name_prefix}.get_instructions')
        instructions: str | None = await _dbos.DBOS.run_step_async(options, step)
        return instructions


class DBOSDynamicToolset(AbstractToolset[Any]):
    """A dynamic toolset whose listing (with its instructions) and tool calls are DBOS steps inside a workflow, its
    function run again inside each step."""

    def __init__(self, wrapped: DynamicToolset[Any], step_name_prefix: str, step_config: StepConfig) -> None:
        """Wrap `wrapped`; its steps are named `{step_name_prefix}.get_tools` and `.call_tool`."""
        self.wrapped = wrapped
        self.step_name_prefix = step_name_prefix
        self.step_config = step_config
        self._instructions: ToolsetInstructions = None

    @property
    def id(self) -> str | None:
        """The dynamic toolset's id."""
        return self.wrapped.id

    async def for_run(self, ctx: RunContext[Any]) -> AbstractToolset[Any]:
        """Outside a workflow, the dynamic toolset's own toolset for the run; in one, a copy of this wrapper (the
        function runs inside the steps only)."""
        if not _in_workflow():
            return await self.wrapped.for_run(ctx)
        return copy.copy(self)

    async def _resolved(self, ctx: RunContext[Any], use: Callable[[AbstractToolset[Any]], Any]) -> Any:
        # Built afresh inside each step, never from what another step left: a recovered run stays deterministic.
        toolset = await self.wrapped.for_run(ctx)
        async with toolset:
            toolset = await toolset.for_run_step(ctx)
            return await use(toolset)

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        """The tools the function builds, listed (with the toolset's instructions) in a step."""

        async def listing(toolset: AbstractToolset[Any]) -> str:
            tools = await toolset.get_tools(ctx)
            found: _Listing = {
                'tools': {name: (tool.tool_def, tool.max_retries) for name, tool in tools.items()},
                'instructions': await toolset.get_instructions(ctx),
            }
            return _LISTING.dump_json(found).decode()

        async def step() -> str:
            return await self._resolved(ctx, listing)  # type: ignore[no-any-return]

        options = _options(self.step_config, f'{self.step_name_prefix}.get_tools')
        found = _LISTING.validate_json(await _dbos.DBOS.run_step_async(options, step))
        self._instructions = found['instructions']
        return {
            name: ToolsetTool(toolset=self, tool_def=tool_def, max_retries=max_retries, args_validator=_ANY_ARGS)
            for name, (tool_def, max_retries) in found['tools'].items()
        }

    async def get_instructions(self, ctx: RunContext[Any]) -> ToolsetInstructions:
        """The instructions listed with the step's tools."""
        return self._instructions

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        """The tool called in a step, through the toolset the function builds there (its arguments validated by the
        tool's own validator).

        Raises:
            UserError: the function built no tool of that name inside the step.
        """

        async def call(toolset: AbstractToolset[Any]) -> Any:
            real = (await toolset.get_tools(ctx)).get(name)
            if real is None:
                raise UserError(
                    f'Tool {name!r} not found in dynamic toolset {self.id!r}: its function built another toolset '
                    'inside the step than when the tools were listed.'
                )
            args = real.args_validator.validate_python(tool_args)
            return await toolset.call_tool(name, args, ctx, real)

        options = _options(self.step_config, f'{self.step_name_prefix}.call_tool')
        return await recorded_call(options, lambda: self._resolved(ctx, call))

    def apply(self, visitor: Callable[[AbstractToolset[Any]], None]) -> None:
        """Visit the dynamic toolset."""
        self.wrapped.apply(visitor)

    def visit_and_replace(
        self, visitor: Callable[[AbstractToolset[Any]], AbstractToolset[Any]]
    ) -> AbstractToolset[Any]:
        """This wrapper, as it is (its toolset is built inside the steps)."""
        return self

    def __repr__(self) -> str:
        return f'DBOSDynamicToolset({self.wrapped!r})'
