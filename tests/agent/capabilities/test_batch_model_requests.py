"""`BatchModelRequests` (pydantic-ai 2.68) over the in-memory batch API of the test models: runs share batches,
a batch is submitted when full, after `max_wait` or on `flush()`, checked until it ends, and requests left unrun or
failed with a retryable error are submitted again."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from typing import Any

import anyio
import pytest

from edgewise.agent import Agent, RunContext
from edgewise.agent.capabilities import CAPABILITY_TYPES, AbstractCapability, BatchModelRequests
from edgewise.agent.exceptions import ModelAPIError, ModelHTTPError, UserError
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart
from edgewise.agent.models.batch import Batch, BatchRequest, BatchResult, EncodedBatchRequest
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.openai import OpenAIChatModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.providers.openai import OpenAIProvider

pytestmark = pytest.mark.anyio

QUICK = timedelta(milliseconds=1)


class Batched(FunctionModel):
    """A function model answering each prompt with its text, recording the size of each batch it is given; its
    batches stay in progress for `checks` status checks, its answers fail as `script` says, and the results of its
    first `lose` batches leave out their first request."""

    def __init__(self, *, checks: int = 0, script: Sequence[str] = (), lose: int = 0, down: bool = False) -> None:
        self.down = down
        self.batches: list[int] = []
        self.checks = checks
        self.script = list(script)
        self.lose = lose

        def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            step = self.script.pop(0) if self.script else 'ok'
            if step == 'busy':
                raise ModelHTTPError(status_code=429, model_name='batched', body=None)
            if step == 'bad':
                raise ModelHTTPError(status_code=400, model_name='batched', body={'error': 'bad'})
            if step == 'bug':
                raise ValueError('bug')
            return ModelResponse(parts=[TextPart(f'answer to {messages[-1].parts[-1].content}')])  # type: ignore[union-attr]

        super().__init__(answer, model_name='batched')

    async def batch_create(self, requests: Sequence[EncodedBatchRequest]) -> Batch:
        if self.down:
            raise ModelHTTPError(status_code=500, model_name='batched', body='batch API down')
        self.batches.append(len(requests))
        batch = await super().batch_create(requests)
        return replace(batch, status='in_progress') if self.checks else batch

    async def batch_status(self, batch: Batch) -> Batch:
        self.checks -= 1
        return replace(batch, status='in_progress' if self.checks else 'ended')

    async def batch_results(self, batch: Batch) -> list[BatchResult]:
        results = await super().batch_results(batch)
        if self.lose:
            self.lose -= 1
            return results[1:]
        return results


@dataclass
class Queued(AbstractCapability[Any]):
    """Sets `event` as a request goes on to be queued (the queueing runs before the request's task next yields)."""

    event: anyio.Event

    async def wrap_model_request(self, ctx: RunContext[Any], *, request_context: Any, handler: Any) -> Any:
        self.event.set()
        return await handler(request_context)


async def run_all(agent: Agent[None, str], *prompts: str) -> list[str]:
    outputs: dict[str, str] = {}

    async def run(prompt: str) -> None:
        outputs[prompt] = (await agent.run(prompt)).output

    async with anyio.create_task_group() as tg:
        for prompt in prompts:
            tg.start_soon(run, prompt)
    return [outputs[prompt] for prompt in prompts]


async def test_concurrent_runs_share_a_batch_submitted_when_full() -> None:
    model = Batched(checks=2)
    batching = BatchModelRequests(max_requests=3, max_wait=None, poll_interval=QUICK, max_poll_interval=QUICK)
    agent = Agent(model, capabilities=[batching])
    assert await run_all(agent, 'a', 'b', 'c') == ['answer to a', 'answer to b', 'answer to c']
    assert model.batches == [3]
    assert model.checks == 0  # checked until the batch ended


async def test_a_lone_request_is_submitted_once_the_wait_is_over() -> None:
    model = Batched()
    agent = Agent(model, capabilities=[BatchModelRequests(max_wait=timedelta(milliseconds=10))])
    assert (await agent.run('alone')).output == 'answer to alone'
    async with agent.run_stream('streamed') as result:  # a streamed request waits for its batch too
        assert await result.get_output() == 'answer to streamed'
    assert model.batches == [1, 1]


async def test_flush_submits_what_is_queued() -> None:
    model = Batched()
    batching, queued = BatchModelRequests(max_wait=None), anyio.Event()
    agent = Agent(model, capabilities=[Queued(queued), batching])
    outputs: list[str] = []

    async def run() -> None:
        outputs.append((await agent.run('queued')).output)

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await queued.wait()
        await batching.flush()
    assert outputs == ['answer to queued']


async def test_unrun_and_retryable_requests_are_submitted_again() -> None:
    model = Batched(script=['ok', 'ok', 'busy'], lose=1)
    agent = Agent(model, capabilities=[BatchModelRequests(max_requests=2, max_wait=None)])
    assert await run_all(agent, 'x', 'y') == ['answer to x', 'answer to y']
    assert model.batches == [2, 1, 1]


async def test_errors_reach_the_run_once_resubmissions_are_spent() -> None:
    for script, lose, error, match in (
        (['bad'], 0, ModelHTTPError, 'status_code: 400'),
        (['bug'], 0, ValueError, 'bug'),
        (['busy', 'busy'], 0, ModelHTTPError, 'status_code: 429'),
        ([], 2, ModelAPIError, 'The batch request was expired before the model ran it'),
    ):
        model = Batched(script=script, lose=lose)
        agent = Agent(model, capabilities=[BatchModelRequests(max_requests=1, max_resubmissions=1)])
        with pytest.raises(error, match=match):
            await agent.run('x')


async def test_a_model_without_a_batch_api_is_refused() -> None:
    provider = OpenAIProvider(api_key='sk-x', base_url='http://127.0.0.1:9/v1')
    agent = Agent(OpenAIChatModel('gpt-4o', provider=provider), capabilities=[BatchModelRequests()])
    with pytest.raises(UserError, match=r"needs a model with a batch API; `OpenAIChatModel` \('gpt-4o'\) has none"):
        await agent.run('hi')
    with pytest.raises(NotImplementedError, match='does not support batch requests'):
        await OpenAIChatModel('gpt-4o', provider=provider).batch_encode(BatchRequest(custom_id='1', messages=[]))


async def test_base_models_have_no_batch_api() -> None:
    model = OpenAIChatModel('gpt-4o', provider=OpenAIProvider(api_key='sk-x', base_url='http://127.0.0.1:9/v1'))
    batch = Batch(
        id='b', model_name='m', provider_name='p', group='g', status='ended', created_at=now(), request_count=0
    )
    assert model.batch_max_requests is None
    for call in (
        model.batch_create([]),
        model.batch_status(batch),
        model.batch_results(batch),
        model.batch_cancel(batch),
    ):
        with pytest.raises(NotImplementedError, match='`OpenAIChatModel` does not support batch requests'):
            await call
    with pytest.raises(NotImplementedError):
        model.batch_decode(BatchResult(custom_id='1', status='succeeded'), BatchRequest(custom_id='1', messages=[]))


def now() -> datetime:
    return datetime.now(tz=timezone.utc)


async def test_the_in_memory_batch_api_keeps_batches_on_its_instance() -> None:
    model = TestModel()
    encoded = await model.batch_encode(BatchRequest(custom_id='1', messages=[]))
    batch = Batch(id='other', model_name='m', provider_name='p', group=encoded.group, status='ended',
                  created_at=now(), request_count=1)  # fmt: skip
    with pytest.raises(UserError, match="Batch 'other' was not created by this model instance"):
        await model.batch_status(batch)
    made = await model.batch_create([])
    assert await model.batch_cancel(made) == made
    assert await model.batch_results(made) == []
    with pytest.raises(ModelAPIError, match='The batch was canceled before the model ran the request'):
        model.batch_decode(BatchResult(custom_id='1', status='canceled'), BatchRequest(custom_id='1', messages=[]))


async def test_leaving_the_capability_fails_the_queued_requests() -> None:
    model = Batched()
    batching, queued = BatchModelRequests(max_wait=None), anyio.Event()
    agent = Agent(model, capabilities=[Queued(queued), batching])
    errors: list[str] = []

    async def run() -> None:
        try:
            await agent.run('never sent')
        except UserError as error:
            errors.append(str(error))

    async with batching, anyio.create_task_group() as tg:
        async with batching:  # nested: only the outermost exit closes
            tg.start_soon(run)
            await queued.wait()
        assert errors == []
        await batching.__aexit__(None, None, None)
        await batching.__aenter__()
    assert errors == ['`BatchModelRequests` was closed before this request was submitted.']
    assert model.batches == []


async def test_a_cancelled_submitter_settles_the_requests_it_took() -> None:
    model = Batched(checks=1000)
    batching = BatchModelRequests(max_requests=2, max_wait=None, poll_interval=timedelta(hours=1),
                                  max_poll_interval=timedelta(hours=1))  # fmt: skip
    agent = Agent(model, capabilities=[batching])
    with anyio.move_on_after(0.05):  # the batch never ends: both runs are cancelled while it is checked
        await run_all(agent, 'a', 'b')
    assert model.batches == [2]


async def test_a_failed_submission_fails_every_request_of_the_batch() -> None:
    agent = Agent(Batched(down=True), capabilities=[BatchModelRequests(max_requests=2, max_wait=None)])
    errors: list[str] = []

    async def run(prompt: str) -> None:
        with pytest.raises(ModelHTTPError) as caught:
            await agent.run(prompt)
        errors.append(str(caught.value.body))

    async with anyio.create_task_group() as tg:
        tg.start_soon(run, 'a')
        tg.start_soon(run, 'b')
    assert errors == ['batch API down', 'batch API down']


def test_settings_are_checked_and_specs_give_durations() -> None:
    assert CAPABILITY_TYPES['BatchModelRequests'] is BatchModelRequests
    built = BatchModelRequests.from_spec(max_requests=10, max_wait='PT5M', poll_interval=2, max_poll_interval=60)  # type: ignore[arg-type]
    assert (built.max_requests, built.max_wait, built.poll_interval) == (10, timedelta(minutes=5), timedelta(seconds=2))
    assert BatchModelRequests.from_spec(max_wait=None).max_wait is None
    for kwargs, match in (
        ({'max_requests': 0}, 'at least 1'),
        ({'max_resubmissions': -1}, 'must not be negative'),
        ({'max_wait': timedelta(0)}, '`max_wait` must be positive'),
        ({'poll_interval': timedelta(0)}, '`poll_interval` must be positive'),
        ({'max_poll_interval': timedelta(seconds=1)}, 'at least `poll_interval`'),
    ):
        with pytest.raises(UserError, match=match):
            BatchModelRequests(**kwargs)


async def test_a_failure_splitting_the_queue_reaches_every_request_as_it_is() -> None:
    class Unmeasurable(Batched):
        def batch_request_size(self, request: EncodedBatchRequest) -> int:
            raise ValueError('cannot size this request')

    agent = Agent(Unmeasurable(), capabilities=[BatchModelRequests(max_requests=2, max_wait=None)])
    errors: list[str] = []

    async def run(prompt: str) -> None:
        with pytest.raises(ValueError, match='cannot size') as caught:
            await agent.run(prompt)
        errors.append(str(caught.value))

    async with anyio.create_task_group() as tg:
        tg.start_soon(run, 'a')
        tg.start_soon(run, 'b')
    assert errors == ['cannot size this request', 'cannot size this request']


async def test_a_batched_request_is_sent_the_history_prepared_as_a_live_one() -> None:
    """A request goes in its batch as the model is sent it live (`Model.prepare_messages`): a loaded capability's
    instructions and the tools it revealed are stated, not left as records the provider mapping would drop."""
    from edgewise.agent.capabilities import Capability
    from edgewise.agent.messages import SystemPromptPart, ToolCallPart

    refunds = Capability[None](
        id='refunds', description='Refunds.', instructions='Check the policy.', defer_loading=True
    )

    @refunds.tool_plain
    def refund(order: str) -> str:
        return 'refunded'

    prompts: list[list[str]] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompts.append([p.content for p in messages[-1].parts if isinstance(p, SystemPromptPart)])
        if len(prompts) == 1:
            return ModelResponse([ToolCallPart('load_capability', {'id': 'refunds'}, 'l1')])
        return ModelResponse([TextPart('done')])

    tick = timedelta(microseconds=1)
    batching = BatchModelRequests(max_requests=1, poll_interval=tick, max_poll_interval=tick)
    await Agent(FunctionModel(answer), capabilities=[refunds, batching]).run('refund?')
    assert prompts[1] == [
        'The following tool(s) are now available: `refund`',
        '<pyai:context id="capability:refunds">\nCheck the policy.\n</pyai:context>',
    ]
