"""The records of failed attempts at a model request (pydantic-ai 2.68): `ModelRequestAttempt`s on the response that
answered (`ModelResponse.failed_attempts`) or on the `FallbackExceptionGroup` when none did, their usage in the run's,
their ERROR spans under the request's span, and their place in stored histories."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from logfire.testing import CaptureLogfire

from edgewise.agent import Agent, ModelRequestAttempt
from edgewise.agent._warnings import PydanticAIDeprecationWarning
from edgewise.agent.capabilities import ModelFallback
from edgewise.agent.exceptions import FallbackExceptionGroup, ModelServerError
from edgewise.agent.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    UserPromptPart,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models._attempts import AttemptLog, AttemptStart, describe_error
from edgewise.agent.models.fallback import FallbackModel, ResponseRejected
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.openai import OpenAIChatModel
from edgewise.agent.providers.openai import OpenAIProvider
from edgewise.agent.usage import RequestUsage

from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

USAGE = RequestUsage(input_tokens=8, output_tokens=2)


def failing(name: str) -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise ModelServerError(name, 'the server failed')

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        raise ModelServerError(name, 'the server failed')
        yield ''  # pragma: no cover - makes this an async generator

    return FunctionModel(respond, stream_function=stream, model_name=name)


def answering(name: str, *, finish_reason: Any = 'stop') -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(name)], usage=USAGE, finish_reason=finish_reason)

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield name

    return FunctionModel(respond, stream_function=stream, model_name=name)


def _request() -> list[ModelMessage]:
    return [ModelRequest(parts=[UserPromptPart('hi')])]


async def test_fallback_model_records_the_models_it_moved_on_from_on_the_response() -> None:
    model = FallbackModel(failing('a'), failing('b'), answering('c'))
    response = await model.request(_request(), None, ModelRequestParameters())
    assert response.text == 'c'
    attempts = response.failed_attempts or []
    assert [(a.model_name, a.outcome, a.error) for a in attempts] == [
        ('a', 'error', 'ModelServerError: the server failed'),
        ('b', 'error', 'ModelServerError: the server failed'),
    ]
    assert attempts[0].timestamp <= attempts[1].timestamp


async def test_a_rejected_response_is_recorded_with_its_usage() -> None:
    def too_short(response: ModelResponse) -> bool:
        return response.text == 'short'

    model = FallbackModel(answering('short'), answering('long'), fallback_on=too_short)
    response = await model.request(_request(), None, ModelRequestParameters())
    assert response.text == 'long'
    (attempt,) = response.failed_attempts or []
    assert (attempt.model_name, attempt.outcome, attempt.error, attempt.usage) == ('short', 'rejected', None, USAGE)


async def test_every_attempt_is_on_the_group_when_every_model_failed() -> None:
    def always(response: ModelResponse) -> bool:
        return True

    model = FallbackModel(failing('a'), answering('b'), fallback_on=(ModelServerError, always))
    with pytest.raises(FallbackExceptionGroup) as caught:
        await model.request(_request(), None, ModelRequestParameters())
    group = caught.value
    assert [type(e) for e in group.exceptions] == [ModelServerError, ResponseRejected]
    assert [(a.model_name, a.outcome) for a in group.attempts] == [('a', 'error'), ('b', 'rejected')]


async def test_a_nested_fallbacks_attempts_come_first() -> None:
    inner = FallbackModel(failing('a'), failing('b'))
    outer = FallbackModel(inner, answering('c'), fallback_on=(ModelServerError, FallbackExceptionGroup))
    response = await outer.request(_request(), None, ModelRequestParameters())
    assert [a.model_name for a in response.failed_attempts or []] == ['a', 'b', inner.model_name]


async def test_a_streamed_response_carries_the_attempts_before_its_stream_opened() -> None:
    agent = Agent(FallbackModel(failing('a'), answering('b')))
    async with agent.run_stream('hi') as result:
        assert await result.get_output() == 'b'
    response = result.all_messages()[-1]
    assert isinstance(response, ModelResponse)
    assert [(a.model_name, a.outcome) for a in response.failed_attempts or []] == [('a', 'error')]


async def test_a_run_counts_the_tokens_of_responses_a_fallback_model_turned_down() -> None:
    def cut_off(response: ModelResponse) -> bool:
        return response.finish_reason == 'length'

    model = FallbackModel(answering('cut', finish_reason='length'), answering('whole'), fallback_on=cut_off)
    result = await Agent(model).run('hi')
    assert result.output == 'whole'
    assert result.usage.requests == 1  # the step, not the attempts
    assert result.usage.input_tokens == 2 * USAGE.input_tokens


async def test_a_run_that_fails_on_the_group_still_counts_the_turned_down_tokens() -> None:
    def always(response: ModelResponse) -> bool:
        return True

    agent = Agent(FallbackModel(answering('a'), answering('b'), fallback_on=always))
    async with agent.iter('hi') as run:
        with pytest.raises(FallbackExceptionGroup):
            async for _ in run:
                pass
    assert run.usage.input_tokens == 2 * USAGE.input_tokens
    assert run.usage.requests == 0


async def test_the_model_fallback_capability_records_its_attempts_and_the_answering_model() -> None:
    backup = answering('backup')
    result = await Agent(failing('main'), capabilities=[ModelFallback(backup)]).run('hi')
    response = result.all_messages()[-1]
    assert isinstance(response, ModelResponse)
    assert response.model_id == backup.model_id
    assert [(a.model_name, a.outcome) for a in response.failed_attempts or []] == [('main', 'error')]


async def test_the_model_fallback_capability_puts_its_attempts_on_the_group() -> None:
    agent = Agent(failing('main'), capabilities=[ModelFallback(failing('backup'))])
    with pytest.raises(FallbackExceptionGroup) as caught:
        await agent.run('hi')
    assert [a.model_name for a in caught.value.attempts] == ['main', 'backup']


async def test_a_provider_error_status_is_recorded_with_the_provider(local_server: LocalServer) -> None:
    answer = {
        'id': 'chatcmpl-1',
        'object': 'chat.completion',
        'created': 1,
        'model': 'gpt-4o-mini',
        'choices': [{'index': 0, 'message': {'role': 'assistant', 'content': 'from backup'}, 'finish_reason': 'stop'}],
        'usage': {'prompt_tokens': 5, 'completion_tokens': 1, 'total_tokens': 6},
    }
    local_server.script(Reply(503, {'error': {'message': 'overloaded'}}), Reply(200, answer))
    provider = OpenAIProvider(base_url=local_server.url, api_key='sk-secret-key', max_retries=0)
    main, backup = OpenAIChatModel('gpt-4o', provider=provider), OpenAIChatModel('gpt-4o-mini', provider=provider)
    async with provider:
        result = await Agent(FallbackModel(main, backup)).run('hi')
    assert result.output == 'from backup'
    response = result.all_messages()[-1]
    assert isinstance(response, ModelResponse)
    (attempt,) = response.failed_attempts or []
    assert (attempt.model_name, attempt.provider_name, attempt.outcome) == ('gpt-4o', 'openai', 'error')
    assert attempt.error is not None
    assert attempt.error.startswith('ModelOverloadedError: status_code: 503')
    assert 'sk-secret-key' not in repr(response) + (attempt.error or '')


async def test_failed_attempts_and_model_id_round_trip_through_the_type_adapter() -> None:
    started = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    response = ModelResponse(
        parts=[TextPart('ok')],
        model_name='gpt-4o-mini-2024',
        model_id='openai:gpt-4o-mini',
        timestamp=started,
        failed_attempts=[
            ModelRequestAttempt(
                model_name='gpt-4o',
                provider_name='openai',
                outcome='error',
                error='ModelServerError: down',
                timestamp=started,
                duration=timedelta(milliseconds=1500),
            ),
            ModelRequestAttempt(
                model_name='claude',
                outcome='rejected',
                timestamp=started,
                duration=timedelta(seconds=2),
                usage=RequestUsage(input_tokens=3, output_tokens=1),
            ),
        ],
    )
    dumped = json.loads(ModelMessagesTypeAdapter.dump_json([response]))
    assert dumped[0]['model_id'] == 'openai:gpt-4o-mini'
    assert [a['outcome'] for a in dumped[0]['failed_attempts']] == ['error', 'rejected']
    assert dumped[0]['failed_attempts'][0]['duration'] == 'PT1.5S'
    assert ModelMessagesTypeAdapter.validate_json(json.dumps(dumped)) == [response]
    assert ModelMessagesTypeAdapter.validate_python(ModelMessagesTypeAdapter.dump_python([response])) == [response]


def test_a_history_stored_without_the_new_fields_loads_with_none() -> None:
    stored = [{'kind': 'response', 'parts': [{'part_kind': 'text', 'content': 'old'}], 'model_name': 'm'}]
    (response,) = ModelMessagesTypeAdapter.validate_python(stored)
    assert isinstance(response, ModelResponse)
    assert (response.model_id, response.failed_attempts) == (None, None)


def test_an_attempt_shows_only_what_it_has() -> None:
    attempt = ModelRequestAttempt(
        model_name='m', outcome='error', error='E', timestamp=datetime(2026, 1, 1), duration=timedelta(seconds=1)
    )
    assert repr(attempt) == (
        "ModelRequestAttempt(model_name='m', outcome='error', error='E', "
        'timestamp=datetime.datetime(2026, 1, 1, 0, 0), '
        'duration=datetime.timedelta(seconds=1))'
    )
    response = ModelResponse(parts=[], model_id='x', failed_attempts=[attempt], timestamp=datetime(2026, 1, 1))
    assert "model_id='x'" in repr(response)
    assert 'failed_attempts=[ModelRequestAttempt(' in repr(response)


class _Silent(Exception):
    pass


class _Broken(Exception):
    def __str__(self) -> str:
        raise RuntimeError('no message')


def test_an_error_is_described_by_its_type_and_message() -> None:
    assert describe_error(ValueError('bad value')) == 'ValueError: bad value'
    assert describe_error(_Silent()) == '_Silent'
    assert describe_error(_Broken()) == '_Broken'


def test_attempts_are_put_before_those_a_response_or_group_carries() -> None:
    log = AttemptLog(tracing=False)
    model = answering('m')
    earlier = log.record(model, ModelServerError('m', 'down'), AttemptStart())
    nested = ModelRequestAttempt(model_name='n', outcome='error', timestamp=earlier.timestamp, duration=timedelta(0))
    carried = ModelResponse(parts=[TextPart('x')], failed_attempts=[nested])
    assert log.attach(carried).failed_attempts == [earlier, nested]
    group = FallbackExceptionGroup('all failed', [ValueError('x')])
    group.attempts = [nested]
    assert log.put_on(group).attempts == [earlier, nested]
    assert AttemptLog().attach(carried) is carried


def _attempt_spans(capfire: CaptureLogfire) -> list[dict[str, Any]]:
    return [s for s in capfire.exporter.exported_spans_as_dict() if s['name'].startswith('model request attempt')]


async def test_each_failed_attempt_is_an_error_span_under_the_request_span(capfire: CaptureLogfire) -> None:
    def cut_off(response: ModelResponse) -> bool:
        return response.text == 'rejected'

    agent = Agent(
        FallbackModel(failing('a'), answering('rejected'), answering('c'), fallback_on=(ModelServerError, cut_off))
    )
    assert (await agent.run('hi')).output == 'c'
    spans = capfire.exporter.exported_spans_as_dict()
    (chat,) = [s for s in spans if s['name'].startswith('chat ')]
    first, second = _attempt_spans(capfire)
    for index, span in enumerate((first, second)):
        assert span['parent']['span_id'] == chat['context']['span_id']
        assert span['attributes']['logfire.level_num'] == 17  # error
        assert span['attributes']['pydantic_ai.model_request.attempt'] == index
    assert first['attributes']['gen_ai.request.model'] == 'a'
    assert [e['attributes']['exception.type'] for e in first['events']].pop().endswith('ModelServerError')
    assert second['attributes']['gen_ai.usage.input_tokens'] == USAGE.input_tokens
    assert second['attributes']['status_message'] == 'Response rejected by fallback_on'
    assert chat['attributes'].get('logfire.level_num') != 17  # the request itself succeeded


async def test_no_attempt_span_outside_an_instrumented_request(capfire: CaptureLogfire) -> None:
    await FallbackModel(failing('a'), answering('b')).request(_request(), None, ModelRequestParameters())
    with pytest.warns(PydanticAIDeprecationWarning):  # the 1.x spelling of an agent that is not instrumented
        agent = Agent(FallbackModel(failing('a'), answering('b')), instrument=False)
    assert (await agent.run('hi')).output == 'b'
    assert _attempt_spans(capfire) == []


def test_a_completed_stream_and_a_continued_turn_keep_the_attempts() -> None:
    from edgewise.agent.models._completed_response import CompletedStreamedResponse
    from edgewise.agent.models._continuation import merge_responses

    attempt = ModelRequestAttempt(
        model_name='a', outcome='error', timestamp=datetime(2026, 1, 1), duration=timedelta(0)
    )
    later = ModelRequestAttempt(model_name='b', outcome='error', timestamp=datetime(2026, 1, 1), duration=timedelta(0))
    whole = ModelResponse(parts=[TextPart('x')], failed_attempts=[later])
    stream = CompletedStreamedResponse(whole, model_request_parameters=ModelRequestParameters())
    assert stream.get() is whole
    stream.failed_attempts = [attempt]
    assert stream.get().failed_attempts == [attempt, later]
    first = ModelResponse(parts=[TextPart('a')], state='suspended', failed_attempts=[attempt])
    merged = merge_responses(first, ModelResponse(parts=[TextPart('b')]))
    assert merged.failed_attempts == [attempt]


def test_a_groups_usage_is_counted_once() -> None:
    from edgewise.agent.models._attempts import count_group_usage
    from edgewise.agent.usage import RunUsage

    rejected = ModelRequestAttempt(
        model_name='m', outcome='rejected', timestamp=datetime(2026, 1, 1), duration=timedelta(0), usage=USAGE
    )
    group = FallbackExceptionGroup('all failed', [ValueError('x')])
    group.attempts = [rejected]
    usage = RunUsage()
    count_group_usage(usage, group)
    count_group_usage(usage, group)
    assert (usage.input_tokens, usage.requests) == (USAGE.input_tokens, 0)
