"""`x_search_tool`: an `x_search` tool that asks an xAI model, run with its native X search, about posts on X."""

from __future__ import annotations as _annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

from ..models import KnownModelName, Model
from ..native_tools import XSearchTool
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
    'XSearchFallbackModel',
    'XSearchFallbackModelFunc',
    'XSearchNativeTool',
    'XSearchSubagentTool',
    'x_search_tool',
)

XSearchFallbackModelFunc: TypeAlias = FallbackModelFunc
"""A function of the run context returning the xAI model to ask (sync or async)."""

XSearchFallbackModel: TypeAlias = Model | KnownModelName | str | XSearchFallbackModelFunc | None
"""The xAI model asked: a `Model`, a model name, a function returning one, or `None` (none)."""

XSearchNativeTool: TypeAlias = XSearchTool | Callable[[RunContext[AgentDepsT]], Awaitable[XSearchTool] | XSearchTool]
"""The X search tool the fallback model is given: an `XSearchTool`, or a function of the calling run's context
returning one (sync or async), called at each call of the tool. Unlike a capability's `native=` function, it cannot
return `None`: the model asked is there to run that tool."""

_DEFAULT_INSTRUCTIONS = 'Search X/Twitter based on the user query. Return a comprehensive summary of the results.'


@dataclass(kw_only=True)
class XSearchSubagentTool(NativeToolAlias):
    """The function of the `x_search` tool: asks `model`, run with `native_tool`, to search X and sum up what it
    found (pydantic-ai runs an agent on that model; Edgewise makes the requests itself)."""

    model: Model | KnownModelName | str | XSearchFallbackModelFunc
    """The xAI model asked, or a function of the run context returning it."""

    native_tool: XSearchNativeTool[Any]
    """The X search tool the model is given."""

    instructions: str = _DEFAULT_INSTRUCTIONS
    """The instructions the model is given."""

    async def __call__(self, ctx: RunContext[Any], query: str) -> str:
        """Search X.

        Args:
            ctx: The run context of the calling agent.
            query: What to search X for.

        Raises:
            ModelRetry: the model answered twice without text.
        """
        model = await resolve_fallback_model(self.model, ctx)
        text: str = await ask_fallback_model(
            model,
            await resolve_native_tool(XSearchTool, self.native_tool, ctx),
            instructions=self.instructions,
            prompt=query,
            output='text',
        )
        return text


def x_search_tool(
    model: Model | KnownModelName | str | XSearchFallbackModelFunc,
    native_tool: XSearchNativeTool[Any] | None = None,
    *,
    instructions: str = _DEFAULT_INSTRUCTIONS,
    **_deprecated_kwargs: Any,
) -> Tool[Any]:
    """An `x_search(query)` tool that asks `model` (an xAI model such as `'xai:grok-4.3'`, or a function of the run
    context returning one) to search X with its native X search.

    Args:
        model: The model to ask.
        native_tool: The X search tool (and its settings) the model is given, or a function of the run context
            returning it at each call.
        instructions: The instructions the model is given.

    Raises:
        TypeError: `native_tool` is missing, or an unknown keyword argument is given (`builtin_tool=` is the
            deprecated name of `native_tool=`).
    """
    native_tool = native_tool_argument('x_search_tool', native_tool, _deprecated_kwargs)
    function = XSearchSubagentTool(model=model, native_tool=native_tool, instructions=instructions)
    return Tool(function.__call__, name='x_search', description='Search posts on X (Twitter) for the given query.')
