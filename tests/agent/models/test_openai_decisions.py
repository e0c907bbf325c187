"""`OpenAIDecisionsModel` against a real HTTP server on 127.0.0.1 speaking OpenAI's `/v1/decisions` API."""

from __future__ import annotations

import base64
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field, WithJsonSchema

from edgewise.agent import Agent
from edgewise.agent.exceptions import (
    ContentFilterError,
    ModelAPIError,
    ModelHTTPError,
    UnexpectedModelBehavior,
    UserError,
)
from edgewise.agent.messages import (
    BinaryContent,
    FilePart,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.models import infer_model
from edgewise.agent.models.decision import (
    ChoiceQuestion,
    DecisionQuestion,
    DecisionRequest,
    NoulCriteria,
    NoulQuestion,
    ScoreQuestion,
)
from edgewise.agent.models.openai_decisions import OpenAIDecisionsModel
from edgewise.agent.providers.openai import OpenAIProvider

from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

SECRET = 'sk-decisions-secret-5150'
USAGE = {
    'input_tokens': 40,
    'input_tokens_details': {'cached_tokens': 8, 'cache_write_tokens': 0},
    'output_tokens': 3,
    'output_tokens_details': {'reasoning_tokens': 0},
    'total_tokens': 43,
}


def _decision(*answers: dict[str, Any]) -> Reply:
    return Reply(200, {'model': 'gpt-6-luna-2026', 'answers': list(answers), 'usage': USAGE}, {'x-request-id': 'req_9'})


def _model(server: LocalServer) -> OpenAIDecisionsModel:
    provider = OpenAIProvider(base_url=server.url, api_key=SECRET, max_retries=0)
    return OpenAIDecisionsModel('gpt-6-luna', provider=provider)


class Handling(BaseModel):
    """How to handle a shell command."""

    verdict: Literal['run', 'reject'] = Field(description='How to handle this command.')
    irreversible: bool = Field(description='Would running this destroy data or leak secrets?')
    harm: Annotated[
        int, WithJsonSchema({'anyOf': [{'const': 0, 'description': 'none'}, {'const': 1, 'description': 'severe'}]})
    ] = Field(description='How much harm?')


async def test_an_agent_on_the_decisions_api(local_server: LocalServer) -> None:
    local_server.script(
        _decision(
            {
                'type': 'choice',
                'name': 'verdict',
                'choice': 'reject',
                'confidence': 0.93,
                'probabilities': [{'value': 'run', 'probability': 0.07}, {'value': 'reject', 'probability': 0.93}],
            },
            {'type': 'predicate', 'name': 'irreversible', 'probability': 0.97},
            {
                'type': 'score',
                'name': 'harm',
                'score': 0.8,
                'confidence': 0.8,
                'probabilities': [
                    {'value': 0, 'label': '0', 'probability': 0.2},
                    {'value': 1, 'label': '1', 'probability': 0.8},
                ],
            },
        )
    )
    async with _model(local_server) as model:
        result = await Agent(model, output_type=Handling).run('rm -rf /')
    assert result.output == Handling(verdict='reject', irreversible=True, harm=1)
    (received,) = local_server.received
    assert received['path'] == '/v1/decisions'
    assert received['headers']['authorization'] == f'Bearer {SECRET}'
    goal = 'How to handle a shell command.'
    assert received['body'] == {
        'model': 'gpt-6-luna',
        'input': 'rm -rf /',
        'questions': [
            {
                'type': 'choice',
                'name': 'verdict',
                'instructions': (
                    '{"field": "verdict", "question": "How to handle this command.", "goal": "How to handle a '
                    'shell command."}'
                ),
                'choices': [{'value': 'run'}, {'value': 'reject'}],
            },
            {
                'type': 'predicate',
                'name': 'irreversible',
                'instructions': (
                    '{"field": "irreversible", "question": "Would running this destroy data or leak secrets?", '
                    f'"goal": "{goal}"}}'
                ),
            },
            {
                'type': 'score',
                'name': 'harm',
                'instructions': f'{{"field": "harm", "question": "How much harm?", "goal": "{goal}"}}',
                'levels': [{'label': '0', 'description': 'none'}, {'label': '1', 'description': 'severe'}],
            },
        ],
    }
    response = result.all_messages()[-2]
    assert isinstance(response, ModelResponse)
    assert (response.provider_name, response.model_name) == ('openai-decisions', 'gpt-6-luna-2026')
    assert (response.usage.input_tokens, response.usage.cache_read_tokens, response.usage.output_tokens) == (40, 8, 3)


async def test_a_conversation_goes_as_responses_input_items(local_server: LocalServer) -> None:
    local_server.script(_decision({'type': 'predicate', 'name': 'ok', 'probability': 0.4}))
    messages: list[ModelMessage] = [
        ModelRequest(parts=[SystemPromptPart('Be careful.'), UserPromptPart('Delete the logs.')]),
        ModelResponse(parts=[TextPart('Checking.'), ToolCallPart('list_logs', {'dir': '/var'}, 'call_1')]),
        ModelRequest(
            parts=[
                ToolReturnPart('list_logs', 'a.log', 'call_1'),
                ToolReturnPart('stale', 'x', 'call_gone'),
                RetryPromptPart('Try again', tool_name=None),
            ]
        ),
    ]
    question = NoulQuestion(instructions='Is it safe?', criteria=NoulCriteria(true='safe'))
    async with _model(local_server) as model:
        response = await model.decide(DecisionRequest(state='-', questions={'ok': question}, messages=messages), {})
    assert response.provider_response_id == 'req_9'
    body = local_server.received[0]['body']
    assert body['questions'] == [
        {'type': 'predicate', 'name': 'ok', 'instructions': '{"question": "Is it safe?", "yes": "safe"}'}
    ]
    items = body['input']
    assert items == [
        {'role': 'system', 'content': 'Be careful.'},
        {'role': 'user', 'content': 'Delete the logs.'},
        {'role': 'assistant', 'content': 'Checking.'},
        {'type': 'function_call', 'call_id': 'call_1', 'name': 'list_logs', 'arguments': '{"dir":"/var"}'},
        {'type': 'function_call_output', 'call_id': 'call_1', 'output': 'a.log'},
        # A result whose call is not in the input goes framed as the tool's, on the user channel.
        {
            'role': 'user',
            'content': '<pyai:tool_result tool_name="stale" tool_call_id="call_gone">x</pyai:tool_result>',
        },
        {'role': 'developer', 'content': 'Validation feedback:\nTry again\n\nFix the errors and try again.'},
    ]


async def test_a_refusal_is_a_content_filter_error(local_server: LocalServer) -> None:
    local_server.script(
        _decision({'type': 'refusal', 'name': 'q'}, {'type': 'predicate', 'name': 'p', 'probability': 0.5})
    )
    questions: dict[str, DecisionQuestion] = {
        'q': ChoiceQuestion(criteria={'a': None, 'b': None}, instructions='Which?'),
        'p': NoulQuestion(instructions='Yes?'),
    }
    with pytest.raises(ContentFilterError, match=r"The OpenAI Decisions API declined to answer: 'q'"):
        async with _model(local_server) as model:
            await model.decide(DecisionRequest(state='x', questions=questions), {})


async def test_an_answer_that_does_not_fit_is_unexpected_behavior(local_server: LocalServer) -> None:
    local_server.script(
        _decision(
            {
                'type': 'score',
                'name': 's',
                'score': 1.9,
                'confidence': 0.5,
                'probabilities': [
                    {'value': 0, 'label': '0', 'probability': 0.5},
                    {'value': 1, 'label': '1', 'probability': 0.5},
                ],
            }
        )
    )
    question = ScoreQuestion(criteria=['low', 'high'], instructions='How much?')
    with pytest.raises(UnexpectedModelBehavior, match=r"answer 's' does not match its question"):
        async with _model(local_server) as model:
            await model.decide(DecisionRequest(state='x', questions={'s': question}), {})


async def test_an_error_status_is_an_openai_http_error_without_the_key(local_server: LocalServer) -> None:
    local_server.script(Reply(429, {'error': {'message': f'slow down {SECRET}', 'code': 'rate_limit_exceeded'}}))
    with pytest.raises(ModelHTTPError) as caught:
        async with _model(local_server) as model:
            await Agent(model, output_type=bool, instructions='Angry?').run('x')
    assert caught.value.status_code == 429
    assert caught.value.provider_error_code == 'rate_limit_exceeded'
    assert SECRET not in str(caught.value)
    assert SECRET not in repr(caught.value.body)


async def test_the_model_name_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('OPENAI_API_KEY', SECRET)
    model = infer_model('openai-decisions:gpt-6-luna')
    assert isinstance(model, OpenAIDecisionsModel)
    assert (model.model_name, model.system) == ('gpt-6-luna', 'openai-decisions')
    assert model.profile.get('supports_text_output') is False
    assert SECRET not in repr(model)


PNG = b'\x89PNG\r\n\x1a\n-a-red-square'
CHART = b'\x89PNG\r\n\x1a\n-a-chart'


def _data_uri(data: bytes, media_type: str = 'image/png') -> str:
    return f'data:{media_type};base64,{base64.b64encode(data).decode()}'


class Posting(BaseModel):
    """Whether to post a picture."""

    safe: bool = Field(description='Is the picture safe to post?')


async def test_an_agent_sends_prompt_images_in_place_and_downloads_image_urls(local_server: LocalServer) -> None:
    local_server.files['/cat.png'] = (200, 'image/png', CHART)
    url = ImageUrl(local_server.url.removesuffix('/v1') + '/cat.png', force_download='allow-local')
    local_server.script(_decision({'type': 'predicate', 'name': 'safe', 'probability': 0.9}))
    async with _model(local_server) as model:
        result = await Agent(model, output_type=Posting).run(
            ['Post these?', BinaryContent(PNG, media_type='image/png', vendor_metadata={'detail': 'high'}), url]
        )
    assert result.output == Posting(safe=True)
    assert local_server.downloads == ['/cat.png']
    (received,) = local_server.received
    assert received['body']['input'] == [
        {
            'role': 'user',
            'content': [
                {'type': 'input_text', 'text': 'Post these?'},
                {'type': 'input_image', 'image_url': _data_uri(PNG), 'detail': 'high'},
                {'type': 'input_image', 'image_url': _data_uri(CHART), 'detail': 'auto'},
            ],
        }
    ]


async def test_a_state_alone_goes_with_each_image_after_its_label(local_server: LocalServer) -> None:
    local_server.script(_decision({'type': 'predicate', 'name': 'same', 'probability': 0.2}))
    images = (BinaryContent(PNG, media_type='image/png', vendor_metadata={'detail': 'low'}), _png(CHART))
    request = DecisionRequest(
        state='Is <image 1> the same room as <image 2>?',
        questions={'same': NoulQuestion(instructions='Same room?')},
        images=images,
    )
    async with _model(local_server) as model:
        await model.decide(request, {})
    assert local_server.received[0]['body']['input'] == [
        {
            'role': 'user',
            'content': [
                {'type': 'input_text', 'text': 'Is <image 1> the same room as <image 2>?'},
                {'type': 'input_text', 'text': '<image 1>:'},
                {'type': 'input_image', 'image_url': _data_uri(PNG), 'detail': 'low'},
                {'type': 'input_text', 'text': '<image 2>:'},
                {'type': 'input_image', 'image_url': _data_uri(CHART)},
            ],
        }
    ]


def _png(data: bytes) -> BinaryContent:
    return BinaryContent(data, media_type='image/png')


async def test_images_in_tool_outputs_and_model_files_go_where_the_api_takes_them(local_server: LocalServer) -> None:
    local_server.script(_decision({'type': 'predicate', 'name': 'ok', 'probability': 0.6}))
    images = [_png(b'\x89PNG-%d' % n) for n in range(4)]
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart('Plot the sales')]),
        ModelResponse(parts=[ToolCallPart('plot', {}, 'c1'), ToolCallPart('zoom', {}, 'c2')]),
        ModelRequest(
            parts=[
                ToolReturnPart('plot', ['done', images[0]], 'c1'),
                ToolReturnPart('zoom', images[1], 'c2', outcome='failed'),
                ToolReturnPart('crop', images[2], 'c_gone'),
            ]
        ),
        ModelResponse(parts=[FilePart(images[3])]),
    ]
    request = DecisionRequest(
        state='-', questions={'ok': NoulQuestion(instructions='Good?')}, images=tuple(images), messages=messages
    )
    async with _model(local_server) as model:
        await model.decide(request, {})
    uris = [_data_uri(image.data) for image in images]
    assert local_server.received[0]['body']['input'][3:] == [
        {
            'type': 'function_call_output',
            'call_id': 'c1',
            'output': [
                {'type': 'input_text', 'text': 'done'},
                {'type': 'input_image', 'image_url': uris[0], 'detail': 'auto'},
            ],
        },
        {
            'type': 'function_call_output',
            'call_id': 'c2',
            'output': [
                {'type': 'input_text', 'text': '{"error":"[\\"<image 2>\\"]"}'},
                {'type': 'input_text', 'text': '<image 2>:'},
                {'type': 'input_image', 'image_url': uris[1], 'detail': 'auto'},
            ],
        },
        {
            'role': 'user',
            'content': [
                {'type': 'input_text', 'text': '<pyai:tool_result tool_name="crop" tool_call_id="c_gone">'},
                {'type': 'input_image', 'image_url': uris[2], 'detail': 'auto'},
                {'type': 'input_text', 'text': '</pyai:tool_result>'},
            ],
        },
        {'role': 'assistant', 'content': '<image 4>'},
        {
            'role': 'user',
            'content': [
                {'type': 'input_text', 'text': '<image 4>:'},
                {'type': 'input_image', 'image_url': uris[3], 'detail': 'auto'},
            ],
        },
    ]


async def test_images_that_do_not_match_the_conversation_are_refused(local_server: LocalServer) -> None:
    messages: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart(['Which?', _png(PNG)])])]
    questions: dict[str, DecisionQuestion] = {'ok': NoulQuestion(instructions='Fine?')}
    model = _model(local_server)
    with pytest.raises(UserError, match=r'`request\.messages` refers to more images than `request\.images` holds'):
        await model.decide(DecisionRequest(state='-', questions=questions, messages=messages), {})
    extra = (_png(PNG), _png(CHART))
    with pytest.raises(UserError, match=r'`request\.images` holds more images than `request\.messages` refers to'):
        await model.decide(DecisionRequest(state='-', questions=questions, images=extra, messages=messages), {})
    audio = (BinaryContent(b'RIFF', media_type='audio/wav'),)
    with pytest.raises(UserError, match=r'takes images only: `request\.images` holds another file'):
        await model.decide(DecisionRequest(state='-', questions=questions, images=audio), {})
    assert local_server.received == []


async def test_more_images_than_the_api_takes_fail_before_any_download(local_server: LocalServer) -> None:
    base = local_server.url.removesuffix('/v1')
    urls = [ImageUrl(f'{base}/{n}.png', force_download='allow-local') for n in range(129)]
    with pytest.raises(ModelAPIError, match='gpt-6-luna accepts at most 128 images; got 129'):
        async with _model(local_server) as model:
            await Agent(model, output_type=Posting).run(['Any unsafe?', *urls])
    assert (local_server.downloads, local_server.received) == ([], [])


def test_the_deprecated_decisions_provider_is_openai_provider_with_the_decisions_profile() -> None:
    from edgewise.agent.exceptions import PydanticAIDeprecationWarning
    from edgewise.agent.models.openai_decisions import OpenAIDecisionsModel
    from edgewise.agent.profiles.decision import decision_model_profile
    from edgewise.agent.providers.openai_decisions import OpenAIDecisionsProvider

    with pytest.warns(PydanticAIDeprecationWarning, match='use `OpenAIProvider` with `OpenAIDecisionsModel`'):
        provider = OpenAIDecisionsProvider(api_key=SECRET)
    assert isinstance(provider, OpenAIProvider)
    assert provider.name == 'openai-decisions'
    assert provider.model_profile('gpt-6-luna') == decision_model_profile('gpt-6-luna')
    assert SECRET not in repr(provider)
    model = OpenAIDecisionsModel('gpt-6-luna', provider=provider)
    assert (model.system, model.model_name) == ('openai-decisions', 'gpt-6-luna')
