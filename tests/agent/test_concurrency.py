"""Concurrency limits of agent runs: `Agent(max_concurrency=...)` with a number, a `ConcurrencyLimit` bounding
the waiters (`ConcurrencyLimitExceeded`), or a limiter shared between agents."""

from __future__ import annotations

import anyio
import pytest

from edgewise.agent import Agent, ConcurrencyLimit, ConcurrencyLimiter
from edgewise.agent.concurrency import AbstractConcurrencyLimiter, normalize_to_limiter
from edgewise.agent.exceptions import ConcurrencyLimitExceeded
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart
from edgewise.agent.models.function import AgentInfo, FunctionModel

pytestmark = pytest.mark.anyio


class Gate:
    """A model whose first request waits until `release` is set."""

    def __init__(self) -> None:
        self.entered = anyio.Event()
        self.release = anyio.Event()
        self.model = FunctionModel(self.answer)

    async def answer(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if not self.entered.is_set():
            self.entered.set()
            await self.release.wait()
        return ModelResponse(parts=[TextPart('ok')])


async def test_a_waiter_past_max_queued_fails_with_concurrency_limit_exceeded() -> None:
    gate = Gate()
    agent = Agent(gate.model, name='busy', max_concurrency=ConcurrencyLimit(max_running=1, max_queued=1))
    outputs: list[str] = []

    async def run() -> None:
        outputs.append((await agent.run('x')).output)

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await gate.entered.wait()
        tg.start_soon(run)  # waits in line
        await anyio.wait_all_tasks_blocked()
        with pytest.raises(ConcurrencyLimitExceeded) as info:
            await agent.run('one too many')
        gate.release.set()
    assert info.value.message == 'Concurrency queue depth (2) exceeds max_queued (1) for agent:busy'
    assert outputs == ['ok', 'ok']


async def test_a_shared_limiter_limits_several_agents_together() -> None:
    limiter = ConcurrencyLimiter(1, max_queued=0, name='shared')
    gate = Gate()
    first = Agent(gate.model, max_concurrency=limiter)
    second = Agent(FunctionModel(lambda m, i: ModelResponse(parts=[TextPart('ok')])), max_concurrency=limiter)
    async with anyio.create_task_group() as tg:
        tg.start_soon(first.run, 'x')
        await gate.entered.wait()
        assert (limiter.running_count, limiter.available_count, limiter.waiting_count) == (1, 0, 0)
        with pytest.raises(ConcurrencyLimitExceeded, match=r'exceeds max_queued \(0\) for shared'):
            await second.run('y')
        gate.release.set()
    assert (limiter.running_count, limiter.available_count, limiter.max_running) == (0, 1, 1)
    assert (await second.run('y')).output == 'ok'


async def test_a_custom_limiter_is_asked_for_a_slot_per_run() -> None:
    log: list[str] = []

    class Recording(AbstractConcurrencyLimiter):
        async def acquire(self, source: str) -> None:
            log.append(f'acquire {source}')

        def release(self) -> None:
            log.append('release')

    agent = Agent(FunctionModel(lambda m, i: ModelResponse(parts=[TextPart('ok')])), name='a',
                  max_concurrency=Recording())  # fmt: skip
    await agent.run('x')
    assert log == ['acquire agent:a', 'release']


def test_limits_normalize_to_limiters() -> None:
    assert normalize_to_limiter(None) is None
    limiter = normalize_to_limiter(3)
    assert isinstance(limiter, ConcurrencyLimiter)
    assert limiter.max_running == 3
    named = normalize_to_limiter(ConcurrencyLimit(2, max_queued=5), name='n')
    assert isinstance(named, ConcurrencyLimiter)
    assert (named.max_running, named.name) == (2, 'n')
    assert normalize_to_limiter(named) is named
    with pytest.raises(ValueError, match='max_running must be at least 1, not 0'):
        ConcurrencyLimiter(0)
