"""`InstrumentedModel` and `instrument_model`: a `chat` span per request made with the model directly, and never a
second one inside a request that has its span already (an agent run's, or an outer instrumented model's); read back
from logfire's test exporter."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from logfire.testing import CaptureLogfire

from edgewise.agent import Agent, ModelHTTPError, RunContext
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models.fallback import FallbackModel
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.instrumented import InstrumentationSettings, InstrumentedModel, instrument_model
from edgewise.agent.models.openai import OpenAIChatModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.models.wrapper import WrapperModel
from edgewise.agent.providers.openai import OpenAIProvider
from edgewise.agent.usage import RunUsage

from .._helpers import scripted

PROMPT: list[ModelMessage] = [ModelRequest.user_text_prompt('What is the capital of France?')]
PARAMS = ModelRequestParameters()


def _spans(capfire: CaptureLogfire) -> list[dict[str, Any]]:
    """The exported spans in the order they started."""
    return sorted(capfire.exporter.exported_spans_as_dict(parse_json_attributes=True), key=lambda s: s['start_time'])


def _chat_spans(capfire: CaptureLogfire) -> list[dict[str, Any]]:
    return [span for span in _spans(capfire) if span['name'] == 'chat {model_name}']


def _answering(text: str, model_name: str = 'answering') -> FunctionModel:
    async def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(text)])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield text

    return FunctionModel(answer, stream_function=stream, model_name=model_name)


def _failing(model_name: str = 'failing') -> FunctionModel:
    async def fail(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise ModelHTTPError(status_code=503, model_name=model_name, body='overloaded')

    return FunctionModel(fail, model_name=model_name)


async def _streaming(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    yield 'Par'
    yield 'is'


class _StreamCut(Exception):
    pass


# --- used directly ---


@pytest.mark.anyio
async def test_a_request_gets_a_chat_span_with_the_messages_sent_and_received(capfire: CaptureLogfire) -> None:
    model = InstrumentedModel(_answering('Paris'))
    response = await model.request(PROMPT, None, PARAMS)
    assert response.text == 'Paris'
    [span] = _spans(capfire)
    attributes = span['attributes']
    assert attributes['logfire.msg'] == 'chat answering'
    assert attributes['model_name'] == 'answering'
    assert 'run_step' not in attributes  # made outside a run
    assert attributes['gen_ai.input.messages'] == [
        {'role': 'user', 'parts': [{'type': 'text', 'content': 'What is the capital of France?'}]}
    ]
    assert attributes['gen_ai.output.messages'] == [
        {'role': 'assistant', 'parts': [{'type': 'text', 'content': 'Paris'}]}
    ]


@pytest.mark.anyio
async def test_the_span_records_no_content_when_the_settings_forbid_it(capfire: CaptureLogfire) -> None:
    model = InstrumentedModel(_answering('Paris'), InstrumentationSettings(include_content=False))
    await model.request(PROMPT, None, PARAMS)
    [span] = _spans(capfire)
    assert span['attributes']['gen_ai.input.messages'] == [{'role': 'user', 'parts': [{'type': 'text'}]}]
    assert 'France' not in str(span)
    assert 'Paris' not in str(span)


@pytest.mark.anyio
async def test_a_streamed_request_gets_a_chat_span_holding_the_streamed_response(capfire: CaptureLogfire) -> None:
    model = InstrumentedModel(FunctionModel(stream_function=_streaming, model_name='streaming'))
    async with model.request_stream(PROMPT, None, PARAMS) as stream:
        assert _spans(capfire) == []  # the span lasts as long as the stream is open
        async for _ in stream:
            pass
    assert stream.get().text == 'Paris'
    [span] = _spans(capfire)
    assert span['attributes']['logfire.msg'] == 'chat streaming'
    [output] = span['attributes']['gen_ai.output.messages']
    assert output['parts'] == [{'type': 'text', 'content': 'Paris'}]


@pytest.mark.anyio
async def test_a_stream_given_a_run_context_puts_its_run_step_on_the_span(capfire: CaptureLogfire) -> None:
    model = InstrumentedModel(FunctionModel(stream_function=_streaming))
    ctx = RunContext(deps=None, model=model, usage=RunUsage(), run_step=3)
    async with model.request_stream(PROMPT, None, PARAMS, ctx) as stream:
        async for _ in stream:
            pass
    [span] = _spans(capfire)
    assert span['attributes']['run_step'] == 3


@pytest.mark.anyio
async def test_a_stream_broken_off_ends_its_span_with_the_error_and_the_part_read(capfire: CaptureLogfire) -> None:
    async def breaking(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield 'Pa'
        raise _StreamCut('connection lost')

    model = InstrumentedModel(FunctionModel(stream_function=breaking))

    async def read() -> None:
        async with model.request_stream(PROMPT, None, PARAMS) as stream:
            async for _ in stream:
                pass

    with pytest.raises(_StreamCut):
        await read()
    [span] = _spans(capfire)
    assert span['attributes']['logfire.level_num'] == 17
    assert [event['attributes']['exception.message'] for event in span['events']] == ['connection lost']
    [output] = span['attributes']['gen_ai.output.messages']
    assert output['parts'] == [{'type': 'text', 'content': 'Pa'}]


@pytest.mark.anyio
async def test_a_failed_request_ends_its_span_with_the_error(capfire: CaptureLogfire) -> None:
    with pytest.raises(ModelHTTPError):
        await InstrumentedModel(_failing()).request(PROMPT, None, PARAMS)
    [span] = _spans(capfire)
    assert span['attributes']['logfire.level_num'] == 17
    assert 'gen_ai.output.messages' not in span['attributes']


@pytest.mark.anyio
async def test_around_a_fallback_the_failed_attempts_are_spans_under_the_chat_span(capfire: CaptureLogfire) -> None:
    model = InstrumentedModel(FallbackModel(_failing(), _answering('Paris')))
    assert (await model.request(PROMPT, None, PARAMS)).text == 'Paris'
    chat, attempt = _spans(capfire)
    assert chat['name'] == 'chat {model_name}'
    assert chat['attributes']['gen_ai.request.model'] == 'answering'  # the model that served the request
    assert attempt['attributes']['logfire.msg'] == 'model request attempt failing'
    assert attempt['parent']['span_id'] == chat['context']['span_id']


@pytest.mark.anyio
async def test_an_instrumented_model_inside_another_adds_no_span(capfire: CaptureLogfire) -> None:
    model = InstrumentedModel(InstrumentedModel(_answering('Paris')))
    await model.request(PROMPT, None, PARAMS)
    async with model.request_stream(PROMPT, None, PARAMS) as stream:
        async for _ in stream:
            pass
    assert len(_spans(capfire)) == 2  # one per request


@pytest.mark.anyio
async def test_no_span_is_made_when_tracing_is_off(capfire: CaptureLogfire, monkeypatch: pytest.MonkeyPatch) -> None:
    from edgewise.agent import _instrument

    monkeypatch.setattr(_instrument, 'TRACING', False)
    model = InstrumentedModel(_answering('Paris'))
    assert (await model.request(PROMPT, None, PARAMS)).text == 'Paris'
    async with model.request_stream(PROMPT, None, PARAMS) as stream:
        async for _ in stream:
            pass
    assert stream.get().text == 'Paris'
    assert _spans(capfire) == []


@pytest.mark.anyio
async def test_entering_it_enters_every_model_of_a_wrapped_fallback() -> None:
    providers = [OpenAIProvider(api_key='sk-one'), OpenAIProvider(api_key='sk-two')]
    fallback = FallbackModel(*(OpenAIChatModel('gpt-4o', provider=p) for p in providers))
    async with InstrumentedModel(fallback):
        clients = [p._own_http_client for p in providers]
        assert all(c is not None and not c.is_closed for c in clients)
    assert all(c is not None and c.is_closed for c in clients)


# --- in an agent run ---


@pytest.mark.anyio
async def test_an_agent_on_an_instrumented_model_makes_one_chat_span_per_request(capfire: CaptureLogfire) -> None:
    agent = Agent(InstrumentedModel(scripted([ToolCallPart('t', {})], [TextPart('ok')])))

    @agent.tool_plain
    async def t() -> int:
        return 1

    assert (await agent.run('go')).output == 'ok'
    assert [s['attributes']['logfire.msg'] for s in _spans(capfire)] == [
        'agent run',
        'chat function:script:',
        'running tool: t',
        'chat function:script:',
    ]
    assert [s['attributes']['run_step'] for s in _chat_spans(capfire)] == [1, 2]


@pytest.mark.anyio
async def test_a_streamed_run_on_an_instrumented_model_makes_one_chat_span(capfire: CaptureLogfire) -> None:
    agent = Agent(InstrumentedModel(FunctionModel(stream_function=_streaming)))
    async with agent.run_stream('go') as result:
        assert await result.get_output() == 'Paris'
    assert len(_chat_spans(capfire)) == 1


@pytest.mark.anyio
async def test_an_agent_is_traced_with_the_models_settings_and_runs_the_wrapped_model(
    capfire: CaptureLogfire,
) -> None:
    inner = scripted([ToolCallPart('t', {})], [TextPart('ok')])
    agent = Agent(InstrumentedModel(inner, InstrumentationSettings(include_content=False, version=6)))
    seen: list[tuple[object, int]] = []

    @agent.tool
    async def t(ctx: RunContext[None]) -> int:
        seen.append((ctx.model, ctx.instrumentation_version))
        return 1

    await agent.run('a secret prompt')
    assert seen == [(inner, 6)]
    chat = _chat_spans(capfire)[-1]['attributes']
    assert [m['role'] for m in chat['gen_ai.input.messages']] == ['user', 'assistant', 'tool']  # format 6
    assert 'secret' not in str(_spans(capfire))


@pytest.mark.anyio
async def test_an_instrumentation_capability_of_the_run_wins_over_the_models_settings(capfire: CaptureLogfire) -> None:
    from edgewise.agent.capabilities import Instrumentation

    model = InstrumentedModel(_answering('ok'), InstrumentationSettings(include_content=False))
    agent = Agent(model, capabilities=[Instrumentation(InstrumentationSettings(include_content=True))])
    await agent.run('an open prompt')
    [chat] = _chat_spans(capfire)
    assert 'an open prompt' in str(chat['attributes']['gen_ai.input.messages'])


@pytest.mark.anyio
async def test_an_instrumented_model_traces_an_agent_that_turned_tracing_off(capfire: CaptureLogfire) -> None:
    agent = Agent(InstrumentedModel(_answering('ok')))
    agent.instrument = False
    await agent.run('go')
    assert [s['attributes']['logfire.msg'] for s in _spans(capfire)] == ['agent run', 'chat answering']


@pytest.mark.anyio
async def test_instrumented_models_inside_a_fallback_add_no_span_to_a_run(capfire: CaptureLogfire) -> None:
    fallback = FallbackModel(InstrumentedModel(_failing()), InstrumentedModel(_answering('ok')))
    await Agent(fallback).run('go')
    assert [s['attributes']['logfire.msg'] for s in _spans(capfire)] == [
        'agent run',
        'chat fallback:failing,answering',
        'model request attempt failing',
    ]


@pytest.mark.anyio
async def test_a_run_given_an_instrumented_model_as_its_run_model_is_traced_once(capfire: CaptureLogfire) -> None:
    agent = Agent()
    agent.instrument = False
    async with agent.iter('go', model=InstrumentedModel(_answering('ok'))) as run:
        async for _ in run:
            pass
    assert len(_chat_spans(capfire)) == 1


# --- instrument_model ---


def test_instrument_model_wraps_a_model_with_default_settings_for_true() -> None:
    model = TestModel()
    instrumented = instrument_model(model, True)
    assert isinstance(instrumented, InstrumentedModel)
    assert isinstance(instrumented, WrapperModel)
    assert instrumented.wrapped is model
    assert instrumented.instrumentation_settings.version == InstrumentationSettings().version


def test_instrument_model_wraps_a_model_with_the_settings_given() -> None:
    settings = InstrumentationSettings(include_content=False)
    instrumented = instrument_model(TestModel(), settings)
    assert isinstance(instrumented, InstrumentedModel)
    assert instrumented.instrumentation_settings is settings


def test_instrument_model_leaves_a_model_for_false_and_an_instrumented_one_as_it_is() -> None:
    model = TestModel()
    assert instrument_model(model, False) is model
    instrumented = InstrumentedModel(model)
    assert instrument_model(instrumented, True) is instrumented
    assert instrument_model(instrumented, InstrumentationSettings(version=6)) is instrumented


def test_an_instrumented_model_takes_a_model_name_and_shows_the_wrapped_model() -> None:
    model = InstrumentedModel('test')
    assert isinstance(model.wrapped, TestModel)
    assert (model.model_name, model.system) == ('test', 'test')
    assert model.instrumentation_settings.include_content is True


@pytest.mark.anyio
async def test_a_direct_request_is_traced_as_an_instrumented_models_with_its_settings(capfire: CaptureLogfire) -> None:
    from edgewise.agent.direct import model_request

    await model_request(_answering('Paris'), PROMPT, instrument=InstrumentationSettings(include_content=False))
    [span] = _spans(capfire)
    assert span['attributes']['gen_ai.output.messages'] == [{'role': 'assistant', 'parts': [{'type': 'text'}]}]
