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
    Literal['openai:gpt-image-1-mini', 'openai:gpt-image-1.5', 'openai:gpt-image-2'],
)
"""Image generation model names Edgewise knows (any `'openai:<model>'` works)."""


def infer_image_generation_model(
    model: ImageGenerationModel | KnownImageGenerationModelName | str,
) -> ImageGenerationModel:
    """The image generation model of `model`: a model as it is, `'test'` as a `TestImageGenerationModel`, or the
    model of an `'openai:<model>'` name.

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
    raise UserError(
        f'Provider {provider!r} does not support direct image generation in edgewise.agent: use `openai:`, or an '
        '`ImageGenerationModel` of your own (Google and xAI image models are not there yet).'
    )
