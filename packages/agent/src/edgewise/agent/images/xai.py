"""`XaiImageGenerationModel`: xAI's Grok Imagine models on its REST images API (`/v1/images/generations`, and
`/v1/images/edits` for reference images), over httpx."""

from __future__ import annotations as _annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from ..exceptions import ContentFilterError, UnexpectedModelBehavior, UserError
from ..messages import BinaryImage, ImageUrl
from ..models._downloads import download
from ..models._model import check_allow_model_requests
from ..models._task_model import ProviderBacked, add_extra_body, post_json, request_headers
from ..providers import Provider
from ..usage import RequestUsage
from ._request import check_count, decode_base64, warn_settings
from ._xai_geometry import XaiAspectRatio, XaiResolution, resolve_xai_geometry
from .base import ImageGenerationInput, ImageGenerationModel
from .result import GeneratedImage, ImageGenerationResult, media_type_of
from .settings import ImageGenerationSettings

__all__ = (
    'LatestXaiImageGenerationModelNames',
    'XaiImageGenerationModel',
    'XaiImageGenerationModelName',
    'XaiImageGenerationSettings',
)

LatestXaiImageGenerationModelNames = Literal[
    'grok-imagine-image-2.0', 'grok-imagine-image-quality', 'grok-imagine-image'
]
"""xAI's current image models."""

XaiImageGenerationModelName = str | LatestXaiImageGenerationModelNames
"""The name of an xAI image model (any model id the API takes)."""


class XaiImageGenerationSettings(ImageGenerationSettings, total=False):
    """Settings of an xAI image request: the shared ones and xAI's own, prefixed `xai_`."""

    xai_n: int
    """How many images to make."""
    xai_user: str
    """An id of your end user."""
    xai_aspect_ratio: XaiAspectRatio
    """xAI's aspect ratio; wins over `aspect_ratio` and `dimensions`."""
    xai_resolution: XaiResolution
    """The resolution tier (`'1k'`, `'2k'`); wins over the one of `dimensions`."""


@dataclass(init=False, eq=False)
class XaiImageGenerationModel(ProviderBacked, ImageGenerationModel):
    """A Grok Imagine model on xAI's API (`XaiProvider`: key in `XAI_API_KEY`).

    Images come back as base64 data. Reference images go to the edits endpoint, by URL (`ImageUrl`) or as data URLs
    (`BinaryImage`, and an `ImageUrl` with `force_download`). xAI moderates quietly: an image it flags comes back
    empty; the others are returned, with the flagged positions in `provider_details['moderated_image_indices']`,
    and only a request whose every image was flagged raises `ContentFilterError`.
    """

    def __init__(
        self,
        model_name: XaiImageGenerationModelName,
        *,
        provider: str | Provider[Any] = 'xai',
        settings: ImageGenerationSettings | None = None,
    ) -> None:
        """Configure the model: its name (`'grok-imagine-image'`), the provider or its name (`'xai'`), and the
        defaults of its requests."""
        self._bind(model_name, provider)
        ImageGenerationModel.__init__(self, settings=settings)

    async def generate(
        self,
        prompt: str,
        *,
        images: Sequence[ImageGenerationInput] | None = None,
        settings: ImageGenerationSettings | None = None,
    ) -> ImageGenerationResult:
        """The images of `prompt`, edited from `images` when given.

        Raises:
            ContentFilterError: xAI blocked the request, or flagged every image.
            ModelHTTPError: the API answered with an error (after retries).
            ModelAPIError: the API could not be reached (after retries).
            UserError: the prompt is empty, a setting is invalid, or a reference image cannot be sent.
        """
        check_allow_model_requests()
        prompt, references, merged = self.prepare_generate(prompt, images=images, settings=settings)
        xai = cast(XaiImageGenerationSettings, merged)
        check_count('xAI', xai.get('xai_n'))
        geometry = resolve_xai_geometry(
            self._model_name,
            xai,
            own_aspect_ratio=xai.get('xai_aspect_ratio'),
            own_resolution=xai.get('xai_resolution'),
        )
        body: dict[str, Any] = {'model': self._model_name, 'prompt': prompt, 'response_format': 'b64_json'}
        for key, value in (
            ('n', xai.get('xai_n')),
            ('aspect_ratio', geometry.aspect_ratio),
            ('resolution', geometry.resolution),
            ('user', xai.get('xai_user')),
        ):
            if value is not None:
                body[key] = value
        if references:
            urls = [{'url': await self._url(image)} for image in references]
            if len(urls) == 1:
                body['image'] = urls[0]
            else:
                body['images'] = urls
        ignored = add_extra_body(body, xai)
        warn_settings(self.system, ignored=ignored, conflicts=geometry.conflicts)
        data = await post_json(
            self._provider,
            'images/edits' if references else 'images/generations',
            body,
            request_headers(self._provider, xai),
            model_name=self._model_name,
            operation='image_generation',
            endpoint_name='images',
        )
        return self._result(prompt, data if isinstance(data, Mapping) else {})

    async def _url(self, image: ImageGenerationInput) -> str:
        if isinstance(image, BinaryImage):
            return image.data_uri
        if isinstance(image, ImageUrl):
            if image.force_download:
                return (await download(image, self._provider.client)).data_uri
            return image.url
        raise UserError(
            'xAI image editing in edgewise.agent takes reference images by URL or as data: pass an `ImageUrl` or a '
            "`BinaryImage` (uploaded files are not supported over xAI's REST API)."
        )

    def _result(self, prompt: str, data: Mapping[str, Any]) -> ImageGenerationResult:
        if block_reason := data.get('block_reason'):
            raise ContentFilterError(
                f'xAI image generation was blocked for content moderation (reason: {block_reason})', str(data)[:2000]
            )
        items = data.get('data')
        if not isinstance(items, list) or not items:
            raise UnexpectedModelBehavior('xAI image generation response did not contain any images', str(data)[:2000])
        images: list[GeneratedImage] = []
        moderated: list[int] = []
        for index, item in enumerate(items):
            encoded = item.get('b64_json') if isinstance(item, Mapping) else None
            if not encoded or item.get('respect_moderation') is False:
                moderated.append(index)  # a flagged image comes back empty: the others are still worth having
                continue
            image = _image(encoded, item.get('mime_type'))
            images.append(
                GeneratedImage(
                    image,
                    revised_prompt=item.get('revised_prompt') or None,
                    output_format=image.media_type.removeprefix('image/'),
                )
            )
        if not images:
            raise ContentFilterError('xAI flagged all generated images for content moderation')
        usage = data.get('usage')
        usage = usage if isinstance(usage, Mapping) else {}
        details: dict[str, Any] = {}
        if (ticks := usage.get('cost_in_usd_ticks')) is not None:
            details['cost_in_usd_ticks'] = ticks
        if moderated:
            details['moderated_image_indices'] = moderated
        return ImageGenerationResult(
            images,
            prompt=prompt,
            usage=_usage(usage),
            model_name=data.get('model') or self._model_name,
            provider_name=self.system,
            provider_url=self.base_url,
            provider_details=details or None,
        )


def _image(encoded: str, claimed: Any) -> BinaryImage:
    """An image of the answer: base64 data, bare or as a data URL (whose type, or the item's `mime_type`, is xAI's
    word for the format; the bytes decide when it gives none)."""
    media_type = claimed if isinstance(claimed, str) and claimed.startswith('image/') else None
    if encoded.startswith('data:'):
        header, _, encoded = encoded.partition(',')
        if not header.startswith('data:image/') or not header.endswith(';base64'):
            raise UnexpectedModelBehavior('xAI image generation response did not contain valid base64 image data')
        media_type = header.removeprefix('data:').removesuffix(';base64')
    raw = decode_base64(encoded, 'xAI')
    media_type = media_type or media_type_of(raw)
    if media_type is None:
        raise UnexpectedModelBehavior('xAI image generation response did not contain a recognized image format')
    return BinaryImage(data=raw, media_type=media_type)


def _usage(usage: Mapping[str, Any]) -> RequestUsage:
    """The tokens of an answer, where xAI counts them (image requests are priced per image)."""

    def count(*keys: str) -> int:
        return next((value for key in keys if type(value := usage.get(key)) is int), 0)

    return RequestUsage(
        input_tokens=count('prompt_tokens', 'input_tokens'), output_tokens=count('completion_tokens', 'output_tokens')
    )
