"""The toolsets of an agent: the toolset of its own function tools, those given or registered, the toolset of a
run, entering them all with `async with agent:`, and the sampling model of its MCP servers."""

from __future__ import annotations as _annotations

from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from contextvars import ContextVar
from operator import is_
from types import TracebackType
from typing import Any, Generic

import anyio

from .._messages.capability_loading import refresh_loaded_capabilities
from .._run.deps import GraphAgentDeps
from .._run.state import GraphAgentState
from ..capabilities import AbstractCapability, CombinedCapability
from ..capabilities._loaded_on_demand import capability_registry
from ..capabilities.tool_search import ToolSearch
from ..exceptions import UserError
from ..models import Model
from ..tools import AgentDepsT, Tool, ToolFuncEither
from ..toolsets import AbstractToolset, CombinedToolset, FunctionToolset
from ..toolsets._dynamic import DynamicToolset, ToolsetFunc, as_toolset
from ..toolsets._tool_search import ToolSearchToolset

__all__ = ('AgentFunctionToolset', 'AgentToolsets')


class AgentFunctionToolset(FunctionToolset[AgentDepsT]):
    """The toolset of an agent's own function tools, named 'the agent' in errors.

    Args:
        tools: The agent's tools, `Tool`s or functions.
        timeout: The agent's `tool_timeout`: the timeout in seconds of its tools that set none.

    Raises:
        UserError: `timeout` is not positive.
    """

    def __init__(
        self, tools: Sequence[Tool[AgentDepsT] | ToolFuncEither[AgentDepsT, ...]] = (), *, timeout: float | None = None
    ) -> None:
        if timeout is not None and timeout <= 0:
            raise UserError(f'tool_timeout must be > 0, got {timeout}')
        super().__init__(tools, timeout=timeout)

    @property
    def id(self) -> str | None:
        """The agent's function tools have a fixed id."""
        return '<agent>'

    @property
    def label(self) -> str:
        """How name clash errors name the agent's own tools."""
        return 'the agent'


class AgentToolsets(Generic[AgentDepsT]):
    """The toolsets of an agent (a part of `Agent`): its own function tools first, then those given or registered
    (`@agent.toolset`); the run's toolset made from them; and their lifetime across the runs inside
    `async with agent:`.

    Args:
        function_toolset: The toolset of the agent's own function tools.
        toolsets: The other toolsets, in order.
    """

    def __init__(
        self, function_toolset: AgentFunctionToolset[AgentDepsT], toolsets: Sequence[AbstractToolset[AgentDepsT]]
    ) -> None:
        self.function_toolset = function_toolset
        self.extra: list[AbstractToolset[AgentDepsT]] = list(toolsets)
        self.override_tools: ContextVar[AgentFunctionToolset[AgentDepsT] | None] = ContextVar(
            '_override_tools', default=None
        )
        self.override_toolsets: ContextVar[Sequence[AbstractToolset[AgentDepsT]] | None] = ContextVar(
            '_override_toolsets', default=None
        )
        self.entered = 0
        """How many `async with agent:` blocks are open."""
        self._enter_lock = anyio.Lock()
        self._exit_stack: AsyncExitStack | None = None
        self._combined: CombinedToolset[AgentDepsT] | None = None
        """The last runs' combination of the toolsets, reused (with its listing memo) while they are the same."""

    def register(self, function: ToolsetFunc[AgentDepsT], per_run_step: bool, id: str | None) -> None:
        """Add a function building a toolset from the `RunContext` (`@agent.toolset`)."""
        self.extra.append(DynamicToolset(function, per_run_step=per_run_step, id=id))

    @property
    def members(self) -> list[AbstractToolset[AgentDepsT]]:
        """The agent's toolsets (as `override(tools=..., toolsets=...)` sets them in this context)."""
        override = self.override_toolsets.get()
        return [self.override_tools.get() or self.function_toolset, *(self.extra if override is None else override)]

    async def for_run(
        self,
        graph_deps: GraphAgentDeps[AgentDepsT, Any],
        state: GraphAgentState,
        toolsets: Sequence[AbstractToolset[AgentDepsT]] | None,
        default_retries: int,
    ) -> AbstractToolset[AgentDepsT]:
        """The run's toolset (the agent's toolsets, and the run's `toolsets` unless `override(toolsets=...)` is in
        effect, as set up for the run), also set on `graph_deps.toolset`; the run enters it."""
        # `override(toolsets=...)` replaces the run's `toolsets` and the capabilities' too, as in pydantic-ai 1.107
        root = graph_deps.root_capability
        if root is not None:  # the run's capabilities by id, and the deferred ones its history has loaded
            graph_deps.capabilities = capability_registry([root])
            loaded, history = graph_deps.loaded_capability_ids, state.message_history
            refresh_loaded_capabilities(graph_deps.capabilities, loaded, history)
        override = self.override_toolsets.get()
        members = [self.override_tools.get() or self.function_toolset, *(self.extra if override is None else override)]
        if override is None:  # (`members`, then the capabilities' toolset and the run's)
            if root is not None:
                members += _capability_toolsets(root)
            if toolsets:
                members += toolsets
        only = members[0] if len(members) == 1 else None
        # The combined toolset sets each tool's `toolset_id`; the agent's own toolset alone, with no tool to stamp,
        # is the run's toolset as it is (a step of a run without tools costs no combining layer).
        toolset: AbstractToolset[AgentDepsT] = (
            only if isinstance(only, AgentFunctionToolset) and not only.tools else self._combination(members)
        )
        if root is not None:
            toolset = root.get_wrapper_toolset(toolset) or toolset
        # Every run searches deferred tools, as pydantic-ai adds `ToolSearch()`.
        if root is None or not _has_tool_search(root):
            toolset = ToolSearchToolset(toolset)
            graph_deps.implicit_tool_search = True
            if type(toolset.wrapped).for_run is AbstractToolset.for_run:
                # The wrapper's `for_run` gives itself when the wrapped toolset's does (the default, which reads
                # nothing of the run): no run context to make.
                graph_deps.toolset = toolset
                return toolset
        ctx = graph_deps.run_context(state, max_retries=default_retries)
        graph_deps.toolset = run_toolset = await toolset.for_run(ctx)
        return run_toolset

    def _combination(self, members: list[AbstractToolset[AgentDepsT]]) -> CombinedToolset[AgentDepsT]:
        """The combination of `members`: the last runs' one when they had the same members (it is never entered
        itself: each run enters its own copy, from `for_run`)."""
        combined = self._combined
        if combined is None or len(combined.toolsets) != len(members) or not all(map(is_, combined.toolsets, members)):
            combined = self._combined = CombinedToolset(members)
        return combined

    async def enter(self, model: Callable[[], Model | None], root_capability: AbstractCapability[AgentDepsT]) -> None:
        """Enter the context of the model `model()` gives (if any) and the toolsets, on the first of nested entries
        only."""
        async with self._enter_lock:
            if self.entered == 0:
                async with AsyncExitStack() as stack:
                    if (entered_model := model()) is not None:
                        await stack.enter_async_context(entered_model)
                    members = self.members
                    if self.override_toolsets.get() is None:
                        members += _capability_toolsets(root_capability)
                    await stack.enter_async_context(CombinedToolset(members))
                    self._exit_stack = stack.pop_all()
            self.entered += 1

    async def exit(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """Leave what `enter` entered, on the matching last exit."""
        async with self._enter_lock:
            self.entered -= 1
            if self.entered == 0:
                stack, self._exit_stack = self._exit_stack, None
                if stack is not None:
                    await stack.__aexit__(exc_type, exc, tb)

    def set_sampling_model(self, sampling_model: Model, root_capability: AbstractCapability[AgentDepsT]) -> None:
        """Make `sampling_model` answer the sampling requests of the MCP servers among the toolsets."""
        try:
            from ..mcp import MCPServer
        except ModuleNotFoundError:  # pragma: no cover - without the `mcp` extra there is no MCP server
            return

        def set_model(toolset: AbstractToolset[AgentDepsT]) -> None:
            if isinstance(toolset, MCPServer):
                toolset.sampling_model = sampling_model

        for toolset in [*self.members, *_capability_toolsets(root_capability)]:
            toolset.apply(set_model)


def _has_tool_search(capability: AbstractCapability[Any] | None) -> bool:
    if isinstance(capability, ToolSearch):
        return True
    if isinstance(capability, CombinedCapability):
        return any(_has_tool_search(member) for member in capability.capabilities)
    return False


def _capability_toolsets(capability: AbstractCapability[AgentDepsT] | None) -> list[AbstractToolset[AgentDepsT]]:
    """The toolset the capabilities add (their `get_toolset`), as a list of none or one."""
    toolset = None if capability is None else capability.get_toolset()
    return [] if toolset is None else [as_toolset(toolset)]
