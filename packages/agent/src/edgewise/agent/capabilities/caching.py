"""`Caching`: prompt caching for every request of a run, through the unified `cache` model setting (as pydantic-ai
2.68's)."""

from __future__ import annotations as _annotations

from dataclasses import KW_ONLY, dataclass
from typing import Any

from ..settings import CacheConfig, CacheRetention, ModelSettings
from .abstract import AbstractCapability

__all__ = ('Caching',)


@dataclass
class Caching(AbstractCapability[Any]):
    """Turns on (and configures) prompt caching with the unified `cache` setting of `ModelSettings`, the same way
    for every provider. Models that cache by themselves are unchanged; a provider's own cache settings
    (`anthropic_cache_instructions`, ...) win when set."""

    retention: bool | CacheRetention = True
    """`True`: cache with the provider's default retention; `False`: no library-placed caching; `'5m'`, `'30m'`,
    `'1h'`, `'12h'`: that retention, snapped to the nearest tier the provider has."""

    _: KW_ONLY

    messages: bool = True
    """Whether the conversation is cached too; `False` caches only the tool definitions and the instructions."""

    id: str | None = 'caching'
    """An agent has one caching configuration, hence a fixed id."""

    def get_model_settings(self) -> ModelSettings:
        """The `cache` setting: the retention, or a `CacheConfig` with `messages=False`."""
        if self.messages or self.retention is False:
            return ModelSettings(cache=self.retention)
        if self.retention is True:
            return ModelSettings(cache=CacheConfig(messages=False))
        return ModelSettings(cache=CacheConfig(retention=self.retention, messages=False))
