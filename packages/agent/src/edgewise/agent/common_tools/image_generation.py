"""`image_generation_tool`: a `generate_image` tool that asks a model with native image generation for the image."""

from __future__ import annotations as _annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

from ..exceptions import UserError
from ..messages import BinaryImage
from ..models import KnownModelName, Model
from ..native_tools import ImageGenerationTool
from ..tools import AgentDepsT, RunContext, Tool
from ._fallback_model import (
    FallbackModelFunc,
    NativeToolAlias,
    ask_fallback_model,
    native_tool_argument,
    resolve_fallback_model,
    resolve_native_tool,
)

__all__ = (
    'ImageGenerationFallbackModel',
    'ImageGenerationFallbackModelFunc',
    'ImageGenerationNativeTool',
    'ImageGenerationSubagentTool',
    'image_generation_tool',
)

ImageGenerationFallbackModelFunc: TypeAlias = FallbackModelFunc
"""A function of the run context returning the model to ask for images (sync or async)."""

ImageGenerationFallbackModel: TypeAlias = Model | KnownModelName | str | ImageGenerationFallbackModelFunc | None
"""The model asked for images: a `Model`, a model name, a function returning one, or `None` (none)."""

ImageGenerationNativeTool: TypeAlias = (
    ImageGenerationTool | Callable[[RunContext[AgentDepsT]], Awaitable[ImageGenerationTool] | ImageGenerationTool]
)
"""The image generation tool the fallback model is given: an `ImageGenerationTool`, or a function of the calling
run's context returning one (sync or async), called at each call of the tool. Unlike a capability's `native=`
function, it cannot return `None`: the model asked is there to run that tool."""

_DEFAULT_INSTRUCTIONS = 'Generate an image based on the user prompt. Do not ask clarifying questions.'

# Image-only models cannot hold the conversation the tool needs; each with a chat model that makes images.
_IMAGE_ONLY_MODELS: dict[str, str] = {
    'gpt-image-2': 'openai-responses:gpt-5.5',
    'gpt-image-1.5': 'openai-responses:gpt-5.5',
    'gpt-image-1': 'openai-responses:gpt-5.4',
    'gpt-image-1-mini': 'openai-responses:gpt-5.4',
    'dall-e-3': 'openai-responses:gpt-5.4',
    'dall-e-2': 'openai-responses:gpt-5.4',
    'imagen-3.0-generate-002': 'google:gemini-3-pro-image',
    'imagen-3.0-fast-generate-001': 'google:gemini-3-pro-image',
}


def _check_not_image_only(model: str) -> None:
    name = model.rpartition(':')[2]
    if (suggestion := _IMAGE_ONLY_MODELS.get(name)) is not None:
        raise UserError(
            f'{name!r} is a dedicated image generation model that cannot be used as `fallback_model` directly. Use a '
            f'conversational model with image generation support instead, e.g. {suggestion!r}.'
        )


@dataclass(kw_only=True)
class ImageGenerationSubagentTool(NativeToolAlias):
    """The function of the `generate_image` tool: asks `model`, run with `native_tool`, for the image a prompt
    describes (pydantic-ai runs an agent on that model; Edgewise makes the requests itself)."""

    model: Model | KnownModelName | str | ImageGenerationFallbackModelFunc
    """The model asked, or a function of the run context returning it."""

    native_tool: ImageGenerationNativeTool[Any]
    """The image generation tool the model is given."""

    instructions: str = _DEFAULT_INSTRUCTIONS
    """The instructions the model is given."""

    async def __call__(self, ctx: RunContext[Any], prompt: str) -> BinaryImage:
        """Make an image.

        Args:
            ctx: The run context of the calling agent.
            prompt: What the image should show.

        Raises:
            UserError: the function given as `model` returned the name of an image-only model.
            ModelRetry: the model answered twice without an image.
        """
        model = await resolve_fallback_model(self.model, ctx)
        if isinstance(model, str) and callable(self.model):
            _check_not_image_only(model)  # names given directly were checked when the tool was made
        image: BinaryImage = await ask_fallback_model(
            model,
            await resolve_native_tool(ImageGenerationTool, self.native_tool, ctx),
            instructions=self.instructions,
            prompt=prompt,
            output='image',
        )
        return image


def image_generation_tool(
    model: Model | KnownModelName | str | ImageGenerationFallbackModelFunc,
    native_tool: ImageGenerationNativeTool[Any] | None = None,
    *,
    instructions: str = _DEFAULT_INSTRUCTIONS,
    **_deprecated_kwargs: Any,
) -> Tool[Any]:
    """A `generate_image(prompt)` tool that asks `model` (one with native image generation, such as
    `'openai-responses:gpt-5.4'`, or a function of the run context returning it) for the image.

    Args:
        model: The model to ask.
        native_tool: The image generation tool (and its settings) the model is given, or a function of the run
            context returning it at each call.
        instructions: The instructions the model is given.

    Raises:
        TypeError: `native_tool` is missing, or an unknown keyword argument is given (`builtin_tool=` is the
            deprecated name of `native_tool=`).
        UserError: `model` names an image-only model (`'gpt-image-1'`, ...), which cannot be asked this way.
    """
    native_tool = native_tool_argument('image_generation_tool', native_tool, _deprecated_kwargs)
    if isinstance(model, str):
        _check_not_image_only(model)
    function = ImageGenerationSubagentTool(model=model, native_tool=native_tool, instructions=instructions)
    return Tool(function.__call__, name='generate_image', description='Generate an image from the given prompt.')
