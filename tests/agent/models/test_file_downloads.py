"""Files an API takes only as data are downloaded through the provider's client, from a real local server, with
private addresses refused unless the file allows them."""

from __future__ import annotations

import base64
from typing import Any

import httpx
import pytest

from edgewise.agent.exceptions import UserError
from edgewise.agent.messages import (
    AudioUrl,
    BinaryContent,
    DocumentUrl,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ToolReturnPart,
    UserContent,
    UserPromptPart,
    VideoUrl,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models._downloads import download, download_files
from edgewise.agent.models.openai import OpenAIChatModel
from edgewise.agent.providers.openai import OpenAIProvider

from ._chat import completion
from ._provider_specs import ANTHROPIC, GOOGLE, RESPONSES, Spec
from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

WAV = b'RIFF0000WAVE'
PNG = b'\x89PNG\r\n\x1a\n'
PARAMS = ModelRequestParameters()


def prompt(*items: UserContent) -> list[ModelMessage]:
    return [ModelRequest([UserPromptPart(list(items))])]


def root(server: LocalServer) -> str:
    return server.url.removesuffix('/v1')


def chat_model(server: LocalServer) -> OpenAIChatModel:
    return OpenAIChatModel('gpt-4o', provider=OpenAIProvider(base_url=server.url, api_key='sk-test'))


def spec_model(spec: Spec, server: LocalServer) -> Any:
    return spec.make(base_url=root(server) + spec.base_suffix, max_retries=0)


async def test_chat_downloads_audio_urls_through_the_provider_client(local_server: LocalServer) -> None:
    local_server.files['/a.wav'] = (200, 'audio/wav', WAV)
    local_server.script(Reply(200, completion('heard')))
    audio = AudioUrl(f'{root(local_server)}/a.wav', force_download='allow-local')
    async with chat_model(local_server) as model:
        response = await model.request(prompt('Listen', audio, audio), None, PARAMS)
    assert response.text == 'heard'
    assert local_server.downloads == ['/a.wav']  # once, though it is in the prompt twice
    (sent,) = local_server.received
    audio_part = {'type': 'input_audio', 'input_audio': {'data': base64.b64encode(WAV).decode(), 'format': 'wav'}}
    assert sent['body']['messages'] == [
        {'role': 'user', 'content': [{'type': 'text', 'text': 'Listen'}, audio_part, audio_part]}
    ]


async def test_a_private_address_is_refused_unless_the_file_allows_it(local_server: LocalServer) -> None:
    local_server.files['/a.wav'] = (200, 'audio/wav', WAV)
    async with chat_model(local_server) as model:
        with pytest.raises(UserError, match=r"127\.0\.0\.1 is a private address; set force_download='allow-local'"):
            await model.request(prompt(AudioUrl(f'{root(local_server)}/a.wav')), None, PARAMS)
    assert local_server.downloads == []
    assert local_server.received == []


async def test_a_failed_download_names_the_url_and_status(local_server: LocalServer) -> None:
    url = f'{root(local_server)}/missing.pdf'
    async with chat_model(local_server) as model:
        with pytest.raises(UserError, match=rf'Could not download {url}: the server answered with status 404'):
            await model.request(prompt(DocumentUrl(url, force_download='allow-local')), None, PARAMS)
    assert local_server.received == []


@pytest.mark.parametrize(
    ('url', 'message'),
    [
        ('http://169.254.169.254/latest/meta-data', r'169\.254\.169\.254 is a cloud metadata address'),
        ('ftp://example.com/a.wav', 'only http and https URLs can be downloaded'),
        ('http://10.0.0.1/a.wav', r'10\.0\.0\.1 is a private address'),
    ],
)
async def test_refused_addresses(url: str, message: str) -> None:
    file = AudioUrl(url, media_type='audio/wav', force_download=True)
    async with httpx.AsyncClient() as client:
        with pytest.raises(UserError, match=message):
            await download(file, client)


async def test_a_host_name_that_does_not_resolve_is_a_user_error() -> None:
    # `.invalid` never resolves (RFC 2606).
    file = ImageUrl('http://nothing.invalid/a.png', force_download=True)
    async with httpx.AsyncClient() as client:
        with pytest.raises(UserError, match=r'Could not download http://nothing\.invalid/a\.png'):
            await download(file, client)


async def test_host_names_are_resolved_before_the_check(local_server: LocalServer) -> None:
    port = local_server.url.split(':')[2].split('/')[0]
    local_server.files['/img'] = (200, 'application/octet-stream', PNG)
    async with httpx.AsyncClient() as client:
        with pytest.raises(UserError, match='is a private address'):
            await download(
                ImageUrl(f'http://localhost:{port}/img', media_type='image/png', force_download=True), client
            )
        allowed = ImageUrl(f'http://localhost:{port}/img', media_type='image/png', force_download='allow-local')
        # the response's generic type gives way to the file's own
        assert await download(allowed, client) == BinaryContent(PNG, media_type='image/png')


async def test_redirects_are_not_followed(local_server: LocalServer) -> None:
    local_server.files['/moved'] = (302, '', b'')
    file = ImageUrl(f'{root(local_server)}/moved', media_type='image/png', force_download='allow-local')
    async with httpx.AsyncClient() as client:
        with pytest.raises(UserError, match='it redirects; give the final URL'):
            await download(file, client)


async def test_an_unreachable_server_is_a_user_error(local_server: LocalServer) -> None:
    file = ImageUrl(f'{root(local_server)}/a.png', force_download='allow-local')

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError('connection refused', request=request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(refuse)) as client:
        with pytest.raises(UserError, match=r'Could not download .*connection refused'):
            await download(file, client)


async def test_files_returned_by_tools_are_downloaded_and_others_kept(local_server: LocalServer) -> None:
    local_server.files['/chart.png'] = (200, 'image/png', PNG)
    chart = ImageUrl(f'{root(local_server)}/chart.png', force_download='allow-local', identifier='chart')
    kept = ImageUrl('https://e.com/kept.png')
    messages: list[ModelMessage] = [
        ModelRequest(
            [UserPromptPart('text only'), ToolReturnPart('t', chart, 'c1'), ToolReturnPart('u', ['x', kept], 'c2')]
        ),
        ModelRequest([ToolReturnPart('t', ['a', chart], 'c3'), UserPromptPart([kept])]),
    ]
    async with httpx.AsyncClient() as client:
        result = await download_files(messages, lambda f: bool(f.force_download), client)
        unchanged = await download_files(messages[1:], lambda f: False, client)
    image = BinaryContent(PNG, media_type='image/png', identifier='chart')
    first, second = result
    assert isinstance(first, ModelRequest)
    assert isinstance(second, ModelRequest)
    assert first.parts[0] is messages[0].parts[0]
    returned = first.parts[1]
    assert isinstance(returned, ToolReturnPart)
    assert returned == ToolReturnPart('t', image, 'c1', timestamp=returned.timestamp)
    assert first.parts[2] is messages[0].parts[2]
    assert isinstance(second.parts[0], ToolReturnPart)
    assert second.parts[0].content == ['a', image]
    assert unchanged == messages[1:]
    assert local_server.downloads == ['/chart.png']


@pytest.mark.parametrize(
    ('spec', 'file', 'expected'),
    [
        pytest.param(
            GOOGLE,
            ImageUrl('/photo.png'),
            {'inlineData': {'mimeType': 'image/png', 'data': base64.b64encode(PNG).decode()}},
            id='google-any-url',
        ),
        pytest.param(
            ANTHROPIC,
            DocumentUrl('/notes.txt'),
            {'type': 'document', 'source': {'type': 'text', 'media_type': 'text/plain', 'data': 'some notes'}},
            id='anthropic-plain-text',
        ),
        pytest.param(
            RESPONSES,
            ImageUrl('/photo.png', force_download=True),
            {'type': 'input_image', 'image_url': 'data:image/png;base64,iVBORw0KGgo=', 'detail': 'auto'},
            id='responses-forced',
        ),
    ],
)
async def test_each_api_downloads_what_it_cannot_fetch(
    spec: Spec, file: ImageUrl | DocumentUrl, expected: dict[str, Any], local_server: LocalServer
) -> None:
    local_server.files['/photo.png'] = (200, 'image/png', PNG)
    local_server.files['/notes.txt'] = (200, 'text/plain; charset=utf-8', b'some notes')
    local_server.script(Reply(200, spec.reply))
    local = type(file)(root(local_server) + file.url, force_download='allow-local')
    async with spec_model(spec, local_server) as model:
        await model.request(prompt('Look', local), None, PARAMS)
    (sent,) = local_server.received
    body = sent['body']
    spec.validate(body)
    items = body.get('contents') or body.get('messages') or body['input']
    last = items[-1]
    assert (last.get('parts') or last['content'])[-1] == expected


async def test_urls_an_api_fetches_itself_are_not_downloaded(local_server: LocalServer) -> None:
    local_server.script(Reply(200, GOOGLE.reply), Reply(200, ANTHROPIC.reply))
    async with spec_model(GOOGLE, local_server) as model:
        await model.request(prompt(VideoUrl('https://youtu.be/abc')), None, PARAMS)
    async with spec_model(ANTHROPIC, local_server) as model:
        await model.request(prompt(ImageUrl('https://e.com/a.png'), DocumentUrl('https://e.com/a.pdf')), None, PARAMS)
    assert local_server.downloads == []
    google_body, anthropic_body = (r['body'] for r in local_server.received)
    assert google_body['contents'][0]['parts'] == [
        {'fileData': {'mimeType': 'video/mp4', 'fileUri': 'https://youtu.be/abc'}}
    ]
    assert [b['source'] for b in anthropic_body['messages'][0]['content']] == [
        {'type': 'url', 'url': 'https://e.com/a.png'},
        {'type': 'url', 'url': 'https://e.com/a.pdf'},
    ]


async def test_a_download_carries_none_of_the_clients_credentials(local_server: LocalServer) -> None:
    local_server.files['/a.wav'] = (200, 'audio/wav', WAV)
    local_server.script(Reply(200, completion('heard')))
    client = httpx.AsyncClient(
        headers={'x-gateway-key': 'gw-SECRET', 'user-agent': 'my-app/1'},
        cookies={'session': 'cookie-SECRET'},
        auth=('user', 'basic-SECRET'),
    )
    provider = OpenAIProvider(base_url=local_server.url, api_key='sk-test', http_client=client)
    audio = AudioUrl(f'{root(local_server)}/a.wav', force_download='allow-local')
    async with OpenAIChatModel('gpt-4o', provider=provider) as model:
        response = await model.request(prompt('Listen', audio), None, PARAMS)
    await client.aclose()
    assert response.text == 'heard'
    (headers,) = local_server.download_headers
    assert not any('SECRET' in value for value in headers.values())
    assert 'authorization' not in headers
    assert 'cookie' not in headers
    assert headers['user-agent'] == 'my-app/1'  # the client's own, not a credential
