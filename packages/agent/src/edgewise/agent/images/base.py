"""`ImageGenerationModel`: what an image generation model implements (subclass it for a model of your own)."""

from __future__ import annotations as _annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from typing_extensions import TypeAliasType

from ..exceptions import UserError
from ..messages import BinaryImage, ImageUrl, UploadedFile
from .result import ImageGenerationResult
from .settings import ImageGenerationSettings, merge_image_generation_settings, validate_image_generation_settings

__all__ = ('ImageGenerationInput', 'ImageGenerationModel')

ImageGenerationInput = TypeAliasType('ImageGenerationInput', ImageUrl | BinaryImage | UploadedFile)
"""A reference image of a request (to edit or to take after)."""


class ImageGenerationModel(ABC):
    """An image generation model: makes images from a prompt and optional reference images (`generate`).

    Subclasses give `model_name`, `system` and `generate`, and call `prepare_generate` at its start. `generate`
    never returns an empty result: with no image to give it raises `ContentFilterError` (the provider blocked it)
    or `UnexpectedModelBehavior`.
    """

    _settings: ImageGenerationSettings | None = None

    def __init__(self, *, settings: ImageGenerationSettings | None = None) -> None:
        """Keep `settings` as the defaults of this model's requests."""
        self._settings = settings

    @property
    def settings(self) -> ImageGenerationSettings | None:
        """The defaults of this model's requests."""
        return self._settings

    @property
    def base_url(self) -> str | None:
        """The base URL of the provider's API, if the model has one."""
        return None

    @property
    @abstractmethod
    def model_name(self) -> str:
        """The model's name."""
        raise NotImplementedError

    @property
    @abstractmethod
    def system(self) -> str:
        """The provider's name."""
        raise NotImplementedError

    @abstractmethod
    async def generate(
        self,
        prompt: str,
        *,
        images: Sequence[ImageGenerationInput] | None = None,
        settings: ImageGenerationSettings | None = None,
    ) -> ImageGenerationResult:
        """The images of `prompt` (after `images`, if given)."""
        raise NotImplementedError

    def prepare_generate(
        self,
        prompt: str,
        *,
        images: Sequence[ImageGenerationInput] | None = None,
        settings: ImageGenerationSettings | None = None,
    ) -> tuple[str, list[ImageGenerationInput], ImageGenerationSettings]:
        """The prompt checked, the reference images as a list, and `settings` over the model's defaults.

        Raises:
            UserError: the prompt is empty, a reference is no image, or the settings contradict each other.
        """
        if not prompt.strip():
            raise UserError('Image generation requires a non-empty prompt')
        references = list(images or ())
        for image in references:
            if not isinstance(image, ImageUrl | BinaryImage | UploadedFile):
                raise UserError(
                    'Image generation inputs must be `ImageUrl`, `BinaryImage`, or `UploadedFile` instances'
                )
            if isinstance(image, UploadedFile) and not image.media_type.startswith('image/'):
                raise UserError('Image generation `UploadedFile` inputs must have an image media type')
        merged = merge_image_generation_settings(self._settings, settings) or {}
        validate_image_generation_settings(merged)
        return prompt, references, merged
