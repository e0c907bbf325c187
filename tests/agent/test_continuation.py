"""Turns a provider suspends (`ModelResponse.state == 'suspended'`, pydantic-ai 2.x): the run asks the model to go on
(after `Model.continuation_delay`, waiting through `Agent.using_sleep`'s function) until the turn is whole, and
records the segments as one response and one request, streamed or not."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from edgewise.agent import (
    Agent,
    ModelRequestNode,
    ModelRetry,
    RunContext,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
    UserError,
)
from edgewise.agent.capabilities import AbstractCapability
from edgewise.agent.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponseStreamEvent,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    UserPromptPart,
)
from edgewise.agent.models import Model, ModelRequestContext, ModelRequestParameters, StreamedResponse
from edgewise.agent.models.fallback import FallbackModel
from edgewise.agent.models.wrapper import WrapperModel
from edgewise.agent.settings import ModelSettings
from edgewise.agent.usage import RequestUsage, UsageLimits

pytestmark = pytest.mark.anyio


def piece(
    text: str, *, rid: str, state: str = 'complete', tokens: int = 1, model: str = 'pausing', **details: Any
) -> ModelResponse:
    """One segment of a turn: a text part, its provider id, state and usage."""
    return ModelResponse(
        [TextPart(text)],
        model_name=model,
        provider_response_id=rid,
        usage=RequestUsage(input_tokens=tokens, output_tokens=tokens),
        state=state,  # type: ignore[arg-type]
        provider_details=details or None,
    )


@dataclass(eq=False, repr=False)
class _SegmentStream(StreamedResponse):
    segment: ModelResponse = field(default=None)  # type: ignore[assignment]
    fail_after_first_chunk: bool = False

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        self.provider_response_id = self.segment.provider_response_id
        self.state = self.segment.state
        self.provider_details = self.segment.provider_details
        for index, part in enumerate(self.segment.parts):
            assert isinstance(part, TextPart)
            for chunk in part.content.split(' '):
                for event in self._parts_manager.handle_text_delta(vendor_part_id=index, content=chunk + ' '):
                    yield event
                self._usage = self._usage + RequestUsage(output_tokens=1)
                if self.fail_after_first_chunk:
                    raise ConnectionError('the stream broke')

    @property
    def model_name(self) -> str:
        return self.segment.model_name or 'pausing'


class PausingModel(Model):
    """Answers each request (streamed or not) with the next scripted segment; an exception in the script is raised."""

    def __init__(self, *script: ModelResponse | Exception, delay: float | None = None) -> None:
        self.script = list(script)
        self.delay = delay
        self.sent: list[list[ModelMessage]] = []
        self.cancelled: list[ModelResponse] = []
        self.slept: list[float] = []

    def _next(self, messages: list[ModelMessage]) -> ModelResponse | Exception:
        self.sent.append(list(messages))
        return self.script.pop(0)

    async def request(
        self, messages: list[ModelMessage], model_settings: ModelSettings | None, params: ModelRequestParameters
    ) -> ModelResponse:
        found = self._next(messages)
        if isinstance(found, Exception):
            raise found
        return found

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        params: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        found = self._next(messages)
        if isinstance(found, ValueError):  # a stream that breaks after its first chunk
            yield _SegmentStream(params, segment=piece('x y', rid='broken'), fail_after_first_chunk=True)
            return
        if isinstance(found, Exception):
            raise found
        yield _SegmentStream(params, segment=found)

    def continuation_delay(self, response: ModelResponse) -> float | None:
        return (response.provider_details or {}).get('delay', self.delay)

    async def cancel_suspended_response(self, response: ModelResponse) -> None:
        self.cancelled.append(response)

    @property
    def model_name(self) -> str:
        return 'pausing'

    @property
    def system(self) -> str:
        return 'test'


def texts(response: ModelMessage) -> list[str]:
    assert isinstance(response, ModelResponse)
    return [part.content for part in response.parts if isinstance(part, TextPart)]


async def test_a_suspended_turn_is_continued_and_its_new_segments_added() -> None:
    model = PausingModel(
        piece('Hello', rid='a', state='suspended', tokens=2, delay=5.0, job='one'), piece(' world', rid='b', tokens=3)
    )
    slept: list[float] = []

    async def sleep(delay: float) -> None:
        slept.append(delay)

    with Agent.using_sleep(sleep):
        result = await Agent(model).run('hi')
    assert result.output == 'Hello world'
    last = result.all_messages()[-1]
    assert texts(last) == ['Hello', ' world']
    assert isinstance(last, ModelResponse)
    assert (last.state, last.provider_response_id, last.usage) == (
        'complete',
        'b',
        RequestUsage(input_tokens=5, output_tokens=5),
    )
    assert last.provider_details == {'delay': 5.0, 'job': 'one'}  # the earlier segment's keys are kept
    assert len(result.all_messages()) == 2
    assert result.usage.requests == 1
    assert slept == [5.0]
    # The continuation echoes the suspended response after the same messages.
    assert model.sent[1][:-1] == model.sent[0]
    echoed = model.sent[1][-1]
    assert isinstance(echoed, ModelResponse)
    assert (texts(echoed), echoed.state, echoed.provider_response_id) == (['Hello'], 'suspended', 'a')


async def test_a_job_polled_under_the_same_id_replaces_the_turn_so_far() -> None:
    model = PausingModel(
        piece('', rid='job', state='suspended', tokens=1),
        piece('half', rid='job', state='suspended', tokens=2),
        piece('all of it', rid='job', tokens=4),
        delay=0.0001,  # waits with anyio's sleep (no `using_sleep`)
    )
    result = await Agent(model).run('hi')
    last = result.all_messages()[-1]
    assert texts(last) == ['all of it']
    assert isinstance(last, ModelResponse)
    assert last.usage == RequestUsage(input_tokens=4, output_tokens=4)


async def test_a_segment_from_another_model_replaces_the_parts_and_adds_the_usage() -> None:
    model = PausingModel(piece('draft', rid='a', state='suspended', tokens=2), piece('final', rid='b', model='other'))
    result = await Agent(model).run('hi')
    last = result.all_messages()[-1]
    assert texts(last) == ['final']
    assert isinstance(last, ModelResponse)
    assert last.usage == RequestUsage(input_tokens=3, output_tokens=3)


async def test_a_turn_suspended_too_many_times_is_unexpected_and_its_job_cancelled() -> None:
    model = PausingModel(*(piece(f'{n} ', rid=f'r{n}', state='suspended') for n in range(12)))
    with pytest.raises(
        UnexpectedModelBehavior, match=r"Model response 'r10' was suspended more than the maximum of 10"
    ):
        await Agent(model).run('hi')
    assert [response.provider_response_id for response in model.cancelled] == ['r10']


async def test_a_job_still_running_after_the_last_poll_is_unexpected(monkeypatch: pytest.MonkeyPatch) -> None:
    from edgewise.agent._loop import continuation

    monkeypatch.setattr(continuation, 'MAX_BACKGROUND_POLLS', 2)
    model = PausingModel(*(piece('', rid='job', state='suspended') for _ in range(4)))
    with pytest.raises(UnexpectedModelBehavior, match="job 'job' remained suspended after polling the maximum of 2"):
        await Agent(model).run('hi')
    assert len(model.cancelled) == 1


async def test_a_failed_continuation_cancels_the_job_and_raises() -> None:
    model = PausingModel(piece('part', rid='a', state='suspended'), RuntimeError('segment failed'))
    with pytest.raises(RuntimeError, match='segment failed'):
        await Agent(model).run('hi')
    assert [response.provider_response_id for response in model.cancelled] == ['a']


async def test_a_token_limit_passed_in_the_middle_of_a_turn_cancels_its_job() -> None:
    model = PausingModel(piece('a', rid='a', state='suspended', tokens=3), piece('b', rid='b', state='suspended'))
    with pytest.raises(UsageLimitExceeded, match='output_tokens_limit of 3'):
        await Agent(model).run('hi', usage_limits=UsageLimits(output_tokens_limit=3))
    assert [response.provider_response_id for response in model.cancelled] == ['b']
    first = PausingModel(piece('a', rid='a', state='suspended', tokens=5))
    with pytest.raises(UsageLimitExceeded, match='output_tokens_limit of 3'):
        await Agent(first).run('hi', usage_limits=UsageLimits(output_tokens_limit=3))
    assert [response.provider_response_id for response in first.cancelled] == ['a']


class _RetryOnError(AbstractCapability[Any]):
    async def on_model_request_error(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, error: Exception
    ) -> ModelResponse:
        raise ModelRetry('try again') from error


async def test_a_hook_retrying_a_failed_continuation_keeps_the_turn_so_far() -> None:
    model = PausingModel(
        piece('part one', rid='a', state='suspended'), RuntimeError('segment failed'), piece('done', rid='c')
    )
    result = await Agent(model, capabilities=[_RetryOnError()]).run('go')
    assert result.output == 'done'
    kept = result.all_messages()[1]
    assert isinstance(kept, ModelResponse)
    assert (texts(kept), kept.state) == (['part one'], 'suspended')
    assert result.usage.requests == 2
    assert [response.provider_response_id for response in model.cancelled] == ['a']


async def test_a_streamed_turn_is_continued_as_one_stream() -> None:
    model = PausingModel(piece('Hello there', rid='a', state='suspended', delay=2.5), piece('big world', rid='b'))
    slept: list[float] = []

    async def sleep(delay: float) -> None:
        slept.append(delay)

    events: list[Any] = []
    with Agent.using_sleep(sleep):
        async with Agent(model).iter('hi') as run:
            async for node in run:
                if Agent.is_model_request_node(node):
                    async with node.stream(run.ctx) as stream:
                        events.extend([event async for event in stream])
                        assert stream.usage.output_tokens == 4
    assert slept == [2.5]
    assert run.result is not None
    assert run.result.output == 'Hello there big world '
    starts = [
        (event.index, texts(ModelResponse([event.part]))) for event in events if isinstance(event, PartStartEvent)
    ]
    assert starts == [(0, ['Hello ']), (1, ['big '])]  # the second segment's part comes after the first's
    assert [event.index for event in events if isinstance(event, PartDeltaEvent)] == [0, 1]
    assert sum(event.event_kind == 'final_result' for event in events) == 1
    last = run.result.all_messages()[-1]
    assert isinstance(last, ModelResponse)
    assert (last.state, last.provider_response_id, last.usage.output_tokens) == ('complete', 'b', 4)
    assert run.result.usage.requests == 1


class _Passing(AbstractCapability[Any]):
    async def wrap_model_request(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, handler: Any
    ) -> Any:
        return await handler(request_context)


async def test_a_streamed_turn_through_a_wrap_model_request_hook_is_continued() -> None:
    model = PausingModel(piece('one', rid='a', state='suspended'), piece('two', rid='a'))
    async with Agent(model, capabilities=[_Passing()]).run_stream('hi') as result:
        assert await result.get_output() == 'two '  # the same job polled again: its whole turn


async def test_a_streamed_continuation_that_breaks_cancels_the_job() -> None:
    model = PausingModel(piece('part', rid='a', state='suspended'), ValueError())
    with pytest.raises(ConnectionError, match='the stream broke'):
        async with Agent(model).run_stream('hi') as result:
            await result.get_output()
    assert [response.provider_response_id for response in model.cancelled] == ['a']


async def test_a_streamed_continuation_that_cannot_open_cancels_the_job() -> None:
    model = PausingModel(piece('part', rid='a', state='suspended'), RuntimeError('no stream'))
    with pytest.raises(RuntimeError, match='no stream'):
        async with Agent(model).run_stream('hi') as result:
            await result.get_output()
    assert [response.provider_response_id for response in model.cancelled] == ['a']


async def test_a_streamed_turn_over_its_token_limit_cancels_the_job() -> None:
    model = PausingModel(piece('a b', rid='a', state='suspended'), piece('c d e', rid='b'))
    with pytest.raises(UsageLimitExceeded, match='total_tokens_limit of 4'):
        async with Agent(model).run_stream('hi', usage_limits=UsageLimits(total_tokens_limit=4)) as result:
            await result.get_output()
    assert [response.provider_response_id for response in model.cancelled] == ['a']


async def test_cancelling_a_stream_in_a_continued_turn_cancels_the_job() -> None:
    model = PausingModel(piece('one', rid='a', state='suspended'), piece('two three', rid='b'))
    async with Agent(model).iter('hi') as run:
        async for node in run:
            if Agent.is_model_request_node(node):
                async with node.stream(run.ctx) as stream:
                    async for event in stream.raw_response:
                        if isinstance(event, PartStartEvent) and event.index == 1:
                            await stream.raw_response.cancel()
                    response = stream.raw_response.get()
                break
    assert (texts(response), response.state) == (['one ', 'two '], 'interrupted')
    assert (response.model_name, response.provider_name, response.provider_url) == ('pausing', None, None)
    assert [response.provider_response_id for response in model.cancelled] == ['a']


def _suspended_history() -> list[ModelMessage]:
    return [ModelRequest([UserPromptPart('hi')], instructions='Be brief.'), piece('Hel', rid='a', state='suspended')]


async def test_a_new_prompt_on_a_history_ending_in_a_suspended_response_is_refused() -> None:
    with pytest.raises(
        UserError, match='Cannot provide a new user prompt when the message history ends in a suspended'
    ):
        await Agent(PausingModel()).run('more', message_history=_suspended_history())


async def test_a_run_without_a_prompt_resumes_the_suspended_turn_the_history_ends_with() -> None:
    model = PausingModel(piece('lo', rid='b', delay=1.0))
    slept: list[float] = []

    async def sleep(delay: float) -> None:
        slept.append(delay)

    with Agent.using_sleep(sleep):
        result = await Agent(model, instructions='Other instructions.').run(message_history=_suspended_history())
    assert result.output == 'Hello'
    # The turn goes on from the history as it was (the request keeps its own instructions), the suspended response
    # echoed; the whole turn takes its place in the history.
    (sent,) = model.sent
    first = sent[0]
    assert isinstance(first, ModelRequest)
    assert first.instructions == 'Be brief.'
    assert [texts(message) for message in sent[1:]] == [['Hel']]
    messages = result.all_messages()
    assert len(messages) == 2
    assert (texts(messages[1]), result.usage.requests) == (['Hel', 'lo'], 1)
    assert result.new_messages() == [messages[1]]
    assert slept == []  # no delay: the model has none for this response


async def test_a_streamed_run_resumes_the_suspended_turn_as_one_stream() -> None:
    model = PausingModel(piece('lo there', rid='b'))
    events: list[Any] = []
    async with Agent(model).iter(message_history=_suspended_history()) as run:
        async for node in run:
            if Agent.is_model_request_node(node):
                async with node.stream(run.ctx) as stream:
                    raw = stream.raw_response
                    assert (raw.model_name, raw.provider_name, raw.provider_url) == ('pausing', None, None)
                    assert raw.timestamp is not None
                    events.extend([event async for event in stream])
    assert run.result is not None
    assert run.result.output == 'Hello there '
    starts = [event.index for event in events if isinstance(event, PartStartEvent)]
    assert starts == [1]  # after the part the earlier run received
    assert texts(run.result.all_messages()[-1]) == ['Hel', 'lo there ']


async def test_a_resumed_turn_that_fails_cancels_its_job() -> None:
    model = PausingModel(RuntimeError('gone'))
    with pytest.raises(RuntimeError, match='gone'):
        async with Agent(model).run_stream(message_history=_suspended_history()) as result:
            await result.get_output()
    assert [response.provider_response_id for response in model.cancelled] == ['a']


async def test_a_wrapper_model_hands_continuations_to_the_wrapped_model() -> None:
    inner = PausingModel(delay=1.5)
    wrapper = WrapperModel(inner)
    suspended = piece('part', rid='a', state='suspended')
    assert wrapper.continuation_delay(suspended) == 1.5
    await wrapper.cancel_suspended_response(suspended)
    assert inner.cancelled == [suspended]


async def test_a_model_continues_nothing_and_cancels_nothing_by_default() -> None:
    class Plain(PausingModel):
        continuation_delay = Model.continuation_delay
        cancel_suspended_response = Model.cancel_suspended_response

    model = Plain()
    assert model.continuation_delay(piece('x', rid='a', state='suspended', delay=3.0)) is None
    await model.cancel_suspended_response(piece('x', rid='a'))
    assert model.cancelled == []


async def test_a_failing_cancellation_does_not_hide_the_error() -> None:
    class Failing(PausingModel):
        async def cancel_suspended_response(self, response: ModelResponse) -> None:
            raise OSError('cannot reach the provider')

    with pytest.raises(RuntimeError, match='segment failed'):
        await Agent(Failing(piece('a', rid='a', state='suspended'), RuntimeError('segment failed'))).run('hi')


async def test_a_stream_reports_the_suspended_state_its_model_sets() -> None:
    stream = _SegmentStream(ModelRequestParameters(), segment=piece('a b', rid='a', state='suspended'))
    assert [event.event_kind async for event in stream] == ['part_start', 'final_result', 'part_delta', 'part_end']
    assert stream.get().state == 'suspended'


async def test_the_sleep_of_using_sleep_is_reset_after_the_block() -> None:
    calls: list[float] = []

    async def sleep(delay: float) -> None:
        calls.append(delay)

    with Agent.using_sleep(sleep):
        pass
    model = PausingModel(piece('a', rid='a', state='suspended', delay=0.0001), piece('b', rid='b'))
    with anyio.fail_after(5):
        await Agent(model).run('hi')
    assert calls == []


async def test_a_turn_whose_last_segment_passes_the_token_limit_fails_without_a_cancellation() -> None:
    model = PausingModel(piece('a', rid='a', state='suspended'), piece('b', rid='b', tokens=5))
    with pytest.raises(UsageLimitExceeded, match='output_tokens_limit of 3'):
        await Agent(model).run('hi', usage_limits=UsageLimits(output_tokens_limit=3))
    assert model.cancelled == []


async def test_a_continued_turn_through_the_request_hooks_keeps_metadata_of_every_segment() -> None:
    first = piece('a', rid='a', state='suspended')
    first.metadata = {'pin': 'inner', 'kept': 1}
    last = piece('b', rid='b')
    last.metadata = {'pin': 'outer'}
    result = await Agent(PausingModel(first, last), capabilities=[_Passing()]).run('hi')
    response = result.all_messages()[-1]
    assert isinstance(response, ModelResponse)
    assert (texts(response), response.metadata) == (['a', 'b'], {'pin': 'outer', 'kept': 1})


async def test_a_stream_of_one_segment_is_the_model_stream_as_it_is() -> None:
    model = PausingModel(piece('just this', rid='a'))
    async with Agent(model).iter('hi') as run:
        async for node in run:
            if Agent.is_model_request_node(node):
                async with node.stream(run.ctx) as stream:
                    raw = stream.raw_response
                    assert (raw.model_name, raw.provider_name, raw.provider_url) == ('pausing', None, None)
                    assert raw.timestamp is not None
                    assert [event.event_kind async for event in stream][:2] == ['part_start', 'final_result']
                    await raw.cancel()  # once the stream is done: nothing to stop
                    assert raw.get().state == 'interrupted'
    assert model.cancelled == []


async def test_leaving_a_stream_in_a_continued_turn_cancels_the_job() -> None:
    model = PausingModel(piece('one', rid='a', state='suspended'), piece('two three four', rid='b'))
    async with Agent(model).run_stream('hi') as result:
        async for text in result.stream_text(delta=True, debounce_by=None):
            if 'two' in text:
                break
    assert [response.provider_response_id for response in model.cancelled] == ['a']


async def test_a_first_segment_that_breaks_has_no_job_to_cancel() -> None:
    model = PausingModel(ValueError())
    with pytest.raises(ConnectionError, match='the stream broke'):
        async with Agent(model).run_stream('hi') as result:
            await result.get_output()
    assert model.cancelled == []


async def test_a_stored_run_stopped_before_resuming_a_suspended_turn_resumes_it(tmp_path: Path) -> None:
    from edgewise.graph.persistence.sqlite import SqliteStatePersistence

    agent = Agent(PausingModel())
    async with (
        SqliteStatePersistence(tmp_path / 'runs.db', 'r1') as persistence,
        agent.iter(message_history=_suspended_history(), persistence=persistence) as run,
    ):
        async for node in run:
            if isinstance(node, ModelRequestNode):  # stopped before the request continuing the turn
                break
    async with SqliteStatePersistence(tmp_path / 'runs.db', 'r1') as persistence:
        result = await Agent(PausingModel(piece('lo', rid='b'))).resume(persistence)
    assert result.output == 'Hello'
    assert [texts(message) for message in result.all_messages() if isinstance(message, ModelResponse)] == [
        ['Hel', 'lo']
    ]
    assert len(result.all_messages()) == 2


async def test_a_fallback_model_hands_continuations_to_the_model_that_answered() -> None:
    class Named(PausingModel):
        def __init__(self, name: str, delay: float | None) -> None:
            super().__init__(delay=delay)
            self.name = name

        @property
        def model_name(self) -> str:
            return self.name

        async def cancel_suspended_response(self, response: ModelResponse) -> None:
            if self.name == 'broken':
                raise OSError('cannot reach the provider')
            await super().cancel_suspended_response(response)

    first, second, broken = Named('first', None), Named('second', 3.0), Named('broken', None)
    fallback = FallbackModel(first, second, broken)
    # The pin a `FallbackModel` puts on a suspended response, not the response's model name, says who gave it.
    from_second = piece('x', rid='a', state='suspended', model='first')
    from_second.metadata = {'__pydantic_ai__': {'fallback_model_id': 'test:second'}}
    assert fallback.continuation_delay(from_second) == 3.0
    await fallback.cancel_suspended_response(from_second)
    assert (first.cancelled, second.cancelled) == ([], [from_second])
    unknown = piece('x', rid='b', state='suspended', model='second')
    unknown.metadata = {'__pydantic_ai__': {'fallback_model_id': 'test:elsewhere'}}
    assert fallback.continuation_delay(unknown) == 3.0  # the first model that has a wait
    assert FallbackModel(first, broken).continuation_delay(unknown) is None
    await fallback.cancel_suspended_response(unknown)  # every model is asked; one failing does not stop the others
    assert (first.cancelled, second.cancelled) == ([unknown], [from_second, unknown])
