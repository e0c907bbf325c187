"""Cost tracking: `RunUsage.cost` from genai-prices' price lists, `UsageLimits(cost_limit=...)` and its warnings."""

from __future__ import annotations

import sys
import warnings
from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any

import pytest

from edgewise.agent import (
    Agent,
    CostCalculationFailedWarning,
    CostNotFoundWarning,
    RunContext,
    UsageLimitExceeded,
    UsageLimits,
    _cost,
)
from edgewise.agent._agent_graph import _check_continuation_usage
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.models.wrapper import WrapperModel
from edgewise.agent.usage import RequestUsage, RunUsage

pytestmark = pytest.mark.anyio

GPT_4O_1000_INPUT = Decimal('0.0025')  # genai-prices: gpt-4o, $2.50 per million input tokens


def _openai_answer(*, input_tokens: int = 1000, cost: Decimal | None = None) -> FunctionModel:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(
            parts=[TextPart('done')], provider_name='openai', usage=RequestUsage(input_tokens=input_tokens, cost=cost)
        )

    return FunctionModel(answer, model_name='gpt-4o')


class _OpenAISystem(WrapperModel):
    """A model whose provider has prices (the run loads them before its first request)."""

    @property
    def system(self) -> str:
        return 'openai'


# Usage arithmetic


def test_a_known_cost_adds_up_and_an_unknown_one_adds_nothing() -> None:
    assert (RunUsage() + RequestUsage()).cost is None
    assert (RunUsage() + RequestUsage(cost=Decimal('0.5'))).cost == Decimal('0.5')
    assert (RunUsage(cost=Decimal('0.5')) + RequestUsage()).cost == Decimal('0.5')
    total = RequestUsage(cost=Decimal('0.25'))
    total.incr(RequestUsage(cost=Decimal('0.5')))
    assert total.cost == Decimal('0.75')
    assert repr(RunUsage(requests=1, cost=Decimal('0.1'))) == "RunUsage(cost=Decimal('0.1'), requests=1)"


def test_cache_hit_ratio_is_the_share_of_input_tokens_read_from_the_cache() -> None:
    assert RequestUsage(input_tokens=200, cache_read_tokens=50).cache_hit_ratio == 0.25
    assert RunUsage(input_tokens=10, cache_read_tokens=10).cache_hit_ratio == 1.0
    assert RunUsage().cache_hit_ratio == 0.0


def test_has_values_counts_counters_details_and_cost() -> None:
    assert RequestUsage().has_values() is False
    assert RequestUsage(details={'reasoning_tokens': 0}).has_values() is False
    assert RequestUsage(details={'reasoning_tokens': 1}).has_values() is True
    assert RequestUsage(cost=Decimal('0.1')).has_values() is True
    assert RunUsage(requests=1).has_values() is True


# Pricing


def test_calculate_price_for_usage_looks_up_the_provider_by_name_or_api_url() -> None:
    usage = RequestUsage(input_tokens=1000)
    by_name = _cost.calculate_price_for_usage(usage, model_name='gpt-4o', provider_name='openai')
    by_url = _cost.calculate_price_for_usage(usage, model_name='gpt-4o', provider_api_url='https://api.openai.com/v1')
    unknown_url = _cost.calculate_price_for_usage(
        usage, model_name='gpt-4o', provider_api_url='https://nowhere.invalid/v1', provider_name='openai'
    )
    assert by_name.total_price == by_url.total_price == unknown_url.total_price == GPT_4O_1000_INPUT


def test_calculate_price_for_usage_raises_for_an_unknown_model() -> None:
    with pytest.raises(LookupError):
        _cost.calculate_price_for_usage(
            RequestUsage(input_tokens=1), model_name='no-such-model', provider_name='openai'
        )


@pytest.mark.parametrize(
    ('model_name', 'provider_name', 'usage'),
    [
        (None, 'openai', RequestUsage(input_tokens=10)),  # nothing to look up
        ('test', 'test', RequestUsage(input_tokens=10)),  # Edgewise's test models: never looked up
        ('gpt-4o', 'function', RequestUsage(input_tokens=10)),
        ('no-such-model', 'openai', RequestUsage(input_tokens=10)),  # genai-prices raises LookupError
        ('gpt-4o', 'openai', RequestUsage(input_tokens=10, cache_read_tokens=20)),  # ValueError: more cached than sent
    ],
)
def test_best_effort_price_is_none_when_the_price_cannot_be_known(
    model_name: str | None, provider_name: str, usage: RequestUsage
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert _cost.best_effort_price(usage, model_name=model_name, provider_name=provider_name) is None


def test_an_unexpected_pricing_failure_warns_and_gives_none(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError('price list unreadable')

    monkeypatch.setattr(_cost, 'calc_price', broken)
    with pytest.warns(CostCalculationFailedWarning, match='Failed to get cost: RuntimeError: price list unreadable'):
        assert (
            _cost.best_effort_price(RequestUsage(input_tokens=1), model_name='gpt-4o', provider_name='openai') is None
        )


def test_without_genai_prices_costs_are_unknown_and_the_strict_form_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_cost, 'prices_installed', lambda: False)
    assert _cost.best_effort_price(RequestUsage(input_tokens=1), model_name='gpt-4o', provider_name='openai') is None
    monkeypatch.setitem(sys.modules, 'genai_prices', None)  # an import of it now fails
    with pytest.raises(ImportError, match=r'edgewise-agent\[prices\]'):
        _cost.calculate_price_for_usage(RequestUsage(input_tokens=1), model_name='gpt-4o', provider_name='openai')


def test_fill_response_cost_keeps_a_cost_already_set() -> None:
    response = ModelResponse(
        parts=[], model_name='gpt-4o', provider_name='openai', usage=RequestUsage(input_tokens=1000, cost=Decimal(1))
    )
    _cost.fill_response_cost(response)
    assert response.usage.cost == Decimal(1)
    response.usage.cost = None
    _cost.fill_response_cost(response)
    assert response.usage.cost == GPT_4O_1000_INPUT


# Runs


async def test_a_run_prices_each_response_and_sums_the_cost() -> None:
    agent = Agent(_openai_answer())
    result = await agent.run('hi')
    assert result.usage.cost == GPT_4O_1000_INPUT
    assert result.response.usage.cost == GPT_4O_1000_INPUT
    second = await agent.run('again', message_history=result.all_messages())
    assert second.usage.cost == GPT_4O_1000_INPUT  # the run's own usage: one more response


async def test_a_run_of_the_test_model_has_no_cost_and_no_warning_without_a_cost_limit() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        result = await Agent(TestModel()).run('hi')
    assert result.usage.cost is None


async def test_a_cost_limit_that_cannot_be_enforced_warns_once_as_the_run_ends() -> None:
    with pytest.warns(CostNotFoundWarning, match='`cost_limit` is set but cannot be enforced') as record:
        result = await Agent(TestModel()).run('hi', usage_limits=UsageLimits(cost_limit=Decimal('0.01')))
    assert result.usage.cost is None
    assert len([w for w in record if issubclass(w.category, CostNotFoundWarning)]) == 1


async def test_a_cost_found_later_in_the_run_means_no_warning() -> None:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart('noop', {}, tool_call_id='1')], usage=RequestUsage())
        return ModelResponse(parts=[TextPart('done')], usage=RequestUsage(cost=Decimal('0.005')))

    agent = Agent(FunctionModel(model))

    @agent.tool_plain
    def noop() -> None:
        pass

    with warnings.catch_warnings():
        warnings.simplefilter('error')
        result = await agent.run('go', usage_limits=UsageLimits(cost_limit=Decimal('0.01')))
    assert result.usage.cost == Decimal('0.005')


async def test_a_run_past_its_cost_limit_stops_after_the_response() -> None:
    with pytest.raises(
        UsageLimitExceeded, match=r"Exceeded the `cost_limit` of 0.001 \(`usage.cost`=Decimal\('0.0025'\)\)"
    ):
        await Agent(_openai_answer()).run('hi', usage_limits=UsageLimits(cost_limit=Decimal('0.001')))


async def test_a_run_already_past_its_cost_limit_makes_no_request() -> None:
    answered: list[int] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        answered.append(1)
        return ModelResponse(parts=[TextPart('done')])

    limits = UsageLimits(cost_limit=Decimal('0.01'))
    with pytest.raises(UsageLimitExceeded, match=r'The next request would exceed the `cost_limit` of 0\.01'):
        await Agent(FunctionModel(model)).run('hi', usage_limits=limits, usage=RunUsage(cost=Decimal('0.02')))
    assert answered == []


async def test_a_run_of_a_priced_provider_loads_the_prices_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_cost, '_loaded', False)
    result = await Agent(_OpenAISystem(_openai_answer())).run('hi')
    assert _cost.prices_loaded() is True
    assert result.usage.cost == GPT_4O_1000_INPUT


async def test_run_context_carries_the_runs_usage_limits() -> None:
    seen: list[UsageLimits | None] = []
    agent = Agent(TestModel())

    @agent.tool
    def look(ctx: RunContext[None]) -> str:
        seen.append(ctx.usage_limits)
        return 'ok'

    limits = UsageLimits(request_limit=7)
    await agent.run('hi', usage_limits=limits)
    await agent.run('hi')
    assert seen[0] is limits
    assert seen[1] == UsageLimits()  # the default limits of a run given none


# Limits checked directly


def test_check_cost() -> None:
    UsageLimits().check_cost(RunUsage(cost=Decimal(100)))  # no limit
    UsageLimits(cost_limit=Decimal('0.01')).check_cost(RunUsage(cost=Decimal('0.01')))  # at the limit: allowed
    with pytest.raises(
        UsageLimitExceeded, match=r"Exceeded the `cost_limit` of 0.01 \(`usage.cost`=Decimal\('0.02'\)\)"
    ):
        UsageLimits(cost_limit=Decimal('0.01')).check_cost(RunUsage(cost=Decimal('0.02')))
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        UsageLimits(cost_limit=Decimal('0.01')).check_cost(RunUsage(), warn_if_cost_unavailable=False)
    with pytest.warns(CostNotFoundWarning):
        UsageLimits(cost_limit=Decimal('0.01')).check_cost(RunUsage())


def test_check_before_request_checks_the_cost_so_far() -> None:
    UsageLimits(cost_limit=Decimal('0.01')).check_before_request(RunUsage(cost=Decimal('0.005')))
    UsageLimits(cost_limit=Decimal('0.01')).check_before_request(RunUsage())  # unknown: nothing to check yet
    with pytest.raises(UsageLimitExceeded, match=r'The next request would exceed the `cost_limit` of 0.01'):
        UsageLimits(cost_limit=Decimal('0.01')).check_before_request(RunUsage(cost=Decimal('0.02')))
    assert repr(UsageLimits(cost_limit=Decimal('0.5'))) == "UsageLimits(cost_limit=Decimal('0.5'))"


def _context(limits: UsageLimits | None, usage: RunUsage) -> RunContext[None]:
    return RunContext(deps=None, model=TestModel(), usage=usage, usage_limits=limits)


def test_the_continuation_check_counts_a_response_not_yet_added_to_the_run() -> None:
    usage = RunUsage(requests=1, input_tokens=40)
    _check_continuation_usage(_context(None, usage), RequestUsage(input_tokens=10**9))  # no run: nothing to check
    _check_continuation_usage(_context(UsageLimits(input_tokens_limit=50), usage), RequestUsage(input_tokens=10))
    with pytest.raises(UsageLimitExceeded, match='Exceeded the input_tokens_limit of 50'):
        _check_continuation_usage(_context(UsageLimits(input_tokens_limit=50), usage), RequestUsage(input_tokens=11))
    limits = UsageLimits(cost_limit=Decimal('0.01'))
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # an unknown cost mid-response is no warning
        _check_continuation_usage(_context(limits, usage), RequestUsage(input_tokens=1))
    with pytest.raises(UsageLimitExceeded, match='cost_limit'):
        _check_continuation_usage(_context(limits, usage), RequestUsage(cost=Decimal('0.02')))
    assert usage == RunUsage(requests=1, input_tokens=40)  # the run's usage is not changed


def test_a_pricing_result_is_genai_prices_own() -> None:
    price: Any = _cost.best_effort_price(RequestUsage(input_tokens=1000), model_name='gpt-4o', provider_name='openai')
    assert price.total_price == GPT_4O_1000_INPUT
    assert type(price).__module__.startswith('genai_prices')


async def test_a_streamed_run_counts_the_cost_of_the_response_in_progress() -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield 'hello '
        yield 'world'

    _cost.load_prices()
    agent = Agent(FunctionModel(stream_function=stream, model_name='gpt-4o'))
    costs: list[Decimal | None] = []
    async with agent.run_stream('hi') as result:
        async for _ in result.stream_text(debounce_by=None):
            costs.append(result.usage.cost)
        final = await result.get_output()
    assert final == 'hello world'
    assert costs
    assert all(cost is not None and cost > 0 for cost in costs)
    assert result.usage.cost is not None


async def test_a_streamed_response_without_prices_has_no_cost_in_progress() -> None:
    _cost.load_prices()
    async with Agent(TestModel()).run_stream('hi') as result:
        async for _ in result.stream_text(debounce_by=None):
            assert result.usage.cost is None
