"""`OpenAIImageGenerationModel`: OpenAI's GPT Image models on the Images API (`/images/generations`, and
`/images/edits` for reference images), over httpx."""

from __future__ import annotations as _annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from ..exceptions import ContentFilterError, ModelAPIError, ModelHTTPError, UnexpectedModelBehavior, UserError
from ..messages import BinaryImage
from ..models._connection_error import connection_error_message
from ..models._model import check_allow_model_requests
from ..models._task_model import ProviderBacked, add_extra_body, post_json, request_headers
from ..providers import Provider
from ..usage import RequestUsage
from ._request import decode_base64
from .base import ImageGenerationInput, ImageGenerationModel
from .result import GeneratedImage, ImageGenerationResult, media_type_of
from .settings import ImageGenerationSettings

__all__ = ('OpenAIImageGenerationModel', 'OpenAIImageGenerationSettings')

_GPT_IMAGE_1 = ('gpt-image-1', 'gpt-image-1.5', 'gpt-image-1-mini')
_GPT_IMAGE_1_SIZES = {'1:1': '1024x1024', '2:3': '1024x1536', '3:2': '1536x1024'}
"""GPT Image 1.x takes three sizes (and `'auto'`)."""
_GPT_IMAGE_2_SIZES = {
    '1:1': '1024x1024', '1:2': '704x1408', '2:1': '1408x704', '2:3': '832x1248', '3:2': '1248x832',
    '3:4': '864x1152', '4:3': '1152x864', '4:5': '896x1120', '5:4': '1120x896', '9:16': '720x1280',
    '9:19.5': '672x1456', '9:20': '720x1600', '16:9': '1280x720', '19.5:9': '1456x672', '20:9': '1600x720',
    '21:9': '1568x672',
}  # fmt: skip
"""GPT Image 2 takes any size within its limits; an aspect ratio becomes a size of about one megapixel."""
_INPUT_EXTENSIONS = {'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp'}


class OpenAIImageGenerationSettings(ImageGenerationSettings, total=False):
    """Settings of an OpenAI image request: the shared ones and OpenAI's own, prefixed `openai_`."""

    openai_n: int
    """How many images to make."""
    openai_output_format: Literal['png', 'jpeg', 'webp']
    """The format asked for (the result's `output_format` is read from the bytes returned)."""
    openai_size: str
    """The Images API's `size` (`'1024x1024'`, `'auto'`, ...); wins over `dimensions` and `aspect_ratio`."""
    openai_quality: str
    """`'low'`, `'medium'`, `'high'` or `'auto'`."""
    openai_background: Literal['transparent', 'opaque', 'auto']
    """The background."""
    openai_input_fidelity: Literal['high', 'low']
    """How closely an edit keeps the reference images (edits only)."""
    openai_moderation: Literal['auto', 'low']
    """How strict the moderation is (generations only)."""
    openai_output_compression: int
    """Compression of JPEG and WebP output, 0-100."""
    openai_user: str
    """An id of your end user."""


def _family(model_name: str, names: Sequence[str]) -> bool:
    return any(model_name == name or model_name.startswith(f'{name}-') for name in names)


def _size(model_name: str, settings: OpenAIImageGenerationSettings) -> str | None:
    """The `size` of a request: `openai_size` as given, else `dimensions` (checked where the family is known), else
    the size of `aspect_ratio` for the model's family.

    Raises:
        UserError: the model cannot make that size or aspect ratio.
    """
    if (size := settings.get('openai_size')) is not None:
        return size
    if (dimensions := settings.get('dimensions')) is not None:
        width, height = dimensions
        size = f'{width}x{height}'
        if _family(model_name, _GPT_IMAGE_1) and size not in _GPT_IMAGE_1_SIZES.values():
            supported = ', '.join(_GPT_IMAGE_1_SIZES.values())
            raise UserError(
                f'OpenAI model {model_name!r} does not support `dimensions={dimensions!r}`. '
                f'Supported exact dimensions are: {supported}.'
            )
        return size
    if (ratio := settings.get('aspect_ratio')) is not None:
        sizes = _GPT_IMAGE_1_SIZES if _family(model_name, _GPT_IMAGE_1) else _GPT_IMAGE_2_SIZES
        if ratio not in sizes:
            raise UserError(
                f'OpenAI model {model_name!r} does not support `aspect_ratio={ratio!r}`. '
                f'Supported aspect ratios are: {", ".join(sizes)}.'
            )
        return sizes[ratio]
    return None


@dataclass(init=False, eq=False)
class OpenAIImageGenerationModel(ProviderBacked, ImageGenerationModel):
    """A GPT Image model on OpenAI's Images API (`OPENAI_API_KEY`), or on a compatible server (`provider=`).

    Images come back as base64 bytes (the `url` response format of DALL-E is not used). A request with reference
    images goes to `/images/edits`; they must be `BinaryImage`s (PNG, JPEG or WebP).
    """

    def __init__(
        self,
        model_name: str,
        *,
        provider: str | Provider[Any] = 'openai',
        settings: ImageGenerationSettings | None = None,
    ) -> None:
        """Configure the model: its name (`'gpt-image-2'`), the provider or its name, the defaults of its requests.

        Raises:
            UserError: a DALL-E model, which returns URLs and takes other sizes and qualities.
        """
        if model_name.startswith('dall-e'):
            raise UserError(
                f'OpenAI model {model_name!r} is not supported for image generation: use a GPT Image model '
                "such as 'gpt-image-2'."
            )
        self._bind(model_name, provider)
        super().__init__(settings=settings)

    async def generate(
        self,
        prompt: str,
        *,
        images: Sequence[ImageGenerationInput] | None = None,
        settings: ImageGenerationSettings | None = None,
    ) -> ImageGenerationResult:
        """The images of `prompt`, edited from `images` when given.

        Raises:
            ContentFilterError: OpenAI's moderation blocked the request.
            ModelHTTPError: the API answered with another error.
            ModelAPIError: the API could not be reached.
            UserError: the prompt is empty, or a setting or reference image is not one the model takes.
        """
        check_allow_model_requests()
        prompt, references, merged = self.prepare_generate(prompt, images=images, settings=settings)
        openai = cast(OpenAIImageGenerationSettings, merged)
        fields: dict[str, Any] = {'model': self._model_name, 'prompt': prompt}
        if (size := _size(self._model_name, openai)) is not None:
            fields['size'] = size
        for key in ('n', 'output_format', 'quality', 'background', 'output_compression', 'user'):
            if (value := openai.get(f'openai_{key}')) is not None:
                fields[key] = value
        if references:
            if (fidelity := openai.get('openai_input_fidelity')) is not None:
                fields['input_fidelity'] = fidelity
        elif (moderation := openai.get('openai_moderation')) is not None:
            fields['moderation'] = moderation
        add_extra_body(fields, openai)  # an `extra_body` that is no dict is left out, as before
        headers = request_headers(self._provider, openai)
        try:
            if references:
                data = await self._edit(fields, references, headers)
            else:
                data = await self._generate(fields, headers)
        except ModelHTTPError as e:
            if isinstance(e.body, Mapping) and e.body.get('code') == 'moderation_blocked':
                raise ContentFilterError(
                    'OpenAI image generation was blocked for content moderation', str(e.body)
                ) from e
            raise
        return self._result(prompt, data)

    async def _generate(self, fields: dict[str, Any], headers: dict[str, str]) -> Any:
        return await post_json(
            self._provider,
            'images/generations',
            fields,
            headers,
            model_name=self._model_name,
            operation='image_generation',
            endpoint_name='images',
        )

    async def _edit(
        self, fields: dict[str, Any], references: list[ImageGenerationInput], headers: dict[str, str]
    ) -> Any:
        """A multipart `/images/edits` request (one attempt: uploads are not retried)."""
        import httpx

        files = []
        for index, image in enumerate(references):
            if not isinstance(image, BinaryImage):
                raise UserError(
                    'OpenAI image editing in edgewise.agent takes reference images as `BinaryImage`s: download an '
                    '`ImageUrl` or an uploaded file and pass its bytes.'
                )
            extension = _INPUT_EXTENSIONS.get(image.media_type)
            if extension is None:
                raise UserError(
                    'OpenAI image editing only supports PNG, JPEG, or WebP input images, '
                    f'got media type {image.media_type!r}'
                )
            files.append(('image[]', (f'image-{index}.{extension}', image.data, image.media_type)))
        data = {key: str(value) for key, value in fields.items()}
        try:
            response = await self._provider.client.post(
                f'{self._provider.base_url}/images/edits', data=data, files=files, headers=headers
            )
        except httpx.TransportError as e:
            raise ModelAPIError(self._model_name, connection_error_message(e)) from e
        if response.status_code >= 400:
            body: Any
            try:
                body = response.json()
                body = body.get('error', body) if isinstance(body, dict) else body
            except ValueError:
                body = response.text
            raise ModelHTTPError(response.status_code, self._model_name, body, headers=response.headers)
        try:
            return response.json()
        except ValueError as e:
            raise UnexpectedModelBehavior('Invalid response from OpenAI images endpoint, expected JSON data') from e

    def _result(self, prompt: str, data: Any) -> ImageGenerationResult:
        items = data.get('data') if isinstance(data, Mapping) else None
        if not items:
            raise UnexpectedModelBehavior(
                'OpenAI image generation response did not contain any images', str(data)[:2000]
            )
        images: list[GeneratedImage] = []
        for item in items:
            encoded = item.get('b64_json') if isinstance(item, Mapping) else None
            if not encoded:
                raise UnexpectedModelBehavior('OpenAI image generation response did not contain base64 image data')
            raw = decode_base64(encoded, 'OpenAI')
            media_type = media_type_of(raw)
            if media_type is None:
                raise UnexpectedModelBehavior(
                    'OpenAI image generation response did not contain a recognized image format'
                )
            images.append(
                GeneratedImage(
                    BinaryImage(data=raw, media_type=media_type),
                    revised_prompt=item.get('revised_prompt'),
                    output_format=media_type.removeprefix('image/'),
                )
            )
        details = {k: data[k] for k in ('background', 'output_format', 'quality', 'size') if data.get(k) is not None}
        return ImageGenerationResult(
            images,
            prompt=prompt,
            usage=_usage(data.get('usage')),
            model_name=self._model_name,
            provider_name=self.system,
            provider_url=self.base_url,
            provider_details=details or None,
        )


def _usage(usage: Any) -> RequestUsage:
    if not isinstance(usage, Mapping):
        return RequestUsage()
    input_details = usage.get('input_tokens_details') or {}
    details = {f'input_{k}': v for k, v in input_details.items() if type(v) is int}
    return RequestUsage(
        input_tokens=usage.get('input_tokens') or 0, output_tokens=usage.get('output_tokens') or 0, details=details
    )
