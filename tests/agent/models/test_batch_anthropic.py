"""`AnthropicModel`'s batch API (pydantic-ai 2.68's Message Batches backend) against a fake
`/v1/messages/batches` server on 127.0.0.1, directly and through `BatchModelRequests`."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from datetime import timedelta
from typing import Any

import anyio
import pytest

from edgewise.agent import Agent
from edgewise.agent.capabilities import BatchModelRequests, NativeTool
from edgewise.agent.direct import model_request_batch
from edgewise.agent.exceptions import ModelAPIError, ModelHTTPError, UserError
from edgewise.agent.messages import ModelRequest, ModelResponse, UserPromptPart
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models.anthropic import AnthropicModel
from edgewise.agent.models.batch import BatchRequest, EncodedBatchRequest
from edgewise.agent.native_tools import WebFetchTool
from edgewise.agent.profiles.anthropic import AnthropicModelProfile
from edgewise.agent.providers.anthropic import AnthropicProvider

from ._batch_fakes import FakeAnthropic, serving

pytestmark = pytest.mark.anyio

TICK = timedelta(microseconds=1)
SECRET = 'sk-ant-batch-secret'


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with serving(FakeAnthropic()) as api:
        yield api


@pytest.fixture
async def model(fake: FakeAnthropic) -> AsyncIterator[AnthropicModel]:
    provider = AnthropicProvider(base_url=fake.url, api_key=SECRET)
    async with AnthropicModel('claude-sonnet-4-5', provider=provider) as model:
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


async def test_runs_share_one_batch_and_get_their_own_results(fake: FakeAnthropic, model: AnthropicModel) -> None:
    fake.checks, fake.failing = 2, {'prompt-c'}
    agent = Agent(model, capabilities=[batching(3)])
    outcomes = await run_all(agent, 'prompt-a', 'prompt-b', 'prompt-c')
    assert outcomes['prompt-a'] == 'answer to prompt-a'
    assert outcomes['prompt-b'] == 'answer to prompt-b'
    error = outcomes['prompt-c']
    assert isinstance(error, ModelHTTPError)
    assert error.status_code == 400
    assert error.body == {'type': 'error', 'error': {'type': 'invalid_request_error', 'message': 'prompt-c is invalid'}}
    [batch] = fake.batches.values()
    assert batch['checked'] == 2
    assert all(r['params']['model'] == 'claude-sonnet-4-5' and 'stream' not in r['params'] for r in batch['requests'])
    assert all(headers['x-api-key'] == SECRET for headers in fake.headers)
    assert all(headers['anthropic-version'] for headers in fake.headers)
    assert 'anthropic-beta' not in fake.headers[0]


async def test_the_methods_map_each_result_by_custom_id(fake: FakeAnthropic, model: AnthropicModel) -> None:
    fake.failing = {'prompt-b'}
    assert model.batch_max_requests == 100_000
    requests = [request('one', 'prompt-a'), request('two', 'prompt-b')]
    encoded = [await model.batch_encode(r) for r in requests]
    assert SECRET not in encoded[0].group
    assert json.loads(encoded[0].group)['betas'] == []
    batch = await model.batch_create(encoded)
    assert (batch.status, batch.provider_name, batch.request_count) == ('in_progress', 'anthropic', 2)
    assert batch.created_at.year == 2026
    batch = await model.batch_status(batch)
    assert batch.status == 'ended'
    results = {r.custom_id: r for r in await model.batch_results(batch)}
    assert (results['one'].status, results['two'].status) == ('succeeded', 'errored')
    response = model.batch_decode(results['one'], requests[0])
    assert response.text == 'answer to prompt-a'
    assert (response.provider_details or {})['processing'] == 'batch'
    with pytest.raises(ModelHTTPError, match='status_code: 400'):
        model.batch_decode(results['two'], requests[1])
    batch.provider_details = None  # a handle without `results_url`: it is looked up
    assert len(await model.batch_results(batch)) == 2


async def test_expired_and_canceled_results(fake: FakeAnthropic, model: AnthropicModel) -> None:
    for ending, word in (('expired', 'expired before the model ran it'), ('canceled', 'canceled before the model')):
        fake.ending, fake.unrun = ending, {'prompt-b'}
        agent = Agent(model, capabilities=[batching(2, max_resubmissions=0)])
        outcomes = await run_all(agent, 'prompt-a', 'prompt-b')
        assert outcomes['prompt-a'] == 'answer to prompt-a'
        assert isinstance(error := outcomes['prompt-b'], ModelAPIError)
        assert word in error.message


async def test_an_expired_request_is_submitted_again(fake: FakeAnthropic, model: AnthropicModel) -> None:
    fake.ending, fake.unrun = 'expired', {'prompt-b'}
    agent = Agent(model, capabilities=[batching(2)])
    assert await run_all(agent, 'prompt-a', 'prompt-b') == {
        'prompt-a': 'answer to prompt-a',
        'prompt-b': 'answer to prompt-b',
    }
    assert [len(batch['requests']) for batch in fake.batches.values()] == [2, 1]


async def test_cancelling_the_waiting_run_cancels_the_batch(fake: FakeAnthropic, model: AnthropicModel) -> None:
    fake.hold = True
    agent = Agent(model, capabilities=[batching(1)])
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, 'prompt-a')
        await anyio.to_thread.run_sync(fake.status_checked.wait)
        tg.cancel_scope.cancel()
    assert fake.calls('POST', '/v1/messages/batches/msgbatch_0/cancel') == ['/v1/messages/batches/msgbatch_0/cancel']
    assert fake.batches['msgbatch_0']['processing_status'] == 'canceling'


async def test_beta_flags_group_requests_and_go_with_the_batch(fake: FakeAnthropic, model: AnthropicModel) -> None:
    beta = EncodedBatchRequest(
        custom_id='one', group=json.dumps({**json.loads(model_group(model)), 'betas': ['b1']}, sort_keys=True),
        body=json.dumps({'model': 'claude-sonnet-4-5', 'max_tokens': 5,
                         'messages': [{'role': 'user', 'content': 'prompt-a'}]}),
    )  # fmt: skip
    batch = await model.batch_create([beta])
    assert fake.headers[-1]['anthropic-beta'] == 'b1'
    assert json.loads(batch.group)['betas'] == ['b1']
    plain = await model.batch_encode(request('two', 'prompt-b'))
    with pytest.raises(UserError, match='must share a `group`'):
        await model.batch_create([beta, plain])


def model_group(model: AnthropicModel) -> str:
    from edgewise.agent.models._anthropic_batch import _group

    return _group(model, [])


async def test_what_a_batch_cannot_carry_is_refused(fake: FakeAnthropic, model: AnthropicModel) -> None:
    refused: list[tuple[Any, str]] = [
        ({'timeout': 3.0}, 'per-request `timeout`'),
        ({'extra_headers': {'x-trace': '1'}}, 'per-request `extra_headers`'),
        ({'anthropic_speed': 'fast'}, '`anthropic_speed`'),
    ]
    for settings, match in refused:
        with pytest.raises(UserError, match=match):
            await model.batch_encode(
                BatchRequest(custom_id='x', messages=request('x', 'p').messages, model_settings=settings)
            )
    encoded = await model.batch_encode(request('not valid!', 'prompt-a'))
    with pytest.raises(UserError, match='`custom_id`s of 1 to 64 letters'):
        await model.batch_create([encoded])
    assert fake.received == []  # refused before anything was sent
    no_batches = AnthropicModelProfile(anthropic_supports_message_batches=False)
    elsewhere = AnthropicModel('claude-sonnet-4-5', provider=model.provider, profile=no_batches)
    assert elsewhere.batch_max_requests is None
    with pytest.raises(UserError, match='has no batch API'):
        await elsewhere.batch_encode(request('a', 'prompt-a'))


async def test_a_handle_from_elsewhere(fake: FakeAnthropic, model: AnthropicModel) -> None:
    batch = await model.batch_status(await model.batch_create([await model.batch_encode(request('one', 'prompt-a'))]))
    with pytest.raises(UserError, match='does not match the batch request group'):
        await model.batch_status(replace(batch, group='{"endpoint": "elsewhere", "credential": "x"}'))
    fake.batches['msgbatch_0']['results_url'] = None
    with pytest.raises(UserError, match='has no results'):
        await model.batch_results(replace(batch, provider_details=None))
    with pytest.raises(UserError, match=r'`speed`, `stream=True`, or `max_tokens=0`'):
        await model.batch_encode(
            BatchRequest(custom_id='x', messages=request('x', 'p').messages, model_settings={'max_tokens': 0})
        )


def fetching(custom_id: str, prompt: str) -> BatchRequest:
    """A request whose web fetch tool needs a beta flag: it goes in a group of its own."""
    return replace(
        request(custom_id, prompt), model_request_parameters=ModelRequestParameters(native_tools=[WebFetchTool()])
    )


async def test_model_request_batch_submits_each_group_as_its_own_batch(
    fake: FakeAnthropic, model: AnthropicModel
) -> None:
    requests = [
        request('a', 'prompt-a'),
        fetching('b', 'prompt-b'),
        request('c', 'prompt-c'),
        fetching('d', 'prompt-d'),
    ]
    outcomes = await model_request_batch(model, requests, max_requests=3, poll_interval=TICK, max_poll_interval=TICK)
    assert [outcome.text for outcome in outcomes if isinstance(outcome, ModelResponse)] == [
        'answer to prompt-a',
        'answer to prompt-b',
        'answer to prompt-c',
        'answer to prompt-d',
    ]
    # One batch per group (submitted together), each with the beta flag its requests need.
    betas = [
        headers.get('anthropic-beta')
        for (method, path), headers in zip(fake.received, fake.headers, strict=True)
        if (method, path) == ('POST', '/v1/messages/batches')
    ]
    batches = [tuple(r['custom_id'] for r in batch['requests']) for batch in fake.batches.values()]
    assert dict(zip(batches, betas, strict=True)) == {('a', 'c'): None, ('b', 'd'): 'web-fetch-2025-09-10'}


async def test_model_request_batch_splits_a_group_by_count_and_bytes(
    fake: FakeAnthropic, model: AnthropicModel
) -> None:
    from edgewise.agent.models import _anthropic_batch

    requests = [request(name, f'prompt-{name}') for name in 'abcde']
    await model_request_batch(model, requests, max_requests=2, poll_interval=TICK, max_poll_interval=TICK)
    assert sorted([r['custom_id'] for r in batch['requests']] for batch in fake.batches.values()) == [
        ['a', 'b'],
        ['c', 'd'],
        ['e'],
    ]
    fake.batches.clear()
    one = _anthropic_batch.request_size(await model.batch_encode(requests[0]))
    with pytest.MonkeyPatch.context() as patch:  # room for two requests of this size in a batch
        patch.setattr(_anthropic_batch, 'MAX_BATCH_BYTES', 2 * one + 1)
        await model_request_batch(model, requests[:3], poll_interval=TICK, max_poll_interval=TICK)
    assert sorted(len(batch['requests']) for batch in fake.batches.values()) == [1, 2]


async def test_requests_needing_different_beta_flags_queue_apart(fake: FakeAnthropic, model: AnthropicModel) -> None:
    """As in pydantic-ai 2.68, a queue holds the requests of one `group`: the two plain runs fill theirs and go as a
    batch of two; the fetching run's request (another beta flag) waits in its own until flushed."""
    outcomes: dict[str, str] = {}
    shared = batching(2)
    plain = Agent(model, capabilities=[shared])
    fetcher = Agent(model, capabilities=[shared, NativeTool(WebFetchTool())])

    async def run(agent: Agent[None, str], prompt: str) -> None:
        outcomes[prompt] = (await agent.run(prompt)).output

    async with anyio.create_task_group() as tg:
        tg.start_soon(run, fetcher, 'prompt-b')
        async with anyio.create_task_group() as plain_runs:
            plain_runs.start_soon(run, plain, 'prompt-a')
            plain_runs.start_soon(run, plain, 'prompt-c')
        assert 'prompt-b' not in outcomes  # its queue is not full
        await shared.flush()
    assert outcomes == {p: f'answer to {p}' for p in ('prompt-a', 'prompt-b', 'prompt-c')}
    assert [len(batch['requests']) for batch in fake.batches.values()] == [2, 1]


async def test_requests_to_two_models_of_one_account_share_a_batch(fake: FakeAnthropic, model: AnthropicModel) -> None:
    """Two model instances (and model names) whose requests encode to one `group` share the queue and the batch; each
    response is read by the model its request was made to."""
    provider = AnthropicProvider(base_url=fake.url, api_key=SECRET)
    async with AnthropicModel('claude-haiku-4-5', provider=provider) as other:
        assert model_group(other) == model_group(model)
        shared = batching(2)
        outcomes: dict[str, Any] = {}

        async def run(chosen: AnthropicModel, prompt: str) -> None:
            outcomes[prompt] = await Agent(chosen, capabilities=[shared]).run(prompt)

        async with anyio.create_task_group() as tg:
            tg.start_soon(run, model, 'prompt-a')
            tg.start_soon(run, other, 'prompt-b')
    (batch,) = fake.batches.values()
    assert sorted(r['params']['model'] for r in batch['requests']) == ['claude-haiku-4-5', 'claude-sonnet-4-5']
    assert {p: r.output for p, r in outcomes.items()} == {p: f'answer to {p}' for p in ('prompt-a', 'prompt-b')}
