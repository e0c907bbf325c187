"""`RequestInput` (pydantic-ai 2.68) and `edgewise.agent.external_events`: a run that asks for the answers to its
deferred tool calls and goes on with them, answered at once, or waiting until the token is resolved (from the same
loop, a worker thread or a plain thread), failed, or timed out."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import anyio
import pytest
from pydantic import JsonValue

from edgewise.agent import Agent, RunContext
from edgewise.agent.capabilities import RequestInput
from edgewise.agent.exceptions import CallDeferred, UserError
from edgewise.agent.external_events import (
    ExternalEventError,
    ExternalEventWaiter,
    _Pending,
    _pending,
    external_event_scope,
    fail_external_event,
    resolve_external_event,
    wait_for_external_event,
)
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.tools import DeferredToolRequests, DeferredToolResults, ToolDenied

pytestmark = pytest.mark.anyio


def calls_then_reports() -> FunctionModel:
    """A model calling `refund` and `lookup` first, then answering with what their returns said."""

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(
                parts=[ToolCallPart('refund', {'amount': 5}, tool_call_id='r1'), ToolCallPart('lookup', {}, 'l1')]
            )
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        returns = [f'{p.tool_name}={p.content}' for p in last.parts if isinstance(p, ToolReturnPart)]
        return ModelResponse(parts=[TextPart('; '.join(sorted(returns)))])

    return FunctionModel(answer)


def agent_with(capability: RequestInput[None]) -> Agent[None, str]:
    agent = Agent(calls_then_reports(), capabilities=[capability])

    @agent.tool_plain(requires_approval=True)
    def refund(amount: int) -> str:
        return f'refunded {amount}'

    @agent.tool_plain
    def lookup() -> str:
        raise CallDeferred

    return agent


async def test_an_answer_given_at_once_goes_on_in_the_same_run() -> None:
    asked: list[tuple[list[str], list[str], int]] = []

    def ask(ctx: RunContext[None], requests: DeferredToolRequests, token: str) -> DeferredToolResults:
        asked.append(([c.tool_name for c in requests.approvals], [c.tool_name for c in requests.calls], len(token)))
        return requests.build_results(approvals={'r1': True}, calls={'l1': 'found it'})

    result = await agent_with(RequestInput(ask)).run('refund me')
    assert result.output == 'lookup=found it; refund=refunded 5'
    assert asked == [(['refund'], ['lookup'], 43)]


async def test_ask_hands_the_token_on_and_the_run_waits_for_it() -> None:
    tokens: list[str] = []
    handed = anyio.Event()

    async def ask(ctx: RunContext[None], requests: DeferredToolRequests, token: str) -> None:
        tokens.append(token)
        handed.set()

    output: list[str] = []

    async def run() -> None:
        output.append((await agent_with(RequestInput(ask)).run('refund me')).output)

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await handed.wait()
        decision = DeferredToolResults(approvals={'r1': ToolDenied('not today')}, calls={'l1': 'from the payload'})
        resolve_external_event(tokens[0], decision)
    assert output == ['lookup=from the payload; refund=not today']
    with pytest.raises(UserError, match='No wait in this process has this token'):
        resolve_external_event(tokens[0], decision)  # the wait is over


async def resolved_from(resolver: str) -> JsonValue:
    """What a wait gives when its token is resolved from `resolver`: an anyio worker thread, or a plain thread."""
    tokens: list[str] = []
    handed = anyio.Event()

    async def ask(token: str) -> None:
        tokens.append(token)
        handed.set()

    payload: list[JsonValue] = []

    async def wait() -> None:
        payload.append(await wait_for_external_event('review', ask=ask))

    async with anyio.create_task_group() as tg:
        tg.start_soon(wait)
        await handed.wait()
        if resolver == 'worker':
            await anyio.to_thread.run_sync(resolve_external_event, tokens[0], {'ok': resolver})
        else:
            thread = threading.Thread(target=resolve_external_event, args=(tokens[0], {'ok': resolver}))
            thread.start()
            await anyio.to_thread.run_sync(thread.join)
    return payload[0]


async def test_a_token_can_be_resolved_from_other_threads() -> None:
    assert await resolved_from('worker') == {'ok': 'worker'}
    assert await resolved_from('plain') == {'ok': 'plain'}


async def test_a_failed_token_denies_the_approvals_and_fails_the_outside_calls() -> None:
    def ask(ctx: RunContext[None], requests: DeferredToolRequests, token: str) -> None:
        fail_external_event(token, 'the reviewer is away')

    result = await agent_with(RequestInput(ask)).run('refund me')
    message = 'No decision on this tool call arrived: the reviewer is away'
    assert result.output == f'lookup={message}; refund={message}'


async def test_a_timeout_with_no_answer_denies_everything() -> None:
    async def ask(ctx: RunContext[None], requests: DeferredToolRequests, token: str) -> None:
        return None  # nobody will answer

    capability = RequestInput(ask, timeout=timedelta(milliseconds=20))
    result = await agent_with(capability).run('refund me')
    message = 'No decision on this tool call arrived: No resolution arrived within 0:00:00.020000.'
    assert result.output == f'lookup={message}; refund={message}'


async def test_an_answer_that_is_not_results_or_names_other_calls_is_refused() -> None:
    for answer, match in (
        ({'approvals': 'yes'}, 'Input should be a valid dictionary'),
        ({'metadata': {'other': {}}}, r"`metadata` contains tool call IDs that are not pending: \['other'\]"),
        ({'calls': {'r1': 1}}, 'not in this `DeferredToolRequests.calls`'),
    ):

        def ask(ctx: RunContext[None], requests: DeferredToolRequests, token: str, answer: Any = answer) -> None:
            resolve_external_event(token, answer)

        with pytest.raises(UserError, match='The decision sent for the pending deferred tool calls is not valid') as e:
            await agent_with(RequestInput(ask)).run('refund me')
        assert e.match(match)


def test_request_input_refuses_a_timeout_that_is_not_positive() -> None:
    with pytest.raises(UserError, match=r'`timeout` must be positive, got datetime.timedelta\(0\)'):
        RequestInput(lambda ctx, requests, token: None, timeout=timedelta(0))
    capability: RequestInput[None] = RequestInput(lambda ctx, requests, token: None, name='approve_refund')
    assert capability.get_ordering().position == 'innermost'
    assert RequestInput.get_serialization_name() is None
    assert capability.name == 'approve_refund'


async def test_an_answer_that_has_no_json_form_is_refused() -> None:
    with pytest.raises(UserError, match='must be JSON-serializable'):
        await wait_for_external_event('x', ask=lambda token: object())
    with pytest.raises(UserError, match='No wait in this process has this token'):
        fail_external_event('nonsense', 'why')


async def test_a_durable_engine_waits_through_its_own_waiter() -> None:
    class Recorded(ExternalEventWaiter):
        def __init__(self) -> None:
            self.names: list[str] = []

        async def wait(self, name: str, *, ask: Any, timeout: timedelta | None) -> JsonValue:  # noqa: ASYNC109
            self.names.append(name)
            answer: JsonValue = await ask('engine-token')
            return answer if answer is not None else 'from the engine'

    with external_event_scope(Recorded()) as waiter:
        assert await wait_for_external_event('first', ask=lambda token: [token]) == ['engine-token']
        assert await wait_for_external_event('second', ask=lambda token: None) == 'from the engine'
    assert waiter.names == ['first', 'second']  # type: ignore[attr-defined]
    with pytest.raises(ExternalEventError, match=r'No resolution arrived within 0:00:00\.010000'):
        await wait_for_external_event('plain', ask=lambda token: None, timeout=timedelta(milliseconds=10))


def test_a_resolution_for_a_loop_that_is_gone_wakes_nothing() -> None:
    async def make() -> _Pending:
        return _Pending()

    pending = anyio.run(make)
    _pending['gone'] = pending
    thread = threading.Thread(target=resolve_external_event, args=('gone', 'late'))
    thread.start()
    thread.join()
    assert pending.resolved
    assert pending.payload == 'late'
