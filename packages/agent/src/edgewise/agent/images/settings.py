"""`ImageGenerationSettings`: the options of an image generation request that every provider reads the same way."""

from __future__ import annotations as _annotations

from typing import Literal, TypeAlias

from typing_extensions import TypedDict

from ..exceptions import UserError
from ..models._task_model import merge_settings

__all__ = (
    'ImageDimensions',
    'ImageGenerationAspectRatio',
    'ImageGenerationSettings',
    'merge_image_generation_settings',
    'validate_image_generation_settings',
)

ImageDimensions: TypeAlias = tuple[int, int]
"""The exact size of the images, `(width, height)` in pixels (which sizes a model takes is its own)."""

ImageGenerationAspectRatio: TypeAlias = Literal[
    '1:1', '1:2', '1:4', '1:8', '2:1', '2:3', '3:2', '3:4', '4:1', '4:3', '4:5', '5:4', '8:1', '9:16', '9:19.5',
    '9:20', '16:9', '19.5:9', '20:9', '21:9',
]  # fmt: skip
"""The aspect ratios some provider takes; each model family takes its own subset."""


class ImageGenerationSettings(TypedDict, total=False):
    """Options of an image generation request; a provider's own options (prefixed with its name) extend them."""

    dimensions: ImageDimensions
    """The exact size, `(width, height)`; not together with `aspect_ratio`. Not rounded to a size the model takes."""
    aspect_ratio: ImageGenerationAspectRatio
    """The aspect ratio; a provider without an aspect-ratio field maps it to one of its sizes, or refuses it."""
    extra_headers: dict[str, str]
    """Headers added to the request."""
    extra_body: object
    """Keys added to the request's JSON body (a dict)."""


def merge_image_generation_settings(
    base: ImageGenerationSettings | None, overrides: ImageGenerationSettings | None
) -> ImageGenerationSettings | None:
    """`overrides` over `base` (each key of `overrides` wins); `None` when both are `None`."""
    return merge_settings(base, overrides)


def validate_image_generation_settings(settings: ImageGenerationSettings) -> None:
    """Refuse settings no provider could honour: both a size and an aspect ratio, or a size that is no pair of
    positive integers.

    Raises:
        UserError: saying which.
    """
    dimensions = settings.get('dimensions')
    if dimensions is None:
        return
    if settings.get('aspect_ratio') is not None:
        raise UserError('Image generation `dimensions` and `aspect_ratio` are mutually exclusive')
    if (
        not isinstance(dimensions, tuple)
        or len(dimensions) != 2
        or any(not isinstance(v, int) or isinstance(v, bool) or v <= 0 for v in dimensions)
    ):
        raise UserError('Image generation `dimensions` must be a `(width, height)` tuple of positive integers')
