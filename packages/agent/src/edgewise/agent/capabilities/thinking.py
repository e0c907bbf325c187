"""`Thinking`: the model reasons before it answers, at the effort given (the unified `thinking` model setting)."""

from __future__ import annotations as _annotations

from dataclasses import dataclass
from typing import Any

from ..settings import ModelSettings, ThinkingLevel
from .abstract import AbstractCapability

__all__ = ('Thinking',)


@dataclass
class Thinking(AbstractCapability[Any]):
    """Turns the model's thinking on (or off) across providers: `Thinking(effort='high')` adds the model setting
    `thinking='high'`, which each model maps to its API (OpenAI's reasoning effort, Anthropic's thinking budget or
    effort, Gemini's thinking level or budget). Settings of the agent or the run, and a provider's own thinking
    setting, win over it; models that cannot reason ignore it."""

    effort: ThinkingLevel = True
    """`True` (the provider's default effort), `False` (no thinking; ignored by models that always think), or
    `'minimal'`, `'low'`, `'medium'`, `'high'`, `'xhigh'`, `'max'`."""

    def get_model_settings(self) -> ModelSettings:
        """The `thinking` setting."""
        return ModelSettings(thinking=self.effort)
