"""`ConcurrencyLimitedModel` and `limit_model_concurrency`: requests of a model wait for a slot of its limiter."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator

import anyio
import pytest

from edgewise.agent import Agent, ConcurrencyLimit, ConcurrencyLimiter
from edgewise.agent.concurrency import get_concurrency_context
from edgewise.agent.exceptions import ConcurrencyLimitExceeded, UserError
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models.concurrency import ConcurrencyLimitedModel, limit_model_concurrency
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel

pytestmark = pytest.mark.anyio

_MESSAGES: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart('hi')])]


class Gated:
    """A model counting its requests in flight; each reports its entry and then waits for a gate token."""

    def __init__(self) -> None:
        self.in_flight = 0
        self.most_in_flight = 0
        self.entered_send, self.entered = anyio.create_memory_object_stream[None](100)
        self.open_gate, self.gate = anyio.create_memory_object_stream[None](100)
        self.model = FunctionModel(self.answer, stream_function=self.stream)

    async def answer(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        await self.entered_send.send(None)
        await self.gate.receive()
        self.in_flight -= 1
        return ModelResponse(parts=[TextPart('ok')])

    def close(self) -> None:
        for stream in (self.entered_send, self.entered, self.open_gate, self.gate):
            stream.close()

    async def stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield 'streamed '
        yield 'text'


@pytest.fixture
def make_gated() -> Iterator[Callable[[], Gated]]:
    made: list[Gated] = []

    def make() -> Gated:
        made.append(Gated())
        return made[-1]

    yield make
    for gated in made:
        gated.close()


async def _request(model: ConcurrencyLimitedModel | FunctionModel) -> ModelResponse:
    return await model.request(_MESSAGES, None, ModelRequestParameters())


async def test_requests_in_flight_never_exceed_the_limit(make_gated: Callable[[], Gated]) -> None:
    gated = make_gated()
    model = ConcurrencyLimitedModel(gated.model, limiter=2)
    responses: list[ModelResponse] = []

    async def one() -> None:
        responses.append(await _request(model))

    async with anyio.create_task_group() as tg:
        for _ in range(6):
            tg.start_soon(one)
        # Two enter before any is let out: the limit is reached; a third only enters once one has left.
        for _ in range(2):
            await gated.entered.receive()
        assert gated.in_flight == 2
        for _ in range(4):
            await gated.open_gate.send(None)
            await gated.entered.receive()
        for _ in range(2):
            await gated.open_gate.send(None)
    assert (gated.most_in_flight, len(responses), gated.in_flight) == (2, 6, 0)
    assert isinstance(model.limiter, ConcurrencyLimiter)
    assert model.limiter.running_count == 0


async def test_without_a_limit_the_same_requests_all_run_at_once(make_gated: Callable[[], Gated]) -> None:
    """The counterpart of the test above: the count does see concurrent requests."""
    gated = make_gated()
    model = limit_model_concurrency(gated.model, None)
    assert model is gated.model
    async with anyio.create_task_group() as tg:
        for _ in range(6):
            tg.start_soon(_request, model)
        for _ in range(6):
            await gated.entered.receive()
        assert gated.in_flight == 6
        for _ in range(6):
            await gated.open_gate.send(None)


async def test_a_streamed_request_holds_its_slot_until_the_stream_is_closed(make_gated: Callable[[], Gated]) -> None:
    gated = make_gated()
    model = ConcurrencyLimitedModel(gated.model, limiter=ConcurrencyLimit(max_running=1, max_queued=0))
    async with model.request_stream(_MESSAGES, None, ModelRequestParameters()) as stream:
        async for _ in stream:
            break
        with pytest.raises(ConcurrencyLimitExceeded, match=r'exceeds max_queued \(0\) for model:function:answer:'):
            await _request(model)
        assert [event async for event in stream]
        # Read to its end, the stream still holds the slot while it is open.
        with pytest.raises(ConcurrencyLimitExceeded):
            await _request(model)
    assert stream.get().parts == [TextPart('streamed text')]
    async with anyio.create_task_group() as tg:
        tg.start_soon(_request, model)
        await gated.entered.receive()
        await gated.open_gate.send(None)


async def test_a_limiter_shared_by_two_models_bounds_them_together(make_gated: Callable[[], Gated]) -> None:
    first, second = make_gated(), make_gated()
    pool = ConcurrencyLimiter(max_running=1, max_queued=0, name='pool')
    a = ConcurrencyLimitedModel(first.model, limiter=pool)
    b = ConcurrencyLimitedModel(second.model, limiter=pool)
    async with anyio.create_task_group() as tg:
        tg.start_soon(_request, a)
        await first.entered.receive()
        with pytest.raises(ConcurrencyLimitExceeded, match=r'exceeds max_queued \(0\) for pool'):
            await _request(b)
        await first.open_gate.send(None)
    async with anyio.create_task_group() as tg:
        tg.start_soon(_request, b)
        await second.entered.receive()
        assert pool.running_count == 1
        await second.open_gate.send(None)


async def test_models_given_numbers_have_limiters_of_their_own(make_gated: Callable[[], Gated]) -> None:
    first, second = make_gated(), make_gated()
    a = ConcurrencyLimitedModel(first.model, limiter=1)
    b = ConcurrencyLimitedModel(second.model, limiter=1)
    assert a.limiter is not b.limiter
    async with anyio.create_task_group() as tg:
        tg.start_soon(_request, a)
        tg.start_soon(_request, b)
        await first.entered.receive()
        await second.entered.receive()
        assert (first.in_flight, second.in_flight) == (1, 1)
        await first.open_gate.send(None)
        await second.open_gate.send(None)


async def test_an_agent_runs_through_the_limited_model_and_a_name_is_resolved() -> None:
    model = limit_model_concurrency('test', 3)
    assert isinstance(model, ConcurrencyLimitedModel)
    assert isinstance(model.wrapped, TestModel)
    assert model.model_name == 'test'
    assert limit_model_concurrency('test', None).model_name == 'test'
    agent = Agent(model)
    assert (await agent.run('hi')).output == 'success (no tool calls)'
    async with agent.run_stream('hi') as result:
        assert await result.get_output() == 'success (no tool calls)'


async def test_nested_wrappers_with_one_limiter_are_refused_instead_of_waiting_forever() -> None:
    pool = ConcurrencyLimiter(2)
    model = ConcurrencyLimitedModel(ConcurrencyLimitedModel(TestModel(), limiter=pool), limiter=pool)
    with pytest.raises(UserError, match="limiter of the `ConcurrencyLimitedModel` of 'test' is already held"):
        await model.request(_MESSAGES, None, ModelRequestParameters())
    with pytest.raises(UserError, match="limiter of the `ConcurrencyLimitedModel` of 'test' is already held"):
        async with model.request_stream(_MESSAGES, None, ModelRequestParameters()):
            pass  # pragma: no cover
    assert pool.running_count == 0


async def test_an_agent_sharing_its_models_limiter_is_refused_instead_of_waiting_forever() -> None:
    pool = ConcurrencyLimiter(1)
    agent = Agent(ConcurrencyLimitedModel(TestModel(), limiter=pool), name='support', max_concurrency=pool)
    with pytest.raises(UserError, match=r'already held for this request \(by a `ConcurrencyLimitedModel` or an agent'):
        await agent.run('hi')
    with pytest.raises(UserError, match='already held for this request'):
        async with agent.run_stream('hi'):
            pass  # pragma: no cover
    assert pool.running_count == 0


async def test_get_concurrency_context_holds_a_slot_or_nothing() -> None:
    limiter = ConcurrencyLimiter(1)
    async with get_concurrency_context(limiter, 'job'):
        assert limiter.available_count == 0
    assert limiter.available_count == 1
    async with get_concurrency_context(None):
        pass


async def test_an_open_stream_does_not_count_as_held_by_its_caller() -> None:
    """A stream's slot is the stream's: the caller may send other requests through the same model meanwhile."""
    model = ConcurrencyLimitedModel(TestModel(), limiter=2)
    async with model.request_stream(_MESSAGES, None, ModelRequestParameters()):
        assert (await _request(model)).parts == [TextPart('success (no tool calls)')]


def test_limits_below_their_minimum_are_refused() -> None:
    with pytest.raises(ValueError, match=r'max_queued must be at least 0, not -1 \(use `None` for no bound\)'):
        ConcurrencyLimit(max_running=1, max_queued=-1)
    with pytest.raises(ValueError, match='max_running must be at least 1, not 0'):
        ConcurrencyLimit(max_running=0)
    with pytest.raises(ValueError, match='max_queued must be at least 0'):
        ConcurrencyLimiter(1, max_queued=-1)


async def test_a_limiter_given_a_tracer_makes_its_waiting_span_with_it() -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    limiter = ConcurrencyLimiter.from_limit(
        ConcurrencyLimit(max_running=1, max_queued=3), name='pool', tracer=provider.get_tracer('test')
    )
    async with anyio.create_task_group() as tg, get_concurrency_context(limiter, 'model:first'):
        tg.start_soon(limiter.acquire, 'model:second')
        while limiter.waiting_count == 0:  # until the second waits (no time bound: a number of checkpoints)
            await anyio.lowlevel.checkpoint()
    limiter.release()
    [span] = exporter.get_finished_spans()
    assert span.name == 'waiting for pool concurrency'
    assert dict(span.attributes or {}) == {
        'source': 'model:second',
        'waiting_count': 1,
        'max_running': 1,
        'limiter_name': 'pool',
        'max_queued': 3,
    }


async def test_an_unnamed_limiter_given_a_tracer_names_its_span_for_the_source() -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    limiter = ConcurrencyLimiter(1, tracer=provider.get_tracer('test'))
    async with anyio.create_task_group() as tg, get_concurrency_context(limiter, 'model:first'):
        tg.start_soon(limiter.acquire, 'model:second')
        while limiter.waiting_count == 0:  # until the second waits (no time bound: a number of checkpoints)
            await anyio.lowlevel.checkpoint()
    limiter.release()
    [span] = exporter.get_finished_spans()
    assert span.name == 'waiting for model:second concurrency'
    assert dict(span.attributes or {}) == {'source': 'model:second', 'waiting_count': 1, 'max_running': 1}
