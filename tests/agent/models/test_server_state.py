"""Server-side state judged by endpoint: `Provider.shares_server_state_with` and `Model.accepts_server_state`
(pydantic-ai 2.68), and the ids the OpenAI Responses and Anthropic models send back because of them, seen in the
bodies a real local HTTP server receives."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models.anthropic import AnthropicModel, AnthropicModelSettings
from edgewise.agent.models.fallback import FallbackModel
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.openai import OpenAIResponsesModel, OpenAIResponsesModelSettings
from edgewise.agent.models.wrapper import WrapperModel
from edgewise.agent.providers.anthropic import AnthropicProvider
from edgewise.agent.providers.azure import AzureProvider
from edgewise.agent.providers.openai import OpenAIProvider

from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

PARAMS = ModelRequestParameters()
OPENAI_URL = 'https://api.openai.com/v1'


def _openai_provider(base_url: str = OPENAI_URL) -> OpenAIProvider:
    return OpenAIProvider(api_key='sk-test', base_url=base_url, max_retries=0)


def _response(provider_name: str | None = 'openai', provider_url: str | None = OPENAI_URL) -> ModelResponse:
    return ModelResponse(parts=[TextPart('4')], provider_name=provider_name, provider_url=provider_url)


# `Provider.shares_server_state_with`


@pytest.mark.parametrize(
    'provider_url',
    [
        'https://api.openai.com/v1',
        'https://api.openai.com/v1/',
        'HTTPS://API.OpenAI.COM/v1',
        'https://api.openai.com:443/v1',
        '  https://api.openai.com/v1  ',
    ],
)
def test_another_spelling_of_the_base_url_shares_its_state(provider_url: str) -> None:
    assert _openai_provider().shares_server_state_with(provider_url)


@pytest.mark.parametrize(
    'provider_url',
    [
        'https://api.openai.com/v2',
        'https://api.openai.com/V1',
        'https://api.openai.com',
        'http://api.openai.com/v1',
        'https://api.openai.com:8443/v1',
        'https://eu.api.openai.com/v1',
        'https://api.openai.com/v1?region=eu',
        'https://res.openai.azure.com/openai',
        'api.openai.com/v1',
    ],
)
def test_another_endpoint_does_not_share_the_state(provider_url: str) -> None:
    assert not _openai_provider().shares_server_state_with(provider_url)


def test_the_default_port_of_http_is_80() -> None:
    provider = _openai_provider('http://localhost/v1')
    assert provider.shares_server_state_with('http://LOCALHOST:80/v1/')
    assert not provider.shares_server_state_with('http://localhost:8080/v1')


def test_a_query_of_the_base_url_is_part_of_the_endpoint() -> None:
    provider = _openai_provider('https://gateway.example/v1?tenant=a')
    assert provider.shares_server_state_with('https://GATEWAY.example:443/v1?tenant=a')
    assert not provider.shares_server_state_with('https://gateway.example/v1?tenant=b')


@pytest.mark.parametrize('malformed', ['http://[::1/v1', 'http://localhost:99999/v1'])
def test_a_url_that_cannot_be_parsed_is_compared_as_written(malformed: str) -> None:
    assert _openai_provider(malformed).shares_server_state_with(malformed)
    assert not _openai_provider().shares_server_state_with(malformed)
    assert not _openai_provider(malformed).shares_server_state_with(OPENAI_URL)


def test_a_provider_may_share_the_state_of_another_url() -> None:
    class ProxiedOpenAI(OpenAIProvider):
        def shares_server_state_with(self, provider_url: str) -> bool:
            return provider_url == 'https://proxy.example/openai' or super().shares_server_state_with(provider_url)

    model = OpenAIResponsesModel('gpt-5', provider=ProxiedOpenAI(api_key='sk-test'))
    assert model.accepts_server_state(_response(provider_url='https://proxy.example/openai'))
    assert model.accepts_server_state(_response())
    assert not model.accepts_server_state(_response(provider_url='https://elsewhere.example/v1'))


# `Model.accepts_server_state`


@pytest.mark.parametrize(
    ('provider_name', 'provider_url', 'accepted'),
    [
        ('openai', OPENAI_URL, True),
        ('openai', f'{OPENAI_URL}/', True),
        ('openai', None, True),
        ('openai', 'https://elsewhere.example/v1', False),
        ('azure', OPENAI_URL, False),
        ('anthropic', None, False),
        (None, OPENAI_URL, False),
    ],
)
def test_a_model_accepts_the_state_of_its_provider_at_its_endpoint(
    provider_name: str | None, provider_url: str | None, accepted: bool
) -> None:
    model = OpenAIResponsesModel('gpt-5', provider=_openai_provider())
    assert model.accepts_server_state(_response(provider_name, provider_url)) is accepted


def test_azure_and_openai_do_not_take_each_others_state() -> None:
    azure = AzureProvider(azure_endpoint='https://res.openai.azure.com', api_version='2025-04-01-preview', api_key='k')
    on_azure = OpenAIResponsesModel('gpt-5', provider=azure)
    on_openai = OpenAIResponsesModel('gpt-5', provider=_openai_provider())
    from_azure = _response('azure', azure.base_url)
    from_openai = _response()
    assert (on_azure.accepts_server_state(from_azure), on_azure.accepts_server_state(from_openai)) == (True, False)
    assert (on_openai.accepts_server_state(from_openai), on_openai.accepts_server_state(from_azure)) == (True, False)


def _says_four(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart('4')])


def test_a_model_without_a_provider_judges_by_name_alone() -> None:
    model = FunctionModel(_says_four)
    assert model.provider is None
    assert model.accepts_server_state(_response('function', 'https://anywhere.example/v1'))
    assert model.accepts_server_state(_response('function', None))
    assert not model.accepts_server_state(_response('openai', OPENAI_URL))


class _OnlyFromA(FunctionModel):
    """A model with a judgement of its own, unlike what its `system` and provider would say."""

    def accepts_server_state(self, response: ModelResponse) -> bool:
        return response.provider_url == 'https://a.example/v1'


def test_a_wrapper_asks_the_wrapped_model() -> None:
    wrapper = WrapperModel(_OnlyFromA(_says_four))
    assert wrapper.accepts_server_state(_response('openai', 'https://a.example/v1'))
    assert not wrapper.accepts_server_state(_response('function', None))


def test_a_fallback_model_asks_its_first_model() -> None:
    second = OpenAIResponsesModel('gpt-5', provider=_openai_provider())
    fallback = FallbackModel(_OnlyFromA(_says_four), second)
    assert fallback.accepts_server_state(_response('openai', 'https://a.example/v1'))
    assert not fallback.accepts_server_state(_response())
    assert FallbackModel(second, _OnlyFromA(_says_four)).accepts_server_state(_response())


# What goes on the wire: OpenAI Responses


def _openai_answer(response_id: str) -> dict[str, Any]:
    text = {'type': 'output_text', 'text': '4', 'annotations': []}
    return {
        'id': response_id,
        'object': 'response',
        'created_at': 0,
        'model': 'gpt-5',
        'status': 'completed',
        'output': [
            {
                'type': 'reasoning',
                'id': 'rs_1',
                'encrypted_content': 'sealed',
                'summary': [{'type': 'summary_text', 'text': 'Add.'}],
            },
            {
                'type': 'code_interpreter_call',
                'id': 'ci_1',
                'status': 'completed',
                'code': 'print(2+2)',
                'container_id': 'cntr_1',
                'outputs': None,
            },
            {'type': 'message', 'id': 'msg_1', 'role': 'assistant', 'status': 'completed', 'content': [text]},
        ],
        'usage': {'input_tokens': 10, 'output_tokens': 2},
    }


def _openai(base_url: str) -> OpenAIResponsesModel:
    return OpenAIResponsesModel('gpt-5', provider=_openai_provider(base_url))


QUESTION = ModelRequest(parts=[UserPromptPart('2+2?')])
FOLLOW_UP = ModelRequest(parts=[UserPromptPart('And 3+3?')])


async def _openai_turn(
    server: LocalServer, base_url: str, settings: OpenAIResponsesModelSettings | None = None
) -> ModelResponse:
    """The answer `resp_1` to `QUESTION`, made by a model at `base_url` (a path of the local server)."""
    server.script(Reply(body=_openai_answer('resp_1')))
    async with _openai(base_url) as model:
        return await model.request([QUESTION], settings, PARAMS)


async def _openai_follow_up(
    server: LocalServer, history: list[ModelMessage], settings: OpenAIResponsesModelSettings | None = None
) -> dict[str, Any]:
    """The body of the request sending `history` and `FOLLOW_UP` to a model at the server's own URL."""
    server.script(Reply(body=_openai_answer('resp_2')))
    async with _openai(server.url) as model:
        await model.request([*history, FOLLOW_UP], settings, PARAMS)
    received = server.received[-1]
    assert received['path'] == '/v1/responses'
    body: dict[str, Any] = received['body']
    return body


REASONING_ITEM = {
    'type': 'reasoning',
    'id': 'rs_1',
    'summary': [{'type': 'summary_text', 'text': 'Add.'}],
    'encrypted_content': 'sealed',
}


async def test_a_history_of_the_same_endpoint_keeps_its_item_ids(local_server: LocalServer) -> None:
    answer = await _openai_turn(local_server, local_server.url)
    assert answer.provider_url == local_server.url
    body = await _openai_follow_up(local_server, [QUESTION, answer])
    assert body['input'] == [
        {'role': 'user', 'content': '2+2?'},
        REASONING_ITEM,
        {
            'type': 'code_interpreter_call',
            'id': 'ci_1',
            'code': 'print(2+2)',
            'container_id': 'cntr_1',
            'outputs': None,
            'status': 'completed',
        },
        {
            'type': 'message',
            'role': 'assistant',
            'id': 'msg_1',
            'content': [{'type': 'output_text', 'text': '4', 'annotations': []}],
            'status': 'completed',
        },
        {'role': 'user', 'content': 'And 3+3?'},
    ]


async def test_a_history_of_another_base_url_goes_without_stored_ids(local_server: LocalServer) -> None:
    # Made through another base URL (another region, a gateway): its items and container are not found here. The
    # encrypted reasoning, which the API decrypts rather than looks up, still goes back.
    answer = await _openai_turn(local_server, f'{local_server.url}/eu')
    assert local_server.received[0]['path'] == '/v1/eu/responses'
    body = await _openai_follow_up(local_server, [QUESTION, answer])
    assert body['input'] == [
        {'role': 'user', 'content': '2+2?'},
        REASONING_ITEM,
        {'role': 'assistant', 'content': '4'},
        {'role': 'user', 'content': 'And 3+3?'},
    ]


async def test_the_recorded_url_is_compared_as_an_endpoint(local_server: LocalServer) -> None:
    auto = OpenAIResponsesModelSettings(openai_previous_response_id='auto')
    answer = await _openai_turn(local_server, local_server.url, auto)
    respelled = replace(answer, provider_url=local_server.url.replace('http://', 'HTTP://') + '/')
    body = await _openai_follow_up(local_server, [QUESTION, respelled])
    assert [item.get('id') for item in body['input']] == [None, 'rs_1', 'ci_1', 'msg_1', None]
    body = await _openai_follow_up(local_server, [QUESTION, respelled], auto)
    assert (body['previous_response_id'], body['input']) == ('resp_1', [{'role': 'user', 'content': 'And 3+3?'}])


async def test_a_stored_response_is_continued_from_at_its_endpoint_only(local_server: LocalServer) -> None:
    auto = OpenAIResponsesModelSettings(openai_previous_response_id='auto')
    here = await _openai_turn(local_server, local_server.url, auto)
    body = await _openai_follow_up(local_server, [QUESTION, here], auto)
    assert (body['previous_response_id'], body['input']) == ('resp_1', [{'role': 'user', 'content': 'And 3+3?'}])

    elsewhere = await _openai_turn(local_server, f'{local_server.url}/eu', auto)
    body = await _openai_follow_up(local_server, [QUESTION, elsewhere], auto)
    assert 'previous_response_id' not in body
    assert [item.get('id') for item in body['input']] == [None, 'rs_1', None, None]


# What goes on the wire: Anthropic


def _anthropic_answer(message_id: str) -> dict[str, Any]:
    return {
        'id': message_id,
        'type': 'message',
        'role': 'assistant',
        'model': 'claude-sonnet-4-5',
        'content': [{'type': 'text', 'text': '4'}],
        'container': {'id': 'cntr_1', 'expires_at': '2026-12-04T18:00:00Z'},
        'stop_reason': 'end_turn',
        'usage': {'input_tokens': 10, 'output_tokens': 2},
    }


def _anthropic(base_url: str) -> AnthropicModel:
    provider = AnthropicProvider(api_key='sk-test', base_url=base_url, max_retries=0)
    return AnthropicModel('claude-sonnet-4-5', provider=provider)


async def _anthropic_bodies(server: LocalServer, first_base_url: str) -> dict[str, Any]:
    """The body of a follow-up sent to a model at the server's own URL, after a first turn made at `first_base_url`."""
    here = server.url.removesuffix('/v1')
    server.script(Reply(body=_anthropic_answer('msg_1')), Reply(body=_anthropic_answer('msg_2')))
    async with _anthropic(first_base_url) as model:
        answer = await model.request([QUESTION], None, PARAMS)
    assert (answer.provider_details or {})['container_id'] == 'cntr_1'
    settings = AnthropicModelSettings(anthropic_cache_diagnostics=True)
    async with _anthropic(here) as model:
        await model.request([QUESTION, answer, FOLLOW_UP], settings, PARAMS)
    received = server.received[-1]
    assert received['path'] == '/v1/messages'
    body: dict[str, Any] = received['body']
    return body


async def test_the_container_and_message_of_the_same_endpoint_are_reused(local_server: LocalServer) -> None:
    body = await _anthropic_bodies(local_server, local_server.url.removesuffix('/v1'))
    assert (body['container'], body['diagnostics']) == ('cntr_1', {'previous_message_id': 'msg_1'})


async def test_the_container_of_another_endpoint_is_not_sent(local_server: LocalServer) -> None:
    body = await _anthropic_bodies(local_server, local_server.url.removesuffix('/v1') + '/eu')
    assert local_server.received[0]['path'] == '/eu/v1/messages'
    assert 'container' not in body
    assert body['diagnostics'] == {'previous_message_id': None}
    assert [m['role'] for m in body['messages']] == ['user', 'assistant', 'user']
