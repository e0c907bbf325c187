"""`edgewise.agent.prices.update_in_background` (pydantic-ai 2.68's `pydantic_ai.prices`): the newest price list
downloaded over httpx from a real local server, then used for the costs of runs and for context windows."""

from __future__ import annotations

import json
import logging
import sys
import threading
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import anyio.to_thread
import httpx
import pytest
from genai_prices import data_snapshot

from edgewise.agent import Agent, _cost, prices
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.usage import RequestUsage

from .conftest import LocalServer

pytestmark = pytest.mark.anyio

PRICE_LIST = [
    {
        'id': 'edgetest',
        'name': 'Edge Test',
        'api_pattern': r'https://edge\.invalid',
        'models': [
            {
                'id': 'edge-model',
                'match': {'equals': 'edge-model'},
                'prices': {'input_mtok': 1, 'output_mtok': 2},
                'context_window': 4321,
            }
        ],
    }
]


@pytest.fixture(autouse=True)
def bundled_prices() -> Iterator[None]:
    """Every test starts and ends on genai-prices' bundled list, with the download thread stopped."""
    data_snapshot.set_custom_snapshot(None)
    yield
    thread = prices._shared.thread
    if thread is not None:
        thread.join(10)
    assert prices._shared.thread is None
    data_snapshot.set_custom_snapshot(None)


def _serve(server: LocalServer, body: Any, status: int = 200) -> str:
    server.files['/prices.json'] = (status, 'application/json', json.dumps(body).encode())
    return server.url.removesuffix('/v1') + '/prices.json'


def _edge_answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(
        parts=[TextPart('done')],
        provider_name='edgetest',
        usage=RequestUsage(input_tokens=1_000_000, output_tokens=500_000),
    )


async def test_a_run_is_priced_with_the_downloaded_list(local_server: LocalServer) -> None:
    agent = Agent(FunctionModel(_edge_answer, model_name='edge-model'))
    assert (await agent.run('hi')).usage.cost is None  # the bundled list does not know the model
    updater = prices.update_in_background(url=_serve(local_server, PRICE_LIST))
    try:
        assert await anyio.to_thread.run_sync(updater.wait, 10)
        assert local_server.downloads == ['/prices.json']
        assert (await agent.run('hi')).usage.cost == Decimal('2')
        assert _cost.lookup_context_window('edge-model', provider_name='edgetest') == 4321
        assert updater.wait(0)  # an outcome is there already
    finally:
        updater.stop()
    assert not updater.wait(0)  # stopped
    # The downloaded list stays in use after the updater stops.
    assert (await agent.run('hi')).usage.cost == Decimal('2')


def test_a_failed_download_is_raised_to_waiters_logged_and_keeps_the_last_list(
    local_server: LocalServer, caplog: pytest.LogCaptureFixture
) -> None:
    kept = data_snapshot.get_snapshot()
    updater = prices.PriceUpdater(url=_serve(local_server, {'error': 'gone'}, status=404))
    with (
        caplog.at_level(logging.ERROR, logger='genai-prices'),
        updater as entered,
        pytest.raises(httpx.HTTPStatusError, match='404'),
    ):
        entered.wait(10)
    assert data_snapshot.get_snapshot() is kept
    [record] = caplog.records
    assert record.getMessage().startswith('Updating model prices from http://127.0.0.1:')
    assert 'failed (HTTPStatusError)' in record.getMessage()


def test_an_answer_that_is_no_price_list_is_refused(local_server: LocalServer) -> None:
    updater = prices.PriceUpdater(url=_serve(local_server, {'providers': []}))
    updater.start()
    try:
        with pytest.raises(ValueError, match='is not a JSON array of providers'):
            updater.wait(10)
    finally:
        updater.stop()


def test_updaters_share_one_thread_with_the_settings_of_the_last_started(local_server: LocalServer) -> None:
    first = prices.PriceUpdater(url=_serve(local_server, PRICE_LIST))
    first.start(wait=10)
    thread = prices._shared.thread
    second = prices.PriceUpdater(url='http://127.0.0.1:9/elsewhere.json', update_interval=60)
    second.start()
    second.start()  # started already: counted once
    assert prices._shared.thread is thread
    assert prices._shared.settings is second
    first.stop()
    first.stop()  # stopped already: nothing happens
    assert prices._shared.thread is thread  # the second still runs it
    second.stop()
    assert prices._shared.settings is None


def test_starting_with_wait_true_waits_for_the_first_download(local_server: LocalServer) -> None:
    updater = prices.PriceUpdater(url=_serve(local_server, PRICE_LIST))
    updater.start(wait=True)
    try:
        assert data_snapshot.get_snapshot().from_auto_update
    finally:
        updater.stop()


def test_a_wait_ends_without_an_outcome_when_it_times_out_or_no_thread_runs() -> None:
    shared = prices._SharedThread()
    assert shared.wait(0) is False  # no thread, no download
    shared.thread = threading.current_thread()  # a thread that has not reported yet
    assert shared.wait(0) is False


def test_without_genai_prices_the_updater_says_which_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, 'genai_prices', None)
    with pytest.raises(ImportError, match=r"install Edgewise's `prices` extra"):
        prices.update_in_background(url='http://127.0.0.1:9/prices.json')
    assert prices._shared.thread is None


def test_a_response_s_string_details_are_its_price_context() -> None:
    assert _cost._price_context(None) is None
    assert _cost._price_context({'service_tier': 'flex', 'citations': [1]}) == {'service_tier': 'flex'}
    assert _cost._price_context({'citations': [1]}) is None


def test_a_price_context_goes_to_genai_prices_only_when_there_is_one(monkeypatch: pytest.MonkeyPatch) -> None:
    usage = RequestUsage(input_tokens=1000, output_tokens=100)
    priced = _cost.calc_price(usage, 'gpt-4o', provider_id='openai', price_context={'service_tier': 'default'})
    assert priced.total_price > 0

    calls: list[dict[str, Any]] = []

    class OlderGenaiPrices:  # a release from before `price_context` (pydantic-ai 1.x installs one)
        @staticmethod
        def calc_price(
            usage: Any, model_ref: str, *, provider_id: Any, provider_api_url: Any, genai_request_timestamp: Any
        ) -> str:
            calls.append({'model_ref': model_ref, 'provider_id': provider_id})
            return 'priced'

    monkeypatch.setattr(_cost, 'genai_prices_module', lambda: OlderGenaiPrices)
    assert _cost.calc_price(usage, 'gpt-4o', provider_id='openai', price_context={'citations': [1]}) == 'priced'
    assert calls == [{'model_ref': 'gpt-4o', 'provider_id': 'openai'}]


def test_models_without_prices_have_no_context_window_to_look_up() -> None:
    assert _cost.lookup_context_window('test', provider_name='test') is None
