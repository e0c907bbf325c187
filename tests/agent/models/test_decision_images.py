"""`DecisionModel` with a backend that takes images: the `<image N>` labels of the judged state, the images collected
in their order, image URLs downloaded (from a real server on 127.0.0.1) only once the request is within its limits,
and the files still refused."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from edgewise.agent import Agent
from edgewise.agent.exceptions import ModelAPIError, UserError
from edgewise.agent.messages import (
    BinaryContent,
    DocumentUrl,
    FilePart,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models.decision import DecisionRequest, NoulQuestion
from edgewise.agent.models.system_one import SystemOneModel
from edgewise.agent.providers.system_one import SystemOneProvider
from edgewise.agent.tools import ToolDefinition

from ._decision_backend import ScriptedDecisions
from .conftest import LocalServer

pytestmark = pytest.mark.anyio

PNG = b'\x89PNG\r\n\x1a\n-a-red-square'
JPEG = b'\xff\xd8\xff\xe0-a-receipt'
CHART = b'\x89PNG\r\n\x1a\n-a-chart'

_YES_NO = ModelRequestParameters(
    output_tools=[
        ToolDefinition(
            name='final_result',
            kind='output',
            description='Judge it.',
            parameters_json_schema={
                'type': 'object',
                'properties': {'ok': {'type': 'boolean', 'description': 'Is it fine?'}},
            },
        )
    ],
    output_mode='tool',
    allow_text_output=False,
)


class SeeingDecisions(ScriptedDecisions):
    """The scripted backend, taking images."""

    supports_image_input: ClassVar[bool] = True


class TwoImagesAtMost(SeeingDecisions):
    max_images: ClassVar[int | None] = 2


def _image(data: bytes = PNG, media_type: str = 'image/png') -> BinaryContent:
    return BinaryContent(data, media_type=media_type)


def _served(server: LocalServer, path: str, data: bytes, media_type: str = 'image/png') -> ImageUrl:
    server.files[path] = (200, media_type, data)
    return ImageUrl(server.url.removesuffix('/v1') + path, force_download='allow-local')


async def _request(model: ScriptedDecisions, messages: list[ModelMessage]) -> DecisionRequest:
    await model.request(messages, None, _YES_NO)
    (request,) = model.requests
    return request


async def test_a_prompt_image_is_labelled_in_the_state_and_sent_beside_it() -> None:
    image = _image()
    request = await _request(SeeingDecisions(), [ModelRequest(parts=[UserPromptPart(['Is this safe?', image])])])
    assert request.state == 'Is this safe?\n\n<image 1>'
    assert request.images == (image,)


async def test_images_are_numbered_in_the_order_of_the_conversation() -> None:
    first, chart, drawn, last = _image(), _image(CHART), _image(JPEG, 'image/jpeg'), _image(b'\x89PNG-last')
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart(['Here is my room', first])]),
        ModelResponse(parts=[ToolCallPart('plot', {}, 'c1')]),
        ModelRequest(parts=[ToolReturnPart('plot', ['the plot', chart], 'c1')]),
        ModelResponse(parts=[TextPart('I drew it:'), FilePart(drawn)]),
        ModelRequest(parts=[UserPromptPart(['And now?', last])]),
    ]
    request = await _request(SeeingDecisions(), messages)
    assert request.state == {
        'history': [
            {'user': 'Here is my room\n\n<image 1>'},
            {'tool_call': {'name': 'plot', 'args': {}}},
            {'tool_return': {'name': 'plot', 'content': '["the plot","<image 2>"]'}},
            {'assistant': 'I drew it:'},
            {'assistant': '<image 3>'},
        ],
        'text': 'And now?\n\n<image 4>',
    }
    assert request.images == (first, chart, drawn, last)
    assert request.messages == messages


async def test_the_turn_state_keeps_the_order_of_its_parts() -> None:
    # A result returned this turn comes after the prompt it answers: its image is numbered after the prompt's.
    prompt_image, result_image = _image(), _image(CHART)
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart(['Plot this', prompt_image])]),
        ModelResponse(parts=[ToolCallPart('plot', {}, 'c1')]),
        ModelRequest(parts=[ToolReturnPart('plot', result_image, 'c1', outcome='failed')]),
    ]
    request = await _request(SeeingDecisions(), messages)
    assert request.state == {
        'text': 'Plot this\n\n<image 1>',
        'done': [
            {'tool_call': {'name': 'plot', 'args': {}}},
            {'tool_return': {'name': 'plot', 'content': '{"error":"[\\"<image 2>\\"]"}'}},
        ],
    }
    assert request.images == (prompt_image, result_image)


async def test_an_image_url_is_downloaded_from_the_server(local_server: LocalServer) -> None:
    url = _served(local_server, '/room.png', PNG)
    request = await _request(SeeingDecisions(), [ModelRequest(parts=[UserPromptPart(['Tidy?', url, url])])])
    assert request.state == 'Tidy?\n\n<image 1>\n\n<image 2>'
    assert [(image.data, image.media_type) for image in request.images] == [(PNG, 'image/png')] * 2
    assert local_server.downloads == ['/room.png']  # once for both references


async def test_the_image_limit_is_checked_before_any_download(local_server: LocalServer) -> None:
    urls = [_served(local_server, f'/{n}.png', PNG) for n in range(3)]
    model = TwoImagesAtMost()
    with pytest.raises(ModelAPIError, match='scripted accepts at most 2 images; got 3'):
        await model.request([ModelRequest(parts=[UserPromptPart(['Which?', *urls])])], None, _YES_NO)
    assert local_server.downloads == []
    assert model.requests == []


async def test_a_url_that_answers_with_something_else_than_an_image_is_refused(local_server: LocalServer) -> None:
    url = _served(local_server, '/page.png', b'<html></html>', 'text/html')
    with pytest.raises(UserError, match=r"The image URL http://127\.0\.0\.1:\d+/page\.png answered with 'text/html'"):
        await SeeingDecisions().request([ModelRequest(parts=[UserPromptPart(['Look', url])])], None, _YES_NO)


@pytest.mark.parametrize(
    ('item', 'message'),
    [
        (
            DocumentUrl('https://example.com/terms.pdf'),
            r'A user prompt holds a file that is not an image \(DocumentUrl\)',
        ),
        (BinaryContent(b'RIFF', media_type='audio/wav'), "A user prompt holds a file of type 'audio/wav'"),
    ],
)
async def test_other_files_are_refused_by_a_backend_that_takes_images(item: Any, message: str) -> None:
    with pytest.raises(UserError, match=f'{message}: this model takes text and images only'):
        await SeeingDecisions().request([ModelRequest(parts=[UserPromptPart(['Read this', item])])], None, _YES_NO)


async def test_a_file_the_model_made_that_is_not_an_image_is_refused() -> None:
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart('Say it')]),
        ModelResponse(parts=[FilePart(BinaryContent(b'RIFF', media_type='audio/wav'))]),
        ModelRequest(parts=[UserPromptPart('Was that polite?')]),
    ]
    with pytest.raises(UserError, match="The message history holds a file of type 'audio/wav'"):
        await SeeingDecisions().request(messages, None, _YES_NO)


async def test_a_backend_without_image_input_refuses_images_in_a_run() -> None:
    agent = Agent(ScriptedDecisions(), output_type=bool, instructions='Is the picture safe to post?')
    with pytest.raises(UserError, match='Files are not supported by this model: it judges text, so images'):
        await agent.run(['Post this?', _image()])
    tool_image: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart('Plot')]),
        ModelResponse(parts=[ToolCallPart('plot', {}, 'c1')]),
        ModelRequest(parts=[ToolReturnPart('plot', _image(), 'c1')]),
    ]
    with pytest.raises(UserError, match='a file in a tool result cannot be sent to it'):
        await ScriptedDecisions().request(tool_image, None, _YES_NO)


async def test_a_backend_without_image_input_refuses_images_given_to_decide(local_server: LocalServer) -> None:
    model = SystemOneModel('clm-latest', provider=SystemOneProvider(base_url=local_server.url))
    request = DecisionRequest(
        state='<image 1>', questions={'ok': NoulQuestion(instructions='Fine?')}, images=(_image(),)
    )
    with pytest.raises(UserError, match='System One does not support image input'):
        async with model:
            await model.decide(request, {})
    assert local_server.received == []
