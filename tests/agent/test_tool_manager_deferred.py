"""`ToolManager.handle_call` on a call its tool defers: the capabilities' `handle_deferred_tool_calls` answers it
there and then (approve, deny, give the external result, fail or ask for a retry); and `wrap_validation_errors=False`,
under which a failed call raises its own error and spends no retry."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest

from edgewise.agent import ModelRetry, RunContext, ToolDefinition
from edgewise.agent.capabilities import HandleDeferredToolCalls
from edgewise.agent.exceptions import ApprovalRequired, CallDeferred, ToolFailed, ToolFailedError, ToolRetryError
from edgewise.agent.messages import RetryPromptPart, ToolCallPart, ToolReturn, ToolReturnPart
from edgewise.agent.models.test import TestModel
from edgewise.agent.tool_manager import ToolManager
from edgewise.agent.tools import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied
from edgewise.agent.toolsets import ExternalToolset, FunctionToolset
from edgewise.agent.usage import RunUsage

pytestmark = pytest.mark.anyio

Handler = Any


def _toolset(seen: list[str]) -> FunctionToolset[None]:
    toolset: FunctionToolset[None] = FunctionToolset(max_retries=1)

    @toolset.tool
    def guarded(ctx: RunContext[None], x: int = 1) -> str:
        if not ctx.tool_call_approved:
            raise ApprovalRequired(metadata={'why': 'policy'})
        seen.append(f'ran x={x} metadata={ctx.tool_call_metadata}')
        return f'x={x}'

    @toolset.tool_plain
    def remote() -> str:
        raise CallDeferred

    @toolset.tool_plain(requires_approval=True)
    def declared(x: int) -> int:
        seen.append(f'declared x={x}')
        return x

    @toolset.tool_plain
    def strict(x: int) -> int:
        if x < 0:
            raise ModelRetry('x must not be negative')
        if x == 0:
            raise ToolFailed('zero is not served')
        return x

    return toolset


async def _manager(
    handler: Handler | None, seen: list[str], toolset: Any = None, capability: Any = None
) -> ToolManager[None]:
    root = capability if capability is not None else HandleDeferredToolCalls(handler) if handler else None
    ctx: RunContext[None] = RunContext(deps=None, model=TestModel(), usage=RunUsage(), retries={})
    return await ToolManager(toolset if toolset is not None else _toolset(seen), root_capability=root).for_run_step(ctx)


async def test_an_approved_call_runs_with_the_answers_metadata() -> None:
    seen: list[str] = []
    asked: list[DeferredToolRequests] = []

    def handler(ctx: RunContext[None], requests: DeferredToolRequests) -> DeferredToolResults:
        asked.append(requests)
        return DeferredToolResults(approvals={'c1': True}, metadata={'c1': {'by': 'admin'}})

    manager = await _manager(handler, seen)
    call = ToolCallPart('guarded', {'x': 3}, tool_call_id='c1')
    assert await manager.handle_call(call) == 'x=3'
    assert seen == ["ran x=3 metadata={'by': 'admin'}"]
    assert asked == [DeferredToolRequests(approvals=[call], metadata={'c1': {'why': 'policy'}})]


async def test_an_approval_with_override_args_runs_the_tool_with_them() -> None:
    seen: list[str] = []
    manager = await _manager(
        lambda ctx, r: DeferredToolResults(approvals={'c1': ToolApproved(override_args={'x': 42})}), seen
    )
    assert await manager.handle_call(ToolCallPart('guarded', {'x': 3}, tool_call_id='c1')) == 'x=42'


@pytest.mark.parametrize('denial', [False, ToolDenied('not today')])
async def test_a_denied_call_returns_the_denial(denial: bool | ToolDenied) -> None:
    seen: list[str] = []
    manager = await _manager(lambda ctx, r: DeferredToolResults(approvals={'c1': denial}), seen)
    result = await manager.handle_call(ToolCallPart('guarded', {}, tool_call_id='c1'))
    assert result == (denial or ToolDenied())
    assert seen == []


@pytest.mark.parametrize('answer', ['plain value', ToolReturn('wrapped', metadata={'k': 'v'})])
async def test_an_external_result_is_returned_as_the_handler_gave_it(answer: Any) -> None:
    manager = await _manager(lambda ctx, r: DeferredToolResults(calls={c.tool_call_id: answer for c in r.calls}), [])
    assert await manager.handle_call(ToolCallPart('remote', {}, tool_call_id='c1')) is answer


async def test_an_external_failure_raises_tool_failed_error() -> None:
    manager = await _manager(lambda ctx, r: DeferredToolResults(calls={'c1': ToolFailed('backend down')}), [])
    with pytest.raises(ToolFailedError) as caught:
        await manager.handle_call(ToolCallPart('remote', {}, tool_call_id='c1'))
    assert caught.value.tool_failed == ToolReturnPart(
        'remote', 'backend down', 'c1', outcome='failed', timestamp=caught.value.tool_failed.timestamp
    )


async def test_an_external_failure_without_wrapping_raises_tool_failed() -> None:
    failure = ToolFailed('backend down')
    manager = await _manager(lambda ctx, r: DeferredToolResults(calls={'c1': failure}), [])
    with pytest.raises(ToolFailed) as caught:
        await manager.handle_call(ToolCallPart('remote', {}, tool_call_id='c1'), wrap_validation_errors=False)
    assert caught.value is failure


@pytest.mark.parametrize('answer', [ModelRetry('try again'), RetryPromptPart('try again', tool_name='x')])
async def test_an_external_retry_raises_a_retry_for_the_call(answer: ModelRetry | RetryPromptPart) -> None:
    manager = await _manager(lambda ctx, r: DeferredToolResults(calls={'c1': answer}), [])
    with pytest.raises(ToolRetryError) as caught:
        await manager.handle_call(ToolCallPart('remote', {}, tool_call_id='c1'))
    retry = caught.value.tool_retry
    assert (retry.content, retry.tool_name, retry.tool_call_id) == ('try again', 'remote', 'c1')


async def test_a_declared_approval_is_asked_before_the_tool_runs() -> None:
    seen: list[str] = []
    asked: list[DeferredToolRequests] = []

    def handler(ctx: RunContext[None], requests: DeferredToolRequests) -> DeferredToolResults:
        asked.append(requests)
        return DeferredToolResults(approvals={'c1': True})

    manager = await _manager(handler, seen)
    call = ToolCallPart('declared', {'x': 5}, tool_call_id='c1')
    assert await manager.handle_call(call) == 5
    assert asked == [DeferredToolRequests(approvals=[call])]
    assert seen == ['declared x=5']


async def test_a_declared_external_tool_asks_for_its_result() -> None:
    toolset: ExternalToolset[None] = ExternalToolset([ToolDefinition(name='outside')])
    manager = await _manager(lambda ctx, r: DeferredToolResults(calls={'c1': 'from outside'}), [], toolset)
    assert await manager.handle_call(ToolCallPart('outside', {}, tool_call_id='c1')) == 'from outside'


@pytest.mark.parametrize(
    'handler', [None, lambda ctx, r: None, lambda ctx, r: DeferredToolResults(approvals={'other': True})]
)
async def test_a_call_nobody_answers_raises_its_deferral(handler: Handler) -> None:
    manager = await _manager(handler, [])
    with pytest.raises(ApprovalRequired) as caught:
        await manager.handle_call(ToolCallPart('guarded', {}, tool_call_id='c1'))
    assert caught.value.metadata == {'why': 'policy'}


async def test_a_tool_deferring_again_once_approved_raises_the_new_deferral() -> None:
    toolset: FunctionToolset[None] = FunctionToolset()

    @toolset.tool
    def twice(ctx: RunContext[None]) -> str:
        if ctx.tool_call_approved:
            raise CallDeferred(metadata={'reason': 'after approval'})
        raise ApprovalRequired

    manager = await _manager(lambda ctx, r: DeferredToolResults(approvals={'c1': True}), [], toolset)
    with pytest.raises(CallDeferred) as caught:
        await manager.handle_call(ToolCallPart('twice', {}, tool_call_id='c1'))
    assert caught.value.metadata == {'reason': 'after approval'}


async def test_without_wrapping_a_tools_model_retry_is_raised_and_spends_no_retry() -> None:
    manager = await _manager(None, [])
    with pytest.raises(ModelRetry, match='x must not be negative'):
        await manager.handle_call(ToolCallPart('strict', {'x': -1}), wrap_validation_errors=False)
    assert manager.failed_tools == set()


async def test_without_wrapping_a_tools_failure_is_raised() -> None:
    manager = await _manager(None, [])
    with pytest.raises(ToolFailed, match='zero is not served'):
        await manager.handle_call(ToolCallPart('strict', {'x': 0}), wrap_validation_errors=False)


async def test_without_wrapping_invalid_arguments_raise_the_validation_error() -> None:
    manager = await _manager(None, [])
    with pytest.raises(pydantic.ValidationError):
        await manager.handle_call(ToolCallPart('strict', {'x': 'many'}), wrap_validation_errors=False)
    assert manager.failed_tools == set()


async def test_without_wrapping_a_validators_failure_is_raised() -> None:
    toolset: FunctionToolset[None] = FunctionToolset()

    def refuse(ctx: RunContext[None], x: int) -> None:
        raise ToolFailed(f'{x} is not served')

    @toolset.tool_plain(args_validator=refuse)
    def checked(x: int) -> int:
        return x  # pragma: no cover - the validator refuses every call

    manager = await _manager(None, [], toolset)
    with pytest.raises(ToolFailed, match='7 is not served'):
        await manager.handle_call(ToolCallPart('checked', {'x': 7}), wrap_validation_errors=False)


async def test_resolve_deferred_tool_calls_asks_the_capabilities_or_answers_none() -> None:
    requests = DeferredToolRequests(calls=[ToolCallPart('remote', {}, tool_call_id='c1')])
    answered = await _manager(lambda ctx, r: DeferredToolResults(calls={'c1': 'done'}), [])
    assert await answered.resolve_deferred_tool_calls(requests) == DeferredToolResults(calls={'c1': 'done'})
    assert await (await _manager(None, [])).resolve_deferred_tool_calls(requests) is None


async def test_handle_call_asks_resolve_deferred_tool_calls_for_a_deferred_call() -> None:
    class AnsweringManager(ToolManager[None]):
        async def resolve_deferred_tool_calls(self, requests: DeferredToolRequests) -> DeferredToolResults | None:
            return DeferredToolResults(
                calls={call.tool_call_id: ToolFailed('failed out there') for call in requests.calls}
            )

    ctx: RunContext[None] = RunContext(deps=None, model=TestModel(), usage=RunUsage(), retries={})
    manager = await AnsweringManager(_toolset([])).for_run_step(ctx)
    call = ToolCallPart('remote', {}, tool_call_id='c1')
    with pytest.raises(ToolFailed, match='failed out there'):
        await manager.handle_call(call, wrap_validation_errors=False)
    with pytest.raises(ToolFailedError):
        await manager.handle_call(call)
