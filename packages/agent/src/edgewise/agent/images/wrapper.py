"""`WrapperImageGenerationModel`: a model around another, passing everything through (override what you change)."""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..models._task_model import TaskModelWrapper
from ._infer import infer_image_generation_model
from .base import ImageGenerationInput, ImageGenerationModel
from .result import ImageGenerationResult
from .settings import ImageGenerationSettings

__all__ = ('WrapperImageGenerationModel',)


@dataclass(init=False)
class WrapperImageGenerationModel(TaskModelWrapper[ImageGenerationModel], ImageGenerationModel):
    """The base of a model that wraps another: every method and attribute (name, provider, settings, base URL, ...)
    goes to `wrapped` unless overridden."""

    def __init__(self, wrapped: ImageGenerationModel | str) -> None:
        """Wrap a model, or the model of a name (`'openai:gpt-image-2'`)."""
        ImageGenerationModel.__init__(self)
        self._wrap(wrapped, infer_image_generation_model)

    async def generate(
        self,
        prompt: str,
        *,
        images: Sequence[ImageGenerationInput] | None = None,
        settings: ImageGenerationSettings | None = None,
    ) -> ImageGenerationResult:
        """The wrapped model's images."""
        return await self.wrapped.generate(prompt, images=images, settings=settings)
