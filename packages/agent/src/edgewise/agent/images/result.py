"""`ImageGenerationResult`: the images of one request, with the prompt, the model and the usage."""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime, timezone
from typing import Any

from ..messages import BinaryImage
from ..usage import RequestUsage

__all__ = ('GeneratedImage', 'ImageGenerationResult', 'media_type_of')


def _now() -> datetime:
    return datetime.now(tz=timezone.utc)


def media_type_of(data: bytes) -> str | None:
    """The image type of `data` from its first bytes (PNG, JPEG or WebP), or `None`: providers may name another
    format than the one they return, so the bytes decide."""
    if data.startswith(b'\x89PNG'):
        return 'image/png'
    if data.startswith(b'\xff\xd8\xff'):
        return 'image/jpeg'
    if data[:4] == b'RIFF' and data[8:12] == b'WEBP':
        return 'image/webp'
    return None


@dataclass
class GeneratedImage:
    """One generated image."""

    content: BinaryImage
    """The image."""
    _: KW_ONLY
    revised_prompt: str | None = None
    """The prompt as the provider rewrote it, if it did."""
    output_format: str | None = None
    """The image's format (`'png'`, `'jpeg'`, `'webp'`), from its bytes."""
    provider_details: dict[str, Any] | None = None
    """What else the provider said about this image."""


@dataclass
class ImageGenerationResult:
    """The images of an image generation request (always at least one)."""

    images: Sequence[GeneratedImage]
    """The images."""
    _: KW_ONLY
    prompt: str
    """The prompt."""
    model_name: str
    """The model that made them."""
    provider_name: str
    """The provider."""
    timestamp: datetime = field(default_factory=_now)
    """When the request was made."""
    usage: RequestUsage = field(default_factory=RequestUsage)
    """The tokens the request used, where the provider counts them."""
    provider_details: dict[str, Any] | None = None
    """What else the provider said about the request."""
    provider_response_id: str | None = None
    """The provider's id of the response, if it gives one."""
    provider_url: str | None = None
    """The provider's base URL."""

    @property
    def image(self) -> BinaryImage:
        """The first image (see `images` when more were asked for)."""
        return self.images[0].content

    def cost(self) -> Any:
        """What the request cost, from `genai-prices` (the `prices` extra), for models priced per token.

        Raises:
            LookupError: there are no prices for this model or provider.
            ModuleNotFoundError: `genai-prices` is not installed.
        """
        from genai_prices import calc_price

        return calc_price(
            self.usage, self.model_name, provider_id=self.provider_name, genai_request_timestamp=self.timestamp
        )
