"""`GoogleModel`'s batch API (the Gemini API's Batch Mode, inlined requests) against a fake `batchGenerateContent`
and `batches/{id}` server on 127.0.0.1, directly and through `BatchModelRequests`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from typing import Any

import anyio
import pytest

from edgewise.agent import Agent
from edgewise.agent.capabilities import BatchModelRequests
from edgewise.agent.exceptions import ModelAPIError, ModelHTTPError, UserError
from edgewise.agent.messages import ModelRequest, UserPromptPart
from edgewise.agent.models._batch_codec import BatchJobError
from edgewise.agent.models.batch import BatchRequest, BatchResult
from edgewise.agent.models.google import GoogleModel
from edgewise.agent.profiles.google import GoogleModelProfile
from edgewise.agent.providers.google import GoogleProvider

from ._batch_fakes import FakeGemini, serving

pytestmark = pytest.mark.anyio

TICK = timedelta(microseconds=1)
SECRET = 'gemini-batch-secret'


@pytest.fixture
def fake() -> Iterator[FakeGemini]:
    with serving(FakeGemini()) as api:
        yield api


@pytest.fixture
async def model(fake: FakeGemini) -> AsyncIterator[GoogleModel]:
    async with GoogleModel('gemini-2.5-flash', provider=GoogleProvider(base_url=fake.url, api_key=SECRET)) as model:
        yield model


def batching(max_requests: int, **kwargs: Any) -> BatchModelRequests:
    return BatchModelRequests(
        max_requests=max_requests, max_wait=None, poll_interval=TICK, max_poll_interval=TICK, **kwargs
    )


def request(custom_id: str, prompt: str) -> BatchRequest:
    return BatchRequest(custom_id=custom_id, messages=[ModelRequest(parts=[UserPromptPart(prompt)])])


async def run_all(agent: Agent[None, str], *prompts: str) -> dict[str, str | BaseException]:
    outcomes: dict[str, str | BaseException] = {}

    async def run(prompt: str) -> None:
        try:
            outcomes[prompt] = (await agent.run(prompt)).output
        except Exception as error:
            outcomes[prompt] = error

    async with anyio.create_task_group() as tg:
        for prompt in prompts:
            tg.start_soon(run, prompt)
    return outcomes


@pytest.mark.parametrize('as_file', [False, True])
async def test_runs_share_one_job_and_get_their_own_results(
    fake: FakeGemini, model: GoogleModel, as_file: bool
) -> None:
    fake.checks, fake.failing, fake.as_file = 2, {'prompt-c'}, as_file
    agent = Agent(model, capabilities=[batching(3)])
    outcomes = await run_all(agent, 'prompt-a', 'prompt-b', 'prompt-c')
    assert outcomes['prompt-a'] == 'answer to prompt-a'
    assert outcomes['prompt-b'] == 'answer to prompt-b'
    error = outcomes['prompt-c']
    assert isinstance(error, ModelHTTPError)
    assert error.status_code == 400
    assert error.body == {'error': {'code': 400, 'status': 'INVALID_ARGUMENT', 'message': 'prompt-c is invalid'}}
    [job] = fake.batches.values()
    assert job['checked'] == 2
    assert fake.received[0] == ('POST', '/v1beta/models/gemini-2.5-flash:batchGenerateContent')
    assert all('contents' in r['request'] for r in job['requests'])
    assert all(headers['x-goog-api-key'] == SECRET for headers in fake.headers)


async def test_the_methods(fake: FakeGemini, model: GoogleModel) -> None:
    requests = [request('one', 'prompt-a')]
    encoded = [await model.batch_encode(r) for r in requests]
    assert SECRET not in encoded[0].group
    batch = await model.batch_create(encoded)
    assert (batch.id, batch.status, batch.request_count) == ('batches/b0', 'in_progress', 1)
    assert batch.provider_details == {'state': 'BATCH_STATE_PENDING'}
    batch = await model.batch_status(batch)
    assert batch.status == 'ended'
    [result] = await model.batch_results(batch)
    response = model.batch_decode(result, requests[0])
    assert response.text == 'answer to prompt-a'
    assert (response.provider_details or {})['processing'] == 'batch'
    odd = BatchResult(custom_id='x', status='errored', body='{"code": 99, "message": "odd"}')
    with pytest.raises(ModelHTTPError, match='status_code: 500'):
        model.batch_decode(odd, requests[0])
    with pytest.raises(ModelAPIError, match='canceled before the model ran'):
        model.batch_decode(BatchResult(custom_id='x', status='canceled'), requests[0])


@pytest.mark.parametrize(
    ('ending', 'status_code', 'resubmitted'),
    [('FAILED', 400, False), ('CANCELLED', 499, False), ('EXPIRED', 504, True)],
)
async def test_a_job_ending_without_results_fails_its_requests(
    fake: FakeGemini, model: GoogleModel, ending: str, status_code: int, resubmitted: bool
) -> None:
    fake.ending = ending
    agent = Agent(model, capabilities=[batching(2, max_resubmissions=1)])
    outcomes = await run_all(agent, 'prompt-a', 'prompt-b')
    for error in outcomes.values():
        assert isinstance(error, BatchJobError)
        assert error.status_code == status_code
    # An expired job is submitted again (it may run the next time); a failed or cancelled one is not.
    assert len(fake.batches) == (2 if resubmitted else 1)


async def test_requests_a_cancelled_job_left_out_are_canceled(fake: FakeGemini, model: GoogleModel) -> None:
    fake.ending, fake.unrun = 'CANCELLED', {'prompt-b'}
    agent = Agent(model, capabilities=[batching(2)])
    outcomes = await run_all(agent, 'prompt-a', 'prompt-b')
    assert outcomes['prompt-a'] == 'answer to prompt-a'
    assert isinstance(error := outcomes['prompt-b'], ModelAPIError)
    assert 'canceled before the model ran the request' in error.message
    assert len(fake.batches) == 1  # a cancelled request is not submitted again


async def test_cancelling_the_waiting_run_cancels_the_job(fake: FakeGemini, model: GoogleModel) -> None:
    fake.hold = True
    agent = Agent(model, capabilities=[batching(1)])
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, 'prompt-a')
        await anyio.to_thread.run_sync(fake.status_checked.wait)
        tg.cancel_scope.cancel()
    assert fake.calls('POST', '/v1beta/batches/b0:cancel') == ['/v1beta/batches/b0:cancel']
    assert fake.received[-1] == ('GET', '/v1beta/batches/b0')  # the job is looked up after its cancellation
    assert fake.batches['batches/b0']['state'] == 'BATCH_STATE_CANCELLED'


async def test_google_cloud_has_no_batch_api(model: GoogleModel) -> None:
    other = GoogleModel(
        'gemini-2.5-flash', provider=model.provider, profile=GoogleModelProfile(google_supports_batch_api=False)
    )
    assert other.batch_max_requests is None
    with pytest.raises(UserError, match='has no batch API'):
        await other.batch_encode(request('a', 'prompt-a'))
