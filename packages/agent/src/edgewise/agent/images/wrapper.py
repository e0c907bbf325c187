"""`WrapperImageGenerationModel`: a model around another, passing everything through (override what you change)."""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._infer import infer_image_generation_model
from .base import ImageGenerationInput, ImageGenerationModel
from .result import ImageGenerationResult
from .settings import ImageGenerationSettings

__all__ = ('WrapperImageGenerationModel',)


@dataclass(init=False)
class WrapperImageGenerationModel(ImageGenerationModel):
    """The base of a model that wraps another: every method and attribute goes to `wrapped` unless overridden."""

    wrapped: ImageGenerationModel
    """The model wrapped."""

    def __init__(self, wrapped: ImageGenerationModel | str) -> None:
        """Wrap a model, or the model of a name (`'openai:gpt-image-2'`)."""
        super().__init__()
        self.wrapped = infer_image_generation_model(wrapped) if isinstance(wrapped, str) else wrapped

    async def generate(
        self,
        prompt: str,
        *,
        images: Sequence[ImageGenerationInput] | None = None,
        settings: ImageGenerationSettings | None = None,
    ) -> ImageGenerationResult:
        """The wrapped model's images."""
        return await self.wrapped.generate(prompt, images=images, settings=settings)

    @property
    def model_name(self) -> str:
        """The wrapped model's name."""
        return self.wrapped.model_name

    @property
    def system(self) -> str:
        """The wrapped model's provider."""
        return self.wrapped.system

    @property
    def settings(self) -> ImageGenerationSettings | None:
        """The wrapped model's defaults."""
        return self.wrapped.settings

    @property
    def base_url(self) -> str | None:
        """The wrapped model's base URL."""
        return self.wrapped.base_url

    def __getattr__(self, item: str) -> Any:
        if item == 'wrapped':  # not set yet (during unpickling): no endless recursion
            raise AttributeError(item)
        return getattr(self.wrapped, item)
