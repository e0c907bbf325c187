"""The unified `cache` setting read for a provider: a retention snapped to the tiers the provider has, and whether
the conversation is cached (shared by the provider mappings, as pydantic-ai 2.68's `models._prompt_cache`)."""

from __future__ import annotations as _annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any, Literal

from ..exceptions import UserError
from ..settings import CacheConfig, CacheRetention, CacheSetting

__all__ = (
    'CACHE_RETENTION_ORDER',
    'cache_retention',
    'snap_cache_retention',
    'snap_cache_setting',
    'split_cache_setting',
)

CACHE_RETENTION_ORDER: tuple[CacheRetention, ...] = ('5m', '30m', '1h', '12h')
"""Every retention tier, shortest first."""

_CACHE_CONFIG_KEYS = frozenset(CacheConfig.__annotations__)


def snap_cache_retention(
    value: Literal[True] | CacheRetention, supported: Sequence[CacheRetention]
) -> Literal[True] | CacheRetention:
    """`value` as a tier in `supported`: itself when there, else the nearest shorter tier, else the shortest; `True`
    (the provider's default) when the provider has no tiers to ask for.

    Raises:
        UserError: `value` is no retention tier.
    """
    if value is True:
        return value
    if value not in CACHE_RETENTION_ORDER:
        raise UserError(
            f'Unknown `cache` retention {value!r}. '
            f'Use `True`, `False`, or one of {", ".join(repr(tier) for tier in CACHE_RETENTION_ORDER)}.'
        )
    if not supported:
        return True
    if value in supported:
        return value
    rank = CACHE_RETENTION_ORDER.index(value)
    ranks = sorted(CACHE_RETENTION_ORDER.index(tier) for tier in supported)
    shorter = [r for r in ranks if r < rank]
    return CACHE_RETENTION_ORDER[shorter[-1] if shorter else ranks[0]]


def snap_cache_setting(
    value: Literal[True] | CacheRetention | CacheConfig, supported: Sequence[CacheRetention]
) -> Literal[True] | CacheRetention | CacheConfig:
    """A `cache` value (not `False`) checked, with its retention snapped; a `CacheConfig` that caches the
    conversation becomes its retention alone.

    Raises:
        UserError: an unknown retention, or an unknown `CacheConfig` key.
    """
    if not isinstance(value, dict):
        return snap_cache_retention(value, supported)
    if unknown := set(value) - _CACHE_CONFIG_KEYS:
        raise UserError(
            f'Unknown `cache` option(s) {", ".join(repr(key) for key in sorted(unknown))}. '
            f'Use {" and ".join(repr(key) for key in sorted(_CACHE_CONFIG_KEYS))}.'
        )
    retention = snap_cache_retention(value.get('retention', True), supported)
    if value.get('messages', True):
        return retention
    return CacheConfig(messages=False) if retention is True else CacheConfig(retention=retention, messages=False)


def split_cache_setting(value: CacheSetting) -> tuple[Literal[True] | CacheRetention, bool]:
    """A snapped `cache` value's retention (`True`: the provider's default) and whether it caches the
    conversation."""
    if isinstance(value, dict):
        return value.get('retention', True), value.get('messages', True)
    assert value is not False  # `False` turns caching off before any provider reads it
    return value, True


_RETENTIONS: dict[object, timedelta] = {
    '5m': timedelta(minutes=5),
    '30m': timedelta(minutes=30),
    '1h': timedelta(hours=1),
    '12h': timedelta(hours=12),
}


def cache_retention(
    settings: Mapping[str, Any], profile: Mapping[str, Any], provider_keys: Sequence[str] = ()
) -> timedelta | None:
    """The longest retention a request's merged settings ask the prompt cache for, or `None` when they ask for none.

    The provider's own cache settings (`provider_keys`), when any is given, are read instead of the unified `cache`,
    as the request mapping does; the unified one counts only where the profile has `supports_cache`, snapped to the
    profile's `supported_cache_retentions` (its default retention is then the shortest tier). A setting of `True`
    without a tier counts as 5 minutes, the shortest retention providers document.

    Raises:
        UserError: the `cache` setting holds an unknown retention or option.
    """
    if any(key in settings for key in provider_keys):
        values: list[object] = [settings.get(key) for key in provider_keys]
    else:
        cache = settings.get('cache')
        if cache is None or cache is False or not profile.get('supports_cache', False):
            return None
        tiers: Sequence[CacheRetention] = profile.get('supported_cache_retentions', ())
        retention, _ = split_cache_setting(snap_cache_setting(cache, tiers))
        values = [tiers[0] if retention is True and tiers else retention]
    found = [_RETENTIONS.get(value, timedelta(minutes=5)) for value in values if value]
    return max(found, default=None)
