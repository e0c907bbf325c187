"""`GoogleDecisionsModel` against a real HTTP server on 127.0.0.1 speaking the Gemini API's `decisions` endpoint."""

from __future__ import annotations

import base64
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from edgewise.agent import Agent
from edgewise.agent.exceptions import ModelHTTPError, UnexpectedModelBehavior, UserError
from edgewise.agent.messages import BinaryContent, ImageUrl, ModelResponse
from edgewise.agent.models import infer_model
from edgewise.agent.models.decision import (
    ChoiceQuestion,
    DecisionQuestion,
    DecisionRequest,
    NoulAnswer,
    NoulCriteria,
    NoulQuestion,
)
from edgewise.agent.models.google_decisions import GoogleDecisionsModel
from edgewise.agent.providers.google import GoogleProvider

from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

SECRET = 'AIza-decisions-secret-0042'


def _model(server: LocalServer) -> GoogleDecisionsModel:
    provider = GoogleProvider(api_key=SECRET, base_url=server.url.removesuffix('/v1'), max_retries=0)
    return GoogleDecisionsModel('gemini-decision-1', provider=provider)


def _answered(answers: dict[str, Any]) -> Reply:
    usage = {
        'total_input_tokens': 25,
        'total_output_tokens': 2,
        'input_tokens_by_modality': [{'modality': 'TEXT', 'tokens': 25}],
    }
    return Reply(200, {'answers': answers, 'usage': usage})


class Handling(BaseModel):
    """How to handle a shell command."""

    verdict: Literal['run', 'reject'] = Field(description='How to handle this command.')
    irreversible: bool = Field(description='Would running this destroy data or leak secrets?')


async def test_an_agent_on_the_gemini_decisions_endpoint(local_server: LocalServer) -> None:
    local_server.script(
        _answered(
            {
                'q0': {
                    'type': 'choice',
                    'choice': 'reject',
                    'confidence': 0.875,
                    'probabilities': {'run': 0.125, 'reject': 0.875},
                },
                'q1': {'type': 'noul', 'noul': 0.9921875},
            }
        )
    )
    async with _model(local_server) as model:
        result = await Agent(model, output_type=Handling).run('rm -rf /')
    assert result.output == Handling(verdict='reject', irreversible=True)
    (received,) = local_server.received
    assert received['path'] == '/v1beta/decisions'
    assert received['headers']['x-goog-api-key'] == SECRET
    goal = 'How to handle a shell command.'
    assert received['body'] == {
        'model': 'gemini-decision-1',
        'input': 'rm -rf /',
        'questions': {
            'q0': {
                'type': 'choice',
                'instructions': f'{{"field": "verdict", "question": "How to handle this command.", "goal": "{goal}"}}',
                'criteria': {'run': None, 'reject': None},
            },
            'q1': {
                'type': 'noul',
                'instructions': (
                    '{"field": "irreversible", "question": "Would running this destroy data or leak secrets?", '
                    f'"goal": "{goal}"}}'
                ),
            },
        },
    }
    response = result.all_messages()[-2]
    assert isinstance(response, ModelResponse)
    assert (response.provider_name, response.model_name) == ('google-decisions', 'gemini-decision-1')
    assert response.usage.details == {'text_prompt_tokens': 25}


async def test_yes_no_meanings_and_unrounded_sums(local_server: LocalServer) -> None:
    local_server.script(
        _answered({'q0': {'type': 'choice', 'choice': 'a', 'confidence': 0.5, 'probabilities': {'a': 0.5, 'b': 0.49}}})
    )
    choice = ChoiceQuestion(criteria={'a': None, 'b': 'the other'}, instructions='Which?')
    with pytest.raises(UnexpectedModelBehavior, match=r"answer 'pick' does not match its question"):
        async with _model(local_server) as model:  # 0.99 passes a rounding backend's check, not an unrounded one's
            await model.decide(DecisionRequest(state='x', questions={'pick': choice}), {})
    local_server.script(_answered({'q0': {'type': 'noul', 'noul': 0.25}}))
    question = NoulQuestion(instructions='Safe?', criteria=NoulCriteria(false='it is not'))
    async with _model(local_server) as model:
        response = await model.decide(DecisionRequest(state={'cmd': 'ls'}, questions={'ok.now': question}), {})
    assert response.answers == {'ok.now': NoulAnswer(noul=0.25)}  # read back under the question's own name
    assert local_server.received[1]['body']['input'] == '{"cmd": "ls"}'
    assert local_server.received[1]['body']['questions'] == {
        'q0': {'type': 'noul', 'instructions': 'Safe?', 'criteria': {'false_description': 'it is not'}}
    }


async def test_bad_requests_and_error_statuses(local_server: LocalServer) -> None:
    model = _model(local_server)
    question: dict[str, DecisionQuestion] = {'q': NoulQuestion(instructions='?')}
    with pytest.raises(UserError, match='`extra_body` cannot set `questions`'):
        await model.decide(DecisionRequest(state='x', questions=question), {'extra_body': {'Questions': {}}})
    local_server.script(
        Reply(400, {'error': {'code': 400, 'message': f'bad key {SECRET}', 'status': 'INVALID_ARGUMENT'}})
    )
    with pytest.raises(ModelHTTPError) as caught:
        async with model:
            await model.decide(DecisionRequest(state='x', questions=question), {})
    assert caught.value.status_code == 400
    assert SECRET not in str(caught.value)
    assert SECRET not in repr(caught.value.body)
    assert SECRET not in repr(model)


async def test_the_model_name_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('GOOGLE_API_KEY', SECRET)
    model = infer_model('google-decisions:gemini-decision-1')
    assert isinstance(model, GoogleDecisionsModel)
    assert (model.model_name, model.system) == ('gemini-decision-1', 'google-decisions')
    assert model.profile.get('supports_text_output') is False


PNG = b'\x89PNG\r\n\x1a\n-a-red-square'
JPEG = b'\xff\xd8\xff\xe0-a-receipt'


class Posting(BaseModel):
    """Whether to post a picture."""

    safe: bool = Field(description='Is the picture safe to post?')


async def test_images_go_as_blocks_after_their_labels(local_server: LocalServer) -> None:
    local_server.files['/receipt.jpg'] = (200, 'image/jpeg', JPEG)
    url = ImageUrl(local_server.url.removesuffix('/v1') + '/receipt.jpg', force_download='allow-local')
    low = BinaryContent(
        PNG, media_type='image/png', vendor_metadata={'media_resolution': {'level': 'media_resolution_low'}}
    )
    local_server.script(_answered({'q0': {'type': 'noul', 'noul': 0.125}}))
    async with _model(local_server) as model:
        result = await Agent(model, output_type=Posting).run(['Post these?', low, url])
    assert result.output == Posting(safe=False)
    assert local_server.downloads == ['/receipt.jpg']
    body = local_server.received[0]['body']
    assert body['input'] == [
        {'type': 'text', 'text': 'Post these?\n\n<image 1>\n\n<image 2>'},
        {'type': 'text', 'text': '<image 1>:'},
        {'type': 'image', 'data': base64.b64encode(PNG).decode(), 'mime_type': 'image/png', 'resolution': 'low'},
        {'type': 'text', 'text': '<image 2>:'},
        {'type': 'image', 'data': base64.b64encode(JPEG).decode(), 'mime_type': 'image/jpeg'},
    ]


@pytest.mark.parametrize(
    ('setting', 'resolution'),
    [
        ({'level': 'MEDIA_RESOLUTION_ULTRA_HIGH'}, 'ultra_high'),
        ({'level': 'MEDIA_RESOLUTION_UNSPECIFIED'}, None),
        ({'num_tokens': 64}, None),
    ],
)
async def test_an_image_resolution_as_google_model_takes_it(
    local_server: LocalServer, setting: dict[str, Any], resolution: str | None
) -> None:
    local_server.script(_answered({'q0': {'type': 'noul', 'noul': 0.5}}))
    image = BinaryContent(PNG, media_type='image/png', vendor_metadata={'media_resolution': setting})
    request = DecisionRequest(state='<image 1>', questions={'ok': NoulQuestion(instructions='Fine?')}, images=(image,))
    async with _model(local_server) as model:
        await model.decide(request, {})
    block = local_server.received[0]['body']['input'][2]
    assert (block['type'], block.get('resolution')) == ('image', resolution)


async def test_files_that_are_not_images_are_refused(local_server: LocalServer) -> None:
    question: dict[str, DecisionQuestion] = {'q': NoulQuestion(instructions='?')}
    audio = (BinaryContent(b'RIFF', media_type='audio/wav'),)
    with pytest.raises(UserError, match='The Gemini decisions endpoint takes images only'):
        await _model(local_server).decide(DecisionRequest(state='x', questions=question, images=audio), {})
    odd = (BinaryContent(PNG, media_type='image/png', vendor_metadata={'media_resolution': {'level': 3}}),)
    with pytest.raises(UserError, match="`media_resolution` level must be a string such as 'MEDIA_RESOLUTION_LOW'"):
        await _model(local_server).decide(DecisionRequest(state='x', questions=question, images=odd), {})
    unknown = (BinaryContent(PNG, media_type='image/png', vendor_metadata={'media_resolution': {'level': 'tiny'}}),)
    with pytest.raises(UserError, match=r"level 'tiny' is not one Gemini knows: give one of MEDIA_RESOLUTION_HIGH, "):
        await _model(local_server).decide(DecisionRequest(state='x', questions=question, images=unknown), {})
    assert local_server.received == []
