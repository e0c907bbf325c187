"""Failures injected by the aimock simulator, over real sockets, for each provider model: 429 with
`Retry-After`, 5xx, dropped connections, truncated streams, timeouts, and a stream left early.

Retries are bounded by each provider's retry limit; waits by the server's `Retry-After: 0` or a tiny backoff."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from edgewise.agent.exceptions import ModelAPIError, ModelHTTPError
from edgewise.agent.messages import ModelResponseStreamEvent
from edgewise.agent.models import Model, _http
from edgewise.agent.settings import ModelSettings

from ..._aimock import Aimock
from ._simulated import EACH_WIRE, KEY, LONG_TEXT, PARAMS, Wire, ask, error_reply, respond, text_reply

pytestmark = pytest.mark.anyio

HOLD_MS = 30_000
"""A delay far beyond the client's timeout (the simulator stops waiting when the client hangs up)."""


@pytest.fixture
def delays(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits the retry loop chose, in order (the backoff itself shrunk to a millisecond)."""
    chosen: list[float] = []
    real: Callable[..., float] = _http.retry_delay

    def recording(retries_done: int, headers: httpx.Headers | None = None) -> float:
        delay = real(retries_done, headers)
        chosen.append(delay)
        return delay

    monkeypatch.setattr(_http, 'INITIAL_DELAY', 0.001)
    monkeypatch.setattr(_http, 'retry_delay', recording)
    return chosen


def _statuses(aimock: Aimock, marker: str) -> list[int]:
    return [entry['response']['status'] for entry in aimock.requests_for(marker)]


@EACH_WIRE
@pytest.mark.parametrize('streamed', [False, True], ids=['plain', 'streamed'])
async def test_a_429_with_retry_after_is_retried_then_succeeds(
    aimock: Aimock, wire: Wire, streamed: bool, delays: list[float]
) -> None:
    marker = aimock.marker()
    aimock.add(error_reply(marker, 429, sequence=0, retry_after=0), text_reply(marker, 'Made it.', sequenceIndex=1))
    async with wire.model(aimock.url, max_retries=1) as model:
        response = await respond(model, ask(marker), streamed=streamed)
    assert response.text == 'Made it.'
    assert _statuses(aimock, marker) == [429, 200]
    assert delays == [0.0]  # the server's `Retry-After: 0`, not the client's backoff


@EACH_WIRE
async def test_a_429_past_the_retry_limit_is_a_model_http_error(
    aimock: Aimock, wire: Wire, delays: list[float]
) -> None:
    marker = aimock.marker()
    aimock.add(error_reply(marker, 429, sequence=0, retry_after=0))
    async with wire.model(aimock.url, max_retries=0) as model:
        with pytest.raises(ModelHTTPError) as exc_info:
            await model.request(ask(marker), None, PARAMS)
    assert exc_info.value.status_code == 429
    assert exc_info.value.model_name == model.model_name
    assert 'simulated 429' in str(exc_info.value.body)
    assert KEY not in str(exc_info.value)
    assert _statuses(aimock, marker) == [429]
    assert delays == []


@EACH_WIRE
async def test_500s_are_retried_up_to_the_limit(aimock: Aimock, wire: Wire, delays: list[float]) -> None:
    marker = aimock.marker()
    aimock.add(*(error_reply(marker, 500, sequence=i) for i in range(3)))
    async with wire.model(aimock.url, max_retries=2) as model:
        with pytest.raises(ModelHTTPError) as exc_info:
            await model.request(ask(marker), None, PARAMS)
    assert exc_info.value.status_code == 500
    assert _statuses(aimock, marker) == [500, 500, 500]
    assert len(delays) == 2


@EACH_WIRE
async def test_a_dropped_connection_is_retried_then_succeeds(aimock: Aimock, wire: Wire, delays: list[float]) -> None:
    marker = aimock.marker()
    aimock.add(
        text_reply(marker, 'Lost.', sequenceIndex=0, chaos={'disconnectRate': 1}),
        text_reply(marker, 'Found.', sequenceIndex=1),
    )
    async with wire.model(aimock.url, max_retries=1) as model:
        response = await model.request(ask(marker), None, PARAMS)
    assert response.text == 'Found.'
    assert len(aimock.requests_for(marker)) == 2
    assert len(delays) == 1


@EACH_WIRE
@pytest.mark.parametrize('streamed', [False, True], ids=['plain', 'streamed'])
async def test_connections_dropped_past_the_limit_are_a_model_api_error(
    aimock: Aimock, wire: Wire, streamed: bool, delays: list[float]
) -> None:
    marker = aimock.marker()
    aimock.add(text_reply(marker, 'Never.', chaos={'disconnectRate': 1}))
    async with wire.model(aimock.url, max_retries=1) as model:
        with pytest.raises(ModelAPIError, match=r'Connection error') as exc_info:
            await respond(model, ask(marker), streamed=streamed)
    assert not isinstance(exc_info.value, ModelHTTPError)
    assert len(aimock.requests_for(marker)) == 2
    assert len(delays) == 1


@EACH_WIRE
async def test_a_stream_cut_after_its_first_events_is_not_retried(
    aimock: Aimock, wire: Wire, delays: list[float]
) -> None:
    marker = aimock.marker()
    # The pause between chunks lets each chunk leave the server before the cut (written at once, the
    # simulator's chunks would be dropped with the connection, headers and all).
    aimock.add(text_reply(marker, LONG_TEXT * 3, truncateAfterChunks=6, latency=5))
    received: list[ModelResponseStreamEvent] = []

    async def read(model: Model) -> None:
        async with model.request_stream(ask(marker), None, PARAMS) as stream:
            async for event in stream:
                received.append(event)

    async with wire.model(aimock.url, max_retries=2) as model:
        with pytest.raises(ModelAPIError, match='while streaming'):
            await read(model)
    assert received  # events were delivered before the cut, so the stream is not sent again
    assert len(aimock.requests_for(marker)) == 1
    assert delays == []


@EACH_WIRE
async def test_a_server_slower_than_the_timeout_is_a_model_api_error(
    aimock: Aimock, wire: Wire, delays: list[float]
) -> None:
    marker = aimock.marker()
    aimock.add(text_reply(marker, 'Too late.'))
    settings = ModelSettings(timeout=0.05, extra_headers={'x-aimock-chaos-latency': str(HOLD_MS)})
    async with wire.model(aimock.url, max_retries=1) as model:
        with pytest.raises(ModelAPIError, match='timed out'):
            await model.request(ask(marker), settings, PARAMS)
    assert len(delays) == 1  # one retry, timed out as well


@EACH_WIRE
async def test_a_stream_that_stalls_times_out_while_streaming(aimock: Aimock, wire: Wire) -> None:
    marker = aimock.marker()
    # The first chunk comes at once (with the headers), the next one after HOLD_MS.
    aimock.add(text_reply(marker, LONG_TEXT, streamingProfile={'ttft': 0, 'tps': 1000 / HOLD_MS}))
    async with wire.model(aimock.url) as model:
        with pytest.raises(ModelAPIError, match='timed out while streaming'):
            await respond(model, ask(marker), ModelSettings(timeout=1.0), streamed=True)


@EACH_WIRE
async def test_a_stream_left_early_closes_its_response(aimock: Aimock, wire: Wire) -> None:
    marker = aimock.marker()
    aimock.add(text_reply(marker, LONG_TEXT * 20, latency=20))
    responses: list[httpx.Response] = []

    async def keep(response: httpx.Response) -> None:
        responses.append(response)

    async with httpx.AsyncClient(event_hooks={'response': [keep]}) as client:
        model = wire.model(aimock.url, http_client=client)
        async with model.request_stream(ask(marker), None, PARAMS) as stream:
            async for _ in stream:
                break
            [response] = responses
            assert not response.is_closed
        assert response.is_closed
        assert not client.is_closed  # a client the user gave is theirs to close
