"""The sizes Grok Imagine makes: the aspect ratios xAI's image API takes (thirteen of the shared ones) and the
`(width, height)` of each at its two resolutions (`'1k'`, `'2k'`), so that `dimensions` can be turned into an
`aspect_ratio` and a `resolution`.

The sizes are those xAI documents for `grok-imagine-image` and `grok-imagine-image-quality` (and their aliases);
`grok-imagine-image-2.0` has no published table, so `dimensions` is refused there (its aspect ratios work).
"""

from __future__ import annotations as _annotations

from dataclasses import dataclass, field
from typing import Literal

from ..exceptions import UserError
from ._request import prefer_own
from .settings import ImageDimensions, ImageGenerationSettings

__all__ = ('XaiAspectRatio', 'XaiResolution', 'XaiGeometry', 'resolve_xai_geometry')

XaiAspectRatio = Literal[
    '1:1', '3:4', '4:3', '9:16', '16:9', '2:3', '3:2', '9:19.5', '19.5:9', '9:20', '20:9', '1:2', '2:1', 'auto'
]  # fmt: skip
"""The aspect ratios xAI's image API takes (`'auto'` lets the model choose)."""

XaiResolution = Literal['1k', '2k']
"""The resolution tiers of xAI's image API."""

_SIZES: dict[str, tuple[ImageDimensions, ImageDimensions]] = {
    '1:1': ((1024, 1024), (2048, 2048)),
    '3:4': ((864, 1152), (1776, 2368)),
    '4:3': ((1152, 864), (2368, 1776)),
    '9:16': ((720, 1280), (1584, 2816)),
    '16:9': ((1280, 720), (2816, 1584)),
    '2:3': ((832, 1248), (1664, 2496)),
    '3:2': ((1248, 832), (2496, 1664)),
    '9:19.5': ((576, 1248), (1344, 2912)),
    '19.5:9': ((1248, 576), (2912, 1344)),
    '9:20': ((576, 1280), (1440, 3200)),
    '20:9': ((1280, 576), (3200, 1440)),
    '1:2': ((704, 1408), (1456, 2912)),
    '2:1': ((1408, 704), (2912, 1456)),
}
"""Each aspect ratio's size at `'1k'` and at `'2k'`."""

_MODELS_WITH_SIZES = frozenset(
    {
        'grok-imagine-image',
        'grok-imagine-image-2026-03-02',
        'grok-imagine-image-quality',
        'grok-imagine-image-quality-20260403',
        'grok-imagine-image-quality-latest',
        'grok-imagine-image-pro',
    }
)
"""The models (and aliases) whose sizes `_SIZES` gives; an unknown model's `dimensions` is refused."""


@dataclass
class XaiGeometry:
    """xAI's `aspect_ratio` and `resolution` of a request, and the shared settings the model's own overrode."""

    aspect_ratio: str | None
    resolution: str | None
    conflicts: list[str] = field(default_factory=list)


def resolve_xai_geometry(
    model_name: str,
    settings: ImageGenerationSettings,
    *,
    own_aspect_ratio: str | None,
    own_resolution: str | None,
) -> XaiGeometry:
    """The geometry of a request: `xai_aspect_ratio` / `xai_resolution` first, else those of `dimensions`, else
    `aspect_ratio` (at `'1k'`, xAI's default tier, so that the ratio gives one known size).

    Raises:
        UserError: `dimensions` is no size the model is known to make, or `aspect_ratio` is one xAI does not take
            (and no `xai_aspect_ratio` replaces it).
    """
    geometry = XaiGeometry(own_aspect_ratio, own_resolution)
    if dimensions := settings.get('dimensions'):
        if model_name not in _MODELS_WITH_SIZES:
            raise UserError(f'xAI model {model_name!r} does not have a known exact-dimensions mapping')
        found = next(
            (
                (ratio, ('1k', '2k')[i])
                for ratio, sizes in _SIZES.items()
                for i, size in enumerate(sizes)
                if size == tuple(dimensions)
            ),
            None,
        )
        if found is None:
            raise UserError(f'xAI model {model_name!r} does not support `dimensions={dimensions!r}`')
        geometry.aspect_ratio = prefer_own(own_aspect_ratio, found[0], 'dimensions', geometry.conflicts)
        geometry.resolution = prefer_own(own_resolution, found[1], 'dimensions', geometry.conflicts)
        return geometry
    ratio = settings.get('aspect_ratio')
    if ratio is None:
        return geometry
    if own_aspect_ratio is not None:
        if ratio != own_aspect_ratio:
            geometry.conflicts.append('aspect_ratio')
    elif ratio in _SIZES:
        geometry.aspect_ratio = ratio
    else:
        supported = ', '.join(f'`{r}`' for r in _SIZES)
        raise UserError(
            f'xAI image generation does not take `aspect_ratio={ratio!r}`. Supported aspect ratios are: {supported}.'
        )
    if own_resolution is None:
        geometry.resolution = '1k'
    return geometry
