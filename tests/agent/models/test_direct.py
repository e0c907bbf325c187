"""`edgewise.agent.direct`: a model asked without an agent, async and sync, whole and streamed."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from edgewise.agent import Agent, ModelRequest, ModelResponse, TextPart, ToolCallPart
from edgewise.agent.direct import (
    StreamedResponseSync,
    model_request,
    model_request_stream,
    model_request_stream_sync,
    model_request_sync,
)
from edgewise.agent.exceptions import UserError
from edgewise.agent.messages import PartDeltaEvent, PartStartEvent, TextPartDelta
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.openai import OpenAIChatModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.providers.openai import OpenAIProvider
from edgewise.agent.tools import ToolDefinition

from ._chat import completion
from .conftest import LocalServer, Reply

PROMPT = [ModelRequest.user_text_prompt('What is the capital of France?', instructions='Be brief.')]
WEATHER = ToolDefinition(
    name='weather', parameters_json_schema={'type': 'object', 'properties': {'city': {'type': 'string'}}}
)


def _answer(messages: list[Any], info: AgentInfo) -> ModelResponse:
    # Echo what the model was given: the last prompt, its instructions and the tools offered.
    prompt = messages[-1].parts[-1].content
    tools = [t.name for t in info.function_tools]
    return ModelResponse(parts=[TextPart(f'{prompt} | {messages[-1].instructions} | {tools}')])


async def _stream_answer(messages: list[Any], info: AgentInfo) -> Any:
    for chunk in ('Par', 'is'):
        yield chunk


@pytest.mark.anyio
async def test_a_request_sends_the_messages_settings_and_tools_as_given() -> None:
    seen: list[Any] = []

    def answer(messages: list[Any], info: AgentInfo) -> ModelResponse:
        seen.append(info.model_settings)
        return _answer(messages, info)

    response = await model_request(
        FunctionModel(answer),
        PROMPT,
        model_settings={'temperature': 0.1},
        model_request_parameters=ModelRequestParameters(function_tools=[WEATHER]),
    )
    assert response.text == "What is the capital of France? | Be brief. | ['weather']"
    assert seen == [{'temperature': 0.1}]
    # No tools are run: a tool call is simply the response.
    called = await model_request(
        TestModel(call_tools=['weather']),
        PROMPT,
        model_request_parameters=ModelRequestParameters(function_tools=[WEATHER]),
    )
    assert isinstance(called.parts[0], ToolCallPart)
    assert called.parts[0].tool_name == 'weather'


@pytest.mark.anyio
async def test_a_model_may_be_named() -> None:
    response = await model_request('test', PROMPT)
    assert response.text == 'success (no tool calls)'
    with pytest.raises(UserError, match='Unknown model'):
        await model_request('gpt-nothing', PROMPT)


def test_the_sync_request_runs_its_own_loop() -> None:
    response = model_request_sync(FunctionModel(_answer), PROMPT)
    assert response.text == 'What is the capital of France? | Be brief. | []'


@pytest.mark.anyio
async def test_the_sync_forms_refuse_a_running_event_loop() -> None:
    with pytest.raises(RuntimeError):
        model_request_sync('test', PROMPT)
    with pytest.raises(RuntimeError, match='model_request_stream'), model_request_stream_sync('test', PROMPT):
        pass  # pragma: no cover - never entered


@pytest.mark.anyio
async def test_a_streamed_request_gives_events_then_the_response() -> None:
    async with model_request_stream(FunctionModel(stream_function=_stream_answer), PROMPT) as stream:
        events = [event async for event in stream]
    assert events[0] == PartStartEvent(index=0, part=TextPart('Par'))
    assert [e.delta for e in events if isinstance(e, PartDeltaEvent)] == [TextPartDelta('is')]
    assert stream.get().text == 'Paris'


def test_a_sync_stream_is_read_in_a_with_block() -> None:
    stream = model_request_stream_sync(FunctionModel(stream_function=_stream_answer), PROMPT)
    assert isinstance(stream, StreamedResponseSync)
    assert repr(stream) == 'StreamedResponseSync(context_entered=False)'
    with pytest.raises(RuntimeError, match='must be used as a context manager'):
        iter(stream)
    with stream:
        events = list(stream)
        assert stream.response.text == 'Paris'
        assert stream.model_name == 'function::_stream_answer'
        assert stream.usage.output_tokens > 0
        assert stream.timestamp is not None
        assert 'FunctionStreamedResponse' in repr(stream)
    assert [e.event_kind for e in events] == ['part_start', 'final_result', 'part_delta', 'part_end']
    assert str(stream) == repr(stream)


def test_leaving_a_sync_stream_early_closes_it(local_server: LocalServer) -> None:
    chunks = [
        b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":'
        + b'{"content":"Par"},"finish_reason":null}]}\n\n',
    ]
    local_server.script(Reply(200, headers={'content-type': 'text/event-stream'}, chunks=chunks, keep_open=True))
    # A client of the test's own: the request's connection is closed by leaving the block, and the (then empty)
    # client needs no closing from a loop that is gone by then.
    client = httpx.AsyncClient()
    model = OpenAIChatModel('m', provider=OpenAIProvider(base_url=local_server.url, http_client=client))
    with model_request_stream_sync(model, PROMPT) as stream:
        first = next(iter(stream))
        assert first == PartStartEvent(index=0, part=TextPart('Par'))
    local_server.released.wait(10)
    assert local_server.disconnects == [True]


@pytest.mark.anyio
async def test_a_request_through_a_real_server_and_its_span(local_server: LocalServer, capfire: Any) -> None:
    local_server.script(Reply(200, completion('Paris')), Reply(200, completion('Paris')))
    provider = OpenAIProvider(base_url=local_server.url, api_key='sk-direct-secret')
    model = OpenAIChatModel('gpt-4o', provider=provider)
    async with provider:  # closes the client the provider makes
        assert (await model_request(model, PROMPT)).text == 'Paris'
        assert (await model_request(model, PROMPT, instrument=False)).text == 'Paris'
    body = local_server.received[0]['body']
    assert body['messages'][0] == {'role': 'system', 'content': 'Be brief.'}
    names = [span['name'] for span in capfire.exporter.exported_spans_as_dict()]
    assert names.count('chat {model_name}') == 1  # the second request asked for no span
    assert 'sk-direct-secret' not in str(capfire.exporter.exported_spans_as_dict())


@pytest.mark.anyio
async def test_instrument_all_decides_by_default(capfire: Any) -> None:
    Agent.instrument_all(False)
    try:
        await model_request('test', PROMPT)
        assert [s for s in capfire.exporter.exported_spans_as_dict() if s['name'] == 'chat {model_name}'] == []
        await model_request('test', PROMPT, instrument=True)
        assert len([s for s in capfire.exporter.exported_spans_as_dict() if s['name'] == 'chat {model_name}']) == 1
    finally:
        Agent.instrument_all(True)
