"""Prompt-cache health of instrumented runs (pydantic-ai 2.68): the `pydantic_ai.cache.*` attributes and events of the
`chat` spans, judged against the cache marks a conversation's runs share."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from logfire.testing import CaptureLogfire

from edgewise.agent import Agent
from edgewise.agent.capabilities import AbstractCapability, WrapModelRequestHandler
from edgewise.agent.messages import (
    CachePoint,
    CompactionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponseState,
    NativeToolCallPart,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from edgewise.agent.models import ModelRequestContext
from edgewise.agent.models import _cache_health as cache_health
from edgewise.agent.models._cache_health import (
    CacheHealthDetector,
    CacheMark,
    ConversationCacheMarkStore,
    cache_hit_ratio,
    record_cache_health,
)
from edgewise.agent.models.fallback import FallbackModel
from edgewise.agent.models.function import AgentInfo, DeltaToolCalls, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.usage import RequestUsage

pytestmark = pytest.mark.anyio

FIVE_MINUTES = {'default_cache_retention': timedelta(minutes=5)}


def _usage(input_tokens: int, read: int = 0, write: int = 0, **details: int) -> RequestUsage:
    return RequestUsage(
        input_tokens=input_tokens, output_tokens=1, cache_read_tokens=read, cache_write_tokens=write, details=details
    )


def _model(*usages: RequestUsage, profile: dict[str, Any] | None = None, parts: Any = None) -> FunctionModel:
    """A model answering each request with the next usage (and `parts`, else a text)."""
    it: Iterator[RequestUsage] = iter(usages)

    async def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts or [TextPart('ok')], usage=next(it), provider_name='acme', model_name='m1')

    return FunctionModel(answer, profile=profile or FIVE_MINUTES)  # type: ignore[arg-type]


def _chat_attributes(capfire: CaptureLogfire) -> list[dict[str, Any]]:
    spans = sorted(capfire.exporter.exported_spans_as_dict(), key=lambda s: s['start_time'])
    return [s['attributes'] for s in spans if s['name'].startswith('chat ')]


def _cache_attributes(attributes: dict[str, Any]) -> dict[str, Any]:
    return {k.removeprefix('pydantic_ai.cache.'): v for k, v in attributes.items() if k.startswith('pydantic_ai.cache')}


def _events(capfire: CaptureLogfire) -> list[tuple[str, dict[str, Any]]]:
    spans = capfire.exporter.exported_spans_as_dict()
    return [(e['name'], e['attributes']) for s in spans for e in s.get('events', []) if e['name'].startswith('pyd')]


async def test_a_healthy_cache_gives_the_hit_ratio_and_the_established_prefix(capfire: CaptureLogfire) -> None:
    agent = Agent(_model(_usage(10_000, write=9_000), _usage(12_000, read=9_000, write=2_000)))
    result = await agent.run('one')
    await agent.run('two', message_history=result.all_messages())
    assert [_cache_attributes(a) for a in _chat_attributes(capfire)] == [
        {'hit_ratio': 0.0, 'established_tokens': 9_000},
        {'hit_ratio': 0.75, 'established_tokens': 11_000},
    ]
    assert _events(capfire) == []


async def test_a_collapse_within_the_retention_is_unexpected_and_alerted_once(capfire: CaptureLogfire) -> None:
    agent = Agent(
        _model(
            _usage(10_000, write=10_000),
            _usage(10_500, write=10_500),  # nothing read back: the prefix changed
            _usage(10_500, read=100, write=10_400),  # a second collapse before the cache reads back whole
        )
    )
    result = await agent.run('one')
    result = await agent.run('two', message_history=result.all_messages())
    await agent.run('three', message_history=result.all_messages())
    first, second, third = (_cache_attributes(a) for a in _chat_attributes(capfire))
    assert first == {'hit_ratio': 0.0, 'established_tokens': 10_000}
    assert second == {
        'hit_ratio': 0.0,
        'established_tokens': 10_500,
        'collapsed': True,
        'missed_tokens': 10_000,
        'collapse_reason': 'unexpected',
    }
    assert third['collapse_reason'] == 'unexpected'
    assert third['missed_tokens'] == 10_400
    assert _events(capfire) == [
        (
            'pydantic_ai.cache.collapse',
            {
                'established_tokens': 10_000,
                'cache_read_tokens': 0,
                'missed_tokens': 10_000,
                'provider_name': 'acme',
                'model_name': 'function:answer:',
            },
        )
    ]


async def test_a_collapse_after_the_retention_is_an_expiry_and_not_alerted(
    capfire: CaptureLogfire, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = iter([datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 1, 0, 6, tzinfo=UTC)])
    monkeypatch.setattr(cache_health, '_now', lambda: next(clock))
    agent = Agent(_model(_usage(10_000, write=10_000), _usage(10_000, write=10_000)))
    result = await agent.run('one')
    await agent.run('two', message_history=result.all_messages())
    assert _cache_attributes(_chat_attributes(capfire)[1])['collapse_reason'] == 'ttl_expired'
    assert _events(capfire) == []


async def test_a_cache_point_ttl_the_provider_honours_lengthens_the_retention(
    capfire: CaptureLogfire, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = iter([datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 1, 0, 6, tzinfo=UTC)])
    monkeypatch.setattr(cache_health, '_now', lambda: next(clock))
    agent = Agent(_model(_usage(10_000, write=10_000), _usage(10_000, write=10_000)))
    result = await agent.run(['one', CachePoint(ttl='1h')])
    await agent.run('two', message_history=result.all_messages())
    assert _cache_attributes(_chat_attributes(capfire)[1])['collapse_reason'] == 'unexpected'


async def test_without_a_known_retention_a_collapse_is_unknown(capfire: CaptureLogfire) -> None:
    agent = Agent(_model(_usage(10_000, write=10_000), _usage(10_000, write=10_000), profile={'supports_json': True}))
    result = await agent.run('one')
    await agent.run('two', message_history=result.all_messages())
    assert _cache_attributes(_chat_attributes(capfire)[1])['collapse_reason'] == 'unknown'
    assert _events(capfire) == []


async def test_a_compaction_since_the_last_request_explains_a_collapse(capfire: CaptureLogfire) -> None:
    agent = Agent(_model(_usage(10_000, write=10_000), _usage(3_000, write=3_000)))
    result = await agent.run('one')
    summary = ModelResponse([CompactionPart('the story so far', provider_name='acme')])
    await agent.run('two', message_history=[*result.all_messages(), summary])
    second = _cache_attributes(_chat_attributes(capfire)[1])
    assert second['collapse_reason'] == 'compacted'
    assert second['established_tokens'] == 3_000


async def test_a_response_without_cache_usage_after_a_cached_one_is_unreported(capfire: CaptureLogfire) -> None:
    agent = Agent(_model(_usage(10_000, write=10_000), _usage(10_000), _usage(10_000, read=10_000)))
    result = await agent.run('one')
    result = await agent.run('two', message_history=result.all_messages())
    await agent.run('three', message_history=result.all_messages())
    _first, second, third = (_cache_attributes(a) for a in _chat_attributes(capfire))
    assert second == {
        'hit_ratio': 0.0,
        'established_tokens': 10_000,  # the mark stays: the provider's copy may still be there
        'collapsed': True,
        'missed_tokens': 10_000,
        'collapse_reason': 'unreported',
    }
    assert third == {'hit_ratio': 1.0, 'established_tokens': 10_000}


async def test_small_shortfalls_are_no_collapse(capfire: CaptureLogfire) -> None:
    agent = Agent(_model(_usage(10_000, write=10_000), _usage(11_000, read=8_100, write=2_900)))
    result = await agent.run('one')
    await agent.run('two', message_history=result.all_messages())
    assert _cache_attributes(_chat_attributes(capfire)[1]) == {
        'hit_ratio': 8_100 / 11_000,
        'established_tokens': 11_000,
    }


async def test_a_request_without_any_cache_usage_gets_no_cache_attributes(capfire: CaptureLogfire) -> None:
    await Agent(TestModel()).run('hi')
    (attributes,) = _chat_attributes(capfire)
    assert _cache_attributes(attributes) == {}


CACHING_PROFILE = {'supports_cache': True, 'supported_cache_retentions': ('5m', '1h')}


async def test_a_long_request_to_a_model_that_caches_when_asked_reports_caching_not_enabled_once(
    capfire: CaptureLogfire,
) -> None:
    agent = Agent(_model(_usage(5_000), _usage(6_000), profile=CACHING_PROFILE))
    result = await agent.run('one')
    await agent.run('two', message_history=result.all_messages())
    first, second = (_cache_attributes(a) for a in _chat_attributes(capfire))
    assert first == {'hit_ratio': 0.0, 'established_tokens': 0, 'not_enabled': True}
    assert second == {}
    assert _events(capfire) == [
        (
            'pydantic_ai.cache.not_enabled',
            {'input_tokens': 5_000, 'provider_name': 'acme', 'model_name': 'function:answer:'},
        )
    ]


@pytest.mark.parametrize(
    ('usage', 'settings', 'prompt', 'profile'),
    [
        pytest.param(_usage(4_000), None, 'one', CACHING_PROFILE, id='too-short-to-cache'),
        pytest.param(_usage(5_000), {'cache': False}, 'one', CACHING_PROFILE, id='cache-setting-given'),
        pytest.param(_usage(5_000), None, ['one', CachePoint()], CACHING_PROFILE, id='cache-point-in-history'),
        pytest.param(_usage(5_000), None, 'one', FIVE_MINUTES, id='model-caches-unasked'),
    ],
)
async def test_caching_not_enabled_is_not_reported(
    capfire: CaptureLogfire, usage: RequestUsage, settings: Any, prompt: Any, profile: dict[str, Any]
) -> None:
    await Agent(_model(usage, profile=profile)).run(prompt, model_settings=settings)
    (attributes,) = _chat_attributes(capfire)
    assert _cache_attributes(attributes) == {}


async def test_streamed_requests_are_judged_too(capfire: CaptureLogfire) -> None:
    usages = iter([_usage(10_000, write=10_000), _usage(10_000, write=10_000)])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        yield 'ok'

    model = FunctionModel(stream_function=stream, profile=FIVE_MINUTES)  # type: ignore[arg-type]
    agent = Agent(model, capabilities=[_UsageStamp(usages)])
    async with agent.run_stream('one') as result:
        await result.get_output()
    async with agent.run_stream('two', message_history=result.all_messages()) as result:
        await result.get_output()
    assert [_cache_attributes(a).get('collapse_reason') for a in _chat_attributes(capfire)] == [None, 'unexpected']


class _UsageStamp(AbstractCapability[Any]):
    """Gives each response the next usage (a streamed `FunctionModel` reports its own estimate)."""

    def __init__(self, usages: Iterator[RequestUsage]) -> None:
        self.usages = usages

    async def wrap_model_request(
        self, ctx: Any, *, request_context: ModelRequestContext, handler: WrapModelRequestHandler
    ) -> ModelResponse:
        response = await handler(request_context)
        response.usage = next(self.usages)
        return response


async def test_requests_through_the_hooks_are_judged(capfire: CaptureLogfire) -> None:
    usages = iter([_usage(10_000, write=10_000), _usage(10_000, write=10_000)])
    agent = Agent(_model(_usage(1), _usage(1)), capabilities=[_UsageStamp(usages)])
    result = await agent.run('one')
    await agent.run('two', message_history=result.all_messages())
    assert _cache_attributes(_chat_attributes(capfire)[1])['collapse_reason'] == 'unexpected'


async def test_runs_of_other_conversations_do_not_share_marks(capfire: CaptureLogfire) -> None:
    agent = Agent(_model(_usage(10_000, write=10_000), _usage(10_000, write=10_000)))
    await agent.run('one')
    await agent.run('two')  # a new conversation: its first request establishes its own prefix
    assert [_cache_attributes(a) for a in _chat_attributes(capfire)] == [
        {'hit_ratio': 0.0, 'established_tokens': 10_000}
    ] * 2


async def test_an_untraced_run_judges_nothing(capfire: CaptureLogfire, monkeypatch: pytest.MonkeyPatch) -> None:
    from edgewise.agent import _instrument

    monkeypatch.setattr(_instrument, 'TRACING', False)
    agent = Agent(_model(_usage(10_000, write=10_000), _usage(10_000, write=10_000)))
    result = await agent.run('one')
    await agent.run('two', message_history=result.all_messages())
    assert capfire.exporter.exported_spans_as_dict() == []
    assert cache_health.CONVERSATION_CACHE_MARKS.get(result.conversation_id) == {}


async def test_a_continued_turn_is_judged_by_its_last_segment(capfire: CaptureLogfire) -> None:
    usages = iter([_usage(10_000, write=10_000), _usage(10_000, read=10_000), _usage(10_100, read=10_000, write=100)])

    async def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        usage = next(usages)
        state: ModelResponseState = 'suspended' if usage.cache_write_tokens == 10_000 else 'complete'
        return ModelResponse([TextPart('ok')], usage=usage, provider_name='acme', model_name='m1', state=state)

    agent = Agent(FunctionModel(answer, profile=FIVE_MINUTES))  # type: ignore[arg-type]
    result = await agent.run('one')
    await agent.run('two', message_history=result.all_messages())
    # The merged turn read 10,000 tokens in all, but its last request alone sent (and read back) the prefix.
    assert [_cache_attributes(a) for a in _chat_attributes(capfire)] == [
        {'hit_ratio': 1.0, 'established_tokens': 10_000},
        {'hit_ratio': 10_000 / 10_100, 'established_tokens': 10_100},
    ]


# The detector on its own: what the spans are made from.


def _detector(conversation_id: str | None = 'c1') -> CacheHealthDetector:
    return CacheHealthDetector(ConversationCacheMarkStore(), conversation_id, 'r1', alert_on={'unexpected'})


def _response(usage: RequestUsage, *parts: Any) -> ModelResponse:
    return ModelResponse(list(parts) or [TextPart('ok')], usage=usage, provider_name='acme', model_name='m1')


HISTORY: list[ModelMessage] = [ModelRequest([UserPromptPart('hi')])]


def test_summed_cache_usage_of_native_tool_passes_neither_raises_the_mark_nor_rearms_it() -> None:
    detector = _detector()
    model = TestModel(profile=FIVE_MINUTES)  # type: ignore[arg-type]
    detector.observe(model, None, HISTORY, _response(_usage(10_000, write=10_000)))
    call = NativeToolCallPart('web_search', {}, tool_call_id='s1')
    summed = detector.observe(model, None, HISTORY, _response(_usage(30_000, read=30_000), call))
    assert summed is not None
    assert summed.established_tokens == 10_000
    counted = detector.observe(model, None, HISTORY, _response(_usage(30_000, read=30_000, message_iterations=1), call))
    assert counted is not None
    assert counted.established_tokens == 30_000
    passes = detector.observe(model, None, HISTORY, _response(_usage(9_000, read=9_000, message_iterations=3)))
    assert passes is not None
    assert passes.collapse is not None
    assert passes.established_tokens == 30_000


def test_a_fallback_models_retention_is_what_the_settings_ask_for() -> None:
    detector = _detector()
    model = FallbackModel(TestModel(profile=FIVE_MINUTES))  # type: ignore[arg-type]
    detector.observe(model, None, HISTORY, _response(_usage(10_000, write=10_000)))
    health = detector.observe(model, None, HISTORY, _response(_usage(10_000, write=10_000)))
    assert health is not None
    assert health.collapse is not None
    assert health.collapse.reason == 'unknown'
    assert not model._caching_not_enabled(None)


def test_the_mark_store_forgets_the_oldest_conversations() -> None:
    store = ConversationCacheMarkStore()
    store.max_conversations = 2  # type: ignore[misc]
    start = datetime(2026, 1, 1, tzinfo=UTC)
    mark = CacheMark(1, start, 'r')
    for index, name in enumerate(['a', 'b', 'c']):
        store.update(name, {('p', None, 'm'): mark}, start + timedelta(seconds=index))
    assert store.get('a') == {}
    assert store.get('b') != {}
    assert store.get('c') != {}
    store.update('d', {}, start + timedelta(hours=25))  # idle past the horizon: both others are forgotten
    assert store.get('b') == {}
    assert store.get('c') == {}
    assert store.get('d') == {}
    assert store.update(None, {('p', None, 'm'): mark}, start) == {('p', None, 'm'): mark}
    assert store.get(None) == {}


def test_runs_of_one_new_conversation_started_together_merge_their_marks() -> None:
    store = ConversationCacheMarkStore()
    now = datetime(2026, 1, 1, tzinfo=UTC)
    first, second = store.get('c'), store.get('c')
    store.update('c', first | {('a', None, None): CacheMark(1, now, 'r1')}, now)
    merged = store.update('c', second | {('b', None, None): CacheMark(2, now, 'r2')}, now)
    assert set(merged) == {('a', None, None), ('b', None, None)}
    assert store.get('c') is merged


def test_the_hit_ratio_of_a_request_without_input_tokens_is_zero() -> None:
    assert cache_hit_ratio(0, 0) == 0.0


def test_nothing_is_put_on_a_span_that_does_not_record() -> None:
    class Quiet:
        def is_recording(self) -> bool:
            return False

        def set_attribute(self, key: str, value: Any) -> None:
            raise AssertionError('not recording')

    health = _detector().observe(TestModel(), None, HISTORY, _response(_usage(100, write=100)))
    record_cache_health(Quiet(), health, _response(_usage(100)))
    record_cache_health(None, health, _response(_usage(100)))


def test_summed_cache_usage_on_a_first_request_establishes_nothing() -> None:
    call = NativeToolCallPart('web_search', {}, tool_call_id='s1')
    health = _detector().observe(TestModel(), None, HISTORY, _response(_usage(30_000, read=30_000), call))
    assert health is not None
    assert health.established_tokens == 0
    assert health.hit_ratio == 1.0


async def test_the_requests_of_one_run_are_judged_against_each_other(capfire: CaptureLogfire) -> None:
    usages = iter([_usage(10_000, write=10_000), _usage(10_200, write=10_200)])

    async def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        parts: list[Any] = [TextPart('ok')] if len(messages) > 1 else [ToolCallPart('t', {}, tool_call_id='c1')]
        return ModelResponse(parts, usage=next(usages), provider_name='acme')

    agent = Agent(FunctionModel(answer, profile=FIVE_MINUTES))  # type: ignore[arg-type]

    @agent.tool_plain
    def t() -> str:
        return 'done'

    await agent.run('go')
    assert [_cache_attributes(a).get('collapse_reason') for a in _chat_attributes(capfire)] == [None, 'unexpected']
