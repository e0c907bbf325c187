"""`ImageGeneration`: the model's own image generation where it has one, else a tool of yours or another model's."""

from __future__ import annotations as _annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..common_tools.image_generation import ImageGenerationFallbackModel, image_generation_tool
from ..exceptions import UserError
from ..models import KnownModelName, Model
from ..native_tools import ImageAspectRatio, ImageGenerationModelName, ImageGenerationTool, ImageQuality, ImageSize
from ..tools import AgentDepsT, RunContext, Tool
from ..toolsets import AbstractToolset
from .native_or_local import NativeOrLocalTool

__all__ = ('ImageGeneration',)


@dataclass(init=False)
class ImageGeneration(NativeOrLocalTool[AgentDepsT]):
    """Lets the model make images: with its provider's `ImageGenerationTool` when it has one; else with the tool
    given as `local`, or, given `fallback_model` (a model that has the native tool), with a `generate_image` tool
    that asks that model for the image.

    The image settings (`quality`, `size`, ...) go to the native tool, and to the fallback model's; they override
    the settings of a `native` tool given.
    """

    fallback_model: ImageGenerationFallbackModel = None
    """The model asked for images when the agent's model cannot make them (a model name, a `Model`, or a function
    of the run context returning one); `None`: no such fallback."""

    action: Literal['generate', 'edit', 'auto'] | None = None
    """Whether to make a new image or edit one given."""

    background: Literal['transparent', 'opaque', 'auto'] | None = None
    """The image's background."""

    input_fidelity: Literal['high', 'low'] | None = None
    """How closely the style and features of input images are followed."""

    moderation: Literal['auto', 'low'] | None = None
    """The moderation level."""

    image_model: ImageGenerationModelName | None = None
    """The image model the provider uses (the native tool's `model`)."""

    output_compression: int | None = None
    """The compression level of JPEG and WebP images."""

    output_format: Literal['png', 'webp', 'jpeg'] | None = None
    """The image format."""

    quality: ImageQuality | None = None
    """The image quality."""

    size: ImageSize | None = None
    """The image size."""

    aspect_ratio: ImageAspectRatio | None = None
    """The image's aspect ratio."""

    _native_type = ImageGenerationTool

    def __init__(
        self,
        *,
        native: ImageGenerationTool
        | Callable[[RunContext[AgentDepsT]], Awaitable[ImageGenerationTool | None] | ImageGenerationTool | None]
        | bool = True,
        local: Tool[AgentDepsT] | Callable[..., Any] | Literal[False] | None = None,
        fallback_model: Model
        | KnownModelName
        | str
        | Callable[[RunContext[AgentDepsT]], Awaitable[Model] | Model]
        | None = None,
        action: Literal['generate', 'edit', 'auto'] | None = None,
        background: Literal['transparent', 'opaque', 'auto'] | None = None,
        input_fidelity: Literal['high', 'low'] | None = None,
        moderation: Literal['auto', 'low'] | None = None,
        image_model: ImageGenerationModelName | None = None,
        output_compression: int | None = None,
        output_format: Literal['png', 'webp', 'jpeg'] | None = None,
        quality: ImageQuality | None = None,
        size: ImageSize | None = None,
        aspect_ratio: ImageAspectRatio | None = None,
        id: str | None = None,
        defer_loading: bool = False,
        description: str | None = None,
    ) -> None:
        if fallback_model is not None and local is not None:
            raise UserError(
                'ImageGeneration: cannot specify both `fallback_model` and `local` — use `fallback_model` for the '
                'default subagent fallback, or `local` for a custom tool'
            )
        self._init_common(native=native, local=local, id=id, defer_loading=defer_loading, description=description)
        self.fallback_model = fallback_model
        self.action = action
        self.background = background
        self.input_fidelity = input_fidelity
        self.moderation = moderation
        self.image_model = image_model
        self.output_compression = output_compression
        self.output_format = output_format
        self.quality = quality
        self.size = size
        self.aspect_ratio = aspect_ratio
        self.__post_init__()

    def _tool_settings(self) -> dict[str, Any]:
        return {
            'action': self.action,
            'background': self.background,
            'input_fidelity': self.input_fidelity,
            'moderation': self.moderation,
            'model': self.image_model,
            'output_compression': self.output_compression,
            'output_format': self.output_format,
            'quality': self.quality,
            'size': self.size,
            'aspect_ratio': self.aspect_ratio,
        }

    def _default_local(self) -> Tool[AgentDepsT] | AbstractToolset[AgentDepsT] | None:
        if self.fallback_model is None:
            return None
        return image_generation_tool(self.fallback_model, self._resolved_native())
