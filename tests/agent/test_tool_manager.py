"""`ToolManager`: the tools of a run step, validating and calling the model's tool calls; `ToolRetryError` for a
call the model must retry; `IncompleteToolCall` when the token limit cut a call's arguments."""

from __future__ import annotations

import dataclasses
import pickle

import anyio
import anyio.lowlevel
import pytest
from pydantic_core import ErrorDetails

from edgewise.agent import (
    Agent,
    IncompleteToolCall,
    ModelRetry,
    RunContext,
    ToolDefinition,
    UnexpectedModelBehavior,
    UserError,
)
from edgewise.agent.capabilities import PrepareTools
from edgewise.agent.exceptions import ToolRetryError
from edgewise.agent.messages import ModelMessage, ModelResponse, RetryPromptPart, TextPart, ToolCallPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.settings import ModelSettings
from edgewise.agent.tool_manager import ToolManager
from edgewise.agent.toolsets import FunctionToolset
from edgewise.agent.usage import RunUsage

pytestmark = pytest.mark.anyio


def _toolset() -> FunctionToolset[None]:
    toolset: FunctionToolset[None] = FunctionToolset(max_retries=1)

    @toolset.tool_plain
    def double(x: int) -> int:
        """Double a number."""
        if x < 0:
            raise ModelRetry('x must not be negative')
        return 2 * x

    return toolset


def _ctx(retries: dict[str, int] | None = None) -> RunContext[None]:
    return RunContext(deps=None, model=TestModel(), usage=RunUsage(), retries=retries or {})


async def test_for_run_step_lists_the_steps_tools() -> None:
    manager = await ToolManager(_toolset()).for_run_step(_ctx())
    assert [t.name for t in manager.tool_defs] == ['double']
    tool_def = manager.get_tool_def('double')
    assert tool_def is not None
    assert tool_def.description == 'Double a number.'
    assert manager.get_tool_def('missing') is None


async def test_a_manager_not_prepared_for_a_step_says_so() -> None:
    with pytest.raises(UserError, match=r'call `for_run_step\(ctx\)` first'):
        ToolManager(_toolset()).tool_defs  # noqa: B018


async def test_handle_call_validates_then_runs_the_tool() -> None:
    manager = await ToolManager(_toolset()).for_run_step(_ctx())
    assert await manager.handle_call(ToolCallPart('double', '{"x": 21}')) == 42


async def test_invalid_arguments_give_a_validation_error_to_send_back() -> None:
    manager = await ToolManager(_toolset()).for_run_step(_ctx())
    call = ToolCallPart('double', {'x': 'many'}, tool_call_id='c1')
    validated = await manager.validate_tool_call(call)
    assert not validated.args_valid
    assert validated.validated_args is None
    error = validated.validation_error
    assert isinstance(error, ToolRetryError)
    assert error.tool_retry.tool_name == 'double'
    assert error.tool_retry.tool_call_id == 'c1'
    assert str(error).startswith("1 validation error for 'double'\nx\n  Input should be a valid integer")
    assert manager.failed_tools == {'double'}
    with pytest.raises(ToolRetryError):
        await manager.execute_tool_call(validated)


async def test_a_model_retry_from_the_tool_becomes_a_tool_retry_error() -> None:
    manager = await ToolManager(_toolset()).for_run_step(_ctx())
    with pytest.raises(ToolRetryError, match='x must not be negative') as info:
        await manager.handle_call(ToolCallPart('double', {'x': -1}))
    assert isinstance(info.value.__cause__, ModelRetry)
    assert info.value.tool_retry.content == 'x must not be negative'


async def test_an_unknown_tool_is_a_retry_on_the_default_budget() -> None:
    manager = await ToolManager(_toolset(), default_max_retries=2).for_run_step(_ctx())
    validated = await manager.validate_tool_call(ToolCallPart('triple', {}))
    assert validated.tool is None
    assert validated.ctx.max_retries == 2
    assert isinstance(validated.validation_error, ToolRetryError)
    assert validated.validation_error.tool_retry.content == "Unknown tool name: 'triple'. Available tools: 'double'"


async def test_a_tool_out_of_retries_fails_the_run() -> None:
    manager = await ToolManager(_toolset()).for_run_step(_ctx(retries={'double': 1}))
    with pytest.raises(UnexpectedModelBehavior, match="Tool 'double' exceeded max retries count of 1"):
        await manager.handle_call(ToolCallPart('double', {'x': -1}))


async def test_the_call_context_names_the_call() -> None:
    manager = await ToolManager(_toolset()).for_run_step(_ctx(retries={'double': 1}))
    validated = await manager.validate_tool_call(ToolCallPart('double', {'x': 1}, tool_call_id='c9'), approved=True)
    assert (validated.ctx.tool_name, validated.ctx.tool_call_id, validated.ctx.retry) == ('double', 'c9', 1)
    assert validated.ctx.tool_call_approved
    assert validated.validated_args == {'x': 1}


async def test_the_capabilities_prepare_tools_hook_filters_the_steps_tools() -> None:
    def hide(ctx: RunContext[None], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
        return []

    manager = await ToolManager(_toolset(), PrepareTools(hide)).for_run_step(_ctx())
    assert manager.tool_defs == []
    validated = await manager.validate_tool_call(ToolCallPart('double', {'x': 1}))
    assert validated.validation_error is not None


async def test_the_validation_context_reaches_the_validators() -> None:
    manager = await ToolManager(_toolset(), validation_context=lambda ctx: {'step': ctx.run_step}).for_run_step(_ctx())
    validated = await manager.validate_tool_call(ToolCallPart('double', {'x': 1}))
    assert validated.ctx.validation_context == {'step': 0}


def test_tool_retry_error_message_and_pickling() -> None:
    part = RetryPromptPart('try again', tool_name='t', tool_call_id='c')
    error = ToolRetryError(part)
    assert str(error) == 'try again'
    restored = pickle.loads(pickle.dumps(error))
    assert restored.tool_retry == part
    details: list[ErrorDetails] = [
        {'type': 'value_error', 'loc': (), 'msg': 'Value error, bad', 'input': 3},
        {'type': 'missing', 'loc': ('a', 0), 'msg': 'Field required', 'input': {}},
    ]
    assert str(ToolRetryError(RetryPromptPart(details))) == (
        '2 validation errors\n__root__\n  Value error, bad [type=value_error, input_value=3]\n'
        'a.0\n  Field required [type=missing, input_value={}]'
    )


def _cut_call(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart('double', '{"x": 1')], finish_reason='length')


async def test_a_tool_call_cut_by_the_token_limit_is_an_incomplete_tool_call() -> None:
    agent = Agent(FunctionModel(_cut_call), toolsets=[_toolset()])
    with pytest.raises(IncompleteToolCall, match=r'Model token limit \(7\) exceeded while generating a tool call'):
        await agent.run('go', model_settings=ModelSettings(max_tokens=7))
    with pytest.raises(IncompleteToolCall, match=r'Model token limit \(provider default\) exceeded'):
        await agent.run('go')


async def test_a_cut_call_of_an_unknown_tool_is_an_incomplete_tool_call_too() -> None:
    def cut(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart('nothing', '{"a": ')], finish_reason='length')

    with pytest.raises(IncompleteToolCall):
        await Agent(FunctionModel(cut)).run('go')


async def test_whole_arguments_at_the_token_limit_are_an_ordinary_retry() -> None:
    def whole(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart('double', '{"x": 2}')], finish_reason='length')
        return ModelResponse(parts=[TextPart('done')])

    assert (await Agent(FunctionModel(whole), toolsets=[_toolset()]).run('go')).output == 'done'


async def test_parallel_execution_mode_sequential_runs_calls_one_after_the_other() -> None:
    running: list[int] = []
    overlaps: list[int] = []

    def calls(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart('slow', {}), ToolCallPart('slow', {})])
        return ModelResponse(parts=[TextPart('done')])

    agent = Agent(FunctionModel(calls))

    @agent.tool_plain
    async def slow() -> str:
        running.append(1)
        overlaps.append(len(running))
        await anyio.lowlevel.checkpoint()
        running.pop()
        return 'ok'

    await agent.run('go')
    assert overlaps == [1, 2]  # both started before either finished
    overlaps.clear()
    with agent.parallel_tool_call_execution_mode('sequential'):
        await agent.run('go')
    assert overlaps == [1, 1]
    overlaps.clear()
    with ToolManager.parallel_execution_mode('sequential'):
        await agent.run('go')
    assert overlaps == [1, 1]


async def test_a_sequential_tool_makes_the_calls_sequential() -> None:
    toolset: FunctionToolset[None] = FunctionToolset()

    @toolset.tool_plain(sequential=True)
    def alone() -> None:
        pass

    @toolset.tool_plain
    def other() -> None:
        pass

    manager = await ToolManager(toolset).for_run_step(_ctx())
    assert manager.get_parallel_execution_mode([ToolCallPart('other', {})]) == 'parallel'
    assert manager.get_parallel_execution_mode([ToolCallPart('other', {}), ToolCallPart('alone', {})]) == 'sequential'


@pytest.mark.parametrize('cls', [RunContext, ToolManager])
def test_run_contexts_and_managers_copy_like_a_dataclass_replace(cls: type) -> None:
    # `ToolManager` copies both per step without `dataclasses.replace` (see `tool_manager._copy_with`), which gives
    # the same copy only while the class has no `__post_init__` and every field is set by `__init__`.
    assert not hasattr(cls, '__post_init__')
    assert all(f.init for f in dataclasses.fields(cls))


async def test_each_call_gets_its_own_context_and_the_step_keeps_its_own() -> None:
    seen: list[RunContext[None]] = []
    toolset: FunctionToolset[None] = FunctionToolset()

    @toolset.tool
    def note(ctx: RunContext[None], x: int) -> int:
        seen.append(ctx)
        return x

    step_ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage(), retries={'note': 1}, run_step=3)
    manager = await ToolManager[None](toolset).for_run_step(step_ctx)
    assert manager.ctx is step_ctx
    assert manager.tools is not None
    assert manager.failed_tools == set()
    await manager.handle_call(ToolCallPart('note', {'x': 1}, 'c1'))
    await manager.handle_call(ToolCallPart('note', {'x': 2}, 'c2'))
    first, second = seen
    assert (first.tool_call_id, second.tool_call_id) == ('c1', 'c2')
    assert first is not second
    assert step_ctx not in seen
    assert (first.tool_name, first.retry, first.run_step, first.usage) == ('note', 1, 3, step_ctx.usage)
    assert (step_ctx.tool_name, step_ctx.tool_call_id) == (None, None)


async def test_a_subclass_of_run_context_is_copied_through_its_own_init() -> None:
    @dataclasses.dataclass(kw_only=True)
    class Tagged(RunContext[None]):
        tag: str = ''

        def __post_init__(self) -> None:
            self.tag = f'{self.tool_name}!'

    seen: list[RunContext[None]] = []
    toolset: FunctionToolset[None] = FunctionToolset()

    @toolset.tool
    def note(ctx: RunContext[None]) -> None:
        seen.append(ctx)

    manager = await ToolManager[None](toolset).for_run_step(Tagged(deps=None, model=TestModel(), usage=RunUsage()))
    await manager.handle_call(ToolCallPart('note', {}, 'c1'))
    [copy] = seen
    assert isinstance(copy, Tagged)
    assert (copy.tool_name, copy.tag) == ('note', 'note!')
