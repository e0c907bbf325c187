"""`DBOSAgent` and the pieces it shares with `DBOSDurability`: `DBOSModel` (each request a step) and the toolset
whose tool calls are steps (see the package docstring)."""

from __future__ import annotations as _annotations

import copy
import operator
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from functools import partial, reduce
from typing import TYPE_CHECKING, Any, TypedDict, cast

import anyio
import dbos as _dbos
import pydantic
import pydantic_core

from edgewise.graph.dbos import DBOSQueue, enqueue_workflow, workflow_id

from ..._run.result import AgentRunResult
from ..._run.state import GraphAgentState
from ...agent.wrapper import WrapperAgent, _Agent
from ...exceptions import AgentRunError, ApprovalRequired, CallDeferred, ModelRetry, UserError
from ...messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse
from ...models import Model
from ...models._capability_loads import durable_unit
from ...models._completed_response import CompletedStreamedResponse
from ...models.wrapper import WrapperModel
from ...settings import ModelSettings
from ...toolsets import AbstractToolset
from ...toolsets.abstract import ToolsetTool
from ...toolsets.combined import CombinedToolset
from ...toolsets.wrapper import WrapperToolset

if TYPE_CHECKING:
    from dbos import DBOSClient

    from ..._streaming.node_loop import EventStreamHandler

__all__ = ('DBOSAgent', 'DBOSModel', 'StepConfig', 'recorded_call')

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
        rewrapped = copy.copy(self)
        rewrapped.wrapped = inner
        return rewrapped

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: Any, tool: ToolsetTool[Any]) -> Any:
        return await recorded_call(self._options, lambda: self.wrapped.call_tool(name, tool_args, ctx, tool))


async def recorded_call(options: Any, call: Callable[[], Awaitable[Any]]) -> Any:
    """`call()`'s result (or its retry or deferral, raised again) as a DBOS step with `options` (name and retries),
    recorded as JSON."""

    async def step() -> str:
        try:
            with durable_unit():  # a capability load here would be lost on recovery: refused
                result = await call()
        except ModelRetry as e:
            return _encode({'kind': 'retry', 'message': e.message})
        except CallDeferred as e:
            return _encode({'kind': 'deferred', 'metadata': e.metadata})
        except ApprovalRequired as e:
            return _encode({'kind': 'approval', 'metadata': e.metadata})
        return _encode({'kind': 'result', 'value': result})

    outcome = pydantic_core.from_json(await _dbos.DBOS.run_step_async(options, step))
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
