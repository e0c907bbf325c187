"""Image generation: images made from a prompt (and edited from reference images) by an image model, as pydantic-ai
2.x's `images` module.

`ImageGenerator('openai:gpt-image-2')` makes images (`generate`, `generate_sync`). Models: `OpenAIImageGenerationModel`
(OpenAI's Images API), `TestImageGenerationModel`, and `WrapperImageGenerationModel` to wrap one. Subclass
`ImageGenerationModel` for another.
"""

from __future__ import annotations as _annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import partial
from typing import ClassVar

from .. import _instrument
from .._threads import run_in_new_loop
from ..models.instrumented import InstrumentationSettings
from ._infer import KnownImageGenerationModelName, infer_image_generation_model
from .base import ImageGenerationInput, ImageGenerationModel
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
class ImageGenerator:
    """Makes images with one model: `await generator.generate('A watercolor map')`, or `generate_sync`.

    The model is found from its name on first use (or at once with `defer_model_check=False`), and `override`
    swaps it for a block (a `TestImageGenerationModel` in tests).
    """

    instrument: InstrumentationSettings | bool | None
    """Whether each request gets an `image_generation <model>` span; `None` follows `instrument_all()` (off by
    default)."""
    _instrument_default: ClassVar[InstrumentationSettings | bool] = False

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
        self._model = model if defer_model_check else infer_image_generation_model(model)
        self._settings = settings
        self.instrument = instrument
        self._override_model: ContextVar[ImageGenerationModel | None] = ContextVar('_override_model', default=None)

    @staticmethod
    def instrument_all(instrument: InstrumentationSettings | bool = True) -> None:
        """Whether generators whose `instrument` is `None` trace their requests."""
        ImageGenerator._instrument_default = instrument

    @property
    def model(self) -> ImageGenerationModel | KnownImageGenerationModelName | str:
        """The model (or its name, until first use)."""
        return self._model

    @contextmanager
    def override(
        self, *, model: ImageGenerationModel | KnownImageGenerationModelName | str | None = None
    ) -> Iterator[None]:
        """Use another model inside the block (in this context only)."""
        token = self._override_model.set(infer_image_generation_model(model)) if model is not None else None
        try:
            yield
        finally:
            if token is not None:
                self._override_model.reset(token)

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
        model = self._get_model()
        merged = merge_image_generation_settings(self._settings, settings)
        with _instrument.span_if(self._traced(), 'image_generation {model_name}', model_name=model.model_name):
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

    def _get_model(self) -> ImageGenerationModel:
        if (overridden := self._override_model.get()) is not None:
            return overridden
        model = self._model = infer_image_generation_model(self._model)
        return model

    def _traced(self) -> bool:
        instrument = self.instrument if self.instrument is not None else ImageGenerator._instrument_default
        return instrument is not False
