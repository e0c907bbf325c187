"""`models.wrapper`: `WrapperModel` hands requests to another model; `CompletedStreamedResponse` is a stream that
arrives whole. And `models.test.TestStreamedResponse`, built as pydantic-ai's tests build it."""

from __future__ import annotations

import pytest

from edgewise.agent import Agent
from edgewise.agent.messages import (
    ModelRequest,
    ModelResponse,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    UserPromptPart,
)
from edgewise.agent.models import CompletedStreamedResponse, ModelRequestParameters
from edgewise.agent.models.test import TestModel, TestStreamedResponse
from edgewise.agent.models.wrapper import WrapperModel
from edgewise.agent.usage import RequestUsage

pytestmark = pytest.mark.anyio


async def test_a_wrapper_model_answers_as_the_wrapped_model() -> None:
    inner = TestModel(custom_output_text='inner text')
    model = WrapperModel(inner)
    assert (model.model_name, model.system, model.settings) == (inner.model_name, inner.system, inner.settings)
    assert (await Agent(model).run('go')).output == 'inner text'
    async with Agent(model).run_stream('go') as stream:
        assert await stream.get_output() == 'inner text'


async def test_a_completed_streamed_response_gives_its_response_and_no_events() -> None:
    response = ModelResponse(
        parts=[TextPart('done')], usage=RequestUsage(output_tokens=3), model_name='m', finish_reason='stop'
    )
    stream = CompletedStreamedResponse(response, model_request_parameters=ModelRequestParameters())
    assert [event async for event in stream] == []
    assert stream.get() is response
    assert (stream.usage, stream.model_name, stream.timestamp) == (response.usage, 'm', response.timestamp)
    assert stream.finish_reason == 'stop'


async def test_test_streamed_response_streams_its_response_word_by_word() -> None:
    response = ModelResponse(parts=[TextPart('two words')], model_name='test')
    stream = TestStreamedResponse(
        model_request_parameters=ModelRequestParameters(),
        _model_name='test',
        _structured_response=response,
        _messages=[],
        _provider_name='test',
    )
    events = [event async for event in stream]
    assert isinstance(events[0], PartStartEvent)
    assert events[0].part == TextPart('')  # a text part starts empty, as in pydantic-ai
    deltas = [e.delta for e in events if isinstance(e, PartDeltaEvent)]
    assert deltas == [TextPartDelta('two '), TextPartDelta('words')]
    assert stream.get().parts == [TextPart('two words')]
    assert (stream.model_name, stream.provider_name) == ('test', 'test')
    assert stream.usage == RequestUsage(input_tokens=50, output_tokens=2)  # no messages; one token per word


async def test_test_streamed_response_usage_starts_from_the_estimate_of_its_messages() -> None:
    history = [ModelRequest([UserPromptPart('hello there')])]
    response = ModelResponse(parts=[TextPart('hi')], model_name='test')
    stream = TestStreamedResponse(ModelRequestParameters(), 'test', response, history)
    assert stream.usage == RequestUsage(input_tokens=52)
    [_ async for _ in stream]
    assert stream.usage == RequestUsage(input_tokens=52, output_tokens=1)


async def test_a_streamed_responses_usage_is_a_property_and_calling_it_is_deprecated() -> None:
    response = ModelResponse(parts=[TextPart('done')], usage=RequestUsage(output_tokens=3), model_name='m')
    stream = CompletedStreamedResponse(response, model_request_parameters=ModelRequestParameters())
    assert stream.usage == RequestUsage(output_tokens=3)
    assert stream.usage != 'not a usage'
    assert repr(stream.usage) == repr(RequestUsage(output_tokens=3))
    with pytest.warns(DeprecationWarning, match='`StreamedResponse.usage` is a property since pydantic-ai 2.x'):
        called = stream.usage()  # type: ignore[operator]  # the 1.x spelling (pydantic-ai 2.x made it a property)
    assert called == RequestUsage(output_tokens=3)


def test_a_models_id_is_its_system_and_name_and_a_wrapper_gives_the_wrapped_models_id() -> None:
    from edgewise.agent.models.fallback import FallbackModel
    from edgewise.agent.models.function import FunctionModel

    def answer(messages: object, info: object) -> ModelResponse:
        raise NotImplementedError  # pragma: no cover

    fallback = FallbackModel(TestModel(), FunctionModel(answer))

    assert (TestModel().model_id, fallback.model_id, WrapperModel(fallback).model_id) == (
        'test:test',
        'fallback:test:test,function:function:answer:',
        'fallback:test:test,function:function:answer:',
    )
