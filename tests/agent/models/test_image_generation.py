"""`edgewise.agent.images`: `ImageGenerator` with the test model, OpenAI's Images API over a real server on
127.0.0.1 (generations and edits), sizes and aspect ratios, moderation, wrapped models, names and spans."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from edgewise.agent import GeneratedImage, ImageGenerationModel, ImageGenerationResult, ImageGenerator
from edgewise.agent.exceptions import ContentFilterError, ModelHTTPError, UnexpectedModelBehavior, UserError
from edgewise.agent.images import (
    ImageGenerationSettings,
    TestImageGenerationModel,
    WrapperImageGenerationModel,
    infer_image_generation_model,
    merge_image_generation_settings,
)
from edgewise.agent.images.openai import OpenAIImageGenerationModel, OpenAIImageGenerationSettings
from edgewise.agent.images.result import media_type_of
from edgewise.agent.messages import BinaryImage, ImageUrl
from edgewise.agent.providers.openai import OpenAIProvider

from .conftest import LocalServer, Reply

SECRET = 'sk-images-secret'
JPEG = b'\xff\xd8\xff\xe0' + b'0' * 16


def _png() -> bytes:
    from edgewise.agent.images.test import _ONE_PIXEL_PNG  # pyright: ignore[reportPrivateUsage]

    return _ONE_PIXEL_PNG


def _reply(*images: bytes, **extra: Any) -> dict[str, Any]:
    return {
        'created': 1,
        'data': [
            {'b64_json': base64.b64encode(image).decode(), 'revised_prompt': 'a nicer prompt'} for image in images
        ],
        'usage': {
            'input_tokens': 12,
            'output_tokens': 272,
            'input_tokens_details': {'text_tokens': 12, 'image_tokens': 0},
        },
        **extra,
    }


@pytest.mark.anyio
async def test_the_test_model_through_a_generator() -> None:
    model = TestImageGenerationModel(settings={'aspect_ratio': '1:1'})
    generator = ImageGenerator(model, settings={'extra_headers': {'x-a': '1'}})
    reference = BinaryImage(data=_png(), media_type='image/png')
    result = await generator.generate('A watercolor map of a floating city.', images=[reference])
    assert result.image.media_type == 'image/png'
    assert media_type_of(result.image.data) == 'image/png'
    assert (result.model_name, result.provider_name, result.usage.input_tokens) == ('test', 'test', 7)
    assert model.last_images == [reference]
    assert model.last_settings == {'aspect_ratio': '1:1', 'extra_headers': {'x-a': '1'}}
    assert result.images[0].output_format == 'png'
    assert generator.generate_sync.__name__ == 'generate_sync'


def test_sync_generation_and_the_checks_every_model_makes() -> None:
    generator = ImageGenerator(TestImageGenerationModel())
    assert generator.generate_sync('a cat').image.data == _png()
    with pytest.raises(UserError, match='non-empty prompt'):
        generator.generate_sync('  ')
    with pytest.raises(UserError, match='mutually exclusive'):
        generator.generate_sync('a cat', settings={'dimensions': (1024, 1024), 'aspect_ratio': '1:1'})
    with pytest.raises(UserError, match='tuple of positive integers'):
        generator.generate_sync('a cat', settings={'dimensions': (0, 1024)})
    with pytest.raises(UserError, match='must be `ImageUrl`, `BinaryImage`, or `UploadedFile`'):
        generator.generate_sync('a cat', images=['not an image'])  # type: ignore[list-item]


def test_names_and_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('OPENAI_API_KEY', 'k')
    generator = ImageGenerator('openai:gpt-image-2')
    assert generator.model == 'openai:gpt-image-2'
    test_model = TestImageGenerationModel()
    with generator.override(model=test_model):
        generator.generate_sync('a cat', settings={'aspect_ratio': '16:9'})
    assert test_model.last_settings == {'aspect_ratio': '16:9'}
    with generator.override():
        assert isinstance(generator._get_model(), OpenAIImageGenerationModel)
    assert isinstance(ImageGenerator('openai:gpt-image-1.5', defer_model_check=False).model, OpenAIImageGenerationModel)
    assert isinstance(infer_image_generation_model('test'), TestImageGenerationModel)
    with pytest.raises(ValueError, match='provider prefix'):
        infer_image_generation_model('gpt-image-2')
    with pytest.raises(UserError, match="'anthropic' does not support direct image generation"):
        infer_image_generation_model('anthropic:claude-sonnet-4-6')
    with pytest.raises(UserError, match='use a GPT Image model'):
        OpenAIImageGenerationModel('dall-e-3')


@pytest.mark.anyio
async def test_openai_generations_over_http(local_server: LocalServer) -> None:
    local_server.script(
        Reply(200, _reply(_png(), JPEG, size='1536x1024', quality='high')),
        Reply(200, _reply(_png())),
        Reply(200, _reply(_png())),
    )
    provider = OpenAIProvider(base_url=local_server.url, api_key=SECRET)
    old = OpenAIImageGenerationModel('gpt-image-1.5', provider=provider)
    new = OpenAIImageGenerationModel('gpt-image-2', provider=provider)
    settings = OpenAIImageGenerationSettings(
        aspect_ratio='3:2', openai_n=2, openai_quality='high', openai_moderation='low', extra_body={'stream': False}
    )
    async with provider:
        result = await ImageGenerator(old).generate('a cat', settings=settings)
        await new.generate('a cat', settings={'aspect_ratio': '21:9'})
        await new.generate('a cat', settings=OpenAIImageGenerationSettings(dimensions=(1000, 600), openai_size='auto'))
    assert [image.content.media_type for image in result.images] == ['image/png', 'image/jpeg']
    assert [image.output_format for image in result.images] == ['png', 'jpeg']
    assert result.images[0].revised_prompt == 'a nicer prompt'
    assert (result.usage.input_tokens, result.usage.output_tokens) == (12, 272)
    assert result.provider_details == {'quality': 'high', 'size': '1536x1024'}
    assert (result.provider_name, result.provider_url) == ('openai', local_server.url)
    first, second, third = local_server.received
    assert first['path'] == '/v1/images/generations'
    assert first['body'] == {
        'model': 'gpt-image-1.5',
        'prompt': 'a cat',
        'size': '1536x1024',
        'n': 2,
        'quality': 'high',
        'moderation': 'low',
        'stream': False,
    }
    assert first['headers']['authorization'] == f'Bearer {SECRET}'
    assert second['body']['size'] == '1568x672'  # GPT Image 2: about a megapixel at 21:9
    assert third['body']['size'] == 'auto'  # the provider's own size wins


def test_sizes_a_model_cannot_make_are_refused() -> None:
    provider = OpenAIProvider(api_key='k')
    old = ImageGenerator(OpenAIImageGenerationModel('gpt-image-1', provider=provider))
    with pytest.raises(UserError, match=r'does not support `dimensions=\(1000, 600\)`'):
        old.generate_sync('a cat', settings={'dimensions': (1000, 600)})
    with pytest.raises(UserError, match="does not support `aspect_ratio='16:9'`"):
        old.generate_sync('a cat', settings={'aspect_ratio': '16:9'})
    with pytest.raises(UserError, match="does not support `aspect_ratio='1:8'`"):
        ImageGenerator(OpenAIImageGenerationModel('gpt-image-2', provider=provider)).generate_sync(
            'a cat', settings={'aspect_ratio': '1:8'}
        )


@pytest.mark.anyio
async def test_openai_edits_send_the_reference_images_as_multipart(local_server: LocalServer) -> None:
    local_server.script(Reply(200, _reply(_png())))
    provider = OpenAIProvider(base_url=local_server.url, api_key=SECRET)
    model = OpenAIImageGenerationModel('gpt-image-2', provider=provider)
    references = [BinaryImage(data=_png(), media_type='image/png'), BinaryImage(data=JPEG, media_type='image/jpeg')]
    settings = OpenAIImageGenerationSettings(
        dimensions=(1024, 1024), openai_input_fidelity='high', openai_moderation='low'
    )
    async with provider:
        result = await model.generate('make it blue', images=references, settings=settings)
        with pytest.raises(UserError, match='takes reference images as `BinaryImage`s'):
            await model.generate('x', images=[ImageUrl('https://example.com/cat.png')])
        with pytest.raises(UserError, match="got media type 'image/gif'"):
            await model.generate('x', images=[BinaryImage(data=b'GIF89a', media_type='image/gif')])
    assert result.image.media_type == 'image/png'
    (edit,) = local_server.received
    assert edit['path'] == '/v1/images/edits'
    assert edit['body']['content_type'].startswith('multipart/form-data')
    assert edit['body']['fields'] == {
        'model': 'gpt-image-2',
        'prompt': 'make it blue',
        'size': '1024x1024',
        'input_fidelity': 'high',
    }
    assert edit['body']['files'] == [('image[]', 'image-0.png', 'image/png'), ('image[]', 'image-1.jpg', 'image/jpeg')]


@pytest.mark.anyio
async def test_openai_errors_moderation_and_bad_answers(local_server: LocalServer) -> None:
    blocked = {
        'error': {
            'message': 'Your request was rejected',
            'type': 'image_generation_user_error',
            'code': 'moderation_blocked',
        }
    }
    local_server.script(
        Reply(400, blocked),
        Reply(400, blocked),
        Reply(401, {'error': {'message': 'bad key', 'type': 'invalid_request_error'}}),
        Reply(200, {'created': 1, 'data': []}),
        Reply(200, {'created': 1, 'data': [{'url': 'https://example.com/x.png'}]}),
        Reply(200, {'created': 1, 'data': [{'b64_json': '***'}]}),
        Reply(200, {'created': 1, 'data': [{'b64_json': base64.b64encode(b'plain text').decode()}]}),
        Reply(500, b'oops'),
        Reply(200, b'not json'),
    )
    provider = OpenAIProvider(base_url=local_server.url, api_key=SECRET, max_retries=0)
    model = OpenAIImageGenerationModel('gpt-image-2', provider=provider)
    reference = [BinaryImage(data=_png(), media_type='image/png')]
    async with provider:
        with pytest.raises(ContentFilterError, match='blocked for content moderation'):
            await model.generate('x')
        with pytest.raises(ContentFilterError):
            await model.generate('x', images=reference)
        with pytest.raises(ModelHTTPError) as error:
            await model.generate('x')
        assert error.value.status_code == 401
        assert SECRET not in str(error.value)
        for message in (
            'did not contain any images',
            'did not contain base64',
            'valid base64',
            'recognized image format',
        ):
            with pytest.raises(UnexpectedModelBehavior, match=message):
                await model.generate('x')
        with pytest.raises(ModelHTTPError, match='oops'):
            await model.generate('x', images=reference)
        with pytest.raises(UnexpectedModelBehavior, match='expected JSON'):
            await model.generate('x', images=reference)


@pytest.mark.anyio
async def test_an_edit_that_cannot_reach_the_server() -> None:
    provider = OpenAIProvider(base_url='http://127.0.0.1:9/v1', api_key=SECRET)
    model = OpenAIImageGenerationModel('gpt-image-2', provider=provider)
    async with provider:
        with pytest.raises(Exception, match='Connection error') as error:
            await model.generate('x', images=[BinaryImage(data=_png(), media_type='image/png')])
    assert type(error.value).__name__ in ('ModelAPIError', 'ModelConnectionError')


@pytest.mark.anyio
async def test_wrapped_and_own_models_and_spans(capfire: Any) -> None:
    class Counting(WrapperImageGenerationModel):
        calls = 0

        async def generate(
            self, prompt: str, *, images: Any = None, settings: ImageGenerationSettings | None = None
        ) -> Any:
            self.calls += 1
            return await super().generate(prompt, images=images, settings=settings)

    inner = TestImageGenerationModel('inner', provider_name='p', settings={'aspect_ratio': '1:1'})
    wrapped = Counting(inner)
    assert (wrapped.model_name, wrapped.system, wrapped.settings, wrapped.base_url) == (
        'inner',
        'p',
        {'aspect_ratio': '1:1'},
        None,
    )
    assert wrapped.last_images == []  # other attributes come from the wrapped model
    await ImageGenerator(wrapped).generate('a cat')
    assert wrapped.calls == 1
    assert isinstance(Counting('test').wrapped, TestImageGenerationModel)
    with pytest.raises(AttributeError):
        WrapperImageGenerationModel.__new__(WrapperImageGenerationModel).wrapped  # noqa: B018

    class Solid(ImageGenerationModel):
        @property
        def model_name(self) -> str:
            return 'solid'

        @property
        def system(self) -> str:
            return 'local'

        async def generate(
            self, prompt: str, *, images: Any = None, settings: ImageGenerationSettings | None = None
        ) -> Any:
            prompt, _, _ = self.prepare_generate(prompt, images=images, settings=settings)
            image = GeneratedImage(BinaryImage(data=_png(), media_type='image/png'))
            return ImageGenerationResult([image], prompt=prompt, model_name='solid', provider_name='local')

    solid = Solid()
    assert (solid.settings, solid.base_url) == (None, None)
    assert [s['name'] for s in capfire.exporter.exported_spans_as_dict()] == []  # traced when asked to
    await ImageGenerator(solid, instrument=True).generate('a')
    ImageGenerator.instrument_all(True)
    try:
        await ImageGenerator(solid).generate('a')
    finally:
        ImageGenerator.instrument_all(False)
    assert [s['name'] for s in capfire.exporter.exported_spans_as_dict()] == ['image_generation {model_name}'] * 2


def test_a_results_cost_comes_from_genai_prices() -> None:
    result = ImageGenerationResult(
        [GeneratedImage(BinaryImage(data=_png(), media_type='image/png'))], prompt='x', model_name='gpt-image-1',
        provider_name='openai',
    )  # fmt: skip
    result.usage.input_tokens, result.usage.output_tokens = 1_000_000, 0
    assert float(result.cost().total_price) > 0


def test_merging_settings() -> None:
    assert merge_image_generation_settings(None, None) is None
    assert merge_image_generation_settings(None, {'aspect_ratio': '1:1'}) == {'aspect_ratio': '1:1'}
    merged = merge_image_generation_settings(
        {'aspect_ratio': '1:1', 'extra_headers': {'a': '1'}}, {'aspect_ratio': '2:3'}
    )
    assert merged == {'aspect_ratio': '2:3', 'extra_headers': {'a': '1'}}
