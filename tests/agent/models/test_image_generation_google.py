"""`GoogleImageGenerationModel` over a real HTTP server on 127.0.0.1: the `generateContent` body (validated against
the `google-genai` types), reference images, geometry settings, the answer's images and details, blocks and errors."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

import pytest

from edgewise.agent import ImageGenerator
from edgewise.agent.exceptions import ContentFilterError, ModelHTTPError, UnexpectedModelBehavior, UserError
from edgewise.agent.images import ImageGenerationInput, infer_image_generation_model
from edgewise.agent.images.google import GoogleImageGenerationModel, GoogleImageGenerationSettings
from edgewise.agent.messages import BinaryImage, ImageUrl, UploadedFile
from edgewise.agent.providers.google import GoogleProvider

from ._helpers import validate_google_body
from .conftest import LocalServer, Reply

SECRET = 'gemini-images-secret'
JPEG = b'\xff\xd8\xff\xe0' + b'j' * 16
PNG = b'\x89PNG\r\n\x1a\n' + b'p' * 16
FILES_API = 'https://generativelanguage.googleapis.com/v1beta/files'


def _validate(body: dict[str, Any]) -> None:
    """Check a request body against the `google-genai` types (its `GenerationConfig` type has no `imageConfig`: the
    SDK adds it to the request from `GenerateContentConfig.image_config`, so it is checked as an `ImageConfig`)."""
    from google.genai import types

    generation_config = dict(body['generationConfig'])
    if (image_config := generation_config.pop('imageConfig', None)) is not None:
        types.ImageConfig.model_validate(image_config)
    validate_google_body({**body, 'generationConfig': generation_config})


def _answer(*parts: dict[str, Any], finish_reason: str = 'STOP', **extra: Any) -> dict[str, Any]:
    return {
        'candidates': [{'content': {'role': 'model', 'parts': list(parts)}, 'finishReason': finish_reason}],
        'usageMetadata': {'promptTokenCount': 10, 'candidatesTokenCount': 1290, 'trafficType': 'ON_DEMAND'},
        'modelVersion': 'gemini-3.1-flash-image-001',
        'responseId': 'resp-1',
        **extra,
    }


def _inline(data: bytes, mime_type: str | None = None, **extra: Any) -> dict[str, Any]:
    inline: dict[str, Any] = {'data': base64.b64encode(data).decode()}
    if mime_type:
        inline['mimeType'] = mime_type
    return {'inlineData': inline, **extra}


@pytest.fixture
async def provider(local_server: LocalServer) -> AsyncIterator[GoogleProvider]:
    async with GoogleProvider(api_key=SECRET, base_url=local_server.url.removesuffix('/v1')) as provider:
        yield provider


@pytest.mark.anyio
async def test_gemini_makes_images_with_generate_content(local_server: LocalServer, provider: GoogleProvider) -> None:
    local_server.script(
        Reply(200, _answer(_inline(PNG, 'image/png', thought=True), _inline(JPEG, 'image/jpeg', thoughtSignature='s')))
    )
    model = GoogleImageGenerationModel('gemini-3.1-flash-image', provider=provider)
    reference = BinaryImage(
        data=PNG, media_type='image/png', vendor_metadata={'media_resolution': {'level': 'MEDIA_RESOLUTION_LOW'}}
    )
    result = await ImageGenerator(model).generate(
        'A watercolor map', images=[reference], settings={'aspect_ratio': '16:9', 'extra_headers': {'x-trace': 't'}}
    )
    assert [image.content.data for image in result.images] == [JPEG]  # the thought's draft is left out
    image = result.images[0]
    assert (image.content.media_type, image.output_format, image.provider_details) == (
        'image/jpeg',
        'jpeg',
        {'has_thought_signature': True},
    )
    assert (result.model_name, result.provider_name, result.provider_response_id) == (
        'gemini-3.1-flash-image-001',
        'google',
        'resp-1',
    )
    assert (result.usage.input_tokens, result.usage.output_tokens) == (10, 1290)
    assert result.provider_details == {'finish_reason': 'STOP', 'traffic_type': 'ON_DEMAND'}
    assert result.provider_url == provider.base_url
    request = local_server.received[0]
    assert request['path'] == '/v1beta/models/gemini-3.1-flash-image:generateContent'
    assert request['headers']['x-goog-api-key'] == SECRET
    assert request['headers']['x-trace'] == 't'
    _validate(request['body'])
    assert request['body'] == {
        'contents': [
            {
                'role': 'user',
                'parts': [
                    {'text': 'A watercolor map'},
                    {
                        'inlineData': {'mimeType': 'image/png', 'data': base64.b64encode(PNG).decode()},
                        'mediaResolution': {'level': 'MEDIA_RESOLUTION_LOW'},
                    },
                ],
            }
        ],
        'generationConfig': {
            'responseModalities': ['IMAGE'],
            'imageConfig': {'aspectRatio': '16:9', 'imageSize': '1K'},
        },
    }
    assert SECRET not in repr(model)


@pytest.mark.anyio
async def test_dimensions_become_an_aspect_ratio_and_a_size(
    local_server: LocalServer, provider: GoogleProvider
) -> None:
    local_server.script(*(Reply(200, _answer(_inline(PNG))) for _ in range(4)))
    flash = GoogleImageGenerationModel('gemini-3.1-flash-image', provider=provider)
    agreeing = GoogleImageGenerationSettings(dimensions=(1376, 768), google_image_config={'aspectRatio': '16:9'})
    result = await flash.generate('x', settings=agreeing)  # no warning: the two agree
    assert (result.image.media_type, result.images[0].output_format) == ('image/png', 'png')  # from the bytes
    with pytest.warns(UserWarning, match='used provider-specific settings instead of: `dimensions`'):
        await flash.generate(
            'x',
            settings=GoogleImageGenerationSettings(dimensions=(176, 1456), google_image_config={'image_size': '2K'}),
        )
    await GoogleImageGenerationModel('gemini-2.5-flash-image', provider=provider).generate(
        'x', settings={'aspect_ratio': '4:5'}
    )
    pro = GoogleImageGenerationModel('gemini-3-pro-image', provider=provider)
    await pro.generate('x', settings={'dimensions': (5504, 3072)})
    configs = [r['body']['generationConfig']['imageConfig'] for r in local_server.received]
    assert configs == [
        {'aspectRatio': '16:9', 'imageSize': '1K'},
        {'imageSize': '2K', 'aspectRatio': '1:8'},
        {'aspectRatio': '4:5'},  # Gemini 2.5 has no size tiers
        {'aspectRatio': '16:9', 'imageSize': '4K'},
    ]
    for body in local_server.received:
        _validate(body['body'])
    with pytest.raises(UserError, match=r"'gemini-3-pro-image' does not support `dimensions=\(688, 384\)`"):
        await pro.generate('x', settings={'dimensions': (688, 384)})  # Pro has no 512 tier
    with pytest.raises(UserError, match='does not support `dimensions'):
        await GoogleImageGenerationModel('gemini-9-image', provider=provider).generate(
            'x', settings={'dimensions': (1024, 1024)}
        )


@pytest.mark.anyio
async def test_reference_images_by_file_and_by_url(local_server: LocalServer, provider: GoogleProvider) -> None:
    local_server.files['/ref.jpg'] = (200, 'image/jpeg', JPEG)
    local_server.script(Reply(200, _answer(_inline(PNG, 'image/png'))))
    model = GoogleImageGenerationModel('gemini-3.1-flash-image', provider=provider)
    references: list[ImageGenerationInput] = [
        UploadedFile(f'{FILES_API}/abc', 'google', media_type='image/png'),
        ImageUrl(f'{FILES_API}/def', media_type='image/webp'),
        ImageUrl(f'{local_server.url.removesuffix("/v1")}/ref.jpg', force_download='allow-local'),
    ]
    await model.generate('Combine these', images=references, settings={'extra_body': {'labels': {'team': 'a'}}})
    body = local_server.received[0]['body']
    _validate(body)
    assert body['contents'][0]['parts'][1:] == [
        {'fileData': {'mimeType': 'image/png', 'fileUri': f'{FILES_API}/abc'}},
        {'fileData': {'mimeType': 'image/webp', 'fileUri': f'{FILES_API}/def'}},
        {'inlineData': {'mimeType': 'image/jpeg', 'data': base64.b64encode(JPEG).decode()}},
    ]
    assert body['labels'] == {'team': 'a'}
    assert local_server.downloads == ['/ref.jpg']
    with pytest.raises(UserError, match='Google Files API URI starting with `https://`'):
        await model.generate('x', images=[UploadedFile('files/abc', 'google', media_type='image/png')])
    with pytest.raises(UserError, match="provider_name='openai'"):
        await model.generate('x', images=[UploadedFile('file-1', 'openai', media_type='image/png')])
    with pytest.raises(UserError, match='no file extension'):
        await model.generate('x', images=[ImageUrl(f'{FILES_API}/no-extension')])


@pytest.mark.anyio
async def test_blocked_and_empty_answers(local_server: LocalServer, provider: GoogleProvider) -> None:
    local_server.script(
        Reply(200, {'promptFeedback': {'blockReason': 'SAFETY', 'blockReasonMessage': 'no', 'safetyRatings': [{}]}}),
        Reply(200, _answer({'text': 'I cannot draw that.'}, finish_reason='IMAGE_SAFETY')),
        Reply(200, _answer({'text': 'Here is some text instead.'}, finish_reason='NO_IMAGE')),
        Reply(200, {'candidates': [{'content': {}}]}),
        Reply(200, {'promptFeedback': {'blockReason': 'OTHER'}}),
        Reply(200, _answer(_inline(b'not base64 at all', 'image/png') | {'inlineData': {'data': '@@@'}})),
    )
    model = GoogleImageGenerationModel('gemini-3.1-flash-image', provider=provider)
    with pytest.raises(ContentFilterError, match=r'blocked for content moderation \(reason: SAFETY\)') as blocked:
        await model.generate('x')
    assert 'block_reason_message' in str(blocked.value.body)
    with pytest.raises(ContentFilterError, match=r'\(reason: IMAGE_SAFETY\)'):
        await model.generate('x')
    with pytest.raises(UnexpectedModelBehavior, match=r'did not contain any images \(finish_reason: NO_IMAGE\)'):
        await model.generate('x')
    with pytest.raises(UnexpectedModelBehavior, match=r'did not contain any images$'):
        await model.generate('x')
    with pytest.raises(ContentFilterError, match=r'\(reason: OTHER\)') as other:
        await model.generate('x')
    assert other.value.body == "{'block_reason': 'OTHER'}"
    with pytest.raises(UnexpectedModelBehavior, match='valid base64'):
        await model.generate('x')


@pytest.mark.anyio
async def test_errors_settings_and_names(
    local_server: LocalServer, provider: GoogleProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    error = {'error': {'code': 429, 'message': 'Resource exhausted', 'status': 'RESOURCE_EXHAUSTED'}}
    local_server.script(Reply(429, error), Reply(200, _answer(_inline(PNG, 'image/png'))))
    provider.max_retries = 0
    model = GoogleImageGenerationModel('models/gemini-3.1-flash-image', provider=provider)
    with pytest.raises(ModelHTTPError) as raised:
        await model.generate('x')
    assert (raised.value.status_code, raised.value.body) == (429, error)
    assert SECRET not in str(raised.value)
    local_server.script(
        Reply(200, _answer(_inline(PNG), createTime='2026-01-01T00:00:00Z') | {'promptFeedback': {}}),
    )
    local_server.replies[-1].body['candidates'][0]['safetyRatings'] = [{'category': 'HARM_CATEGORY_HARASSMENT'}]
    with pytest.warns(UserWarning, match='ignored unsupported settings: `extra_body`'):
        first = await model.generate('x', settings={'extra_body': ['not', 'a', 'dict']})
    second = await model.generate('x')
    assert first.provider_details == {'finish_reason': 'STOP', 'traffic_type': 'ON_DEMAND'}
    assert second.provider_details == {
        'finish_reason': 'STOP',
        'safety_ratings': [{'category': 'HARM_CATEGORY_HARASSMENT'}],
        'timestamp': '2026-01-01T00:00:00Z',
        'traffic_type': 'ON_DEMAND',
    }
    monkeypatch.setenv('GOOGLE_API_KEY', SECRET)
    inferred = infer_image_generation_model('google:gemini-3-pro-image')
    assert isinstance(inferred, GoogleImageGenerationModel)
    assert (inferred.model_name, inferred.system) == ('gemini-3-pro-image', 'google')
    with pytest.raises(UserError, match='Vertex AI'):
        infer_image_generation_model('google-cloud:gemini-3-pro-image')
