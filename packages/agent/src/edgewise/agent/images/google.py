"""`GoogleImageGenerationModel`: Gemini's image models on the Gemini API (`generateContent` asked for an image-only
answer), over httpx."""

from __future__ import annotations as _annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from ..exceptions import ContentFilterError, UnexpectedModelBehavior, UserError
from ..messages import BinaryImage, UploadedFile
from ..models._downloads import download
from ..models._error_categories import google_http_error
from ..models._google_mapping import google_usage, takes_url
from ..models._mapping import uploaded_file_id
from ..models._model import check_allow_model_requests
from ..models._task_model import ProviderBacked, add_extra_body, post_json, request_headers
from ..models.google import API_VERSION
from ..providers import Provider
from ._google_geometry import resolve_google_geometry
from ._request import decode_base64, warn_settings
from .base import ImageGenerationInput, ImageGenerationModel
from .result import GeneratedImage, ImageGenerationResult, media_type_of
from .settings import ImageGenerationSettings

__all__ = (
    'GoogleImageGenerationModel',
    'GoogleImageGenerationModelName',
    'GoogleImageGenerationSettings',
    'LatestGoogleImageGenerationModelNames',
)

LatestGoogleImageGenerationModelNames = Literal[
    'gemini-3-pro-image', 'gemini-3.1-flash-image', 'gemini-3.1-flash-lite-image'
]
"""Gemini's current image models."""

GoogleImageGenerationModelName = str | LatestGoogleImageGenerationModelNames
"""The name of a Gemini image model."""

_BLOCKED_FINISH_REASONS = frozenset(
    {
        'SAFETY',
        'RECITATION',
        'BLOCKLIST',
        'PROHIBITED_CONTENT',
        'SPII',
        'IMAGE_SAFETY',
        'IMAGE_PROHIBITED_CONTENT',
        'IMAGE_RECITATION',
        'MODEL_ARMOR',
    }
)
"""Finish reasons that mean a content policy stopped the images (`NO_IMAGE` and `IMAGE_OTHER` do not)."""


class GoogleImageGenerationSettings(ImageGenerationSettings, total=False):
    """Settings of a Gemini image request: the shared ones and Google's own, prefixed `google_`."""

    google_image_config: dict[str, Any]
    """Gemini's `imageConfig` (`aspect_ratio`, `image_size`, ...; snake_case or camelCase keys); its aspect ratio
    and size win over `aspect_ratio` and `dimensions`."""


def _camel(key: str) -> str:
    head, *rest = key.split('_')
    return head + ''.join(word[:1].upper() + word[1:] for word in rest)


@dataclass(init=False, eq=False)
class GoogleImageGenerationModel(ProviderBacked, ImageGenerationModel):
    """A Gemini image model (`gemini-3.1-flash-image`, ...) on the Gemini API (`GoogleProvider`: key in
    `GOOGLE_API_KEY` or `GEMINI_API_KEY`).

    The request asks for images only (no text). Reference images travel as inline data (`BinaryImage`, and an
    `ImageUrl` downloaded first) or as Files API references (an `UploadedFile`, or an `ImageUrl` of the Files API).
    """

    def __init__(
        self,
        model_name: GoogleImageGenerationModelName,
        *,
        provider: str | Provider[Any] = 'google',
        settings: ImageGenerationSettings | None = None,
    ) -> None:
        """Configure the model: its name (`'gemini-3.1-flash-image'`), the provider or its name (`'google'`), and
        the defaults of its requests.

        Raises:
            UserError: `provider='google-cloud'` (Vertex AI is not supported), or the key is not set.
        """
        if provider == 'google-cloud':
            raise UserError(
                'Google Cloud (Vertex AI) is not supported for image generation in edgewise.agent: use the Gemini API '
                "(`provider='google'`)."
            )
        self._bind(model_name.removeprefix('models/'), provider)
        ImageGenerationModel.__init__(self, settings=settings)

    async def generate(
        self,
        prompt: str,
        *,
        images: Sequence[ImageGenerationInput] | None = None,
        settings: ImageGenerationSettings | None = None,
    ) -> ImageGenerationResult:
        """The images of `prompt` (taking after `images`, when given), from one `generateContent` request.

        Raises:
            ContentFilterError: Gemini blocked the prompt or the images.
            ModelHTTPError: the API answered with an error (after retries).
            ModelAPIError: the API could not be reached (after retries).
            UnexpectedModelBehavior: the answer holds no image for another reason.
            UserError: the prompt is empty, a setting is invalid, or a reference image cannot be sent.
        """
        check_allow_model_requests()
        prompt, references, merged = self.prepare_generate(prompt, images=images, settings=settings)
        google = cast(GoogleImageGenerationSettings, merged)
        config = {_camel(key): value for key, value in (google.get('google_image_config') or {}).items()}
        geometry = resolve_google_geometry(
            self._model_name,
            google,
            own_aspect_ratio=config.get('aspectRatio'),
            own_image_size=config.get('imageSize'),
        )
        if geometry.aspect_ratio is not None:
            config['aspectRatio'] = geometry.aspect_ratio
        if geometry.image_size is not None:
            config['imageSize'] = geometry.image_size
        generation_config: dict[str, Any] = {'responseModalities': ['IMAGE']}
        if config:
            generation_config['imageConfig'] = config
        parts = [{'text': prompt}] + [await self._part(image) for image in references]
        body: dict[str, Any] = {'contents': [{'role': 'user', 'parts': parts}], 'generationConfig': generation_config}
        ignored = add_extra_body(body, google)
        warn_settings(self.system, ignored=ignored, conflicts=geometry.conflicts)
        data = await post_json(
            self._provider,
            f'{API_VERSION}/models/{self._model_name}:generateContent',
            body,
            request_headers(self._provider, google),
            model_name=self._model_name,
            operation='image_generation',
            endpoint_name='generateContent',
            error_key=None,
            http_error=google_http_error,
        )
        return self._result(prompt, data if isinstance(data, Mapping) else {})

    async def _part(self, image: ImageGenerationInput) -> dict[str, Any]:
        if isinstance(image, BinaryImage):
            part: dict[str, Any] = {'inlineData': {'mimeType': image.media_type, 'data': image.base64}}
        elif isinstance(image, UploadedFile):
            uri = uploaded_file_id(image, type(self).__name__, {'google', 'google-gla', self.system})
            if not uri.startswith('https://'):
                raise UserError(
                    'Google image generation requires `UploadedFile.file_id` to be a Google Files API URI starting '
                    'with `https://`'
                )
            part = {'fileData': {'mimeType': image.media_type, 'fileUri': uri}}
        elif not image.force_download and takes_url(image):
            try:
                media_type = image.media_type
            except ValueError as e:
                raise UserError(
                    'A Google Files API URL has no file extension to tell its media type: give it, as in '
                    "`ImageUrl(url, media_type='image/png')`."
                ) from e
            part = {'fileData': {'mimeType': media_type, 'fileUri': image.url}}
        else:
            content = await download(image, self._provider.client)
            part = {'inlineData': {'mimeType': content.media_type, 'data': content.base64}}
        if image.vendor_metadata and (resolution := image.vendor_metadata.get('media_resolution')) is not None:
            # Gemini's `PartMediaResolution` (`{'level': 'MEDIA_RESOLUTION_LOW'}`), keys spelt as in the SDK or the API.
            part['mediaResolution'] = (
                {_camel(key): value for key, value in resolution.items()}
                if isinstance(resolution, Mapping)
                else resolution
            )
        return part

    def _result(self, prompt: str, data: Mapping[str, Any]) -> ImageGenerationResult:
        images: list[GeneratedImage] = []
        candidates = data.get('candidates') or []
        for candidate in candidates:
            for part in (candidate.get('content') or {}).get('parts') or []:
                if (image := _image(part)) is not None:
                    images.append(image)
        details = _details(data, candidates[0] if candidates else None)
        if not images:
            raise _no_images_error(details)
        return ImageGenerationResult(
            images,
            prompt=prompt,
            usage=google_usage(data.get('usageMetadata')),
            model_name=data.get('modelVersion') or self._model_name,
            provider_name=self.system,
            provider_url=self.base_url,
            provider_details=details,
            provider_response_id=data.get('responseId'),
        )


def _image(part: Mapping[str, Any]) -> GeneratedImage | None:
    inline = part.get('inlineData')
    if part.get('thought') or not isinstance(inline, Mapping) or not inline.get('data'):
        return None
    raw = decode_base64(inline['data'], 'Google')
    # Gemini says the type of its images (not always PNG: Gemini 3 Pro Image makes JPEGs); the bytes decide only
    # when it does not.
    media_type = inline.get('mimeType') or media_type_of(raw) or 'image/png'
    return GeneratedImage(
        BinaryImage(data=raw, media_type=media_type),
        output_format=media_type.removeprefix('image/') if media_type.startswith('image/') else None,
        provider_details={'has_thought_signature': True} if part.get('thoughtSignature') else None,
    )


def _details(data: Mapping[str, Any], candidate: Mapping[str, Any] | None) -> dict[str, Any]:
    details: dict[str, Any] = {}
    if candidate and candidate.get('finishReason'):
        details['finish_reason'] = candidate['finishReason']
    if candidate and candidate.get('safetyRatings'):
        details['safety_ratings'] = candidate['safetyRatings']
    feedback = data.get('promptFeedback') or {}
    if feedback.get('blockReason'):
        details['block_reason'] = feedback['blockReason']
        if feedback.get('blockReasonMessage'):
            details['block_reason_message'] = feedback['blockReasonMessage']
        if feedback.get('safetyRatings'):
            details['safety_ratings'] = feedback['safetyRatings']
    if data.get('createTime'):
        details['timestamp'] = data['createTime']
    if traffic := (data.get('usageMetadata') or {}).get('trafficType'):
        details['traffic_type'] = traffic
    return details


def _no_images_error(details: dict[str, Any]) -> ContentFilterError | UnexpectedModelBehavior:
    body = str(details) if details else None
    finish_reason, block_reason = details.get('finish_reason'), details.get('block_reason')
    if block_reason is not None or finish_reason in _BLOCKED_FINISH_REASONS:
        return ContentFilterError(
            f'Google image generation was blocked for content moderation (reason: {block_reason or finish_reason})',
            body,
        )
    message = 'Google image generation response did not contain any images'
    if finish_reason is not None:
        message = f'{message} (finish_reason: {finish_reason})'
    return UnexpectedModelBehavior(message, body)
