"""Agent runs on DBOS (extra `edgewise-agent[dbos]`): each run a DBOS workflow, each model request and tool call a step.

```python
from edgewise.agent.durable_exec.dbos import DBOSAgent

durable = DBOSAgent(agent, name='support')  # at module level in every process, before DBOS.launch()
result = durable.run_sync('Where is my order?')
```

The workflow `{name}.run` runs the wrapped agent with its model wrapped in a `DBOSModel` (each request the
step `{name}__model.request`, each streamed request `{name}__model.request_stream`) and its toolsets wrapped
so that each tool call is the step `{name}__tool.call_tool`. Step outputs are JSON strings (pydantic), never
pickles. A run whose process dies is finished by DBOS's recovery from its last recorded step: completed model
requests and tool calls are not repeated.

Inside the workflow, tool calls run one at a time: DBOS numbers steps in the order they are called, and a
recovered run must call them in the same order. The deps a run gets are this process's (`deps=`), never stored.

`DBOSDurability` is the pydantic-ai 2.x shape of the same: a capability (`Agent(..., capabilities=[DBOSDurability()])`)
that makes each model request of a run a step of the same `DBOSModel` kind when the run happens inside a workflow
of your own (`@DBOS.workflow()` code calling `agent.run(...)`); tools run in that workflow's code.
"""

from __future__ import annotations as _annotations

import copy
import operator
from collections.abc import AsyncIterable, AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from functools import partial, reduce
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypedDict, cast

import anyio
import pydantic
import pydantic_core

try:
    import dbos as _dbos
except ImportError as _error:  # pragma: no cover - exercised in a subprocess by tests/agent/dbos/test_extra.py
    raise ModuleNotFoundError(
        'edgewise.agent.durable_exec.dbos needs the DBOS library: install the `dbos` extra, '
        '`pip install "edgewise-agent[dbos]"`.',
        name='dbos',
    ) from _error

from edgewise.graph.dbos import DBOSQueue, enqueue_workflow, workflow_id

from .._message_flow.events import FinalResultEvent, PartDeltaEvent, PartEndEvent, PartStartEvent
from .._run.result import AgentRunResult
from .._run.state import GraphAgentState
from ..agent._options import parallel_tool_call_execution_mode
from ..agent._wrapper import WrapperAgent, _Agent
from ..capabilities.abstract import (
    AbstractCapability,
    AgentNode,
    CapabilityOrdering,
    NodeResult,
    WrapModelRequestHandler,
    WrapNodeRunHandler,
)
from ..capabilities.process_event_stream import ProcessEventStream
from ..exceptions import AgentRunError, ApprovalRequired, CallDeferred, ModelRetry, UserError
from ..messages import AgentStreamEvent, ModelMessage, ModelMessagesTypeAdapter, ModelResponse
from ..models import Model, ModelRequestContext, ModelResolutionContext
from ..models._completed_response import CompletedStreamedResponse
from ..models.wrapper import WrapperModel
from ..settings import ModelSettings
from ..toolsets import AbstractToolset
from ..toolsets.abstract import ToolsetTool
from ..toolsets.combined import CombinedToolset
from ..toolsets.wrapper import WrapperToolset

if TYPE_CHECKING:
    from dbos import DBOSClient

    from .._streaming.node_loop import EventStreamHandler
    from ..tools import RunContext

__all__ = ('DBOSAgent', 'DBOSDurability', 'DBOSModel', 'DBOSParallelExecutionMode', 'DBOSQueue', 'StepConfig')

_RESPONSE = pydantic.TypeAdapter(ModelResponse)


class StepConfig(TypedDict, total=False):
    """DBOS's retry options for a step (DBOS's own defaults for what is left out)."""

    retries_allowed: bool
    interval_seconds: float
    max_attempts: int
    backoff_rate: float


class DBOSModel(WrapperModel):
    """A model whose requests are DBOS steps named `{step_name_prefix}.request` / `.request_stream`."""

    def __init__(
        self,
        wrapped: Model,
        *,
        step_name_prefix: str,
        step_config: StepConfig | None = None,
        event_stream_handler: EventStreamHandler | None = None,
    ) -> None:
        """Wrap `wrapped`.

        Args:
            wrapped: The model whose requests become steps.
            step_name_prefix: The steps are named `{step_name_prefix}.request` and `.request_stream`.
            step_config: DBOS's retry options for those steps.
            event_stream_handler: Given the events of each streamed response live, inside its step; the
                response is then replayed as events to the run (without one, it is handed over whole).
        """
        super().__init__(wrapped)
        self.step_name_prefix = step_name_prefix
        self.step_config: StepConfig = dict(step_config or {})  # type: ignore[assignment]
        self.event_stream_handler = event_stream_handler
        self._replay_events = event_stream_handler is not None

    def _options(self, what: str) -> Any:
        return {**self.step_config, 'name': f'{self.step_name_prefix}.{what}'}

    async def request(self, messages: list[ModelMessage], model_settings: ModelSettings | None, parameters: Any) -> Any:
        """The wrapped model's response, recorded as a DBOS step (replayed from the record on recovery)."""

        async def step() -> str:
            response = await self.wrapped.request(messages, model_settings, parameters)
            return _RESPONSE.dump_json(response).decode()

        return _RESPONSE.validate_json(await _dbos.DBOS.run_step_async(self._options('request'), step))

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        parameters: Any,
        run_context: Any = None,
    ) -> AsyncIterator[Any]:
        """The wrapped model's streamed response, consumed whole inside a DBOS step and replayed as one piece."""

        handler = self.event_stream_handler

        async def step() -> str:
            async with self.wrapped.request_stream(messages, model_settings, parameters, run_context) as stream:
                events = _events_of(stream)
                if handler is not None:
                    await handler(run_context, events)
                async for _ in events:  # what the handler left unread (all of it, without one)
                    pass
                return _RESPONSE.dump_json(stream.get()).decode()

        output = await _dbos.DBOS.run_step_async(self._options('request_stream'), step)
        yield CompletedStreamedResponse(
            _RESPONSE.validate_json(output), model_request_parameters=parameters, replay_events=self._replay_events
        )


async def _events_of(stream: AsyncIterable[Any]) -> AsyncIterator[Any]:
    async for event in stream:
        yield event


class _DBOSToolset(WrapperToolset[Any]):
    """Each `call_tool` a DBOS step whose output is the tool's result (or its retry/deferral) as JSON."""

    def __init__(self, wrapped: AbstractToolset[Any], step_name: str, step_config: StepConfig) -> None:
        super().__init__(wrapped)
        self._options: Any = {**step_config, 'name': step_name}

    async def for_run(self, ctx: Any) -> AbstractToolset[Any]:
        return self._rewrap(await self.wrapped.for_run(ctx))

    async def for_run_step(self, ctx: Any) -> AbstractToolset[Any]:
        return self._rewrap(await self.wrapped.for_run_step(ctx))

    def visit_and_replace(
        self, visitor: Callable[[AbstractToolset[Any]], AbstractToolset[Any]]
    ) -> AbstractToolset[Any]:
        return self._rewrap(self.wrapped.visit_and_replace(visitor))

    def _rewrap(self, inner: AbstractToolset[Any]) -> AbstractToolset[Any]:
        if inner is self.wrapped:
            return self
        rewrapped = type(self)(inner, self._options['name'], {})
        rewrapped._options = self._options
        return rewrapped

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: Any, tool: ToolsetTool[Any]) -> Any:
        async def step() -> str:
            try:
                result = await self.wrapped.call_tool(name, tool_args, ctx, tool)
            except ModelRetry as e:
                return _encode({'kind': 'retry', 'message': e.message})
            except CallDeferred as e:
                return _encode({'kind': 'deferred', 'metadata': e.metadata})
            except ApprovalRequired as e:
                return _encode({'kind': 'approval', 'metadata': e.metadata})
            return _encode({'kind': 'result', 'value': result})

        outcome = pydantic_core.from_json(await _dbos.DBOS.run_step_async(self._options, step))
        if outcome['kind'] == 'retry':
            raise ModelRetry(outcome['message'])
        if outcome['kind'] == 'deferred':
            raise CallDeferred(outcome['metadata'])
        if outcome['kind'] == 'approval':
            raise ApprovalRequired(outcome['metadata'])
        return outcome['value']


class _WorkflowStepToolset(_DBOSToolset):
    """`_DBOSToolset` whose calls are steps only in a DBOS workflow (outside one, or inside a step, plain calls)."""

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: Any, tool: ToolsetTool[Any]) -> Any:
        if _dbos.DBOS.workflow_id is None or _dbos.DBOS.step_id is not None:
            return await self.wrapped.call_tool(name, tool_args, ctx, tool)
        return await super().call_tool(name, tool_args, ctx, tool)


def _encode(value: Any) -> str:
    return pydantic_core.to_json(value).decode()


def _history_json(message_history: Sequence[ModelMessage] | None) -> str | None:
    return ModelMessagesTypeAdapter.dump_json(list(message_history)).decode() if message_history else None


_NO_STREAMING = (
    '`DBOSAgent.{entry}` is not supported: a DBOS workflow records the whole run, not a stream. '
    'Use `run` or `run_sync`, or stream with the wrapped agent outside DBOS.'
)


class DBOSAgent(WrapperAgent[Any, Any]):
    """An agent whose runs are DBOS workflows (see the module docstring).

    Create it at module level in every process that runs or recovers its runs, before `DBOS.launch()`.
    """

    def __init__(
        self,
        wrapped: _Agent,
        *,
        name: str | None = None,
        deps: Any = None,
        model_step_config: StepConfig | None = None,
        tool_step_config: StepConfig | None = None,
    ) -> None:
        """Register the workflow `{name}.run` running `wrapped`.

        Raises:
            UserError: no name (neither `name` nor the agent's), or the agent's model is not a `Model` instance.
        """
        super().__init__(wrapped)
        name = name or wrapped.name
        if not name:
            raise UserError(
                'A DBOSAgent needs a unique, stable name (its workflow and steps are named after it): '
                "pass `name='...'` or create the agent with `Agent(..., name='...')`."
            )
        if not isinstance(wrapped.model, Model):
            raise UserError(
                'A DBOSAgent needs the agent to have a `Model` instance as its model (not a model name or none), '
                'so that its requests can be made DBOS steps.'
            )
        self._name = name
        # The output comes back from the workflow's JSON: typed again when the output spec is plain types
        # (`str`, a model, `[str, DeferredToolRequests]`); otherwise (output functions, ...) as decoded JSON.
        spec = wrapped.output_type
        kinds = list(spec) if isinstance(spec, list | tuple) else [spec]
        self._output_adapter: pydantic.TypeAdapter[Any] | None = (
            pydantic.TypeAdapter(cast(Any, reduce(operator.or_, kinds)))
            if all(isinstance(kind, type) for kind in kinds)
            else None
        )
        self.deps = deps
        """The deps of every run in this process (never stored)."""
        self.dbos_model = DBOSModel(wrapped.model, step_name_prefix=f'{name}__model', step_config=model_step_config)
        """The wrapped agent's model, each request a DBOS step."""
        original: Sequence[AbstractToolset[Any]] = list(wrapped.toolsets)
        combined = original[0] if len(original) == 1 else CombinedToolset(list(original))
        self._toolset = _DBOSToolset(combined, f'{name}__tool.call_tool', dict(tool_step_config or {}))  # type: ignore[arg-type]

        async def run_agent(user_prompt: str | None, history: str | None) -> str:
            return await self._workflow(user_prompt, history)

        run_agent.__qualname__ = run_agent.__name__ = f'run_agent_{name}'
        self.workflow_name = f'{name}.run'
        """The name of the DBOS workflow of a run (what `DBOSClient.enqueue` and DBOS's own tools show)."""
        # Portable (JSON) serialization of the workflow's arguments and result, never pickles: a run can be put on
        # a queue by a process without this agent (a `DBOSClient`), and read by other versions.
        self._workflow_function = _dbos.DBOS.workflow(
            name=self.workflow_name, serialization_type=_dbos.WorkflowSerializationFormat.PORTABLE
        )(run_agent)

    async def _workflow(self, user_prompt: str | None, history: str | None) -> str:
        messages = ModelMessagesTypeAdapter.validate_json(history) if history is not None else None
        with (
            self.wrapped.override(model=self.dbos_model, tools=[], toolsets=[self._toolset]),
            self.parallel_tool_call_execution_mode('sequential'),
        ):
            result = await super().run(user_prompt, message_history=messages, deps=self.deps, infer_name=False)
        return _encode(
            {
                'output': result.output,
                'messages': ModelMessagesTypeAdapter.dump_python(result.all_messages(), mode='json'),
                'new_message_index': result._new_message_index,  # pyright: ignore[reportPrivateUsage]
                'output_tool_name': result._output_tool_name,  # pyright: ignore[reportPrivateUsage]
                'output_tool_call_id': result._output_tool_call_id,  # pyright: ignore[reportPrivateUsage]
            }
        )

    def _result(self, output_json: str) -> AgentRunResult[Any]:
        stored = pydantic_core.from_json(output_json)
        output = stored['output']
        if self._output_adapter is not None:
            output = self._output_adapter.validate_python(output)
        state = GraphAgentState(message_history=ModelMessagesTypeAdapter.validate_python(stored['messages']))
        return AgentRunResult(
            output,
            _output_tool_name=stored['output_tool_name'],
            _state=state,
            _new_message_index=stored['new_message_index'],
            _output_tool_call_id=stored['output_tool_call_id'],
        )

    def run_sync(  # type: ignore[override]
        self,
        user_prompt: str | None = None,
        *,
        message_history: Sequence[ModelMessage] | None = None,
        run_id: str | None = None,
    ) -> AgentRunResult[Any]:
        """Run the agent as the DBOS workflow `{name}.run` and wait for its result.

        Args:
            user_prompt: The user's prompt (text).
            message_history: The conversation so far (stored as JSON with the run).
            run_id: The workflow id; starting a run with the id of an existing one returns that run's result.
        """
        handle = self._start(user_prompt, message_history, run_id)
        return self._result(cast(str, handle.get_result()))

    def start_sync(
        self,
        user_prompt: str | None = None,
        *,
        message_history: Sequence[ModelMessage] | None = None,
        run_id: str | None = None,
    ) -> str:
        """Start a run in this process (DBOS launched here) without waiting for it, and return its id; wait for it
        with `result_sync`, from this process or another."""
        return cast(str, self._start(user_prompt, message_history, run_id).get_workflow_id())

    def _start(
        self, user_prompt: str | None, message_history: Sequence[ModelMessage] | None, run_id: str | None
    ) -> Any:
        history = _history_json(message_history)
        with workflow_id(run_id):
            return _dbos.DBOS.start_workflow(self._workflow_function, user_prompt, history)

    def enqueue_sync(
        self,
        queue: DBOSQueue | str,
        user_prompt: str | None = None,
        *,
        message_history: Sequence[ModelMessage] | None = None,
        run_id: str | None = None,
        client: DBOSClient | None = None,
    ) -> str:
        """Put a run on a DBOS queue, for a worker process (`edgewise.graph.dbos.DBOSWorker`) to take, and return
        its id. A worker that dies mid-run has the run finished by another from its last recorded step.

        Args:
            queue: The queue (or its name), registered by the workers that take its runs.
            user_prompt: The user's prompt (text).
            message_history: The conversation so far (stored as JSON with the run).
            run_id: The run's id (the DBOS workflow id); a new one when not given. Enqueuing an id that exists
                again does not start a second run.
            client: Enqueue through this `DBOSClient` (a process that does not launch DBOS, and need not have
                this agent); through the launched DBOS of this process when `None`.
        """
        history = _history_json(message_history)
        return enqueue_workflow(
            queue, self._workflow_function, self.workflow_name, (user_prompt, history), run_id, client
        )

    async def run(  # type: ignore[override]
        self,
        user_prompt: str | None = None,
        *,
        message_history: Sequence[ModelMessage] | None = None,
        run_id: str | None = None,
    ) -> AgentRunResult[Any]:
        """`run_sync` from async code, in a worker thread (on asyncio and trio alike)."""
        call = partial(self.run_sync, user_prompt, message_history=message_history, run_id=run_id)
        return await anyio.to_thread.run_sync(call, abandon_on_cancel=True)

    def run_stream(self, user_prompt: str | None = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Not available: a DBOS workflow's result is recorded whole, not streamed (use `run`)."""
        raise UserError(_NO_STREAMING.format(entry='run_stream'))

    def run_stream_sync(self, user_prompt: str | None = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Not available: a DBOS workflow's result is recorded whole, not streamed (use `run_sync`)."""
        raise UserError(_NO_STREAMING.format(entry='run_stream_sync'))

    def run_stream_events(self, user_prompt: str | None = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Not available: a DBOS workflow's result is recorded whole, not streamed (use `run`)."""
        raise UserError(_NO_STREAMING.format(entry='run_stream_events'))

    def result_sync(
        self, run_id: str, *, client: DBOSClient | None = None, polling_interval: float = 0.1
    ) -> AgentRunResult[Any]:
        """Wait for the run `run_id` (of this or another process, recovered or not) and return its result.

        Args:
            run_id: The run's id.
            client: Read through this `DBOSClient`; through the launched DBOS of this process when `None`.
            polling_interval: How often, in seconds, to look whether a run of another process has ended.

        Raises:
            AgentRunError: the run failed in another process; the message names the error's type and message,
                as DBOS stored them (a run of this process raises its error as it is).
        """
        handle: Any = (client or _dbos.DBOS).retrieve_workflow(run_id)
        try:
            output = handle.get_result(polling_interval_sec=polling_interval)
        except _dbos.PortableWorkflowError as e:
            raise AgentRunError(f'Run {run_id!r} of agent `{self._name}` failed: {e.name}: {e.message}') from e
        return self._result(output)

    async def start(
        self,
        user_prompt: str | None = None,
        *,
        message_history: Sequence[ModelMessage] | None = None,
        run_id: str | None = None,
    ) -> str:
        """`start_sync` from async code (in a worker thread, on asyncio and trio alike)."""
        call = partial(self.start_sync, user_prompt, message_history=message_history, run_id=run_id)
        return await anyio.to_thread.run_sync(call)

    async def enqueue(
        self,
        queue: DBOSQueue | str,
        user_prompt: str | None = None,
        *,
        message_history: Sequence[ModelMessage] | None = None,
        run_id: str | None = None,
        client: DBOSClient | None = None,
    ) -> str:
        """`enqueue_sync` from async code (in a worker thread, on asyncio and trio alike)."""
        call = partial(
            self.enqueue_sync, queue, user_prompt, message_history=message_history, run_id=run_id, client=client
        )
        return await anyio.to_thread.run_sync(call)

    async def result(
        self, run_id: str, *, client: DBOSClient | None = None, polling_interval: float = 0.1
    ) -> AgentRunResult[Any]:
        """`result_sync` from async code; cancelling the wait leaves the run going."""
        call = partial(self.result_sync, run_id, client=client, polling_interval=polling_interval)
        return await anyio.to_thread.run_sync(call, abandon_on_cancel=True)

    def __repr__(self) -> str:
        return f'<DBOSAgent {self._name!r}>'


DBOSParallelExecutionMode: TypeAlias = Literal['sequential', 'parallel_ordered_events']
"""How `DBOSDurability` runs a response's tool calls: one at a time, or side by side with their events handed
out in the order of the calls (so that a recovered run sees them in the same order)."""

_MODEL_EVENTS = (PartStartEvent, PartDeltaEvent, PartEndEvent, FinalResultEvent)


class DBOSDurability(AbstractCapability[Any]):
    """Make the runs of an agent that happen inside a DBOS workflow durable, with no wrapper agent.

    Inside a workflow (`@DBOS.workflow()` code calling `agent.run(...)`), each model request of the run is a DBOS
    step (`{name}__model.request`, or `{name}__model.request_stream` when streamed), and so is each tool call of
    an MCP server (`{name}__mcp_server__{id}.call_tool`), so a recovered workflow gets the recorded results back
    instead of making them again. Outside a workflow the capability changes nothing but the tool call execution
    mode. Function tools run in the workflow's code: have one call a `@DBOS.step()` to record its effect too.

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
            mcp_step_config: DBOS's retry options for the steps of MCP servers' tool calls.
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
        """The run's toolset with each MCP server's tool calls made steps `{name}__mcp_server__{id}.call_tool`
        inside a workflow (`mcp_step_config` their retry options); `None` when the run has no MCP server.

        Raises:
            UserError: an MCP server has no `id`.
        """
        from ..mcp._server import MCPServer

        found = False

        def swap(leaf: AbstractToolset[Any]) -> AbstractToolset[Any]:
            nonlocal found
            if not isinstance(leaf, MCPServer):
                return leaf
            found = True
            if not leaf.id:
                raise UserError(
                    f'DBOSDurability needs each MCP server to have a unique, stable id (its steps are named after '
                    f"it): pass `id='...'` to {leaf!r}."
                )
            return _WorkflowStepToolset(leaf, f'{self.name}__mcp_server__{leaf.id}.call_tool', self.mcp_step_config)

        replaced = toolset.visit_and_replace(swap)
        return replaced if found else None

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
