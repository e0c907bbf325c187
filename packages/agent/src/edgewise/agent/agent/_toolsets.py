"""The toolsets of an agent: the toolset of its own function tools, the `toolset` decorator, the toolset of a
run, entering them all with `async with agent:`, and the sampling model of its MCP servers."""

from __future__ import annotations as _annotations

from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from contextvars import ContextVar
from types import TracebackType
from typing import Any, Generic, Self, overload

import anyio

from .._messages.capability_loading import refresh_loaded_capabilities
from .._run.deps import GraphAgentDeps
from .._run.state import GraphAgentState
from ..capabilities import AbstractCapability, CombinedCapability
from ..capabilities._loaded_on_demand import capability_registry
from ..capabilities.tool_search import ToolSearch
from ..exceptions import UserError
from ..models import KnownModelName, Model, infer_model
from ..tools import AgentDepsT
from ..toolsets import AbstractToolset, CombinedToolset, FunctionToolset
from ..toolsets._dynamic import DynamicToolset, ToolsetFunc, as_toolset
from ..toolsets._tool_search import ToolSearchToolset

__all__ = ('AgentFunctionToolset', 'AgentToolsets')


class AgentFunctionToolset(FunctionToolset[AgentDepsT]):
    """The toolset of an agent's own function tools, named 'the agent' in errors."""

    @property
    def id(self) -> str | None:
        """The agent's function tools have a fixed id."""
        return '<agent>'

    @property
    def label(self) -> str:
        """How name clash errors name the agent's own tools."""
        return 'the agent'


class AgentToolsets(Generic[AgentDepsT]):
    """The toolsets of `Agent`: its own function tools first, then those given or registered (`@agent.toolset`)."""

    model: Model | KnownModelName | None
    _default_retries: int
    _function_toolset: AgentFunctionToolset[AgentDepsT]
    _toolsets: list[AbstractToolset[AgentDepsT]]
    _override_model: ContextVar[Model | KnownModelName | None]
    _override_tools: ContextVar[AgentFunctionToolset[AgentDepsT] | None]
    _override_toolsets: ContextVar[Sequence[AbstractToolset[AgentDepsT]] | None]
    _entered: int
    _enter_lock: anyio.Lock
    _exit_stack: AsyncExitStack | None
    _root_capability: CombinedCapability[AgentDepsT]

    def _resolve_model(self, model: Model | KnownModelName | None) -> Model:
        """The model of a run given `model`."""
        raise NotImplementedError

    @overload
    def toolset(self, func: ToolsetFunc[AgentDepsT], /) -> ToolsetFunc[AgentDepsT]: ...

    @overload
    def toolset(
        self, /, *, per_run_step: bool = True, id: str | None = None
    ) -> Callable[[ToolsetFunc[AgentDepsT]], ToolsetFunc[AgentDepsT]]: ...

    def toolset(self, func: Any = None, /, *, per_run_step: bool = True, id: str | None = None) -> Any:
        """Register a function building a toolset from the `RunContext` (sync or async, `None` for no tools):
        `@agent.toolset` or `@agent.toolset(per_run_step=False)` to build it once per run instead of per step."""

        def register(function: Any) -> Any:
            self._toolsets.append(DynamicToolset(function, per_run_step=per_run_step, id=id))
            return function

        return register if func is None else register(func)

    @property
    def toolsets(self) -> Sequence[AbstractToolset[AgentDepsT]]:
        """The agent's toolsets: the one holding its own function tools first, then those given or registered."""
        override = self._override_toolsets.get()
        return [
            self._override_tools.get() or self._function_toolset,
            *(self._toolsets if override is None else override),
        ]

    async def _run_toolset(
        self,
        graph_deps: GraphAgentDeps[AgentDepsT, Any],
        state: GraphAgentState,
        toolsets: Sequence[AbstractToolset[AgentDepsT]] | None,
    ) -> AbstractToolset[AgentDepsT]:
        """The run's toolset (the agent's toolsets, and the run's `toolsets` unless `override(toolsets=...)` is in
        effect, as set up for the run), also set on `graph_deps.toolset`; the run enters it."""
        # `override(toolsets=...)` replaces the run's `toolsets` and the capabilities' too, as in pydantic-ai 1.107
        root = graph_deps.root_capability
        if root is not None:  # the run's capabilities by id, and the deferred ones its history has loaded
            graph_deps.capabilities = capability_registry([root])
            loaded, history = graph_deps.loaded_capability_ids, state.message_history
            refresh_loaded_capabilities(graph_deps.capabilities, loaded, history)
        extra: list[AbstractToolset[AgentDepsT]] = []
        if self._override_toolsets.get() is None:
            extra = [*_capability_toolsets(root), *(toolsets or ())]
        members = [*self.toolsets, *extra]
        toolset = members[0] if len(members) == 1 else CombinedToolset(members)
        if root is not None:
            toolset = root.get_wrapper_toolset(toolset) or toolset
        if not _has_tool_search(root):  # every run searches deferred tools, as pydantic-ai adds `ToolSearch()`
            toolset = ToolSearchToolset(toolset)
        ctx = graph_deps.run_context(state, max_retries=self._default_retries)
        graph_deps.toolset = run_toolset = await toolset.for_run(ctx)
        return run_toolset

    async def __aenter__(self) -> Self:
        """Enter the model's context and the agent's toolsets: `async with agent:` keeps toolsets that hold a
        connection (MCP servers) open across the runs inside the block, and closes the provider's HTTP client
        at the end.

        Re-entrant: only the first entry enters them and only the matching last exit leaves them.
        """
        async with self._enter_lock:
            if self._entered == 0:
                async with AsyncExitStack() as stack:
                    if self.model is not None or self._override_model.get() is not None:
                        await stack.enter_async_context(self._resolve_model(None))
                    members = [*self.toolsets]
                    if self._override_toolsets.get() is None:
                        members += _capability_toolsets(self._root_capability)
                    await stack.enter_async_context(CombinedToolset(members))
                    self._exit_stack = stack.pop_all()
            self._entered += 1
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """Leave the toolsets and the model's context, closing the HTTP client its provider made (once every
        `async with agent:` is left)."""
        async with self._enter_lock:
            self._entered -= 1
            if self._entered == 0:
                stack, self._exit_stack = self._exit_stack, None
                if stack is not None:
                    await stack.__aexit__(exc_type, exc, tb)

    def set_mcp_sampling_model(self, model: Model | KnownModelName | None = None) -> None:
        """Make `model` (the agent's model when `None`) answer the sampling requests of the agent's MCP servers.

        Without it, a server's sampling requests are answered by the model of the run that uses the server.
        """
        try:
            sampling_model = infer_model(model) if model is not None else self._resolve_model(None)
        except UserError as e:
            raise UserError('No sampling model was given and the agent has no model.') from e
        try:
            from ..mcp import MCPServer
        except ModuleNotFoundError:  # pragma: no cover - without the `mcp` extra there is no MCP server
            return

        def set_model(toolset: AbstractToolset[AgentDepsT]) -> None:
            if isinstance(toolset, MCPServer):
                toolset.sampling_model = sampling_model

        for toolset in [*self.toolsets, *_capability_toolsets(self._root_capability)]:
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
