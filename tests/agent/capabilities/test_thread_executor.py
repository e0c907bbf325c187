"""`UseThreadExecutor` and `Agent.using_thread_executor`: where the sync functions of a run are called."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any

import anyio
import pytest

from edgewise.agent import Agent
from edgewise.agent._threads import current_thread_executor, run_in_thread, using_thread_executor
from edgewise.agent.capabilities import CAPABILITY_TYPES, UseThreadExecutor
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from edgewise.agent.models.function import AgentInfo, FunctionModel

pytestmark = pytest.mark.anyio


def _calls_where_once(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Calls the `where` tool, then answers with what it returned (and the thread this function ran in)."""
    here = threading.current_thread().name
    returns = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
    if returns:
        return ModelResponse(parts=[TextPart(f'{returns[0].content}|{here}')])
    return ModelResponse(parts=[ToolCallPart('where', {})])


def _agent(**kwargs: Any) -> Agent[None, str]:
    agent = Agent(FunctionModel(_calls_where_once), **kwargs)

    @agent.tool_plain
    def where() -> str:
        return threading.current_thread().name

    return agent


@pytest.fixture
def pool() -> Any:
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix='cap-pool')
    yield executor
    executor.shutdown(wait=True)


async def test_the_capability_runs_sync_tools_and_model_functions_in_its_executor(pool: ThreadPoolExecutor) -> None:
    result = await _agent(capabilities=[UseThreadExecutor(pool)]).run('go')
    tool_thread, model_thread = result.output.split('|')
    assert tool_thread.startswith('cap-pool')
    assert model_thread.startswith('cap-pool')


async def test_without_an_executor_sync_functions_run_in_other_threads(pool: ThreadPoolExecutor) -> None:
    result = await _agent().run('go')
    tool_thread, model_thread = result.output.split('|')
    assert not tool_thread.startswith('cap-pool')
    assert tool_thread != threading.current_thread().name
    assert not model_thread.startswith('cap-pool')


async def test_the_static_context_manager_covers_every_run_inside_it(pool: ThreadPoolExecutor) -> None:
    with Agent.using_thread_executor(pool):
        assert current_thread_executor() is pool
        result = await _agent().run('go')
    assert current_thread_executor() is None
    assert all(name.startswith('cap-pool') for name in result.output.split('|'))


async def test_a_run_capability_wins_over_the_agent_one_and_the_context(pool: ThreadPoolExecutor) -> None:
    other = ThreadPoolExecutor(max_workers=1, thread_name_prefix='run-pool')
    try:
        with Agent.using_thread_executor(pool):
            agent = _agent(capabilities=[UseThreadExecutor(pool)])
            result = await agent.run('go', capabilities=[UseThreadExecutor(other)])
    finally:
        other.shutdown(wait=True)
    assert all(name.startswith('run-pool') for name in result.output.split('|'))


async def test_the_executor_holds_for_a_run_driven_with_iter(pool: ThreadPoolExecutor) -> None:
    async with _agent(capabilities=[UseThreadExecutor(pool)]).iter('go') as run:
        async for _ in run:
            pass
    assert run.result is not None
    assert all(name.startswith('cap-pool') for name in run.result.output.split('|'))
    assert current_thread_executor() is None


def test_thread_executor_is_not_buildable_from_a_spec(pool: ThreadPoolExecutor) -> None:
    assert UseThreadExecutor.get_serialization_name() is None
    assert UseThreadExecutor not in CAPABILITY_TYPES.values()
    assert UseThreadExecutor(pool).executor is pool


async def test_run_in_thread_passes_context_variables_arguments_and_errors(pool: ThreadPoolExecutor) -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar('var', default='unset')
    var.set('caller')

    def read(suffix: str, *, sep: str) -> str:
        return f'{var.get()}{sep}{suffix}@{threading.current_thread().name}'

    def fail() -> None:
        raise ValueError('from the thread')

    with using_thread_executor(pool):
        assert (await run_in_thread(read, 'x', sep='-')).startswith('caller-x@cap-pool')
        with pytest.raises(ValueError, match='from the thread'):
            await run_in_thread(fail)
    assert (await run_in_thread(read, 'y', sep='+')).startswith('caller+y@')


class _InlineExecutor(Executor):
    """Runs each call at once, in the submitting thread (as some executors do)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_result(fn(*args, **kwargs))
        return future


async def test_an_executor_that_calls_inline_is_waited_for_without_hanging() -> None:
    with using_thread_executor(_InlineExecutor()):
        assert await run_in_thread(threading.current_thread) is threading.current_thread()


async def test_cancelling_the_caller_stops_waiting_and_the_call_still_ends(pool: ThreadPoolExecutor) -> None:
    started = threading.Event()
    release = threading.Event()
    ended: list[str] = []

    def blocked() -> None:
        started.set()
        release.wait()
        ended.append('ended')

    with using_thread_executor(pool):
        async with anyio.create_task_group() as tg:

            async def call() -> None:
                await run_in_thread(blocked)

            tg.start_soon(call)
            await anyio.to_thread.run_sync(started.wait)
            tg.cancel_scope.cancel()
    release.set()
    pool.shutdown(wait=True)  # the call already running goes on to its end
    assert ended == ['ended']


async def test_a_call_cancelled_before_it_started_never_runs() -> None:
    pool = ThreadPoolExecutor(max_workers=1)
    release = threading.Event()
    ran: list[str] = []
    try:
        pool.submit(release.wait)  # the only worker is busy: the next call waits in the queue
        with using_thread_executor(pool):
            with anyio.CancelScope() as scope:
                scope.cancel()
                await run_in_thread(ran.append, 'ran')
    finally:
        release.set()
        pool.shutdown(wait=True)
    assert ran == []


def test_the_name_before_pydantic_ai_2_still_imports_and_warns() -> None:
    import edgewise.agent.capabilities as capabilities
    import edgewise.agent.capabilities.thread_executor as module
    from edgewise.agent import PydanticAIDeprecationWarning

    with pytest.warns(PydanticAIDeprecationWarning, match='renamed to `UseThreadExecutor`'):
        assert capabilities.ThreadExecutor is UseThreadExecutor
    with pytest.warns(PydanticAIDeprecationWarning, match='renamed to `UseThreadExecutor`'):
        assert module.ThreadExecutor is UseThreadExecutor
    with pytest.raises(AttributeError, match='no attribute'):
        module.NoSuchExecutor  # noqa: B018
