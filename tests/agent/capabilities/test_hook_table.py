"""The table of capability hooks (`capabilities._hook_table`): every hook of `AbstractCapability` is in it once,
and `CombinedCapability`, `Hooks` and `WrapperCapability` take their hooks from it."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from edgewise.agent import RunContext
from edgewise.agent.capabilities import AbstractCapability, CombinedCapability, Hooks, WrapperCapability
from edgewise.agent.capabilities._hook_table import HOOKS, LIFECYCLE_HOOKS, HookSpec, folded, hook_names
from edgewise.agent.capabilities.hooks import HookRegistration
from edgewise.agent.messages import ToolCallPart
from edgewise.agent.models.test import TestModel
from edgewise.agent.tools import DeferredToolRequests, DeferredToolResults, ToolDefinition

pytestmark = pytest.mark.anyio

_PREFIXES = ('before_', 'after_', 'wrap_', 'on_', 'prepare_', 'handle_')


def test_every_hook_of_abstract_capability_is_in_the_table_once() -> None:
    names = [spec.name for spec in HOOKS]
    assert len(names) == len(set(names))
    hooks = {name for name, _ in inspect.getmembers(AbstractCapability) if name.startswith(_PREFIXES)}
    # `on_event` (pydantic-ai 2.68's listeners) is no hook of the table: events reach it through
    # `wrap_run_event_stream`, which a capability with listeners implements.
    assert hooks - {'on_event'} == set(names)


def test_the_hooks_decorators_are_the_tables_short_names() -> None:
    declared = {name for name in HookRegistration.__annotations__ if name != 'hooks'}
    assert declared == {spec.short_name for spec in HOOKS} | {'event'}
    assert {spec.short_name for spec in HOOKS if spec.kind == 'recover'} == {
        'run_error', 'node_run_error', 'model_request_error', 'tool_validate_error', 'tool_execute_error',
        'output_validate_error', 'output_process_error',
    }  # fmt: skip


def test_combined_hooks_and_wrapper_have_a_method_for_each_hook() -> None:
    for spec in HOOKS:
        for cls in (CombinedCapability, Hooks, WrapperCapability):
            assert spec.name in cls.__dict__, (cls, spec.name)


def test_the_groups_give_the_sets_the_loop_checks() -> None:
    assert hook_names('run') == {'before_run', 'after_run', 'wrap_run', 'on_run_error'}
    assert hook_names('response') == {'after_model_request', 'on_model_request_error'}
    assert 'before_model_request' not in LIFECYCLE_HOOKS
    assert 'wrap_run_event_stream' in LIFECYCLE_HOOKS


def _ctx() -> RunContext[None]:
    return RunContext(deps=None, model=TestModel(), usage=None)  # type: ignore[arg-type]


def _definition(name: str) -> ToolDefinition:
    return ToolDefinition(name=name)


async def test_a_positional_hook_folds_its_value_given_by_keyword_too() -> None:
    seen: list[str] = []

    def first(ctx: RunContext[None], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
        seen.append('first')
        return [*tool_defs, _definition('a')]

    def second(ctx: RunContext[None], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
        seen.append('second')
        return [*tool_defs, _definition('b')]

    combined = CombinedCapability([Hooks(prepare_tools=first), Hooks(prepare_tools=second)])
    by_keyword = await combined.prepare_tools(_ctx(), tool_defs=[])
    by_position = await combined.prepare_tools(_ctx(), [])
    assert [d.name for d in by_keyword] == [d.name for d in by_position] == ['a', 'b']
    assert seen == ['first', 'second', 'first', 'second']


async def test_a_fold_calls_the_implementations_it_is_given() -> None:
    calls: list[tuple[str, Any]] = []

    async def after(ctx: Any, *, result: int) -> int:
        calls.append(('after', result))
        return result + 1

    async def recover_a(ctx: Any, *, error: BaseException) -> int:
        raise ValueError('a')

    async def recover_b(ctx: Any, *, error: BaseException) -> int:
        calls.append(('recover', str(error)))
        return 7

    reverse = next(spec for spec in HOOKS if spec.name == 'after_run')
    assert await folded(reverse, in_reverse=True)([after, after], None, (), {'result': 1}) == 3
    recover = HookSpec('on_x', 'recover', 'run', errors=(ValueError,))
    assert await folded(recover, in_reverse=False)([recover_a, recover_b], None, (), {'error': KeyError('k')}) == 7
    assert calls == [('after', 1), ('after', 2), ('recover', 'a')]
    with pytest.raises(ValueError, match='a'):
        await folded(recover, in_reverse=True)([recover_a], None, (), {'error': KeyError('k')})


async def test_deferred_tool_calls_are_answered_in_turn_and_merged() -> None:
    first_call, second_call = ToolCallPart('a', {}, tool_call_id='1'), ToolCallPart('b', {}, tool_call_id='2')
    asked: list[list[str]] = []

    def answer(tool_call_id: str) -> Any:
        def handle(ctx: RunContext[None], *, requests: DeferredToolRequests) -> DeferredToolResults | None:
            asked.append([call.tool_call_id for call in requests.calls])
            if tool_call_id not in [call.tool_call_id for call in requests.calls]:
                return None
            return DeferredToolResults(calls={tool_call_id: f'answer {tool_call_id}'})

        return handle

    hooks = [Hooks(deferred_tool_calls=answer(i)) for i in ('x', '1', '2', '3')]
    merged = await CombinedCapability(hooks).handle_deferred_tool_calls(
        _ctx(), requests=DeferredToolRequests(calls=[first_call, second_call])
    )
    assert merged == DeferredToolResults(calls={'1': 'answer 1', '2': 'answer 2'})
    assert asked == [['1', '2'], ['1', '2'], ['2']]  # the last one is not asked: nothing is left open
    assert (
        await CombinedCapability([Hooks(deferred_tool_calls=answer('x'))]).handle_deferred_tool_calls(
            _ctx(), requests=DeferredToolRequests(calls=[first_call])
        )
        is None
    )
