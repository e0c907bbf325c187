"""`Citations`: ask providers that cite only when asked for the sources of the model's text (`TextPart.citations`)."""

from __future__ import annotations as _annotations

from dataclasses import KW_ONLY, dataclass
from typing import Any

from ..settings import ModelSettings
from .abstract import AbstractCapability

__all__ = ('Citations',)


@dataclass
class Citations(AbstractCapability[Any]):
    """Adds the `citations=True` model setting: Anthropic then cites the documents of the request (and those tool
    results hold). Providers that always cite (OpenAI, Google web search) need no capability for it. Used only when
    the output is text."""

    _: KW_ONLY
    id: str | None = 'citations'
    """Fixed by default: an agent asks for citations or does not. Pass another id to keep two of them apart, or
    `None` for an id made from the class name."""

    def get_model_settings(self) -> ModelSettings:
        """The `citations` setting."""
        return ModelSettings(citations=True)
