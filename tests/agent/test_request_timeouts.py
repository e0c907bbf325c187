"""`request_timeout` and `first_event_timeout` (pydantic-ai 2.68): deadlines over one request to one model.

The models here never answer (they wait forever), so each test ends only by the deadline: nothing is timed. The
deadline over the attempts of a real HTTP request is in `models/test_model_error_taxonomy.py`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest

from edgewise.agent import Agent, ModelRequestTimeout
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart
from edgewise.agent.models.fallback import FallbackModel
from edgewise.agent.models.function import AgentInfo, DeltaToolCalls, FunctionModel
from edgewise.agent.settings import ModelSettings

pytestmark = pytest.mark.anyio


async def _never(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    await anyio.sleep_forever()
    raise AssertionError('unreachable')


async def _silent_stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
    await anyio.sleep_forever()
    yield 'never'


async def _stalling_stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
    yield 'first words'
    await anyio.sleep_forever()


def _hello(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart('hello')])


async def test_a_request_past_its_request_timeout_raises_model_request_timeout() -> None:
    agent = Agent(FunctionModel(_never, model_name='slow'))
    with pytest.raises(ModelRequestTimeout) as caught:
        await agent.run('hi', model_settings={'request_timeout': 0.05})
    assert (str(caught.value), caught.value.timeout, caught.value.setting, caught.value.model_name) == (
        "Request to model 'slow' timed out after 0.05 seconds",
        0.05,
        'request_timeout',
        'slow',
    )


async def test_the_models_own_settings_set_the_deadline_too() -> None:
    agent = Agent(FunctionModel(_never, model_name='slow', settings={'request_timeout': 0.05}))
    with pytest.raises(ModelRequestTimeout):
        await agent.run('hi')


async def test_a_stream_without_a_first_event_raises_with_first_event_timeout() -> None:
    agent = Agent(FunctionModel(stream_function=_silent_stream, model_name='mute'))
    with pytest.raises(ModelRequestTimeout) as caught:
        async with agent.run_stream('hi', model_settings={'first_event_timeout': 0.05, 'request_timeout': 60}):
            pass
    assert (str(caught.value), caught.value.setting) == (
        "Request to model 'mute' timed out after 0.05 seconds without producing any output",
        'first_event_timeout',
    )


async def test_after_the_first_event_only_request_timeout_applies_to_the_rest_of_the_stream() -> None:
    agent = Agent(FunctionModel(stream_function=_stalling_stream, model_name='stalls'))
    settings: ModelSettings = {'first_event_timeout': 0.05, 'request_timeout': 0.2}
    seen: list[str] = []

    async def read() -> None:
        async with agent.run_stream('hi', model_settings=settings) as result:
            async for text in result.stream_text(debounce_by=None):
                seen.append(text)

    with pytest.raises(ModelRequestTimeout) as caught:
        await read()
    assert caught.value.setting == 'request_timeout'
    assert seen == ['first words']


async def test_first_event_timeout_does_not_apply_to_a_request_that_is_not_streamed() -> None:
    agent = Agent(FunctionModel(_hello))
    result = await agent.run('hi', model_settings={'first_event_timeout': 0.000001})
    assert result.output == 'hello'


async def test_each_model_of_a_fallback_gets_a_deadline_of_its_own() -> None:
    model = FallbackModel(FunctionModel(_never, model_name='slow'), FunctionModel(_hello, model_name='quick'))
    result = await Agent(model).run('hi', model_settings={'request_timeout': 0.05})
    assert result.output == 'hello'
    assert result.all_messages()[-1].model_name == 'quick'  # type: ignore[union-attr]


async def test_each_model_of_a_fallback_gets_a_deadline_of_its_own_when_streamed() -> None:
    model = FallbackModel(
        FunctionModel(stream_function=_silent_stream, model_name='mute'),
        FunctionModel(stream_function=_stalling_stream, model_name='stalls'),
    )
    with pytest.raises(ModelRequestTimeout) as caught:
        async with Agent(model).run_stream('hi', model_settings={'request_timeout': 0.1}) as result:
            await result.get_output()
    assert caught.value.model_name == 'stalls'  # the first model timed out opening: the second's own deadline


async def _short_stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
    yield 'all '
    yield 'done'


async def test_a_stream_that_ends_in_time_is_read_whole_under_its_deadlines() -> None:
    agent = Agent(FunctionModel(stream_function=_short_stream))
    settings: ModelSettings = {'first_event_timeout': 60, 'request_timeout': 60}
    async with agent.run_stream('hi', model_settings=settings) as result:
        assert await result.get_output() == 'all done'
