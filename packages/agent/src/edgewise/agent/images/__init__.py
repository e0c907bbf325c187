"""Image generation: images made from a prompt (and edited from reference images) by an image model, as pydantic-ai
2.x's `images` module.

`ImageGenerator('openai:gpt-image-2')` makes images (`generate`, `generate_sync`). Models: `OpenAIImageGenerationModel`
(OpenAI's Images API), `GoogleImageGenerationModel` (Gemini's image models), `XaiImageGenerationModel` (Grok
Imagine), `TestImageGenerationModel`, and `WrapperImageGenerationModel` to wrap one. Subclass
`ImageGenerationModel` for another.
"""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import partial

from .._threads import run_in_new_loop
from ..models._task_model import TaskModelFacade
from ..models.instrumented import InstrumentationSettings
from ._infer import KnownImageGenerationModelName, infer_image_generation_model
from .base import ImageGenerationInput, ImageGenerationModel
from .instrumented import InstrumentedImageGenerationModel, instrument_image_generation_model
from .result import GeneratedImage, ImageGenerationResult
from .settings import (
    ImageDimensions,
    ImageGenerationAspectRatio,
    ImageGenerationSettings,
    merge_image_generation_settings,
)
from .test import TestImageGenerationModel
from .wrapper import WrapperImageGenerationModel

__all__ = [
    'InstrumentedImageGenerationModel',
    'instrument_image_generation_model',
    'GeneratedImage',
    'ImageGenerationInput',
    'ImageDimensions',
    'ImageGenerationAspectRatio',
    'ImageGenerationModel',
    'ImageGenerationResult',
    'ImageGenerationSettings',
    'ImageGenerator',
    'KnownImageGenerationModelName',
    'TestImageGenerationModel',
    'WrapperImageGenerationModel',
    'infer_image_generation_model',
    'merge_image_generation_settings',
]


@dataclass(init=False, eq=False)
class ImageGenerator(TaskModelFacade[ImageGenerationModel, ImageGenerationSettings]):
    """Makes images with one model: `await generator.generate('A watercolor map')`, or `generate_sync`.

    The model is found from its name on first use (or at once with `defer_model_check=False`), and `override`
    swaps it for a block (a `TestImageGenerationModel` in tests).
    """

    instrument: InstrumentationSettings | bool | None
    """Whether each request gets an `image_generation <model>` span; `None` follows `instrument_all()` (off by
    default)."""
    _span_name = 'image_generation {model_name}'

    def __init__(
        self,
        model: ImageGenerationModel | KnownImageGenerationModelName | str,
        *,
        settings: ImageGenerationSettings | None = None,
        defer_model_check: bool = True,
        instrument: InstrumentationSettings | bool | None = None,
    ) -> None:
        """Configure the generator: the model or its name, defaults of every request (over the model's own),
        whether to find the model now, and whether requests get a span."""
        super().__init__(model, settings=settings, defer_model_check=defer_model_check, instrument=instrument)

    @staticmethod
    def instrument_all(instrument: InstrumentationSettings | bool = True) -> None:
        """Whether generators whose `instrument` is `None` trace their requests."""
        ImageGenerator._instrument_default = instrument

    @staticmethod
    def _infer(model: ImageGenerationModel | str) -> ImageGenerationModel:
        return infer_image_generation_model(model)

    def override(
        self, *, model: ImageGenerationModel | KnownImageGenerationModelName | str | None = None
    ) -> AbstractContextManager[None]:
        """Use another model inside the block (in this context only)."""
        return self._override(model)

    async def generate(
        self,
        prompt: str,
        *,
        images: Sequence[ImageGenerationInput] | None = None,
        settings: ImageGenerationSettings | None = None,
    ) -> ImageGenerationResult:
        """The images of `prompt`, made after (or edited from) `images` when given, `settings` over the
        generator's.

        Raises:
            ContentFilterError: the provider blocked the request or every image.
            UserError: the prompt is empty, a setting is invalid, or the model cannot make the size asked for.
        """
        model, merged, span = self._request(settings)
        with span:
            return await model.generate(prompt, images=images, settings=merged)

    def generate_sync(
        self,
        prompt: str,
        *,
        images: Sequence[ImageGenerationInput] | None = None,
        settings: ImageGenerationSettings | None = None,
    ) -> ImageGenerationResult:
        """`generate` from synchronous code (not inside async code)."""
        return run_in_new_loop(partial(self.generate, prompt, images=images, settings=settings))
