"""`TestImageGenerationModel`: a 1x1 PNG for every request, for tests (it remembers its last request)."""

from __future__ import annotations as _annotations

import struct
import uuid
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

from ..messages import BinaryImage
from ..usage import RequestUsage
from .base import ImageGenerationInput, ImageGenerationModel
from .result import GeneratedImage, ImageGenerationResult
from .settings import ImageGenerationSettings

__all__ = ('TestImageGenerationModel',)


def _one_pixel_png() -> bytes:
    """A valid 1x1 transparent PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))

    header = struct.pack('>IIBBBBB', 1, 1, 8, 6, 0, 0, 0)  # 1x1, 8 bits, RGBA
    return (
        b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', header) + chunk(b'IDAT', zlib.compress(b'\x00' * 5)) + chunk(b'IEND', b'')
    )


_ONE_PIXEL_PNG = _one_pixel_png()


@dataclass(init=False, eq=False)
class TestImageGenerationModel(ImageGenerationModel):
    """An image model for tests: one 1x1 PNG per request, no API call; `last_images` and `last_settings` are what
    its last request was given (the model's default settings merged in)."""

    __test__ = False

    _model_name: str
    _provider_name: str
    last_images: list[ImageGenerationInput]
    """The reference images of the last request."""
    last_settings: ImageGenerationSettings | None = None
    """The settings of the last request."""

    def __init__(
        self, model_name: str = 'test', *, provider_name: str = 'test', settings: ImageGenerationSettings | None = None
    ) -> None:
        """Configure the model: the model and provider names its results give, and the defaults of its requests."""
        self._model_name = model_name
        self._provider_name = provider_name
        self.last_images = []
        self.last_settings = None
        super().__init__(settings=settings)

    @property
    def model_name(self) -> str:
        """The model name its results give."""
        return self._model_name

    @property
    def system(self) -> str:
        """The provider name its results give."""
        return self._provider_name

    async def generate(
        self,
        prompt: str,
        *,
        images: Sequence[ImageGenerationInput] | None = None,
        settings: ImageGenerationSettings | None = None,
    ) -> ImageGenerationResult:
        """A 1x1 PNG; usage counts about one token per word of the prompt."""
        prompt, references, merged = self.prepare_generate(prompt, images=images, settings=settings)
        self.last_images = references
        self.last_settings = merged
        return ImageGenerationResult(
            images=[GeneratedImage(BinaryImage(data=_ONE_PIXEL_PNG, media_type='image/png'), output_format='png')],
            prompt=prompt,
            usage=RequestUsage(input_tokens=len(prompt.split())),
            model_name=self._model_name,
            provider_name=self._provider_name,
            provider_response_id=str(uuid.uuid4()),
        )
