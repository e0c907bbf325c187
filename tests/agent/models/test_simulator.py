"""The four provider models over real sockets against the aimock protocol simulator: text and tool calls,
plain and streamed, single requests and whole agent runs."""

from __future__ import annotations

import pytest

from edgewise.agent import Agent
from edgewise.agent.messages import (
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ToolCallPart,
    ToolReturnPart,
)

from ..._aimock import Aimock
from ._simulated import EACH_WIRE, KEY, LONG_TEXT, PARAMS, Wire, ask, respond, text_reply

pytestmark = pytest.mark.anyio


def _tool_call_fixture(marker: str) -> dict[str, object]:
    return {
        'match': {'userMessage': marker, 'hasToolResult': False},
        'response': {'toolCalls': [{'name': 'get_weather', 'arguments': {'city': 'Paris'}}]},
    }


@EACH_WIRE
async def test_plain_text(aimock: Aimock, wire: Wire) -> None:
    marker = aimock.marker()
    aimock.add(text_reply(marker, 'Bonjour from the simulator.'))
    async with wire.model(aimock.url) as model:
        response = await model.request(ask(marker), None, PARAMS)
    assert [type(p) for p in response.parts] == [TextPart]
    assert response.text == 'Bonjour from the simulator.'
    assert response.finish_reason == 'stop'
    [sent] = aimock.requests_for(marker)
    assert wire.path in sent['path']
    assert KEY not in repr(response)


@EACH_WIRE
async def test_streamed_text_arrives_in_several_deltas(aimock: Aimock, wire: Wire) -> None:
    marker = aimock.marker()
    aimock.add(text_reply(marker, LONG_TEXT))
    async with wire.model(aimock.url) as model:
        async with model.request_stream(ask(marker), None, PARAMS) as stream:
            events = [event async for event in stream]
        response = stream.get()
    pieces = [e.part.content for e in events if isinstance(e, PartStartEvent) and isinstance(e.part, TextPart)] + [
        e.delta.content_delta for e in events if isinstance(e, PartDeltaEvent) and isinstance(e.delta, TextPartDelta)
    ]
    assert ''.join(pieces) == LONG_TEXT
    assert len(pieces) > 2  # one event per chunk the simulator sent
    assert response.text == LONG_TEXT
    assert response.finish_reason == 'stop'


@EACH_WIRE
@pytest.mark.parametrize('streamed', [False, True], ids=['plain', 'streamed'])
async def test_tool_call(aimock: Aimock, wire: Wire, streamed: bool) -> None:
    marker = aimock.marker()
    aimock.add(_tool_call_fixture(marker))
    async with wire.model(aimock.url) as model:
        response = await respond(model, ask(marker), streamed=streamed)
    [call] = response.parts
    assert isinstance(call, ToolCallPart)
    assert call.tool_name == 'get_weather'
    assert call.args_as_dict() == {'city': 'Paris'}
    assert call.tool_call_id  # made up where the API gives none (Gemini)
    [sent] = aimock.requests_for(marker)
    assert 'get_weather' in repr(sent['body'])


@EACH_WIRE
@pytest.mark.parametrize('streamed', [False, True], ids=['run', 'run_stream'])
async def test_agent_run_calls_the_tool_and_answers(aimock: Aimock, wire: Wire, streamed: bool) -> None:
    marker = aimock.marker()
    aimock.add(
        _tool_call_fixture(marker),
        {'match': {'userMessage': marker, 'hasToolResult': True}, 'response': {'content': 'Paris: 21 degrees.'}},
    )
    async with wire.model(aimock.url) as model:
        agent = Agent(model, instructions='Answer about the weather.')

        @agent.tool_plain
        def get_weather(city: str) -> str:
            """The weather in a city."""
            return f'{city}: 21 degrees'

        prompt = f'{marker}: the weather in Paris?'
        if streamed:
            async with agent.run_stream(prompt) as run:
                output = await run.get_output()
            messages = run.all_messages()
        else:
            result = await agent.run(prompt)
            output = result.output
            messages = result.all_messages()
    assert output == 'Paris: 21 degrees.'
    returns = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
    assert [(r.tool_name, r.content) for r in returns] == [('get_weather', 'Paris: 21 degrees')]
    first, second = aimock.requests_for(marker)
    assert 'Paris: 21 degrees' not in repr(first['body'])
    assert 'Paris: 21 degrees' in repr(second['body'])  # the tool's return went back to the model
