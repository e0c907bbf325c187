"""`XaiImageGenerationModel` over a real HTTP server on 127.0.0.1: generations and edits on xAI's REST images API,
geometry settings, quiet moderation, bad answers and errors."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

import pytest

from edgewise.agent import ImageGenerator
from edgewise.agent.exceptions import ContentFilterError, ModelHTTPError, UnexpectedModelBehavior, UserError
from edgewise.agent.images import infer_image_generation_model
from edgewise.agent.images.xai import XaiImageGenerationModel, XaiImageGenerationSettings
from edgewise.agent.messages import BinaryImage, ImageUrl, UploadedFile
from edgewise.agent.providers.xai import XaiProvider

from .conftest import LocalServer, Reply

SECRET = 'xai-images-secret'
JPEG = b'\xff\xd8\xff\xe0' + b'j' * 16
PNG = b'\x89PNG\r\n\x1a\n' + b'p' * 16


def _item(data: bytes, *, as_data_url: bool = True, **extra: Any) -> dict[str, Any]:
    encoded = base64.b64encode(data).decode()
    return {'b64_json': f'data:image/jpeg;base64,{encoded}' if as_data_url else encoded, 'revised_prompt': '', **extra}


def _answer(*items: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {'data': list(items), 'usage': {'cost_in_usd_ticks': 200_000_000}, **extra}


@pytest.fixture
async def provider(local_server: LocalServer) -> AsyncIterator[XaiProvider]:
    async with XaiProvider(base_url=local_server.url, api_key=SECRET) as provider:
        yield provider


@pytest.mark.anyio
async def test_xai_generations_and_quiet_moderation(local_server: LocalServer, provider: XaiProvider) -> None:
    local_server.script(
        Reply(200, _answer(_item(JPEG, revised_prompt='A nicer cat'), {'b64_json': '', 'respect_moderation': False}))
    )
    model = XaiImageGenerationModel('grok-imagine-image', provider=provider)
    settings = XaiImageGenerationSettings(
        aspect_ratio='16:9', xai_n=2, xai_user='u-1', extra_headers={'x-trace': 't'}, extra_body={'quality': 'high'}
    )
    result = await ImageGenerator(model).generate('A cat', settings=settings)
    assert [image.content.data for image in result.images] == [JPEG]
    image = result.images[0]
    assert (image.content.media_type, image.output_format, image.revised_prompt) == (
        'image/jpeg',
        'jpeg',
        'A nicer cat',
    )
    assert result.provider_details == {'cost_in_usd_ticks': 200_000_000, 'moderated_image_indices': [1]}
    assert (result.model_name, result.provider_name, result.provider_url) == (
        'grok-imagine-image',
        'xai',
        provider.base_url,
    )
    assert (result.usage.input_tokens, result.usage.output_tokens) == (0, 0)  # xAI prices images, not tokens
    request = local_server.received[0]
    assert request['path'] == '/v1/images/generations'
    assert request['headers']['authorization'] == f'Bearer {SECRET}'
    assert request['headers']['x-trace'] == 't'
    assert request['body'] == {
        'model': 'grok-imagine-image',
        'prompt': 'A cat',
        'response_format': 'b64_json',
        'n': 2,
        'aspect_ratio': '16:9',
        'resolution': '1k',
        'user': 'u-1',
        'quality': 'high',
    }
    assert SECRET not in repr(model)


@pytest.mark.anyio
async def test_xai_edits_take_references_by_url_or_data(local_server: LocalServer, provider: XaiProvider) -> None:
    local_server.files['/ref.png'] = (200, 'image/png', PNG)
    answer = _answer(_item(PNG, as_data_url=False, mime_type='image/png'), model='grok-imagine-image-quality-0403')
    local_server.script(Reply(200, answer), Reply(200, answer))
    model = XaiImageGenerationModel('grok-imagine-image-quality', provider=provider)
    binary = BinaryImage(data=JPEG, media_type='image/jpeg')
    single = await model.generate('Make it blue', images=[binary])
    remote = ImageUrl('https://example.com/cat.png')
    local = ImageUrl(f'{local_server.url.removesuffix("/v1")}/ref.png', force_download='allow-local')
    await model.generate('Combine <IMAGE_0> and <IMAGE_1>', images=[remote, local])
    assert (single.image.media_type, single.model_name) == ('image/png', 'grok-imagine-image-quality-0403')
    first, second = local_server.received
    assert first['path'] == second['path'] == '/v1/images/edits'
    assert first['body']['image'] == {'url': binary.data_uri}
    assert second['body']['images'] == [
        {'url': 'https://example.com/cat.png'},
        {'url': f'data:image/png;base64,{base64.b64encode(PNG).decode()}'},
    ]
    assert local_server.downloads == ['/ref.png']
    with pytest.raises(UserError, match='takes reference images by URL or as data'):
        await model.generate('x', images=[UploadedFile('file-1', 'xai', media_type='image/png')])


@pytest.mark.anyio
async def test_xai_geometry(local_server: LocalServer, provider: XaiProvider) -> None:
    local_server.script(*(Reply(200, _answer(_item(JPEG))) for _ in range(3)), Reply(200, {'data': [_item(JPEG)]}))
    model = XaiImageGenerationModel('grok-imagine-image', provider=provider)
    await model.generate('x', settings={'dimensions': (2816, 1584)})
    with pytest.warns(UserWarning, match='used provider-specific settings instead of: `aspect_ratio`'):
        await model.generate('x', settings=XaiImageGenerationSettings(aspect_ratio='21:9', xai_aspect_ratio='2:1'))
    with pytest.warns(UserWarning, match='instead of: `dimensions`'):
        await model.generate(
            'x',
            settings=XaiImageGenerationSettings(dimensions=(1024, 1024), xai_aspect_ratio='auto', xai_resolution='2k'),
        )
    agreeing = await model.generate(
        'x', settings=XaiImageGenerationSettings(aspect_ratio='2:1', xai_aspect_ratio='2:1', xai_resolution='2k')
    )
    assert agreeing.provider_details is None  # an answer without usage
    geometry = [(r['body'].get('aspect_ratio'), r['body'].get('resolution')) for r in local_server.received]
    assert geometry == [('16:9', '2k'), ('2:1', '1k'), ('auto', '2k'), ('2:1', '2k')]
    with pytest.raises(UserError, match=r"does not take `aspect_ratio='21:9'`. Supported aspect ratios are: `1:1`"):
        await model.generate('x', settings={'aspect_ratio': '21:9'})
    with pytest.raises(UserError, match=r'does not support `dimensions=\(1000, 1000\)`'):
        await model.generate('x', settings={'dimensions': (1000, 1000)})
    with pytest.raises(UserError, match='does not have a known exact-dimensions mapping'):
        await XaiImageGenerationModel('grok-imagine-image-2.0', provider=provider).generate(
            'x', settings={'dimensions': (1024, 1024)}
        )
    with pytest.raises(UserError, match='count must be a positive integer'):
        await model.generate('x', settings=XaiImageGenerationSettings(xai_n=0))


@pytest.mark.anyio
async def test_xai_blocks_bad_answers_and_errors(local_server: LocalServer, provider: XaiProvider) -> None:
    local_server.script(
        Reply(200, {'block_reason': 'prompt flagged', 'data': []}),
        Reply(200, _answer({'b64_json': None})),
        Reply(200, {'data': []}),
        Reply(200, _answer(_item(b'\x00\x01 unknown bytes', as_data_url=False))),
        Reply(200, _answer({'b64_json': 'data:text/plain;base64,aGk='})),
        Reply(200, _answer({'b64_json': '@@not base64@@'})),
        Reply(400, {'code': 'Client specified an invalid argument', 'error': 'Bad prompt'}),
    )
    provider.max_retries = 0
    model = XaiImageGenerationModel('grok-imagine-image', provider=provider)
    with pytest.raises(ContentFilterError, match=r'blocked for content moderation \(reason: prompt flagged\)'):
        await model.generate('x')
    with pytest.raises(ContentFilterError, match='flagged all generated images'):
        await model.generate('x')
    with pytest.raises(UnexpectedModelBehavior, match='did not contain any images'):
        await model.generate('x')
    with pytest.raises(UnexpectedModelBehavior, match='recognized image format'):
        await model.generate('x')
    with pytest.raises(UnexpectedModelBehavior, match='valid base64'):
        await model.generate('x')
    with pytest.raises(UnexpectedModelBehavior, match='valid base64'):
        await model.generate('x')
    with pytest.raises(ModelHTTPError) as error:
        await model.generate('x')
    assert (error.value.status_code, error.value.body) == (400, 'Bad prompt')
    assert SECRET not in str(error.value)


def test_xai_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('XAI_API_KEY', SECRET)
    model = infer_image_generation_model('xai:grok-imagine-image')
    assert isinstance(model, XaiImageGenerationModel)
    assert (model.model_name, model.system, model.base_url) == ('grok-imagine-image', 'xai', 'https://api.x.ai/v1')
