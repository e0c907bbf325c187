"""`XSearch`: X (Twitter) search with xAI's native tool, or through an xAI model from other models."""

from __future__ import annotations as _annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from ..common_tools.x_search import XSearchFallbackModel, x_search_tool
from ..exceptions import UserError
from ..models import KnownModelName, Model
from ..native_tools import XSearchTool
from ..tools import AgentDepsT, RunContext, Tool
from ..toolsets import AbstractToolset
from .native_or_local import NativeOrLocalTool

__all__ = ('XSearch',)


@dataclass(init=False)
class XSearch(NativeOrLocalTool[AgentDepsT]):
    """Lets the model search posts on X: with xAI's `XSearchTool` on xAI models; on other models with the tool
    given as `local`, or, given `fallback_model` (an xAI model), with an `x_search` tool that asks that model.

    There is no fallback by default: on a model without X search, and with neither `local` nor `fallback_model`,
    requests are refused with a `UserError`. The handle filters need the native tool (used directly or by the
    fallback model): with one of them set and no `fallback_model`, a local tool is left out.
    """

    fallback_model: XSearchFallbackModel = None
    """The xAI model asked when the agent's model cannot search X (a model name, a `Model`, or a function of the
    run context returning one); `None`: no such fallback."""

    allowed_x_handles: list[str] | None = None
    """The only X handles whose posts are included (at most 10)."""

    excluded_x_handles: list[str] | None = None
    """X handles whose posts are left out (at most 10)."""

    from_date: datetime | None = None
    """Only posts from this time on."""

    to_date: datetime | None = None
    """Only posts up to this time."""

    enable_image_understanding: bool | None = None
    """Whether images of the posts are analysed (the native tool's default when `None`)."""

    enable_video_understanding: bool | None = None
    """Whether videos of the posts are analysed (the native tool's default when `None`)."""

    include_output: bool | None = None
    """Whether the raw search results come back as `NativeToolReturnPart`s (the native tool's default when
    `None`)."""

    _native_type = XSearchTool

    def __init__(
        self,
        *,
        native: XSearchTool
        | Callable[[RunContext[AgentDepsT]], Awaitable[XSearchTool | None] | XSearchTool | None]
        | bool = True,
        local: Tool[AgentDepsT] | Callable[..., Any] | Literal[False] | None = None,
        fallback_model: Model
        | KnownModelName
        | str
        | Callable[[RunContext[AgentDepsT]], Awaitable[Model] | Model]
        | None = None,
        allowed_x_handles: list[str] | None = None,
        excluded_x_handles: list[str] | None = None,
        from_date: datetime | None = None,
        to_date: datetime | None = None,
        enable_image_understanding: bool | None = None,
        enable_video_understanding: bool | None = None,
        include_output: bool | None = None,
        id: str | None = None,
        description: str | None = None,
        defer_loading: bool = False,
    ) -> None:
        if fallback_model is not None and local is not None:
            raise UserError(
                'XSearch: cannot specify both `fallback_model` and `local` — use `fallback_model` for the default '
                'subagent fallback, or `local` for a custom tool'
            )
        self._init_common(native=native, local=local, id=id, defer_loading=defer_loading, description=description)
        self.fallback_model = fallback_model
        self.allowed_x_handles = allowed_x_handles
        self.excluded_x_handles = excluded_x_handles
        # (agent specs give the dates as ISO 8601 text)
        self.from_date = datetime.fromisoformat(from_date) if isinstance(from_date, str) else from_date
        self.to_date = datetime.fromisoformat(to_date) if isinstance(to_date, str) else to_date
        self.enable_image_understanding = enable_image_understanding
        self.enable_video_understanding = enable_video_understanding
        self.include_output = include_output
        self.__post_init__()

    def _tool_settings(self) -> dict[str, Any]:
        return {
            'allowed_x_handles': self.allowed_x_handles,
            'excluded_x_handles': self.excluded_x_handles,
            'from_date': self.from_date,
            'to_date': self.to_date,
            'enable_image_understanding': self.enable_image_understanding,
            'enable_video_understanding': self.enable_video_understanding,
            'include_output': self.include_output,
        }

    def _default_local(self) -> Tool[AgentDepsT] | AbstractToolset[AgentDepsT] | None:
        if self.fallback_model is None:
            return None
        return x_search_tool(self.fallback_model, self._resolved_native())

    def _requires_native(self) -> bool:
        # A fallback model runs the native tool itself, so it honours the handle filters too.
        if self.fallback_model is not None:
            return False
        return self.allowed_x_handles is not None or self.excluded_x_handles is not None
