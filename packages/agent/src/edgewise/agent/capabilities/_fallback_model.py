"""The local tools of `ImageGeneration(fallback_model=...)` and `XSearch(fallback_model=...)`: the model that lacks the
native tool calls a function tool, which asks another model, one that has the native tool, to do the work.

pydantic-ai runs an `Agent` on the other model for this; Edgewise makes the requests itself (a capability cannot
import the agent, which imports the capabilities): the prompt and the instructions go to the other model with the
native tool, and an answer without an image (or without text) is sent back once with a request to try again.
"""

from __future__ import annotations as _annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from ..exceptions import ModelRetry
from ..messages import BinaryImage, FilePart, ModelMessage, ModelRequest, RetryPromptPart
from ..models import KnownModelName, Model, ModelRequestParameters, infer_model
from ..native_tools import AbstractNativeTool
from ..tools import RunContext, Tool

__all__ = ('FallbackModel', 'FallbackModelFunc', 'fallback_model_tool')

FallbackModelFunc: TypeAlias = Callable[[RunContext[Any]], Awaitable[Model] | Model]
"""A function of the run context returning the model to fall back to (sync or async)."""

FallbackModel: TypeAlias = Model | KnownModelName | str | FallbackModelFunc | None
"""A model to fall back to: a `Model`, a model name, a function returning one, or `None` (no fallback)."""

_ATTEMPTS = 2
"""Requests made to the fallback model per tool call: the first, and one more after an answer without a result."""


@dataclass(frozen=True, kw_only=True)
class _FallbackRequest:
    model: Model | KnownModelName | str | FallbackModelFunc
    native_tool: AbstractNativeTool
    instructions: str
    output: Literal['image', 'text']

    async def ask(self, ctx: RunContext[Any], prompt: str) -> BinaryImage | str:
        model = self.model
        if callable(model) and not isinstance(model, Model):
            resolved = model(ctx)
            model = await resolved if inspect.isawaitable(resolved) else resolved
        found = infer_model(model)
        wants_image = self.output == 'image'
        params = ModelRequestParameters(
            native_tools=[self.native_tool],
            output_mode='image' if wants_image else 'text',
            allow_text_output=not wants_image,
            allow_image_output=wants_image,
        )
        params = found.customize_request_parameters(params)
        messages: list[ModelMessage] = [ModelRequest.user_text_prompt(prompt, instructions=self.instructions)]
        for _ in range(_ATTEMPTS):
            response = await found.request(messages, None, params)
            if wants_image:
                images = [
                    p.content for p in response.parts if isinstance(p, FilePart) and isinstance(p.content, BinaryImage)
                ]
                if images:
                    return images[-1]
            elif response.text:
                return response.text
            retry = RetryPromptPart(f'Your answer held no {"image" if wants_image else "text"}: give one.')
            messages = [*messages, response, ModelRequest(parts=[retry], instructions=self.instructions)]
        raise ModelRetry(
            f'The fallback model {found.label!r} gave no {"image" if wants_image else "text"} in {_ATTEMPTS} answers.'
        )


def fallback_model_tool(
    model: Model | KnownModelName | str | FallbackModelFunc,
    native_tool: AbstractNativeTool,
    *,
    name: str,
    description: str,
    argument: Literal['prompt', 'query'],
    instructions: str,
    output: Literal['image', 'text'],
) -> Tool[Any]:
    """A function tool named `name` taking one string `argument`, which asks `model` (run with `native_tool`) and
    returns the image or the text it answers.

    The tool raises `ModelRetry` when the fallback model answered twice without the result.
    """
    request = _FallbackRequest(model=model, native_tool=native_tool, instructions=instructions, output=output)
    if argument == 'prompt':

        async def by_prompt(ctx: RunContext[Any], prompt: str) -> Any:
            """Args:
            prompt: What the image should show.
            """
            return await request.ask(ctx, prompt)

        function: Callable[..., Awaitable[Any]] = by_prompt
    else:

        async def by_query(ctx: RunContext[Any], query: str) -> Any:
            """Args:
            query: What to search for.
            """
            return await request.ask(ctx, query)

        function = by_query
    return Tool(function, name=name, description=description, takes_ctx=True)
