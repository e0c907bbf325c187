"""`Hooks`: hook functions registered with the decorators of `hooks.on` or given to the constructor."""

from __future__ import annotations

import threading
from collections.abc import Awaitable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anyio
import pytest

from edgewise.agent import Agent, AgentRunError, RunContext
from edgewise.agent._threads import disable_threads
from edgewise.agent.capabilities import Hooks, HookTimeoutError
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from edgewise.agent.models import ModelRequestContext
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.tools import ToolDefinition

pytestmark = pytest.mark.anyio


def _calls_both(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Calls `add` and `neg` once, then answers with the tool returns' contents."""
    if len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart('add', {'a': 1, 'b': 2}), ToolCallPart('neg', {'a': 5})])
    return ModelResponse(parts=[TextPart(' '.join(str(p.content) for p in messages[-1].parts))])  # type: ignore[union-attr]


def _agent(hooks: Hooks[None]) -> Agent[None, str]:
    agent = Agent(FunctionModel(_calls_both), capabilities=[hooks])

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        return a + b

    @agent.tool_plain
    def neg(a: int) -> int:
        return -a

    return agent


async def test_decorated_sync_and_async_functions_change_what_they_are_given() -> None:
    hooks: Hooks[None] = Hooks()

    @hooks.on.before_tool_execute
    def double_args(
        ctx: RunContext[None], *, call: ToolCallPart, tool_def: ToolDefinition, args: dict[str, Any]
    ) -> Any:
        return {k: v * 2 for k, v in args.items()}

    @hooks.on.after_tool_execute
    async def label(
        ctx: RunContext[None], *, call: ToolCallPart, tool_def: ToolDefinition, args: dict[str, Any], result: Any
    ) -> Any:
        return f'{call.tool_name}={result}'

    assert (await _agent(hooks).run('go')).output == 'add=6 neg=-10'


async def test_tools_limits_a_tool_hook_to_the_calls_of_those_tools() -> None:
    hooks: Hooks[None] = Hooks()

    @hooks.on.after_tool_execute(tools=['neg'])
    def zero(ctx: RunContext[None], *, call: ToolCallPart, tool_def: ToolDefinition, args: Any, result: Any) -> Any:
        return 0

    assert (await _agent(hooks).run('go')).output == '3 0'


async def test_several_functions_on_one_hook_run_in_the_order_registered() -> None:
    order: list[str] = []

    def wrapper(name: str) -> Any:
        async def wrap(ctx: RunContext[None], *, call: ToolCallPart, tool_def: Any, args: Any, handler: Any) -> Any:
            order.append(f'{name} >')
            result = await handler(args)
            order.append(f'{name} <')
            return result

        return wrap

    hooks: Hooks[None] = Hooks()
    hooks.on.tool_execute(tools=['add'])(wrapper('first'))
    hooks.on.tool_execute(tools=['add'])(wrapper('second'))
    await _agent(hooks).run('go')
    assert order == ['first >', 'second >', 'second <', 'first <']


async def test_constructor_functions_and_error_hooks() -> None:
    async def recover(ctx: RunContext[None], *, call: ToolCallPart, tool_def: Any, args: Any, error: Exception) -> Any:
        return f'recovered {error}'

    async def fail(ctx: RunContext[None], *, call: ToolCallPart, tool_def: Any, args: Any, handler: Any) -> Any:
        raise ValueError('boom')

    hooks: Hooks[None] = Hooks(tool_execute=fail, tool_execute_error=recover)
    assert (await _agent(hooks).run('go')).output == 'recovered boom recovered boom'
    assert repr(hooks) == "Hooks({'wrap_tool_execute': 1, 'on_tool_execute_error': 1})"


async def test_an_unknown_constructor_name_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'before_everything'"):
        Hooks(before_everything=lambda ctx: None)


async def test_a_function_past_its_timeout_raises_hook_timeout_error() -> None:
    hooks: Hooks[None] = Hooks()

    @hooks.on.before_model_request(timeout=0.01)
    async def slow(ctx: RunContext[None], request_context: ModelRequestContext) -> ModelRequestContext:
        await anyio.sleep(10)
        return request_context  # pragma: no cover - timed out

    with pytest.raises(HookTimeoutError) as info:
        await _agent(hooks).run('go')
    assert str(info.value) == "Hook 'before_model_request' function 'slow' timed out after 0.01s"
    assert isinstance(info.value, TimeoutError)
    assert isinstance(info.value, AgentRunError)


def _thread_recorder(hooks: Hooks[None], threads: list[int]) -> None:
    @hooks.on.before_model_request
    def record(ctx: RunContext[None], request_context: ModelRequestContext) -> ModelRequestContext:
        threads.append(threading.get_ident())
        return request_context


async def test_a_sync_function_runs_in_a_worker_thread() -> None:
    threads: list[int] = []
    hooks: Hooks[None] = Hooks()
    _thread_recorder(hooks, threads)
    await _agent(hooks).run('go')
    assert len(threads) == 2
    assert threading.get_ident() not in threads


async def test_a_sync_function_runs_in_the_thread_executor_of_the_run() -> None:
    threads: list[int] = []
    hooks: Hooks[None] = Hooks()
    _thread_recorder(hooks, threads)
    with ThreadPoolExecutor(max_workers=1) as executor:
        executor_thread = executor.submit(threading.get_ident).result()
        with Agent.using_thread_executor(executor):
            await _agent(hooks).run('go')
    assert threads == [executor_thread, executor_thread]


async def test_a_sync_function_runs_inline_where_threads_are_disabled() -> None:
    threads: list[int] = []
    hooks: Hooks[None] = Hooks()
    _thread_recorder(hooks, threads)
    with disable_threads():
        await _agent(hooks).run('go')
    assert threads == [threading.get_ident()] * 2


async def test_a_sync_function_past_its_timeout_is_left_running_and_raises_hook_timeout_error() -> None:
    release = threading.Event()
    hooks: Hooks[None] = Hooks()

    @hooks.on.before_model_request(timeout=0.01)
    def blocked(ctx: RunContext[None], request_context: ModelRequestContext) -> ModelRequestContext:
        release.wait(10)
        return request_context

    try:
        with pytest.raises(HookTimeoutError) as info:
            await _agent(hooks).run('go')
    finally:
        release.set()
    assert (info.value.hook_name, info.value.func_name, info.value.timeout) == ('before_model_request', 'blocked', 0.01)


async def test_run_and_node_hooks() -> None:
    seen: list[str] = []
    hooks: Hooks[None] = Hooks()

    @hooks.on.before_run
    def started(ctx: RunContext[None]) -> None:
        seen.append('run')

    @hooks.on.before_node_run
    def node(ctx: RunContext[None], *, node: Any) -> Any:
        seen.append(type(node).__name__)
        return node

    await _agent(hooks).run('go')
    assert seen == ['run', 'UserPromptNode', 'ModelRequestNode', 'CallToolsNode', 'ModelRequestNode', 'CallToolsNode']


async def test_a_hooks_without_functions_is_skipped_by_the_run() -> None:
    agent = _agent(Hooks())
    async with agent.iter('go') as run:
        assert run.ctx.deps.hooked == frozenset()


async def test_an_awaitable_a_sync_function_returns_is_awaited() -> None:
    seen: list[str] = []
    hooks: Hooks[None] = Hooks()

    async def later(request_context: ModelRequestContext) -> ModelRequestContext:
        seen.append('awaited')
        return request_context

    @hooks.on.before_model_request
    def hand_over(ctx: RunContext[None], request_context: ModelRequestContext) -> Awaitable[ModelRequestContext]:
        return later(request_context)

    assert (await _agent(hooks).run('go')).output == '3 -5'
    assert seen == ['awaited', 'awaited']
