"""Tools in runs: the run context, sync functions in threads, prepare, from_schema, concurrency, retries."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import anyio
import pytest

from edgewise.agent import Agent, ModelRetry, RunContext, Tool, ToolDefinition
from edgewise.agent.messages import ModelMessage, ModelResponse, RetryPromptPart, TextPart, ToolCallPart, ToolReturnPart
from edgewise.agent.models.function import AgentInfo, FunctionModel

from ._helpers import NOW, scripted

pytestmark = pytest.mark.anyio


@dataclass
class Deps:
    factor: int


async def test_a_context_tool_sees_deps_and_the_call() -> None:
    seen: list[tuple[int, str | None, str | None, int, int]] = []
    agent = Agent(scripted([ToolCallPart('mul', {'x': 2}, 'c1')], [TextPart('ok')]), deps_type=Deps)

    @agent.tool
    async def mul(ctx: RunContext[Deps], x: int) -> int:
        seen.append((ctx.deps.factor, ctx.tool_name, ctx.tool_call_id, ctx.run_step, ctx.retry))
        return x * ctx.deps.factor

    result = await agent.run('x', deps=Deps(factor=5))
    assert seen == [(5, 'mul', 'c1', 1, 0)]
    assert result.all_messages()[2].parts == [ToolReturnPart('mul', 10, 'c1', timestamp=NOW)]


async def test_sync_tools_run_in_a_worker_thread() -> None:
    threads: list[bool] = []
    agent = Agent(scripted([ToolCallPart('where', {})], [TextPart('ok')]))

    @agent.tool_plain
    def where() -> None:
        threads.append(threading.current_thread() is threading.main_thread())

    await agent.run('x')
    assert threads == [False]


async def test_tool_calls_of_one_response_run_concurrently_and_return_in_call_order() -> None:
    order: list[str] = []
    agent = Agent(scripted([ToolCallPart('slow', {}, 'c1'), ToolCallPart('fast', {}, 'c2')], [TextPart('ok')]))
    slow_started = anyio.Event()

    @agent.tool_plain
    async def slow() -> str:
        slow_started.set()
        await anyio.sleep(0.05)
        order.append('slow')
        return 'slow'

    @agent.tool_plain
    async def fast() -> str:
        await slow_started.wait()
        order.append('fast')
        return 'fast'

    result = await agent.run('x')
    assert order == ['fast', 'slow']
    assert result.all_messages()[2].parts == [
        ToolReturnPart('slow', 'slow', 'c1', timestamp=NOW),
        ToolReturnPart('fast', 'fast', 'c2', timestamp=NOW),
    ]


async def test_a_sequential_tool_makes_the_calls_run_one_after_another() -> None:
    order: list[str] = []
    agent = Agent(scripted([ToolCallPart('first', {}), ToolCallPart('second', {})], [TextPart('ok')]))

    @agent.tool_plain(sequential=True)
    async def first() -> None:
        await anyio.sleep(0.01)
        order.append('first')

    @agent.tool_plain
    async def second() -> None:
        order.append('second')

    await agent.run('x')
    assert order == ['first', 'second']


async def test_a_tool_retry_budget_resets_after_a_success() -> None:
    calls = iter([ModelRetry('again'), None, ModelRetry('again'), None])
    script = [[ToolCallPart('flaky', {}, f'c{i}')] for i in range(4)]
    agent = Agent(scripted(*script, [TextPart('ok')]), retries=1)
    retries: list[int] = []

    @agent.tool
    def flaky(ctx: RunContext[object]) -> str:
        retries.append(ctx.retry)
        error = next(calls)
        if error is not None:
            raise error
        return 'ok'

    assert (await agent.run('x')).output == 'ok'
    assert retries == [0, 1, 0, 1]


async def test_prepare_can_change_or_hide_a_tool_for_a_step() -> None:
    seen: list[list[str]] = []

    def record(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append([f'{t.name}:{t.description}' for t in info.function_tools])
        if len(seen) == 1:
            return ModelResponse(parts=[ToolCallPart('hidden', {}, 'c1')])
        return ModelResponse(parts=[TextPart('ok')])

    async def describe(ctx: RunContext[object], tool_def: ToolDefinition) -> ToolDefinition:
        tool_def.description = f'step {ctx.run_step}'
        return tool_def

    def hide(ctx: RunContext[object], tool_def: ToolDefinition) -> None:
        return None

    agent = Agent(FunctionModel(record))
    agent.tool_plain(prepare=describe)(lambda: 1)
    agent.tool_plain(name='hidden', prepare=hide)(lambda: 2)
    result = await agent.run('x')
    assert seen == [['<lambda>:step 1'], ['<lambda>:step 2']]
    assert result.all_messages()[2].parts == [
        RetryPromptPart(
            "Unknown tool name: 'hidden'. Available tools: '<lambda>'",
            tool_name='hidden',
            tool_call_id='c1',
            timestamp=NOW,
        )
    ]


async def test_from_schema_passes_the_arguments_through() -> None:
    def add(a: int, b: int) -> int:
        return a + b

    schema = {'type': 'object', 'properties': {'a': {'type': 'integer'}, 'b': {'type': 'integer'}}}
    tool = Tool.from_schema(add, name='add', description='Add numbers', json_schema=schema)
    assert tool.tool_def == ToolDefinition(
        name='add', parameters_json_schema=schema, description='Add numbers', return_schema={}
    )  # as in pydantic-ai: a schema given as JSON says nothing about the return value
    calls = [ToolCallPart('add', '{"a": 1, "b": 2}', 'c1')], [ToolCallPart('add', {'a': 3, 'b': 4}, 'c2')]
    agent = Agent(scripted(*calls, [TextPart('ok')]), tools=[tool])
    result = await agent.run('x')
    assert [m.parts[0].content for m in result.all_messages()[2::2]] == [3, 7]  # type: ignore[union-attr]


def test_tool_definitions_compare_and_show_only_what_is_set() -> None:
    assert repr(ToolDefinition(name='d', description='x')).endswith("description='x')")
    tool_def = ToolDefinition(name='t', strict=True, sequential=True, kind='output', metadata={'k': 1})
    assert repr(tool_def) == (
        "ToolDefinition(name='t', parameters_json_schema={'type': 'object', 'properties': {}, "
        "'additionalProperties': False}, strict=True, sequential=True, kind='output', metadata={'k': 1})"
    )
    assert tool_def != ToolDefinition(name='t')
    assert tool_def.__eq__(1) is NotImplemented
    assert repr(Tool(lambda: 1, name='x')) == 'Tool(name=x, takes_ctx=False, max_retries=None)'.replace('=x', "='x'")


def test_run_context_repr_and_replace() -> None:
    from edgewise.agent.models.test import TestModel
    from edgewise.agent.usage import RunUsage

    ctx = RunContext(deps=1, model=TestModel(), usage=RunUsage())
    assert ctx.replace_with(retry=2).retry == 2
    assert repr(ctx) == (
        "RunContext(deps=1, model=TestModel(model_name='test'), usage=RunUsage(), run_step=0, tool_name=None, retry=0)"
    )


async def test_the_run_contexts_of_a_run_hold_every_field_as_the_constructor_would() -> None:
    import dataclasses

    from edgewise.agent.models.test import TestModel

    seen: list[RunContext[Deps]] = []
    agent = Agent(TestModel(), deps_type=Deps)

    @agent.output_validator
    def keep(ctx: RunContext[Deps], output: str) -> str:
        seen.append(ctx)
        return output

    await agent.run('x', deps=Deps(factor=3))
    [ctx] = seen
    # The run builds its contexts without `RunContext.__init__`: each field is there, in order, and those the run
    # does not set have their defaults; a copy made through `__init__` is equal.
    fields = dataclasses.fields(RunContext)
    assert list(ctx.__dict__)[: len(fields)] == [f.name for f in fields]
    unset = {
        'model_settings', 'validation_context', 'partial_output', 'tool_call_approved', 'tool_call_metadata',
        'capability_active',
    }  # fmt: skip
    assert {f.name: getattr(ctx, f.name) for f in fields if f.name in unset} == {
        f.name: f.default for f in fields if f.name in unset
    }
    assert dataclasses.replace(ctx) == ctx
    assert (ctx.deps, ctx.run_step, ctx.prompt, ctx.max_retries) == (Deps(factor=3), 1, 'x', 1)


async def test_a_tool_renamed_by_prepare_is_called_by_its_new_name() -> None:
    def rename(ctx: RunContext[object], tool_def: ToolDefinition) -> ToolDefinition:
        tool_def.name = 'lookup'
        tool_def.sequential = True
        return tool_def

    agent = Agent(scripted([ToolCallPart('lookup', {'q': 'x'}, 'c1'), ToolCallPart('lookup', {'q': 'y'}, 'c2')],
                           [TextPart('ok')]))  # fmt: skip
    seen: list[str | None] = []

    @agent.tool(prepare=rename)
    async def search(ctx: RunContext[object], q: str) -> str:
        seen.append(ctx.tool_name)
        return q.upper()

    result = await agent.run('x')
    assert seen == ['lookup', 'lookup']
    assert result.all_messages()[2].parts == [
        ToolReturnPart('lookup', 'X', 'c1', timestamp=NOW),
        ToolReturnPart('lookup', 'Y', 'c2', timestamp=NOW),
    ]
