"""`DBOSDurability`: pydantic-ai 2.x's DBOS durability capability, on `DBOSAgent`'s steps (see the package)."""

from __future__ import annotations as _annotations

import copy
from collections.abc import AsyncIterable, AsyncIterator, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import dbos as _dbos

from ..._message_flow.events import FinalResultEvent, PartDeltaEvent, PartEndEvent, PartStartEvent
from ...agent._options import parallel_tool_call_execution_mode
from ...capabilities.abstract import (
    AbstractCapability,
    AgentNode,
    CapabilityOrdering,
    NodeResult,
    WrapModelRequestHandler,
    WrapNodeRunHandler,
)
from ...capabilities.process_event_stream import ProcessEventStream
from ...exceptions import UserError
from ...messages import AgentStreamEvent, ModelResponse
from ...models import Model, ModelRequestContext, ModelResolutionContext
from ...toolsets import AbstractToolset
from ...toolsets._dynamic import DynamicToolset
from ._agent import DBOSAgent, DBOSModel, StepConfig
from ._toolsets import DBOSDynamicToolset, DBOSMCPToolset

if TYPE_CHECKING:
    from ..._streaming.node_loop import EventStreamHandler
    from ...tools import RunContext

__all__ = ('DBOSDurability', 'DBOSParallelExecutionMode')


DBOSParallelExecutionMode: TypeAlias = Literal['sequential', 'parallel_ordered_events']
"""How `DBOSDurability` runs a response's tool calls: one at a time, or side by side with their events handed
out in the order of the calls (so that a recovered run sees them in the same order)."""

_MODEL_EVENTS = (PartStartEvent, PartDeltaEvent, PartEndEvent, FinalResultEvent)

_MISSING_ID = {
    'mcp_server': (
        'DBOSDurability needs each MCP server to have a unique, stable id (its steps are named after '
        "it): pass `id='...'` to {leaf!r}."
    ),
    'dynamic_toolset': (
        'DBOSDurability needs each dynamic toolset to have a unique, stable id (its steps are named after it): set '
        "it with `DynamicToolset(..., id='...')` or `@agent.toolset(id='...')`, or, for the toolset of a capability "
        "function, wrap the function as `DynamicCapability(my_func, id='...')`."
    ),
}


class DBOSDurability(AbstractCapability[Any]):
    """Make the runs of an agent that happen inside a DBOS workflow durable, with no wrapper agent.

    Inside a workflow (`@DBOS.workflow()` code calling `agent.run(...)`), each model request of the run is a DBOS
    step (`{name}__model.request`, or `{name}__model.request_stream` when streamed), and so are an MCP server's
    tool listing, instructions and tool calls (`{name}__mcp_server__{id}.get_tools`, `.get_instructions`,
    `.call_tool`) and a dynamic toolset's listing and tool calls (`{name}__dynamic_toolset__{id}.get_tools`,
    `.call_tool`), so a recovered workflow gets the recorded results back instead of making them again. Outside a
    workflow the capability changes nothing but the tool call execution mode. Function tools run in the workflow's
    code: have one call a `@DBOS.step()` to record its effect too.

    The agent (and so this capability) must be created in every process that runs or recovers its workflows,
    before `DBOS.launch()`. The step names come from `name` (or the agent's name), which must stay the same
    while runs may be recovered. Not buildable from an agent spec.

    Example:
        ```python
        agent = Agent(model, name='support', capabilities=[DBOSDurability()])

        @DBOS.workflow()
        async def answer(question: str) -> str:
            return (await agent.run(question)).output
        ```
    """

    def __init__(
        self,
        *,
        models: Mapping[str, Model] | None = None,
        event_stream_handler: EventStreamHandler | None = None,
        name: str | None = None,
        model_step_config: StepConfig | None = None,
        event_stream_handler_step_config: StepConfig | None = None,
        mcp_step_config: StepConfig | None = None,
        parallel_execution_mode: DBOSParallelExecutionMode = 'parallel_ordered_events',
        register_legacy_workflows: bool = False,
    ) -> None:
        """Configure the capability; the agent's name and model are read when it is added to an agent.

        Args:
            models: More models a run may pick by key (`agent.run(model='key')`); `'default'` is reserved for
                the agent's own model.
            event_stream_handler: Given the run's events: a streamed response's events live inside its model
                request step, each tool event in a step of its own (`{name}__event_stream_handler`). Like
                any step, it may run again for an event whose step was not recorded before a crash.
            name: The prefix of the step names; the agent's name when not given.
            model_step_config: DBOS's retry options for the model request steps.
            event_stream_handler_step_config: DBOS's retry options for the event stream handler steps.
            mcp_step_config: DBOS's retry options for the steps of MCP servers and dynamic toolsets.
            parallel_execution_mode: How the tool calls of a response run during each run of the agent.
            register_legacy_workflows: Also register the workflow `{name}.run` of a `DBOSAgent` of this agent,
                so that runs a `DBOSAgent` started are recovered while moving to this capability.
        """
        super().__init__()
        self.name = name or ''
        """The prefix of the step names (the agent's name once bound to an agent)."""
        self.models: dict[str, Model] = dict(models or {})
        """The models a run may pick by key, besides the agent's."""
        if 'default' in self.models:
            raise UserError("DBOSDurability: the model key 'default' is reserved for the agent's own model.")
        self.event_stream_handler = event_stream_handler
        """The handler of the run's events (see the constructor)."""
        self.model_step_config: StepConfig = dict(model_step_config or {})  # type: ignore[assignment]
        self.event_stream_handler_step_config: StepConfig = dict(event_stream_handler_step_config or {})  # type: ignore[assignment]
        self.mcp_step_config: StepConfig = dict(mcp_step_config or {})  # type: ignore[assignment]
        self.parallel_execution_mode: DBOSParallelExecutionMode = parallel_execution_mode
        """How the tool calls of a response run."""
        self.register_legacy_workflows = register_legacy_workflows
        """Whether `DBOSAgent`'s workflow is registered too."""
        self.legacy_agent: DBOSAgent | None = None
        """The `DBOSAgent` registering the legacy workflow, once bound (with `register_legacy_workflows`)."""

    def for_agent(self, agent: Any) -> DBOSDurability:
        """A copy bound to `agent`: named after it (unless given a name), its legacy workflow registered.

        Raises:
            UserError: neither the capability nor the agent has a name, or the agent has no model.
        """
        name = self.name or agent.name
        if not name:
            raise UserError(
                'DBOSDurability needs a unique, stable name (its DBOS steps are named after it): create the agent '
                "with `Agent(..., name='...')` or pass `DBOSDurability(name='...')`."
            )
        if agent.model is None:
            raise UserError(
                'DBOSDurability needs the agent to have a model, given when the agent is created (not at run time).'
            )
        bound = copy.copy(self)
        bound.name = name
        if self.register_legacy_workflows:
            bound.legacy_agent = DBOSAgent(agent, name=name)
        return bound

    @classmethod
    def from_agent(cls, agent: Any) -> DBOSDurability | None:
        """The `DBOSDurability` the agent runs with (the copy bound to it, not the one given), or `None`.

        Raises:
            UserError: the agent has more than one.
        """
        found: list[DBOSDurability] = []
        agent.root_capability.apply(lambda c: found.append(c) if isinstance(c, cls) else None)
        if len(found) > 1:
            raise UserError('The agent has more than one DBOSDurability capability: give it one at most.')
        return found[0] if found else None

    @classmethod
    def get_serialization_name(cls) -> str | None:
        """`None`: given in code (it holds models and a handler), not in an agent spec."""
        return None

    def get_ordering(self) -> CapabilityOrdering:
        """Innermost: the other capabilities' changes to a request are made before it becomes a step."""
        return CapabilityOrdering(position='innermost')

    @property
    def in_durable_context(self) -> bool:
        """Whether this code runs in a DBOS workflow, outside any of its steps."""
        return _dbos.DBOS.workflow_id is not None and _dbos.DBOS.step_id is None

    def overrides(self, hook: str) -> bool:
        """As for any capability, except that the event stream is left alone without a handler and model ids
        are left alone without `models`."""
        if hook == 'wrap_run_event_stream':
            return self.event_stream_handler is not None
        if hook == 'resolve_model_id':
            return bool(self.models)
        return super().overrides(hook)

    def get_wrapper_toolset(self, toolset: AbstractToolset[Any]) -> AbstractToolset[Any] | None:
        """The run's toolset with its MCP servers and dynamic toolsets made durable inside a workflow (see
        `_toolsets`): an MCP server's tool listing, instructions and tool calls are the steps
        `{name}__mcp_server__{id}.get_tools` / `.get_instructions` / `.call_tool`, a dynamic toolset's listing and
        tool calls the steps `{name}__dynamic_toolset__{id}.get_tools` / `.call_tool` (`mcp_step_config` their
        retry options); `None` when the run has neither.

        Raises:
            UserError: an MCP server or a dynamic toolset has no `id`, or two of them share one.
        """
        from ...mcp._server import MCPServer

        wrappers: dict[str, AbstractToolset[Any]] = {}

        def swap(leaf: AbstractToolset[Any]) -> AbstractToolset[Any]:
            if not isinstance(leaf, MCPServer | DynamicToolset):
                return leaf
            kind = 'mcp_server' if isinstance(leaf, MCPServer) else 'dynamic_toolset'
            if not leaf.id:
                raise UserError(_MISSING_ID[kind].format(leaf=leaf))
            if (known := wrappers.get(leaf.id)) is not None:
                if known.wrapped is leaf:  # type: ignore[attr-defined]
                    return known  # the same toolset twice in the tree: one set of steps
                raise UserError(
                    f'DBOSDurability: two toolsets have the id {leaf.id!r}, which names their steps: give each MCP '
                    'server and dynamic toolset an id of its own.'
                )
            prefix = f'{self.name}__{kind}__{leaf.id}'
            wrapper: AbstractToolset[Any]
            if isinstance(leaf, MCPServer):
                wrapper = DBOSMCPToolset(leaf, prefix, self.mcp_step_config)
            else:
                wrapper = DBOSDynamicToolset(leaf, prefix, self.mcp_step_config)
            wrappers[leaf.id] = wrapper
            return wrapper

        replaced = toolset.visit_and_replace(swap)
        return replaced if wrappers else None

    async def resolve_model_id(self, ctx: ModelResolutionContext[Any], *, model_id: str) -> Model | None:
        """The model registered under `model_id` in `models`, or `None` to leave the id to the others."""
        return self.models.get(model_id)

    async def wrap_node_run(
        self, ctx: RunContext[Any], *, node: AgentNode[Any], handler: WrapNodeRunHandler[Any]
    ) -> NodeResult[Any]:
        """Each node of the run, its tool calls run as `parallel_execution_mode` says."""
        with parallel_tool_call_execution_mode(self.parallel_execution_mode):
            return await handler(node)

    async def wrap_model_request(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, handler: WrapModelRequestHandler
    ) -> ModelResponse:
        """In a workflow, the request as a DBOS step (its response replayed from the record on recovery)."""
        if self.in_durable_context and not isinstance(request_context.model, DBOSModel):
            model = DBOSModel(
                request_context.model,
                step_name_prefix=f'{self.name}__model',
                step_config=self.model_step_config,
                event_stream_handler=self.event_stream_handler,
            )
            model._replay_events = True  # the run (`run_stream_events`, `wrap_run_event_stream`) sees the events
            request_context.model = model
        return await handler(request_context)

    async def wrap_run_event_stream(
        self, ctx: RunContext[Any], *, stream: AsyncIterable[AgentStreamEvent]
    ) -> AsyncIterable[AgentStreamEvent]:
        """Hand the events to `event_stream_handler`: outside a workflow as they come; in one, the tool events
        each in a step (the model's events were handed over inside the model request's step)."""
        handler = self.event_stream_handler
        assert handler is not None  # only called with one (`overrides`)
        if not self.in_durable_context:
            async for event in ProcessEventStream(handler).wrap_run_event_stream(ctx, stream=stream):
                yield event
            return
        options: Any = {**self.event_stream_handler_step_config, 'name': f'{self.name}__event_stream_handler'}
        async for event in stream:
            if not isinstance(event, _MODEL_EVENTS):
                await _dbos.DBOS.run_step_async(options, partial(handler, ctx, _one(event)))
            yield event

    def __repr__(self) -> str:
        return f'DBOSDurability(name={self.name!r})'


async def _one(event: AgentStreamEvent) -> AsyncIterator[AgentStreamEvent]:
    yield event
