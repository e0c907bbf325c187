"""`ImageGenerationModel`: what an image generation model implements (subclass it for a model of your own)."""

from __future__ import annotations as _annotations

from abc import abstractmethod
from collections.abc import Sequence

from typing_extensions import TypeAliasType

from ..exceptions import UserError
from ..messages import BinaryImage, ImageUrl, UploadedFile
from ..models._task_model import TaskModel
from .result import ImageGenerationResult
from .settings import ImageGenerationSettings, validate_image_generation_settings

__all__ = ('ImageGenerationInput', 'ImageGenerationModel')

ImageGenerationInput = TypeAliasType('ImageGenerationInput', ImageUrl | BinaryImage | UploadedFile)
"""A reference image of a request (to edit or to take after)."""


class ImageGenerationModel(TaskModel[ImageGenerationSettings]):
    """An image generation model: makes images from a prompt and optional reference images (`generate`).

    Subclasses give `model_name`, `system` and `generate`, and call `prepare_generate` at its start. `generate`
    never returns an empty result: with no image to give it raises `ContentFilterError` (the provider blocked it)
    or `UnexpectedModelBehavior`. `settings` are the defaults of the model's requests, and `base_url` the provider's
    API (`None` where there is none).
    """

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
        merged = self.merged_settings(settings)
        validate_image_generation_settings(merged)
        return prompt, references, merged
