"""`FallbackModel`: its models asked in turn while they fail the way `fallback_on` names, over function models and a
provider model whose server (a real socket) answers with an error status."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from edgewise.agent import Agent
from edgewise.agent.exceptions import FallbackExceptionGroup, ModelHTTPError, UserError
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart
from edgewise.agent.models.fallback import FallbackModel, ResponseRejected
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.openai import OpenAIChatModel
from edgewise.agent.providers.openai import OpenAIProvider

from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio


def says(text: str) -> FunctionModel:
    return FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart(text)]), model_name=text)


def raises(error: Exception) -> FunctionModel:
    def fail(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise error

    async def fail_stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        raise error
        yield ''  # pragma: no cover

    return FunctionModel(fail, stream_function=fail_stream, model_name='failing')


def streams(text: str) -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield text

    return FunctionModel(stream_function=stream, model_name=text)


async def test_a_provider_error_status_moves_on_to_the_next_model(local_server: LocalServer) -> None:
    local_server.script(Reply(400, {'error': {'message': 'bad request'}}))
    failing = OpenAIChatModel('gpt-4o', provider=OpenAIProvider(base_url=local_server.url, api_key='sk-x'))
    async with FallbackModel(failing, says('backup')) as model:  # enters (and closes) the provider's client
        assert (await Agent(model).run('hi')).output == 'backup'
    assert len(local_server.received) == 1
    assert model.model_name == 'fallback:gpt-4o,backup'
    assert model.system == 'fallback:openai,function'
    assert model.profile is failing.profile


async def test_every_model_failing_raises_a_group_of_their_errors(local_server: LocalServer) -> None:
    local_server.script(Reply(400, {'error': {'message': 'bad request'}}))
    failing = OpenAIChatModel('gpt-4o', provider=OpenAIProvider(base_url=local_server.url, api_key='sk-x'))
    second = raises(ModelHTTPError(status_code=503, model_name='other', body=None))
    async with FallbackModel(failing, second) as model:
        with pytest.raises(FallbackExceptionGroup, match='All models from FallbackModel failed') as caught:
            await Agent(model).run('hi')
    errors = caught.value.exceptions
    assert [(type(e).__name__, isinstance(e, ModelHTTPError)) for e in errors] == [
        ('ModelRequestRejectedError', True),  # a 400 is also of its category (pydantic-ai 2.68)
        ('ModelHTTPError', True),
    ]


async def test_an_error_fallback_on_does_not_name_is_raised_at_once() -> None:
    backup_calls: list[int] = []

    def backup(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        backup_calls.append(1)
        return ModelResponse(parts=[TextPart('backup')])

    with pytest.raises(RuntimeError, match='boom'):
        await Agent(FallbackModel(raises(RuntimeError('boom')), FunctionModel(backup))).run('hi')
    assert backup_calls == []


async def test_fallback_on_takes_types_and_exception_handlers() -> None:
    by_type = FallbackModel(raises(KeyError('k')), says('by type'), fallback_on=(KeyError, ValueError))
    assert (await Agent(by_type).run('hi')).output == 'by type'

    async def is_value_error(error: Exception) -> bool:
        return isinstance(error, ValueError)

    by_handler = FallbackModel(raises(ValueError('v')), says('by handler'), fallback_on=[is_value_error])
    assert (await Agent(by_handler).run('hi')).output == 'by handler'


async def test_a_response_handler_rejects_responses() -> None:
    def empty(response: ModelResponse) -> bool:
        return response.parts == [TextPart('')]

    model = FallbackModel(says(''), says('full'), fallback_on=empty)
    assert (await Agent(model).run('hi')).output == 'full'
    with pytest.raises(FallbackExceptionGroup) as caught:
        await Agent(FallbackModel(says(''), says(''), fallback_on=[RuntimeError, empty])).run('hi')
    assert [str(e) for e in caught.value.exceptions] == ['2 model response(s) rejected by fallback_on handler']
    assert isinstance(caught.value.exceptions[0], ResponseRejected)


def test_an_empty_fallback_on_is_refused() -> None:
    with pytest.raises(UserError, match='empty fallback_on'):
        FallbackModel(says('a'), fallback_on=())


async def test_a_stream_falls_back_while_it_opens() -> None:
    model = FallbackModel(raises(ValueError('v')), streams('streamed'), fallback_on=ValueError)
    async with Agent(model).run_stream('hi') as result:
        assert await result.get_output() == 'streamed'
    with pytest.raises(FallbackExceptionGroup):
        async with Agent(FallbackModel(raises(ValueError('a')), fallback_on=ValueError)).run_stream('hi') as result:
            await result.get_output()  # pragma: no cover
    with pytest.raises(KeyError):
        async with Agent(FallbackModel(raises(KeyError('k')), fallback_on=ValueError)).run_stream('hi') as result:
            await result.get_output()  # pragma: no cover


class Entered(FunctionModel):
    def __init__(self) -> None:
        super().__init__(lambda messages, info: ModelResponse(parts=[TextPart('x')]))
        self.entered = self.left = 0

    async def __aenter__(self) -> Any:
        self.entered += 1
        return self

    async def __aexit__(self, *args: Any) -> None:
        self.left += 1


async def test_its_context_enters_every_model_once() -> None:
    first, second = Entered(), Entered()
    model = FallbackModel(first, second)
    async with model, model:
        assert (first.entered, second.entered, first.left) == (1, 1, 0)
    assert (first.left, second.left) == (1, 1)


def test_a_handler_whose_hints_cannot_be_read_is_refused() -> None:
    # Taking it for an exception handler would silently never call it for responses (pydantic-ai 2.x refuses it).
    def odd(response: Undefined) -> bool:  # type: ignore[name-defined]  # noqa: F821
        return True  # pragma: no cover - never called

    with pytest.raises(UserError, match=r"annotations of 'odd': name 'Undefined' is not defined\."):
        FallbackModel(says('a'), fallback_on=odd)


def test_the_base_url_is_the_first_models_and_a_wrapper_shows_the_wrapped_models() -> None:
    from edgewise.agent.models.wrapper import WrapperModel

    provider = OpenAIProvider(base_url='http://127.0.0.1:9/v1', api_key='sk-x')
    provider_model = OpenAIChatModel('gpt-4o', provider=provider)
    assert says('a').base_url is None  # a model that makes no HTTP requests
    assert FallbackModel(says('a'), provider_model).base_url is None
    assert FallbackModel(provider_model, says('a')).base_url == 'http://127.0.0.1:9/v1'
    assert WrapperModel(provider_model).base_url == 'http://127.0.0.1:9/v1'
