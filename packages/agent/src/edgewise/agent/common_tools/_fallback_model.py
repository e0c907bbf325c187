"""Asking another model, one that has a native tool, for what that tool makes: the shared part of the
`image_generation` and `x_search` tools.

pydantic-ai runs an `Agent` on the other model for this; Edgewise makes the requests itself (these tools sit under
the capabilities, which the agent imports): the prompt and the instructions go to the model with the native tool,
and an answer without an image (or without text) is sent back once with a request to try again, as an agent with
one output retry would.
"""

from __future__ import annotations as _annotations

import inspect
import warnings
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeAlias, TypeVar

from .._warnings import PydanticAIDeprecationWarning
from ..exceptions import ModelRetry, UserError
from ..messages import BinaryImage, FilePart, ModelMessage, ModelRequest, RetryPromptPart
from ..models import KnownModelName, Model, ModelRequestParameters, infer_model
from ..native_tools import AbstractNativeTool
from ..tools import RunContext

__all__ = (
    'FallbackModelFunc',
    'NativeToolAlias',
    'ask_fallback_model',
    'native_tool_argument',
    'resolve_fallback_model',
    'resolve_native_tool',
)

_NativeT = TypeVar('_NativeT', bound=AbstractNativeTool)

FallbackModelFunc: TypeAlias = Callable[[RunContext[Any]], Awaitable[Model] | Model]
"""A function of the run context returning the model to ask (sync or async)."""

_OUTPUT_RETRIES = 1
"""Answers without the result sent back to the model before giving up (an agent's default output retries)."""


async def resolve_fallback_model(
    model: Model | KnownModelName | str | FallbackModelFunc, ctx: RunContext[Any]
) -> Model | str:
    """`model`, or what the function `model` returns for this run context."""
    if isinstance(model, Model | str):
        return model
    found = model(ctx)
    return await found if inspect.isawaitable(found) else found


async def resolve_native_tool(tool_type: type[_NativeT], native_tool: Any, ctx: RunContext[Any]) -> _NativeT:
    """`native_tool`, or what the function `native_tool` returns for this run context (sync or async).

    Raises:
        UserError: the function returned `None` (which leaves the tool out of a request on the native path, but the
            model asked here needs the tool), or the tool is not a `tool_type`.
    """
    if not isinstance(native_tool, AbstractNativeTool) and callable(native_tool):
        native_tool = native_tool(ctx)
        if inspect.isawaitable(native_tool):
            native_tool = await native_tool
    name = tool_type.__name__
    if native_tool is None:
        raise UserError(
            f'The function giving the `{name}` for the fallback model returned `None`. The fallback model is asked '
            f'only to run that tool, so the function must return a `{name}` here (return `None` only where '
            'no fallback model is set, to leave the native tool out of a request).'
        )
    if not isinstance(native_tool, tool_type):
        raise UserError(f'The native tool for the fallback model must be a `{name}`, not {native_tool!r}.')
    return native_tool


async def ask_fallback_model(
    model: Model | str,
    native_tool: AbstractNativeTool,
    *,
    instructions: str,
    prompt: str,
    output: Literal['image', 'text'],
) -> Any:
    """The image (a `BinaryImage`) or the text `model` answers `prompt` with, given `native_tool` and `instructions`.

    Raises:
        ModelRetry: the model answered without the result again after being told to give it (the calling model is
            asked to retry the tool call).
    """
    found = infer_model(model)
    wants_image = output == 'image'
    params = ModelRequestParameters(
        native_tools=[native_tool],
        output_mode='image' if wants_image else 'text',
        allow_text_output=not wants_image,
        allow_image_output=wants_image,
    )
    params = found.customize_request_parameters(params)
    messages: list[ModelMessage] = [ModelRequest.user_text_prompt(prompt, instructions=instructions)]
    for _ in range(_OUTPUT_RETRIES + 1):
        response = await found.request(messages, None, params)
        if wants_image:
            images = [
                p.content for p in response.parts if isinstance(p, FilePart) and isinstance(p.content, BinaryImage)
            ]
            if images:
                return images[-1]
        elif response.text:
            return response.text
        retry = RetryPromptPart(f'Your answer held no {output}: answer with one.')
        messages = [*messages, response, ModelRequest(parts=[retry], instructions=instructions)]
    # the words of the error an agent raises when its output retries run out, which pydantic-ai passes on
    raise ModelRetry(f'Exceeded maximum output retries ({_OUTPUT_RETRIES})')


def native_tool_argument(function: str, native_tool: Any, deprecated: dict[str, Any]) -> Any:
    """The native tool given to the tool factory `function`, from `native_tool=` or the deprecated `builtin_tool=`
    (which warns; `native_tool=` wins when both are given).

    Raises:
        TypeError: no native tool is given, or `deprecated` holds other keyword arguments.
    """
    if 'builtin_tool' in deprecated:
        warnings.warn(
            f'`{function}(builtin_tool=...)` is deprecated, use `native_tool=` instead.',
            PydanticAIDeprecationWarning,
            stacklevel=3,
        )
        legacy = deprecated.pop('builtin_tool')
        native_tool = legacy if native_tool is None else native_tool
    if deprecated:
        raise TypeError(f'{function}() got an unexpected keyword argument {next(iter(deprecated))!r}')
    if native_tool is None:
        raise TypeError(f"{function}() missing 1 required positional argument: 'native_tool'")
    return native_tool


class NativeToolAlias:
    """Gives a tool function's `native_tool` under its deprecated name `builtin_tool` too, with a warning."""

    native_tool: Any

    def __getattr__(self, name: str) -> Any:
        if name == 'builtin_tool':
            warnings.warn(
                f'`{type(self).__name__}.builtin_tool` is deprecated, use `.native_tool` instead.',
                PydanticAIDeprecationWarning,
                stacklevel=2,
            )
            return self.native_tool
        raise AttributeError(f'{type(self).__name__!r} object has no attribute {name!r}')
