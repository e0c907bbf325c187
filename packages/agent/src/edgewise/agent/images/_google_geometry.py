"""The sizes Gemini's image models make: which `(width, height)` each aspect ratio and size tier (`imageSize`) gives,
so that `dimensions` can be turned into Gemini's `aspectRatio` and `imageSize`.

The tables record what the Gemini API was observed to make (pydantic-ai 2.68 measured them): Gemini 3.1 Flash
Image has four tiers (512, 1K, 2K, 4K; most ratios double from one tier to the next, the extreme ratios not quite),
Gemini 3 Pro Image the same shapes without 512, Gemini 3.1 Flash Lite Image only 1K, and Gemini 2.5 Flash Image one
size per ratio and no tier.
"""

from __future__ import annotations as _annotations

from dataclasses import dataclass, field

from ..exceptions import UserError
from ._request import prefer_own
from .settings import ImageDimensions, ImageGenerationSettings

__all__ = ('GoogleGeometry', 'resolve_google_geometry')

_TIERS = ('512', '1K', '2K', '4K')

_FLASH_512 = {
    '1:1': (512, 512), '2:3': (424, 632), '3:2': (632, 424), '3:4': (448, 600), '4:3': (600, 448),
    '4:5': (464, 576), '5:4': (576, 464), '9:16': (384, 688), '16:9': (688, 384),
}  # fmt: skip
"""Gemini 3.1 Flash Image's 512 tier; each further tier doubles both sides."""

_FLASH_IRREGULAR = {
    '21:9': ((784, 336), (1584, 672), (3168, 1344), (6336, 2688)),
    '1:4': ((256, 1024), (512, 2064), (1024, 4128), (2048, 8256)),
    '1:8': ((176, 1456), (352, 2928), (704, 5856), (1408, 11712)),
    '4:1': ((1024, 256), (2064, 512), (4128, 1024), (8256, 2048)),
    '8:1': ((1456, 176), (2928, 352), (5856, 704), (11712, 1408)),
}
"""The ratios whose sizes are not a doubling of the 512 tier, per tier (512, 1K, 2K, 4K)."""

_GEMINI_25 = {
    '1:1': (1024, 1024), '2:3': (832, 1248), '3:2': (1248, 832), '3:4': (864, 1184), '4:3': (1184, 864),
    '4:5': (896, 1152), '5:4': (1152, 896), '9:16': (768, 1344), '16:9': (1344, 768), '21:9': (1536, 672),
}  # fmt: skip

Table = dict[str, dict[str | None, ImageDimensions]]


def _flash() -> Table:
    table: Table = {
        ratio: {tier: (width << shift, height << shift) for shift, tier in enumerate(_TIERS)}
        for ratio, (width, height) in _FLASH_512.items()
    }
    for ratio, sizes in _FLASH_IRREGULAR.items():
        table[ratio] = dict(zip(_TIERS, sizes, strict=True))
    return table


@dataclass(frozen=True)
class _Family:
    sizes: Table
    default_tier: str | None
    """The tier asked for with a shared `aspect_ratio` (so that the ratio gives one known size)."""


_FLASH = _Family(_flash(), '1K')
_STANDARD_RATIOS = (*_FLASH_512, '21:9')
_FAMILIES = (
    ('gemini-3.1-flash-lite-image', _Family({r: {'1K': s['1K']} for r, s in _FLASH.sizes.items()}, '1K')),
    ('gemini-3.1-flash-image', _FLASH),
    (
        'gemini-3-pro-image',
        _Family({r: {t: d for t, d in _FLASH.sizes[r].items() if t != '512'} for r in _STANDARD_RATIOS}, '1K'),
    ),
    ('gemini-2.5-flash-image', _Family({r: {None: d} for r, d in _GEMINI_25.items()}, None)),
)


def _family(model_name: str) -> _Family | None:
    return next((family for name, family in _FAMILIES if name in model_name), None)


@dataclass
class GoogleGeometry:
    """Gemini's `aspectRatio` and `imageSize` of a request, and the shared settings the model's own overrode."""

    aspect_ratio: str | None
    image_size: str | None
    conflicts: list[str] = field(default_factory=list)


def resolve_google_geometry(
    model_name: str,
    settings: ImageGenerationSettings,
    *,
    own_aspect_ratio: str | None,
    own_image_size: str | None,
) -> GoogleGeometry:
    """The geometry of a request: `google_image_config`'s values first, else those of `dimensions` (which must be a
    size the model is known to make), else `aspect_ratio` (passed on as it is, with the family's default tier).

    Raises:
        UserError: `dimensions` is no size the model is known to make.
    """
    geometry = GoogleGeometry(own_aspect_ratio, own_image_size)
    family = _family(model_name)
    if dimensions := settings.get('dimensions'):
        found = next(
            (
                (ratio, tier)
                for ratio, tiers in (family.sizes.items() if family else ())
                for tier, size in tiers.items()
                if size == tuple(dimensions)
            ),
            None,
        )
        if found is None:
            raise UserError(f'Google model {model_name!r} does not support `dimensions={dimensions!r}`')
        ratio, tier = found
        geometry.aspect_ratio = prefer_own(own_aspect_ratio, ratio, 'dimensions', geometry.conflicts)
        geometry.image_size = prefer_own(own_image_size, tier, 'dimensions', geometry.conflicts)
    elif shared_ratio := settings.get('aspect_ratio'):
        # Sent whatever the tables say: they list the sizes Edgewise can name, the API decides what it takes.
        geometry.aspect_ratio = prefer_own(own_aspect_ratio, shared_ratio, 'aspect_ratio', geometry.conflicts)
        if own_image_size is None and family is not None and family.default_tier is not None:
            geometry.image_size = family.default_tier
    return geometry
