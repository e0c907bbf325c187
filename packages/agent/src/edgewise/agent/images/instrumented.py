"""`InstrumentedImageGenerationModel`: an image generation model whose requests each get a span
(`image_generation <model>`).

The span carries the GenAI attributes of the request (operation, output type, provider, model, server, prompt length,
count of reference images, settings) and of its result (usage, response model and id, the count of images and the
media type and format of each, cost when known); with `InstrumentationSettings(include_content=True)` (the default)
also the prompt. The images themselves are never recorded. Spans go through logfire, as every Edgewise span.
"""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ..models._task_instrumentation import task_span
from ..models.instrumented import InstrumentationSettings
from .base import ImageGenerationInput, ImageGenerationModel
from .result import ImageGenerationResult
from .settings import ImageGenerationSettings
from .wrapper import WrapperImageGenerationModel

__all__ = ('InstrumentedImageGenerationModel', 'instrument_image_generation_model')


def instrument_image_generation_model(
    model: ImageGenerationModel, instrument: InstrumentationSettings | bool
) -> ImageGenerationModel:
    """`model` in an `InstrumentedImageGenerationModel` (with `InstrumentationSettings()` for `True`); `model`
    itself when `instrument` is `False` or it is instrumented already."""
    if not instrument or isinstance(model, InstrumentedImageGenerationModel):
        return model
    return InstrumentedImageGenerationModel(
        model, options=InstrumentationSettings() if instrument is True else instrument
    )


@dataclass(init=False)
class InstrumentedImageGenerationModel(WrapperImageGenerationModel):
    """Sends requests to `wrapped`, each inside a span `image_generation <model name>`."""

    instrumentation_settings: InstrumentationSettings
    """What the spans record (`include_content`: the prompt)."""

    _traces_requests: ClassVar[bool] = True

    def __init__(self, wrapped: ImageGenerationModel | str, *, options: InstrumentationSettings | None = None) -> None:
        """Wrap a model, or the model of a name.

        Args:
            wrapped: The model requests go to, or its name (`'openai:gpt-image-2'`).
            options: What the spans record; `InstrumentationSettings()` by default.
        """
        super().__init__(wrapped)
        self.instrumentation_settings = options or InstrumentationSettings()

    async def generate(
        self,
        prompt: str,
        *,
        images: Sequence[ImageGenerationInput] | None = None,
        settings: ImageGenerationSettings | None = None,
    ) -> ImageGenerationResult:
        """The wrapped model's images, the request traced.

        Raises:
            UserError: the prompt is empty, a reference is no image, or the settings contradict each other.
        """
        prompt, references, settings = self.prepare_generate(prompt, images=images, settings=settings)
        attributes: dict[str, Any] = {
            'gen_ai.output.type': 'image',
            'prompt_length': len(prompt),
            'input_image_count': len(references),
        }
        if self.instrumentation_settings.include_content:
            attributes['prompt'] = prompt
        with task_span('image_generation', self.wrapped, attributes, settings, 'image_generation_settings') as span:
            result = await self.wrapped.generate(prompt, images=references, settings=settings)
            recorded: dict[str, Any] = {'image_count': len(result.images)}
            for index, image in enumerate(result.images):
                if image.output_format:
                    recorded[f'image.{index}.output_format'] = image.output_format
                recorded[f'image.{index}.media_type'] = image.content.media_type
            span.finish(result, **recorded)
            return result
