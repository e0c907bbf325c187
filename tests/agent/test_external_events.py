"""`edgewise.agent.external_events` (pydantic-ai 2.68): a run waits for an event from outside it, answered at once by
`ask` or later by a resolution of its resume token, from the event loop's thread or another one."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta

import anyio
import anyio.to_thread
import pytest
from pydantic import JsonValue

from edgewise.agent.exceptions import UserError
from edgewise.agent.external_events import (
    ExternalEventError,
    ExternalEventWaiter,
    external_event_scope,
    fail_external_event,
    resolve_external_event,
    wait_for_external_event,
)

pytestmark = pytest.mark.anyio


@dataclass
class Approval:
    approved: bool
    by: str


class Handover:
    """An `ask` that hands the token on (returns `None`) and lets the test know it has it."""

    def __init__(self) -> None:
        self.token: str | None = None
        self.given = anyio.Event()

    async def __call__(self, token: str) -> None:
        self.token = token
        self.given.set()


async def test_an_answer_from_ask_is_returned_as_json() -> None:
    async def ask(token: str) -> Approval:
        assert len(token) > 20
        return Approval(approved=True, by='ops')

    assert await wait_for_external_event('approval', ask=ask) == {'approved': True, 'by': 'ops'}


async def test_a_handed_over_token_is_resolved_from_the_loop_or_another_thread() -> None:
    for from_thread in (False, True):
        handover = Handover()
        result: list[JsonValue] = []

        async def wait(handover: Handover = handover, result: list[JsonValue] = result) -> None:
            result.append(await wait_for_external_event('approval', ask=handover))

        async with anyio.create_task_group() as tg:
            tg.start_soon(wait)
            await handover.given.wait()
            assert handover.token is not None
            if from_thread:
                await anyio.to_thread.run_sync(resolve_external_event, handover.token, Approval(False, 'bob'))
            else:
                resolve_external_event(handover.token, Approval(False, 'bob'))
        assert result == [{'approved': False, 'by': 'bob'}]


async def test_a_sync_ask_runs_in_a_worker_thread() -> None:
    tokens: list[str] = []

    def ask(token: str) -> str:
        tokens.append(token)
        return 'yes'

    assert await wait_for_external_event('question', ask=ask) == 'yes'
    assert len(tokens) == 1


async def test_a_failed_token_raises_its_reason_and_cannot_be_resolved_again() -> None:
    handover = Handover()
    errors: list[str] = []

    async def wait() -> None:
        try:
            await wait_for_external_event('approval', ask=handover)
        except ExternalEventError as error:
            errors.append(str(error))

    async with anyio.create_task_group() as tg:
        tg.start_soon(wait)
        await handover.given.wait()
        assert handover.token is not None
        fail_external_event(handover.token, 'denied by policy')
    assert errors == ['denied by policy']
    assert handover.token is not None
    with pytest.raises(UserError, match='No wait in this process has this token'):
        resolve_external_event(handover.token, 1)


async def test_a_wait_gives_up_after_its_timeout() -> None:
    with pytest.raises(ExternalEventError, match='No resolution arrived within'):
        await wait_for_external_event('approval', ask=Handover(), timeout=timedelta(milliseconds=1))


async def test_bad_timeouts_and_payloads_are_refused() -> None:
    with pytest.raises(UserError, match='`timeout` must be positive'):
        await wait_for_external_event('approval', ask=Handover(), timeout=timedelta(0))
    with pytest.raises(UserError, match='must be JSON-serializable'):
        resolve_external_event('token', object())

    async def odd(token: str) -> object:
        return object()

    with pytest.raises(UserError, match='must be JSON-serializable'):
        await wait_for_external_event('approval', ask=odd)


class RecordedWaiter(ExternalEventWaiter):
    """A durable engine's waiter, as a test sees it: a fixed token and a recorded payload."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, timedelta | None]] = []

    async def wait(
        self,
        name: str,
        *,
        ask: Callable[[str], Awaitable[JsonValue]],
        timeout: timedelta | None,  # noqa: ASYNC109
    ) -> JsonValue:
        self.calls.append((name, timeout))
        answer = await ask('engine-token')
        return answer if answer is not None else 'recorded payload'


async def test_an_engines_waiter_is_used_inside_its_scope() -> None:
    waiter = RecordedWaiter()
    with external_event_scope(waiter) as installed:
        assert installed is waiter
        assert await wait_for_external_event('review', ask=Handover(), timeout=timedelta(days=2)) == 'recorded payload'
    assert waiter.calls == [('review', timedelta(days=2))]
    assert await wait_for_external_event('review', ask=lambda token: 'in process') == 'in process'
