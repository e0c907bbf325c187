"""The image generation model of a name: `infer_image_generation_model`, and the names Edgewise knows."""

from __future__ import annotations as _annotations

from typing import Literal

from typing_extensions import TypeAliasType

from ..exceptions import UserError
from .base import ImageGenerationModel
from .test import TestImageGenerationModel

__all__ = ('KnownImageGenerationModelName', 'infer_image_generation_model')

KnownImageGenerationModelName = TypeAliasType(
    'KnownImageGenerationModelName',
    Literal[
        'google:gemini-3-pro-image',
        'google:gemini-3.1-flash-image',
        'google:gemini-3.1-flash-lite-image',
        'openai:gpt-image-1-mini',
        'openai:gpt-image-1.5',
        'openai:gpt-image-2',
        'xai:grok-imagine-image',
        'xai:grok-imagine-image-2.0',
        'xai:grok-imagine-image-quality',
    ],
)
"""Image generation model names Edgewise knows (any `'openai:<model>'`, `'google:<model>'` or `'xai:<model>'` works)."""


def infer_image_generation_model(
    model: ImageGenerationModel | KnownImageGenerationModelName | str,
) -> ImageGenerationModel:
    """The image generation model of `model`: a model as it is, `'test'` as a `TestImageGenerationModel`, or the
    model of an `'openai:<model>'`, `'google:<model>'` (the Gemini API) or `'xai:<model>'` name.

    Raises:
        ValueError: the name has no provider prefix.
        UserError: the provider has no image generation model in Edgewise, or its key is not set.
    """
    if isinstance(model, ImageGenerationModel):
        return model
    if model == 'test':
        return TestImageGenerationModel()
    provider, sep, name = model.partition(':')
    if not sep:
        raise ValueError('You must provide a provider prefix when specifying an image generation model name')
    if provider == 'openai':
        from .openai import OpenAIImageGenerationModel

        return OpenAIImageGenerationModel(name, provider='openai')
    if provider in ('google', 'google-gla', 'google-cloud'):
        from .google import GoogleImageGenerationModel

        return GoogleImageGenerationModel(name, provider='google-cloud' if provider == 'google-cloud' else 'google')
    if provider == 'xai':
        from .xai import XaiImageGenerationModel

        return XaiImageGenerationModel(name, provider='xai')
    raise UserError(
        f'Provider {provider!r} does not support direct image generation in edgewise.agent: use `openai:`, '
        '`google:`, `xai:`, or an `ImageGenerationModel` of your own.'
    )
