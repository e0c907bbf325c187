"""`FallbackModel` and turns a provider suspends (pydantic-ai 2.x): a suspended response is pinned to the model that
gave it (`metadata['__pydantic_ai__']['fallback_model_id']`), its continuation goes back to that model, and when that
model fails the turn starts afresh on the models in order; and the request's `chat` span names the model that
served it."""

from __future__ import annotations

from typing import Any

import pytest
from logfire.testing import CaptureLogfire

from edgewise.agent import Agent
from edgewise.agent.exceptions import FallbackExceptionGroup, ModelServerError
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models.fallback import FallbackModel
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.openai import OpenAIChatModel
from edgewise.agent.providers.openai import OpenAIProvider
from edgewise.agent.usage import RequestUsage

from ..test_continuation import PausingModel, piece
from ._chat import completion
from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

PIN = '__pydantic_ai__'


def pin(model_id: str) -> dict[str, Any]:
    return {PIN: {'fallback_model_id': model_id}}


class Named(PausingModel):
    """A scripted model (see `PausingModel`) with a name of its own: its `model_id` is `test:<name>`."""

    def __init__(self, name: str, *script: ModelResponse | Exception) -> None:
        super().__init__(*script)
        self.name = name

    @property
    def model_name(self) -> str:
        return self.name


def down(name: str) -> ModelServerError:
    return ModelServerError(name, 'the server failed')


def texts(message: ModelMessage) -> list[str]:
    assert isinstance(message, ModelResponse)
    return [part.content for part in message.parts if isinstance(part, TextPart)]


def suspended_history(model_id: str | None) -> list[ModelMessage]:
    response = piece('Hel', rid='a', state='suspended', model='second')
    response.metadata = None if model_id is None else pin(model_id)
    return [ModelRequest(parts=[UserPromptPart('hi')]), response]


async def test_a_suspended_response_is_pinned_and_continued_on_the_model_that_gave_it() -> None:
    first = Named('first', down('first'))
    second = Named(
        'second', piece('Hel', rid='a', state='suspended', model='second'), piece('lo', rid='b', model='second')
    )
    result = await Agent(FallbackModel(first, second)).run('hi')
    assert result.output == 'Hello'
    assert len(first.sent) == 1  # asked once, for the turn's first segment only
    continued = second.sent[1][-1]
    assert isinstance(continued, ModelResponse)
    assert (continued.state, continued.metadata) == ('suspended', pin('test:second'))
    last = result.all_messages()[-1]
    assert isinstance(last, ModelResponse)
    assert (texts(last), last.metadata) == (['Hel', 'lo'], pin('test:second'))  # the pin stays with the turn
    assert [attempt.model_name for attempt in last.failed_attempts or ()] == ['first']


async def test_a_response_that_is_not_suspended_carries_no_pin() -> None:
    response = await FallbackModel(Named('only', piece('done', rid='a'))).request(
        suspended_history(None)[:1], None, ModelRequestParameters()
    )
    assert (response.text, response.metadata) == ('done', None)


async def test_the_pinned_model_failing_cancels_its_job_and_starts_the_turn_afresh() -> None:
    # Both models have the same name: only the fallback's mark keeps the fresh turn from being added to the old one.
    # The chain starts again from the first model, so the pinned model is asked twice.
    first = Named('same', piece('stale', rid='a', state='suspended', tokens=2), down('same'), down('same'))
    second = Named('same', piece('fresh', rid='b', tokens=3))
    model = FallbackModel(first, second)
    result = await Agent(model).run('hi')
    assert result.output == 'fresh'
    assert [r.provider_response_id for r in first.cancelled] == ['a']  # once: the run does not cancel it again
    assert [type(m).__name__ for m in second.sent[0]] == ['ModelRequest']  # without the abandoned response
    last = result.all_messages()[-1]
    assert isinstance(last, ModelResponse)
    assert texts(last) == ['fresh']
    assert last.usage == RequestUsage(input_tokens=5, output_tokens=5)  # what the abandoned segment cost counts
    # The fresh turn replaced the old one, pin included, and its mark is dropped once honoured (an empty dict left,
    # as in pydantic-ai 2.x).
    assert last.metadata == {}
    assert [attempt.model_name for attempt in last.failed_attempts or ()] == ['same', 'same']


async def test_a_pinned_response_turned_down_is_cancelled_and_the_chain_asked() -> None:
    def stale(response: ModelResponse) -> bool:
        return response.text == 'stale'

    first = Named(
        'first',
        piece('Hel', rid='a', state='suspended'),
        piece('stale', rid='c', state='suspended'),
        piece('stale', rid='d'),
    )
    second = Named('second', piece('fresh', rid='b'))
    model = FallbackModel(first, second, fallback_on=(ModelServerError, stale))
    result = await Agent(model).run('hi')
    assert result.output == 'fresh'
    # The turned-down response's own job is cancelled (usually the job it continued; a finished one has none).
    assert [r.provider_response_id for r in first.cancelled] == ['c']
    last = result.all_messages()[-1]
    assert isinstance(last, ModelResponse)
    assert [attempt.outcome for attempt in last.failed_attempts or ()] == ['rejected'] * 2


async def test_when_every_model_fails_after_the_pinned_one_the_group_names_them_all() -> None:
    first = Named('first', piece('Hel', rid='a', state='suspended'), down('first'), down('first'))
    second = Named('second', down('second'))
    with pytest.raises(FallbackExceptionGroup) as caught:
        await Agent(FallbackModel(first, second)).run('hi')
    assert [str(error) for error in caught.value.exceptions] == ['the server failed'] * 3
    assert [attempt.model_name for attempt in caught.value.attempts] == ['first', 'first', 'second']
    assert [r.provider_response_id for r in first.cancelled] == ['a']  # once: the run leaves a cancelled job alone


async def test_an_error_fallback_on_does_not_name_from_the_pinned_model_is_raised() -> None:
    first = Named('first', piece('Hel', rid='a', state='suspended'), RuntimeError('boom'))
    second = Named('second')
    with pytest.raises(RuntimeError, match='boom'):
        await Agent(FallbackModel(first, second)).run('hi')
    assert second.sent == []
    assert [r.provider_response_id for r in first.cancelled] == ['a']  # by the run, giving up the turn


@pytest.mark.parametrize('model_id', [None, 'test:elsewhere'])
async def test_a_suspended_response_pinned_to_no_model_of_the_chain_goes_to_the_models_in_order(
    model_id: str | None,
) -> None:
    first, second = Named('first', piece('lo', rid='b')), Named('second')
    history = suspended_history(model_id)
    response = await FallbackModel(first, second).request(history, None, ModelRequestParameters())
    assert response.text == 'lo'
    assert first.sent == [history]  # the suspended response is sent as it is
    assert second.sent == []


async def test_a_streamed_suspended_response_is_pinned_and_continued_on_its_model() -> None:
    first = Named('first', down('first'))
    second = Named(
        'second', piece('Hel', rid='a', state='suspended', model='second'), piece('lo', rid='b', model='second')
    )
    async with Agent(FallbackModel(first, second)).run_stream('hi') as result:
        assert await result.get_output() == 'Hel lo '  # (the fake streams a space after each word)
    assert len(first.sent) == 1
    continued = second.sent[1][-1]
    assert isinstance(continued, ModelResponse)
    assert continued.metadata == pin('test:second')
    last = result.all_messages()[-1]
    assert isinstance(last, ModelResponse)
    assert (texts(last), last.metadata) == (['Hel ', 'lo '], pin('test:second'))


async def test_a_pinned_stream_that_fails_to_open_starts_the_turn_afresh() -> None:
    first = Named('same', piece('stale', rid='a', state='suspended'), down('same'), down('same'))
    second = Named('same', piece('fresh', rid='b'))
    async with Agent(FallbackModel(first, second)).run_stream('hi') as result:
        assert await result.get_output() == 'fresh '
    last = result.all_messages()[-1]
    assert isinstance(last, ModelResponse)
    assert texts(last) == ['fresh ']  # replaced, though the same model name answered
    assert last.metadata == {}  # (see the test of a request that is not streamed)
    assert [r.provider_response_id for r in first.cancelled] == ['a']
    assert [type(m).__name__ for m in second.sent[0]] == ['ModelRequest']


async def test_a_pinned_stream_whose_chain_fails_too_leaves_the_cancelled_job_alone() -> None:
    first = Named('first', piece('Hel', rid='a', state='suspended'), down('first'), down('first'))
    second = Named('second', down('second'))
    with pytest.raises(FallbackExceptionGroup):
        async with Agent(FallbackModel(first, second)).run_stream('hi') as result:
            await result.get_output()  # pragma: no cover - the stream fails before
    assert [r.provider_response_id for r in first.cancelled] == ['a']  # by the fallback model, once


async def test_a_stored_suspended_history_resumes_on_its_pinned_model() -> None:
    first, second = Named('first'), Named('second', piece('lo', rid='b', model='second'))
    history = suspended_history('test:second')
    result = await Agent(FallbackModel(first, second)).run(message_history=history)
    assert result.output == 'Hello'
    assert (first.sent, len(second.sent)) == ([], 1)


def answering(name: str) -> FunctionModel:
    return FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart(name)]), model_name=name)


def failing(error: Exception, name: str = 'failing') -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise error

    return FunctionModel(respond, model_name=name)


def _chat(capfire: CaptureLogfire) -> dict[str, Any]:
    (chat,) = [s for s in capfire.exporter.exported_spans_as_dict() if s['name'].startswith('chat ')]
    return chat['attributes']  # type: ignore[no-any-return]


async def test_the_request_span_names_the_model_that_answered(capfire: CaptureLogfire) -> None:
    model = FallbackModel(failing(down('first'), 'first'), answering('second'))
    assert (await Agent(model).run('hi')).output == 'second'
    attributes = _chat(capfire)
    assert attributes['model_name'] == 'fallback:first,second'  # the span's name stays the fallback's
    assert (attributes['gen_ai.request.model'], attributes['gen_ai.system'], attributes['gen_ai.provider.name']) == (
        'second',
        'function',
        'function',
    )


async def test_the_request_span_names_the_server_of_a_provider_model(
    capfire: CaptureLogfire, local_server: LocalServer
) -> None:
    local_server.script(Reply(body=completion('from the server')))
    served = OpenAIChatModel('gpt-4o', provider=OpenAIProvider(base_url=local_server.url, api_key='sk-x'))
    async with FallbackModel(failing(down('first'), 'first'), served) as model:
        assert (await Agent(model).run('hi')).output == 'from the server'
    attributes = _chat(capfire)
    port = int(local_server.url.split(':')[-1].split('/')[0])
    assert (attributes['gen_ai.request.model'], attributes['gen_ai.provider.name']) == ('gpt-4o', 'openai')
    assert (attributes['server.address'], attributes['server.port']) == ('127.0.0.1', port)


async def test_the_request_span_names_the_model_whose_error_ends_the_request(capfire: CaptureLogfire) -> None:
    model = FallbackModel(failing(down('first'), 'first'), failing(KeyError('k'), 'second'), answering('third'))
    with pytest.raises(KeyError):
        await Agent(model).run('hi')
    assert _chat(capfire)['gen_ai.request.model'] == 'second'


async def test_a_nested_fallback_leaves_the_span_to_the_outer_one(capfire: CaptureLogfire) -> None:
    inner = FallbackModel(failing(down('a'), 'a'), answering('b'))
    await Agent(FallbackModel(failing(down('x'), 'x'), inner)).run('hi')
    assert _chat(capfire)['gen_ai.request.model'] == inner.model_name


async def test_no_span_attributes_outside_a_traced_request(capfire: CaptureLogfire) -> None:
    model = FallbackModel(failing(down('first'), 'first'), answering('second'))
    await model.request(suspended_history(None)[:1], None, ModelRequestParameters())
    assert [s for s in capfire.exporter.exported_spans_as_dict() if 'gen_ai.request.model' in s['attributes']] == []
