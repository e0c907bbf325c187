"""Whether a provider's prompt cache is likely still warm for the next request on a history (pydantic-ai 2.68's
`prompt_cache_outlook`), judged from the history's timestamps and the profile's cache keys alone."""

from __future__ import annotations as _annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from .._messages.content import CachePoint
from .._messages.model_messages import ModelRequest, ModelResponse, UserPromptPart

if TYPE_CHECKING:
    from .._messages.model_messages import ModelMessage

__all__ = ('PromptCacheOutlook', 'prompt_cache_outlook')

PromptCacheOutlook: TypeAlias = Literal['warm', 'cold', 'unknown']
"""The likely state of the provider's prompt cache for the next request on a history: `'warm'` (the last response
came within the retention, so the cached prefix should still be there), `'cold'` (longer ago: the next request pays
for the whole prefix anyway, a cheap moment to rewrite the history) or `'unknown'` (no retention or no response to
measure from; treat it as `'warm'`)."""

_CACHE_POINT_TTLS: dict[str, timedelta] = {'5m': timedelta(minutes=5), '1h': timedelta(hours=1)}


def prompt_cache_outlook(
    messages: Sequence[ModelMessage],
    *,
    profile: Mapping[str, Any] | None = None,
    retention: timedelta | None = None,
    now: datetime | None = None,
) -> PromptCacheOutlook:
    """Whether the prompt cache is likely warm for the next request built on `messages` (oldest first).

    The time since the last `ModelResponse` (the provider's last use of the cache; a request not answered yet never
    reached it) is compared with the retention: `retention` if given (e.g. `model.resolve_cache_retention(settings)`),
    else the profile's `default_cache_retention`. A `CachePoint` in an answered request lengthens it to its `ttl`
    when the provider honours that tier: one of the profile's `supported_cache_retentions` when the profile has
    `supports_cache`, any tier when there is no profile or it does not describe its cache. Naive timestamps are
    read as UTC. Pure: no state, no request.

    Args:
        messages: The history the next request is built on.
        profile: The model's `ModelProfile`, whose cache keys give the retention.
        retention: The retention the requests ask for, instead of the profile's default.
        now: The time to measure from (default: the current UTC time).
    """
    retention = expected_cache_retention(messages, profile=profile, retention=retention)
    answered = _answered_length(messages)
    if retention is None or not answered:
        return 'unknown'
    last = messages[answered - 1]
    assert isinstance(last, ModelResponse)
    stamp = last.timestamp if last.timestamp.tzinfo else last.timestamp.replace(tzinfo=UTC)
    now = datetime.now(UTC) if now is None else now if now.tzinfo else now.replace(tzinfo=UTC)
    return 'warm' if now - stamp <= retention else 'cold'


def expected_cache_retention(
    messages: Sequence[ModelMessage], *, profile: Mapping[str, Any] | None, retention: timedelta | None
) -> timedelta | None:
    """How long the provider should keep the cached prefix of `messages`, or `None` when that is not known:
    `retention` (what the settings ask for) or else the profile's `default_cache_retention`, lengthened by the
    longest `CachePoint.ttl` the provider honours in the answered part of the history (cache points alone give no
    retention: without a base, whether the provider honoured them is not known)."""
    if retention is None and profile is not None:
        retention = profile.get('default_cache_retention')
    if retention is None:
        return None
    honored = profile.get('supported_cache_retentions', ()) if profile and profile.get('supports_cache') else None
    if (ttl := _longest_cache_point_ttl(messages[: _answered_length(messages)], honored)) is not None:
        retention = max(retention, ttl)
    return retention


def _answered_length(messages: Sequence[ModelMessage]) -> int:
    """How many messages lead up to (and include) the last response: the part of the history the cache has seen."""
    for index in range(len(messages), 0, -1):
        if isinstance(messages[index - 1], ModelResponse):
            return index
    return 0


def _longest_cache_point_ttl(messages: Sequence[ModelMessage], honored: Sequence[str] | None) -> timedelta | None:
    ttls = [
        _CACHE_POINT_TTLS[item.ttl]
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart) and not isinstance(part.content, str)
        for item in part.content
        if isinstance(item, CachePoint) and (honored is None or item.ttl in honored)
    ]
    return max(ttls, default=None)
