"""Prompt-cache health of instrumented runs (pydantic-ai 2.68's `_cache_health`): did a request read back much less of
the cached prefix than the conversation had already established, and does the provider's retention explain it?

Each conversation keeps, per provider cache (provider, base URL, model), a mark of the prefix its responses
established. A request that reads back far less is a collapse, classified by what explains it; a long request on a
model that caches only when asked, with nothing asking, is reported as caching not enabled. The run's `chat` span
gets the findings as `pydantic_ai.cache.*` attributes and events (see `record_cache_health`)."""

from __future__ import annotations as _annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Sequence, Set
from dataclasses import KW_ONLY, dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar, Literal, TypeAlias

from .._messages.compaction import CompactionPart
from .._messages.content import CachePoint
from .._messages.model_messages import ModelMessage, ModelRequest, ModelResponse, UserPromptPart
from .._messages.tool_parts import NativeToolCallPart
from ..profiles import ModelProfile
from ..profiles._cache_outlook import expected_cache_retention
from ..settings import ModelSettings
from ._model import Model
from .fallback import FallbackModel

__all__ = (
    'MIN_CACHEABLE_TOKENS',
    'MIN_MISSED_RATIO',
    'MIN_MISSED_TOKENS',
    'CacheCollapse',
    'CacheHealth',
    'CacheHealthDetector',
    'CacheMark',
    'CollapseReason',
    'ConversationCacheMarkStore',
    'cache_hit_ratio',
    'record_cache_health',
)

CollapseReason: TypeAlias = Literal['unexpected', 'ttl_expired', 'compacted', 'unknown', 'unreported']
"""What explains a collapsed prefix: `'unexpected'` (within the retention: the prefix changed), `'ttl_expired'` (the
cache was idle longer than the retention), `'compacted'` (a `CompactionPart` replaced the history since), `'unknown'`
(the provider documents no retention) or `'unreported'` (the response reported no cache usage at all)."""

MIN_MISSED_RATIO = 0.05
"""A request collapses when it misses more than this share of the established prefix..."""
MIN_MISSED_TOKENS = 2000
"""...and at least this many of its tokens (smaller shortfalls are provider rounding and partial misses)."""
MIN_CACHEABLE_TOKENS = 4096
"""Input tokens from which every provider caches a prompt (the largest of the models' minimums)."""

CacheKey: TypeAlias = tuple[str | None, str | None, str | None]
"""A response's `(provider_name, provider_url, model_name)`: the provider cache its tokens came from."""

_CONVERSATION_HORIZON = timedelta(hours=24)


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class CacheMark:
    """What a provider cache held for a conversation after its last response that reported cache usage."""

    established_tokens: int
    """The cached prefix later requests are judged against."""
    last_seen: datetime
    """When the provider last reported using the cache (the start of its retention clock)."""
    run_id: str | None
    """The run of that request."""
    compactions: int = 0
    """How many `CompactionPart`s the history had then."""
    latest_compaction: str | None = None
    """A digest of the newest of them (a summary replacing an earlier one leaves the count alone)."""
    alerted: bool = False
    """Whether a collapse was alerted on and the cache has not read back whole since (one alert per collapse)."""
    not_enabled_alerted: bool = False
    """Whether this key was already reported as having no caching enabled (reported once)."""


CacheMarks: TypeAlias = dict[CacheKey, CacheMark]


class ConversationCacheMarkStore:
    """The cache marks of each conversation (by `conversation_id`), shared by the runs that continue it.

    The first request of a run that continues a conversation resends the prefix the previous run cached, so
    the marks outlive runs. Bounded: the least recently updated conversations are forgotten past
    `max_conversations`, or once idle longer than any provider keeps a cache (`horizon`).
    """

    max_conversations: ClassVar[int] = 4096
    """The most conversations kept."""
    horizon: ClassVar[timedelta] = _CONVERSATION_HORIZON
    """How long an idle conversation is kept (the longest retention a provider documents)."""

    def __init__(self) -> None:
        self._conversations: OrderedDict[str, tuple[datetime, CacheMarks]] = OrderedDict()
        self._lock = threading.Lock()  # runs in other threads (each with its own event loop) share the store

    def get(self, conversation_id: str | None) -> CacheMarks:
        """The conversation's marks; a new set, not stored yet, for a conversation it does not hold."""
        with self._lock:
            stored = self._conversations.get(conversation_id) if conversation_id is not None else None
        return stored[1] if stored is not None else {}

    def update(self, conversation_id: str | None, marks: CacheMarks, now: datetime) -> CacheMarks:
        """Store that the conversation's marks changed at `now`, forgetting stale conversations; returns the
        marks to go on with (runs of one new conversation started together merge theirs into the first stored)."""
        if conversation_id is None:
            return marks
        with self._lock:
            conversations = self._conversations
            stored = conversations.get(conversation_id)
            if stored is not None and stored[1] is not marks:
                stored[1].update(marks)
                marks = stored[1]
            conversations[conversation_id] = (now, marks)
            conversations.move_to_end(conversation_id)
            while len(conversations) > self.max_conversations or (
                now - next(iter(conversations.values()))[0] > self.horizon
            ):
                conversations.popitem(last=False)
        return marks


@dataclass(frozen=True)
class CacheCollapse:
    """A request that read back far less of its cache's established prefix than expected."""

    reason: CollapseReason
    """What explains it."""
    previous: CacheMark
    """The mark it was judged against."""
    cache_read_tokens: int
    """The tokens it read from the cache."""
    missed_tokens: int
    """The established tokens it did not read back."""
    idle: timedelta
    """The time since `previous` was recorded."""
    retention: timedelta | None
    """The retention it was classified against, when known."""
    alert: bool
    """Whether to surface it: its reason is alerted on, and no earlier collapse of this cache was alerted on
    without the cache reading back whole since."""


@dataclass(frozen=True)
class CacheHealth:
    """How one response used its provider's prompt cache."""

    hit_ratio: float
    """The share of input tokens read from the cache."""
    established_tokens: int
    """The established prefix after this response."""
    collapse: CacheCollapse | None
    """The collapse, if the request collapsed."""
    not_enabled: bool = False
    """Whether a request long enough to cache, to a model that caches only when asked, asked nothing about
    caching (no `cache` setting, no provider cache setting, no `CachePoint` in its history) and reported no cache
    usage. Reported once per conversation and cache."""


def cache_hit_ratio(cache_read_tokens: int, input_tokens: int) -> float:
    """`cache_read_tokens` over `input_tokens` (`0.0` without input tokens)."""
    return cache_read_tokens / input_tokens if input_tokens else 0.0


def _compaction_state(messages: Sequence[ModelMessage], response: ModelResponse) -> tuple[int, str | None]:
    """The number of `CompactionPart`s in the history and response, and a digest of the newest."""
    parts = [part for message in [*messages, response] for part in message.parts if isinstance(part, CompactionPart)]
    if not parts:
        return 0, None
    newest = parts[-1]
    identity = [newest.content, newest.id, newest.provider_name, newest.provider_details]
    return len(parts), hashlib.sha256(json.dumps(identity, sort_keys=True, default=str).encode()).hexdigest()


def _sums_cache_usage(response: ModelResponse) -> bool:
    """Whether the response's cache usage may add up several model passes of one request (a native tool run by the
    provider), so that it can exceed what the next request reads back: a reported pass count decides (Anthropic's
    `message_iterations`), else a native tool call does, unless the provider counts tool-use prompt tokens apart."""
    details = response.usage.details
    passes = details.get('message_iterations')
    if passes is not None:
        return passes + details.get('compaction_iterations', 0) > 1
    return 'tool_use_prompt_tokens' not in details and any(isinstance(p, NativeToolCallPart) for p in response.parts)


def _has_cache_point(messages: Sequence[ModelMessage]) -> bool:
    return any(
        isinstance(item, CachePoint)
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart) and not isinstance(part.content, str)
        for item in part.content
    )


@dataclass
class CacheHealthDetector:
    """Judges one run's responses against its conversation's cache marks and moves the marks on."""

    store: ConversationCacheMarkStore
    """Where the conversation's marks are shared."""
    conversation_id: str | None
    """The run's conversation."""
    run_id: str | None
    """The run."""
    _: KW_ONLY
    alert_on: Set[CollapseReason]
    """The collapse reasons to alert on (every collapse is classified either way)."""
    min_missed_ratio: float = MIN_MISSED_RATIO
    """See `MIN_MISSED_RATIO`."""
    min_missed_tokens: int = MIN_MISSED_TOKENS
    """See `MIN_MISSED_TOKENS`."""
    min_prefix_tokens: int = 0
    """The smallest established prefix judged."""
    marks: CacheMarks = field(init=False)
    """The conversation's marks."""

    def __post_init__(self) -> None:
        self.marks = self.store.get(self.conversation_id)

    def observe(
        self,
        model: Model,
        model_settings: ModelSettings | None,
        messages: Sequence[ModelMessage],
        response: ModelResponse,
        *,
        final_segment: ModelResponse | None = None,
    ) -> CacheHealth | None:
        """Judge `response` (to a request of `messages` to `model` under `model_settings`) and move its cache's
        mark on; `None` when the cache is not in play. `final_segment`, the last response of a continued turn
        whose usage `response` sums, is judged instead when given."""
        usage = (final_segment or response).usage
        read, write = usage.cache_read_tokens, usage.cache_write_tokens
        # Keyed by the response: only it says which provider and model answered (a fallback may have moved on).
        key = (response.provider_name, response.provider_url, response.model_name)
        mark = self.marks.get(key)
        established = mark.established_tokens if mark else 0
        unreported = not read and not write
        if unreported and not established:
            if (mark is None or not mark.not_enabled_alerted) and self._caching_not_enabled(
                model, model_settings, messages, usage.input_tokens
            ):
                now = _now()
                self.marks[key] = CacheMark(0, now, self.run_id, not_enabled_alerted=True)
                self.marks = self.store.update(self.conversation_id, self.marks, now)
                return CacheHealth(hit_ratio=0.0, established_tokens=0, collapse=None, not_enabled=True)
            return None
        now = _now()
        compactions, latest = _compaction_state(messages, response)
        missed = established - read
        collapse = None
        if (
            mark is not None
            and established >= self.min_prefix_tokens
            and missed >= self.min_missed_tokens
            and missed > established * self.min_missed_ratio
        ):
            retention = self._retention(model, model_settings, messages)
            collapse = self._classify(mark, read, now, retention, unreported, compactions, latest)
        # A response without cache usage says nothing of the provider's copy: the mark stays as it was.
        if not unreported:
            established = self._advance(key, mark, final_segment or response, collapse, now, compactions, latest)
        return CacheHealth(cache_hit_ratio(read, usage.input_tokens), established, collapse)

    @staticmethod
    def _caching_not_enabled(
        model: Model, model_settings: ModelSettings | None, messages: Sequence[ModelMessage], input_tokens: int
    ) -> bool:
        return (
            input_tokens >= MIN_CACHEABLE_TOKENS
            and model._caching_not_enabled(model_settings)
            and not _has_cache_point(messages)
        )

    @staticmethod
    def _retention(
        model: Model, model_settings: ModelSettings | None, messages: Sequence[ModelMessage]
    ) -> timedelta | None:
        # A `FallbackModel`'s profile is its first model's, which may not be the one that answered (pydantic-ai
        # 2.68's has none): its retention is what the settings ask for alone.
        profile: ModelProfile | None = None if isinstance(model, FallbackModel) else model.profile
        asked = model.resolve_cache_retention(model_settings)
        return expected_cache_retention(messages, profile=profile, retention=asked)

    def _advance(
        self,
        key: CacheKey,
        mark: CacheMark | None,
        measured: ModelResponse,
        collapse: CacheCollapse | None,
        now: datetime,
        compactions: int,
        latest: str | None,
    ) -> int:
        """Move `key`'s mark on from a response that reported cache usage; the tokens now established."""
        read, write = measured.usage.cache_read_tokens, measured.usage.cache_write_tokens
        established = mark.established_tokens if mark else 0
        if _sums_cache_usage(measured):
            # A summed read proves a collapse but not a healthy prefix: only the retention clock restarts.
            if mark is not None:
                alerted = mark.alerted or (collapse is not None and collapse.alert)
                self.marks[key] = replace(mark, last_seen=now, alerted=alerted)
                self.marks = self.store.update(self.conversation_id, self.marks, now)
            return established
        if collapse is None:
            updated, alerted = max(established, read + write), False
        else:
            # Re-based on what this request established, so a deliberate rewrite is judged once, not on every
            # later request against a stale high-water mark.
            updated, alerted = read + write, collapse.previous.alerted or collapse.alert
        not_enabled_alerted = mark is not None and mark.not_enabled_alerted
        self.marks[key] = CacheMark(
            updated, now, self.run_id, compactions, latest, alerted, not_enabled_alerted=not_enabled_alerted
        )
        self.marks = self.store.update(self.conversation_id, self.marks, now)
        return updated

    def _classify(
        self,
        mark: CacheMark,
        read: int,
        now: datetime,
        retention: timedelta | None,
        unreported: bool,
        compactions: int,
        latest: str | None,
    ) -> CacheCollapse:
        idle = now - mark.last_seen
        reason: CollapseReason
        if unreported:
            # Providers that report writes show 0/0 when the cache was not engaged at all, those that report
            # reads only show it for a full miss: the miss is real, its cause not knowable from usage.
            reason, retention = 'unreported', None
        elif compactions > mark.compactions or latest not in (None, mark.latest_compaction):
            reason, retention = 'compacted', None
        elif retention is None:
            reason = 'unknown'
        else:
            reason = 'ttl_expired' if idle > retention else 'unexpected'
        return CacheCollapse(
            reason=reason,
            previous=mark,
            cache_read_tokens=read,
            missed_tokens=mark.established_tokens - read,
            idle=idle,
            retention=retention,
            alert=reason in self.alert_on and not mark.alerted,
        )


CACHE_COLLAPSE_EVENT_REASONS: frozenset[CollapseReason] = frozenset({'unexpected'})
"""The collapses instrumented runs put a `pydantic_ai.cache.collapse` span event for."""

CONVERSATION_CACHE_MARKS = ConversationCacheMarkStore()
"""The marks instrumented runs share (one store per process, as pydantic-ai 2.68's `Instrumentation`)."""


def record_cache_health(span: Any, health: CacheHealth | None, response: ModelResponse) -> None:
    """Put `health` on a request's recording `span`: `pydantic_ai.cache.hit_ratio` and `.established_tokens`; then
    `.not_enabled` with an event of that name, or, on a collapse, `.collapsed`, `.missed_tokens` and
    `.collapse_reason`, with a `pydantic_ai.cache.collapse` event when it is alerted on."""
    if health is None or span is None or not span.is_recording():
        return
    span.set_attribute('pydantic_ai.cache.hit_ratio', health.hit_ratio)
    span.set_attribute('pydantic_ai.cache.established_tokens', health.established_tokens)
    names = {'provider_name': response.provider_name, 'model_name': response.model_name}
    if health.not_enabled:
        span.set_attribute('pydantic_ai.cache.not_enabled', True)
        attributes: dict[str, Any] = {'input_tokens': response.usage.input_tokens, **names}
        span.add_event('pydantic_ai.cache.not_enabled', attributes=_present(attributes))
        return
    collapse = health.collapse
    if collapse is None:
        return
    span.set_attribute('pydantic_ai.cache.collapsed', True)
    span.set_attribute('pydantic_ai.cache.missed_tokens', collapse.missed_tokens)
    span.set_attribute('pydantic_ai.cache.collapse_reason', collapse.reason)
    if collapse.alert:
        attributes = {
            'established_tokens': collapse.previous.established_tokens,
            'cache_read_tokens': collapse.cache_read_tokens,
            'missed_tokens': collapse.missed_tokens,
            **names,
        }
        span.add_event('pydantic_ai.cache.collapse', attributes=_present(attributes))


def _present(attributes: dict[str, Any]) -> dict[str, Any]:
    """`attributes` without `None` values (OpenTelemetry attributes cannot be `None`)."""
    return {key: value for key, value in attributes.items() if value is not None}
