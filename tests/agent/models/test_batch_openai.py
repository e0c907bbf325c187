"""`OpenAIResponsesModel`'s batch API (pydantic-ai 2.68's OpenAI Batch API backend) against a fake `/files` and
`/batches` server on 127.0.0.1, directly and through `BatchModelRequests`."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from typing import Any

import anyio
import pytest

from edgewise.agent import Agent
from edgewise.agent.capabilities import BatchModelRequests
from edgewise.agent.exceptions import ModelAPIError, ModelHTTPError, UserError
from edgewise.agent.messages import ModelRequest, ModelResponse, UserPromptPart
from edgewise.agent.models.batch import BatchRequest, BatchResult
from edgewise.agent.models.openai import OpenAIChatModel, OpenAIResponsesModel
from edgewise.agent.profiles.openai import OpenAIModelProfile
from edgewise.agent.providers.openai import OpenAIProvider

from ._batch_fakes import FakeOpenAI, serving

pytestmark = pytest.mark.anyio

TICK = timedelta(microseconds=1)
"""The poll interval: checks follow each other at once, the fake moving batches on by their count."""
SECRET = 'sk-batch-secret'


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with serving(FakeOpenAI(), '/v1') as api:
        yield api


@pytest.fixture
async def model(fake: FakeOpenAI) -> AsyncIterator[OpenAIResponsesModel]:
    async with OpenAIResponsesModel('gpt-4o', provider=OpenAIProvider(base_url=fake.url, api_key=SECRET)) as model:
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


async def test_runs_share_one_batch_and_get_their_own_results(fake: FakeOpenAI, model: OpenAIResponsesModel) -> None:
    fake.checks, fake.failing = 3, {'prompt-c'}
    agent = Agent(model, capabilities=[batching(3)])
    outcomes = await run_all(agent, 'prompt-a', 'prompt-b', 'prompt-c')
    assert outcomes['prompt-a'] == 'answer to prompt-a'
    assert outcomes['prompt-b'] == 'answer to prompt-b'
    error = outcomes['prompt-c']
    assert isinstance(error, ModelHTTPError)
    assert error.status_code == 400
    assert error.body == {'message': 'prompt-c is invalid', 'type': 'invalid_request_error', 'code': 'bad'}
    assert fake.purposes == ['batch']
    assert len(fake.batches) == 1
    batch = fake.batches['batch_0']
    assert (batch['endpoint'], batch['completion_window'], batch['checked']) == ('/v1/responses', '24h', 3)
    lines = [json.loads(line) for line in fake.files['file-0'].splitlines()]
    assert [(line['method'], line['url']) for line in lines] == [('POST', '/v1/responses')] * 3
    assert all(line['body']['model'] == 'gpt-4o' and 'stream' not in line['body'] for line in lines)
    assert all(headers['authorization'] == f'Bearer {SECRET}' for headers in fake.headers)
    assert fake.deleted == ['file-0']  # every request ran: the input file is deleted


async def test_the_methods_map_each_line_by_custom_id(fake: FakeOpenAI, model: OpenAIResponsesModel) -> None:
    fake.failing = {'prompt-b'}
    assert model.batch_max_requests == 50_000
    requests = [request('one', 'prompt-a'), request('two', 'prompt-b')]
    encoded = [await model.batch_encode(r) for r in requests]
    assert SECRET not in encoded[0].group
    assert json.loads(encoded[0].group)['model'] == 'gpt-4o'
    batch = await model.batch_create(encoded)
    assert (batch.id, batch.status, batch.provider_name, batch.request_count) == ('batch_0', 'in_progress', 'openai', 2)
    batch = await model.batch_status(batch)
    assert batch.status == 'ended'
    assert batch.request_count == 2
    assert batch.provider_details is not None
    assert batch.provider_details['status'] == 'completed'
    results = {r.custom_id: r for r in await model.batch_results(batch)}
    assert (results['one'].status, results['two'].status) == ('succeeded', 'errored')
    response = model.batch_decode(results['one'], requests[0])
    assert response.text == 'answer to prompt-a'
    assert response.provider_details is not None
    assert response.provider_details['processing'] == 'batch'
    assert response.usage.input_tokens == 3
    with pytest.raises(ModelHTTPError, match='status_code: 400'):
        model.batch_decode(results['two'], requests[1])


async def test_an_expired_batch_leaves_requests_unrun(fake: FakeOpenAI, model: OpenAIResponsesModel) -> None:
    fake.ending, fake.unrun = 'expired', {'prompt-b'}
    agent = Agent(model, capabilities=[batching(2, max_resubmissions=0)])
    outcomes = await run_all(agent, 'prompt-a', 'prompt-b')
    assert outcomes['prompt-a'] == 'answer to prompt-a'
    assert isinstance(error := outcomes['prompt-b'], ModelAPIError)
    assert 'expired before the model ran it' in error.message
    assert fake.deleted == []  # not every request ran: the input file stays


async def test_an_expired_request_is_submitted_again(fake: FakeOpenAI, model: OpenAIResponsesModel) -> None:
    fake.ending, fake.unrun = 'expired', {'prompt-b'}
    agent = Agent(model, capabilities=[batching(2)])
    outcomes = await run_all(agent, 'prompt-a', 'prompt-b')
    assert outcomes == {'prompt-a': 'answer to prompt-a', 'prompt-b': 'answer to prompt-b'}
    assert [batch['request_counts']['total'] for batch in fake.batches.values()] == [2, 1]


async def test_a_cancelled_batch_reads_its_unrun_requests_from_the_input_file(
    fake: FakeOpenAI, model: OpenAIResponsesModel
) -> None:
    fake.ending, fake.unrun = 'cancelled', {'prompt-a', 'prompt-b'}
    requests = [request('one', 'prompt-a'), request('two', 'prompt-b')]
    batch = await model.batch_status(await model.batch_create([await model.batch_encode(r) for r in requests]))
    results = await model.batch_results(batch)
    assert [(r.custom_id, r.status) for r in results] == [('one', 'canceled'), ('two', 'canceled')]
    with pytest.raises(ModelAPIError, match='canceled before the model ran the request'):
        model.batch_decode(results[0], requests[0])


async def test_a_batch_failing_validation_fails_each_request_with_its_errors(
    fake: FakeOpenAI, model: OpenAIResponsesModel
) -> None:
    fake.ending = 'failed'
    requests = [request('one', 'prompt-a')]
    batch = await model.batch_status(await model.batch_create([await model.batch_encode(r) for r in requests]))
    [result] = await model.batch_results(batch)
    assert result.status == 'errored'
    with pytest.raises(ModelHTTPError, match='status_code: 400') as caught:
        model.batch_decode(result, requests[0])
    assert caught.value.body == {'code': 'invalid_model', 'message': 'no such model', 'line': 1}


async def test_a_refused_batch_deletes_its_input_file(fake: FakeOpenAI, model: OpenAIResponsesModel) -> None:
    fake.refuse_create = True
    with pytest.raises(ModelHTTPError, match='status_code: 400') as caught:
        await model.batch_create([await model.batch_encode(request('one', 'prompt-a'))])
    assert SECRET not in str(caught.value)
    assert SECRET not in repr(caught.value.body)  # the echoed key is redacted
    assert fake.deleted == ['file-0']
    assert fake.calls('POST', '/v1/batches') == ['/v1/batches']  # creating a batch is never retried


async def test_cancelling_the_waiting_run_cancels_the_batch(fake: FakeOpenAI, model: OpenAIResponsesModel) -> None:
    fake.hold = True
    agent = Agent(model, capabilities=[batching(1)])
    async with anyio.create_task_group() as tg:
        tg.start_soon(agent.run, 'prompt-a')
        await anyio.to_thread.run_sync(fake.status_checked.wait)
        tg.cancel_scope.cancel()
    assert fake.calls('POST', '/v1/batches/batch_0/cancel') == ['/v1/batches/batch_0/cancel']
    assert fake.batches['batch_0']['status'] == 'cancelling'


async def test_what_a_batch_cannot_carry_is_refused(fake: FakeOpenAI, model: OpenAIResponsesModel) -> None:
    refused: list[tuple[Any, str]] = [
        ({'timeout': 3.0}, 'per-request `timeout`'),
        ({'extra_headers': {'x-trace': '1'}}, 'per-request `extra_headers`'),
        ({'openai_background': True}, '`openai_background`'),
    ]
    for settings, match in refused:
        with pytest.raises(UserError, match=match):
            await model.batch_encode(
                BatchRequest(custom_id='x', messages=request('x', 'prompt-a').messages, model_settings=settings)
            )
    with pytest.raises(UserError, match='at least one request'):
        await model.batch_create([])
    other = OpenAIResponsesModel('gpt-4.1', provider=model.provider)
    mixed = [await model.batch_encode(request('a', 'prompt-a')), await other.batch_encode(request('b', 'prompt-b'))]
    with pytest.raises(UserError, match='must share a `group`'):
        await model.batch_create(mixed)
    batch = await model.batch_create(mixed[:1])
    with pytest.raises(UserError, match='has not ended yet'):
        await model.batch_results(batch)
    with pytest.raises(UserError, match='does not match the batch request group'):
        await other.batch_status(batch)
    async with OpenAIResponsesModel(
        'gpt-4o', provider=OpenAIProvider(base_url=fake.url, api_key='sk-rotated')
    ) as rotated:
        assert (await rotated.batch_status(batch)).id == batch.id  # another key of the account may check on it


async def test_only_openai_itself_serves_the_batch_api(fake: FakeOpenAI, model: OpenAIResponsesModel) -> None:
    elsewhere = OpenAIResponsesModel(
        'm', provider=model.provider, profile=OpenAIModelProfile(openai_supports_batch_api=False)
    )
    assert elsewhere.batch_max_requests is None
    with pytest.raises(UserError, match='has no batch API'):
        await elsewhere.batch_encode(request('a', 'prompt-a'))
    chat = OpenAIChatModel('gpt-4o', provider=model.provider)
    assert chat.batch_max_requests is None
    with pytest.raises(NotImplementedError):
        await chat.batch_encode(request('a', 'prompt-a'))


def test_result_lines_of_every_kind() -> None:
    from edgewise.agent.models._openai_batch import to_result

    assert to_result({'custom_id': 'a', 'error': {'code': 'batch_cancelled'}}) == BatchResult(
        custom_id='a', status='canceled'
    )
    odd = to_result({'custom_id': 'b', 'error': {'code': 'server_error', 'message': 'boom'}})
    assert odd.status == 'errored'
    assert odd.body is not None
    assert json.loads(odd.body) == {'status_code': 500, 'body': {'error': {'code': 'server_error', 'message': 'boom'}}}
    assert to_result({'custom_id': 'c'}).status == 'errored'


async def test_a_streamed_run_waits_for_its_batch_too(fake: FakeOpenAI, model: OpenAIResponsesModel) -> None:
    agent = Agent(model, capabilities=[batching(1)])
    async with agent.run_stream('prompt-s') as result:
        assert await result.get_output() == 'answer to prompt-s'
    message = result.all_messages()[-1]
    assert isinstance(message, ModelResponse)
    assert (message.provider_details or {})['processing'] == 'batch'


async def test_checks_failing_like_a_retried_request_are_tried_again(fake: FakeOpenAI) -> None:
    fake.flaky_checks = 3  # the HTTP layer does not retry (`max_retries=0`): the capability checks again
    async with OpenAIResponsesModel(
        'gpt-4o', provider=OpenAIProvider(base_url=fake.url, api_key=SECRET, max_retries=0)
    ) as model:
        agent = Agent(model, capabilities=[batching(1)])
        assert (await agent.run('prompt-a')).output == 'answer to prompt-a'
        fake.flaky_checks = 4  # one failure too many: the run fails, and the abandoned batch is cancelled
        with pytest.raises(ModelHTTPError, match='status_code: 503'):
            await agent.run('prompt-b')
    assert fake.calls('POST', '/v1/batches/batch_1/cancel') == ['/v1/batches/batch_1/cancel']


async def test_a_batch_too_big_is_refused_before_anything_is_sent(
    fake: FakeOpenAI, model: OpenAIResponsesModel
) -> None:
    from edgewise.agent.models._batch_codec import check_batch_bytes

    encoded = await model.batch_encode(request('one', 'prompt-a'))
    with pytest.raises(UserError, match=r'These requests take [\d,]+ bytes, more than the 10 bytes a OpenAI batch'):
        check_batch_bytes([encoded, encoded], lambda r: len(r.body), 10, 'OpenAI')
    assert fake.received == []


def test_groups_and_times_that_do_not_parse() -> None:
    from edgewise.agent.models._batch_codec import group_matches, parse_time

    assert not group_matches('not json', '{"credential": "x"}', collecting=True)
    assert not group_matches('[1]', '{"credential": "x"}', collecting=True)
    assert parse_time('2026-12-02T10:00:00Z').year == 2026
    assert parse_time('yesterday').tzinfo is not None
    assert parse_time(None).tzinfo is not None


async def test_a_wrapped_model_batches_through_the_model_it_wraps(
    fake: FakeOpenAI, model: OpenAIResponsesModel
) -> None:
    from edgewise.agent.models._openai_batch import input_line
    from edgewise.agent.models.wrapper import WrapperModel

    wrapped = WrapperModel(model)
    assert (wrapped.batch_max_requests, wrapped.batch_max_bytes) == (50_000, 200_000_000)
    encoded = await wrapped.batch_encode(request('one', 'prompt-a'))
    assert wrapped.batch_request_size(encoded) == len(input_line(encoded)) + 1
    agent = Agent(wrapped, capabilities=[batching(1)])
    assert (await agent.run('prompt-w')).output == 'answer to prompt-w'
    assert fake.calls('POST', '/v1/batches') == ['/v1/batches']
    chat = OpenAIChatModel('gpt-4o', provider=model.provider)
    assert chat.batch_max_bytes is None
    assert chat.batch_request_size(encoded) == len(b'one') + len(encoded.body.encode())


class TinyBatches(OpenAIResponsesModel):
    """A model whose batches hold so few bytes that each takes one request."""

    @property
    def batch_max_bytes(self) -> int | None:
        return 1


async def test_a_queue_too_big_for_one_batch_is_split(fake: FakeOpenAI, model: OpenAIResponsesModel) -> None:
    tiny = TinyBatches('gpt-4o', provider=model.provider)
    tiny_agent = Agent(tiny, capabilities=[batching(3)])
    outcomes = await run_all(tiny_agent, 'prompt-a', 'prompt-b', 'prompt-c')
    assert set(outcomes.values()) == {'answer to prompt-a', 'answer to prompt-b', 'answer to prompt-c'}
    assert [batch['request_counts']['total'] for batch in fake.batches.values()] == [1, 1, 1]
