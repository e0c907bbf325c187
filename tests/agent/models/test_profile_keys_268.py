"""The `ModelProfile` keys pydantic-ai 2.68 added, and what each does here: text output, thinking by default, the
prompt cache's keys (`resolve_cache_retention`, `prompt_cache_outlook`), tool call ids of a fixed length, and the
context window (`Model.context_window`, `RunContext.context_window_used`). Wire formats against a real local server."""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest

from edgewise.agent import Agent, RunContext
from edgewise.agent._warnings import PydanticAIDeprecationWarning
from edgewise.agent.exceptions import ModelAPIError, UserError
from edgewise.agent.messages import (
    CachePoint,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.models._anthropic_mapping import _forcing_supported  # pyright: ignore[reportPrivateUsage]
from edgewise.agent.models._tool_call_ids import fit_tool_call_ids
from edgewise.agent.models._tool_choice import request_thinks
from edgewise.agent.models.anthropic import AnthropicModel, AnthropicModelSettings
from edgewise.agent.models.fallback import FallbackModel
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.openai import OpenAIChatModel
from edgewise.agent.models.wrapper import WrapperModel
from edgewise.agent.profiles import DEFAULT_PROFILE, ModelProfile, merge_profile, prompt_cache_outlook
from edgewise.agent.profiles.anthropic import AnthropicModelProfile, anthropic_model_profile
from edgewise.agent.profiles.meta import muse_model_profile
from edgewise.agent.profiles.openai import OpenAIModelProfile, openai_model_profile
from edgewise.agent.providers.anthropic import AnthropicProvider
from edgewise.agent.providers.deepseek import DeepSeekProvider
from edgewise.agent.providers.openai import OpenAIProvider
from edgewise.agent.settings import ModelSettings
from edgewise.agent.usage import RequestUsage

from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def test_the_default_profile_holds_every_new_key() -> None:
    defaults: dict[str, Any] = dict(DEFAULT_PROFILE)
    assert {key: defaults[key] for key in defaults if key in _NEW_KEYS} == _NEW_KEYS


_NEW_KEYS: dict[str, Any] = {
    'supports_text_output': True,
    'supports_cache': False,
    'supports_auto_cache': False,
    'supported_cache_retentions': (),
    'default_cache_retention': None,
    'thinking_enabled_by_default': False,
    'supports_mid_conversation_effort': False,
    'supports_request_scoped_system_prompts': False,
    'context_window': None,
    'tool_call_id_length': None,
}


def test_the_openai_key_of_thinking_by_default_is_read_under_its_new_name() -> None:
    legacy = OpenAIModelProfile(openai_reasoning_enabled_by_default=True)
    with pytest.warns(PydanticAIDeprecationWarning, match='`openai_reasoning_enabled_by_default` is deprecated'):
        merged = merge_profile(ModelProfile(thinking_enabled_by_default=False), legacy)
    assert merged == {'thinking_enabled_by_default': True}


# Text output.


async def test_a_model_without_text_output_refuses_a_text_output_type() -> None:
    model = FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart('hi')]))
    agent = Agent(model)
    with pytest.raises(UserError, match='Text output is not supported by this model'):
        await agent.run('hi', model=FunctionModel(model.function, profile=ModelProfile(supports_text_output=False)))


# Thinking by default.


def test_a_request_saying_nothing_of_thinking_thinks_on_a_model_thinking_by_default() -> None:
    by_default = ModelProfile(thinking_enabled_by_default=True)
    assert request_thinks(None, by_default)
    assert not request_thinks({'thinking': False}, by_default)
    assert not request_thinks({'openai_reasoning_effort': 'none'}, by_default)
    assert request_thinks({'openai_reasoning_effort': 'low'}, ModelProfile())
    assert not request_thinks({}, ModelProfile())


def test_anthropic_does_not_force_the_output_tool_on_a_model_thinking_by_default() -> None:
    profile = AnthropicModelProfile(thinking_enabled_by_default=True, forced_tool_choice_disables_thinking=True)
    assert not _forcing_supported({}, profile, 'forcing')
    assert _forcing_supported({'anthropic_thinking': {'type': 'disabled'}}, profile, 'forcing')
    assert _forcing_supported({}, AnthropicModelProfile(forced_tool_choice_disables_thinking=True), 'forcing')


def test_the_families_that_think_by_default() -> None:
    assert openai_model_profile('o3')['thinking_enabled_by_default']
    assert openai_model_profile('gpt-5.5')['thinking_enabled_by_default']
    assert not openai_model_profile('gpt-5.4')['thinking_enabled_by_default']
    assert not openai_model_profile('gpt-4o')['thinking_enabled_by_default']
    assert (anthropic_model_profile('claude-opus-5') or {})['thinking_enabled_by_default']
    assert not (anthropic_model_profile('claude-sonnet-4-5') or {})['thinking_enabled_by_default']
    muse = muse_model_profile('muse-spark-1') or {}
    assert muse['thinking_enabled_by_default']
    assert muse['context_window'] == 1_048_576
    assert (DeepSeekProvider.model_profile('deepseek-v4-flash') or {})['thinking_enabled_by_default']
    assert not (DeepSeekProvider.model_profile('deepseek-chat') or {})['thinking_enabled_by_default']


# The prompt cache.


def test_providers_describe_their_prompt_cache() -> None:
    anthropic = AnthropicProvider.model_profile('claude-sonnet-4-5') or {}
    assert (anthropic['supports_cache'], anthropic['supports_auto_cache']) == (True, True)
    assert anthropic['supported_cache_retentions'] == ('5m', '1h')
    assert anthropic['default_cache_retention'] == timedelta(minutes=5)
    openai = OpenAIProvider.model_profile('gpt-5.6') or {}
    assert openai['default_cache_retention'] == timedelta(minutes=30)
    # GPT-5.6 and later take `prompt_cache_options`, which the unified `cache` setting maps onto.
    assert (openai['supports_cache'], openai['supported_cache_retentions']) == (True, ('30m', '12h'))
    earlier = OpenAIProvider.model_profile('gpt-4o') or {}
    assert 'default_cache_retention' not in earlier
    assert 'supports_cache' not in earlier


def _anthropic(profile: ModelProfile | None = None, settings: ModelSettings | None = None) -> AnthropicModel:
    provider = AnthropicProvider(api_key='sk-test', base_url='http://127.0.0.1:9')
    return AnthropicModel('claude-sonnet-4-5', provider=provider, profile=profile, settings=settings)


def test_the_retention_a_request_asks_for() -> None:
    model = _anthropic()
    assert model.resolve_cache_retention(None) is None
    assert model.resolve_cache_retention({'cache': False}) is None
    assert model.resolve_cache_retention({'cache': True}) == timedelta(minutes=5)  # the shortest tier
    assert model.resolve_cache_retention({'cache': '12h'}) == timedelta(hours=1)  # snapped
    assert model.resolve_cache_retention({'cache': {'retention': '1h', 'messages': False}}) == timedelta(hours=1)
    # The provider's own settings win over the unified one; the longest of them counts.
    own: Any = {'cache': '1h', 'anthropic_cache_instructions': True, 'anthropic_cache_messages': False}
    assert model.resolve_cache_retention(own) == timedelta(minutes=5)
    own = {'anthropic_cache_tool_definitions': '1h', 'anthropic_cache_instructions': '5m'}
    assert model.resolve_cache_retention(own) == timedelta(hours=1)
    assert model.resolve_cache_retention(AnthropicModelSettings(anthropic_cache='1h')) == timedelta(hours=1)
    assert model.resolve_cache_retention(AnthropicModelSettings(anthropic_cache_messages=False)) is None
    # The model's own settings are merged under the request's.
    assert _anthropic(settings=ModelSettings(cache='1h')).resolve_cache_retention(None) == timedelta(hours=1)
    # Without a configurable cache (or tiers), the unified setting asks for nothing (or for the default tier).
    assert _anthropic(ModelProfile(supports_cache=False)).resolve_cache_retention({'cache': '1h'}) is None
    no_tiers = _anthropic(ModelProfile(supported_cache_retentions=()))
    assert no_tiers.resolve_cache_retention({'cache': '1h'}) == timedelta(minutes=5)
    with pytest.raises(UserError, match="Unknown `cache` retention '2d'"):
        model.resolve_cache_retention(cast(ModelSettings, {'cache': '2d'}))


def test_wrapper_and_fallback_models_resolve_the_retention_of_their_models() -> None:
    short, long = _anthropic(), _anthropic(ModelProfile(supported_cache_retentions=('5m', '30m')))
    assert WrapperModel(short).resolve_cache_retention({'cache': '1h'}) == timedelta(hours=1)
    assert FallbackModel(short, long).resolve_cache_retention({'cache': '30m'}) == timedelta(minutes=30)
    assert FallbackModel(short, long).resolve_cache_retention(None) is None


def _served(*, at: datetime, ttl: Any = None) -> list[ModelMessage]:
    prompt: list[Any] = ['hi', CachePoint(ttl=ttl)] if ttl else ['hi']
    return [ModelRequest(parts=[UserPromptPart(prompt)]), ModelResponse(parts=[TextPart('hello')], timestamp=at)]


def test_the_cache_is_warm_within_the_retention_and_cold_after() -> None:
    profile = ModelProfile(default_cache_retention=timedelta(minutes=5))
    history = _served(at=NOW - timedelta(minutes=4))
    assert prompt_cache_outlook(history, profile=profile, now=NOW) == 'warm'
    assert prompt_cache_outlook(history, profile=profile, now=NOW + timedelta(minutes=2)) == 'cold'
    assert prompt_cache_outlook(history, retention=timedelta(hours=1), now=NOW + timedelta(minutes=2)) == 'warm'
    # A request not answered yet has not touched the cache: the last response is what counts.
    later = [*history, ModelRequest(parts=[UserPromptPart('again')], timestamp=NOW)]
    assert prompt_cache_outlook(later, profile=profile, now=NOW + timedelta(minutes=2)) == 'cold'


def test_the_outlook_is_unknown_without_a_retention_or_a_response() -> None:
    history = _served(at=NOW)
    assert prompt_cache_outlook(history, now=NOW) == 'unknown'
    assert prompt_cache_outlook(history, profile=ModelProfile(), now=NOW) == 'unknown'
    requests_only = [ModelRequest(parts=[UserPromptPart('hi')])]
    assert prompt_cache_outlook(requests_only, retention=timedelta(hours=1), now=NOW) == 'unknown'


def test_a_cache_point_lengthens_the_retention_where_the_provider_honours_its_ttl() -> None:
    history = _served(at=NOW - timedelta(minutes=30), ttl='1h')
    five = timedelta(minutes=5)
    assert prompt_cache_outlook(history, retention=five, now=NOW) == 'warm'  # no profile: every TTL counts
    anthropic = AnthropicProvider.model_profile('claude-sonnet-4-5')
    assert prompt_cache_outlook(history, profile=anthropic, now=NOW) == 'warm'
    only_short = ModelProfile(supports_cache=True, supported_cache_retentions=('5m',), default_cache_retention=five)
    assert prompt_cache_outlook(history, profile=only_short, now=NOW) == 'cold'
    # A cache point in a request not answered yet has written nothing.
    unanswered = [
        *_served(at=NOW - timedelta(minutes=30)),
        ModelRequest(parts=[UserPromptPart(['x', CachePoint(ttl='1h')])]),
    ]
    assert prompt_cache_outlook(unanswered, retention=five, now=NOW) == 'cold'


def test_naive_timestamps_are_read_as_utc() -> None:
    naive = NOW.replace(tzinfo=None)
    history = _served(at=naive - timedelta(minutes=1))
    assert prompt_cache_outlook(history, retention=timedelta(minutes=5), now=naive) == 'warm'
    recent = _served(at=datetime.now(UTC))
    assert prompt_cache_outlook(recent, retention=timedelta(hours=1)) == 'warm'


# Tool call ids of a fixed length.


def _tool_round(call_id: str) -> list[ModelMessage]:
    return [
        ModelResponse(parts=[ToolCallPart('lookup', {'q': 1}, tool_call_id=call_id)]),
        ModelRequest(parts=[ToolReturnPart('lookup', 'found', tool_call_id=call_id)]),
    ]


def test_ids_that_do_not_fit_are_hashed_the_same_way_every_time() -> None:
    history = [ModelRequest(parts=[UserPromptPart('hi')]), *_tool_round('call_abc'), *_tool_round('Ab3456789')]
    fitted = fit_tool_call_ids(history, 9)
    first = fitted[1].parts[0]
    assert isinstance(first, ToolCallPart)
    assert len(first.tool_call_id) == 9
    assert first.tool_call_id.isalnum()
    assert first.tool_call_id.isascii()
    assert fitted[2].parts[0].tool_call_id == first.tool_call_id  # type: ignore[union-attr]
    assert fitted[3].parts[0].tool_call_id == 'Ab3456789'  # type: ignore[union-attr]
    assert fitted[0] is history[0]
    assert fit_tool_call_ids(history, 9) == fitted
    assert history[1].parts[0].tool_call_id == 'call_abc'  # type: ignore[union-attr]  # the history is unchanged
    assert fit_tool_call_ids(fitted, 9) is fitted


def test_a_retry_answering_a_call_gets_the_call_s_id() -> None:
    history: list[ModelMessage] = [
        ModelResponse(parts=[ToolCallPart('lookup', {}, tool_call_id='toolu_1')]),
        ModelRequest(parts=[RetryPromptPart('bad', tool_name='lookup', tool_call_id='toolu_1')]),
    ]
    fitted = fit_tool_call_ids(history, 4)
    assert fitted[0].parts[0].tool_call_id == fitted[1].parts[0].tool_call_id  # type: ignore[union-attr]
    retry = fitted[1].parts[0]
    assert isinstance(retry, RetryPromptPart)
    assert len(retry.tool_call_id) == 4


def test_an_id_whose_hash_is_taken_is_hashed_again() -> None:
    [call] = fit_tool_call_ids(_tool_round('long-id')[:1], 3)[0].parts
    assert isinstance(call, ToolCallPart)
    hashed = call.tool_call_id
    fitted = fit_tool_call_ids([*_tool_round(hashed), *_tool_round('long-id')], 3)
    ids = [message.parts[0].tool_call_id for message in fitted]  # type: ignore[union-attr]
    assert ids[:2] == [hashed, hashed]
    assert ids[2] == ids[3] != hashed


def test_lengths_that_cannot_hold_the_history_are_refused() -> None:
    with pytest.raises(UserError, match='`tool_call_id_length` must be at least 1, got 0'):
        fit_tool_call_ids(_tool_round('a'), 0)
    history = [message for n in range(63) for message in _tool_round(f'call-{n}')]
    with pytest.raises(UserError, match='more distinct tool call ids than 1 letters and digits'):
        fit_tool_call_ids(history, 1)


def _chat_answer(message: dict[str, Any]) -> dict[str, Any]:
    return {
        'id': 'chatcmpl-1',
        'object': 'chat.completion',
        'created': 1,
        'model': 'mistral-large',
        'choices': [{'index': 0, 'message': {'role': 'assistant', **message}, 'finish_reason': 'stop'}],
        'usage': {'prompt_tokens': 5, 'completion_tokens': 1, 'total_tokens': 6},
    }


async def test_the_wire_carries_fitted_ids_and_the_run_keeps_the_originals(local_server: LocalServer) -> None:
    call = {'id': 'call_0123456789abcdef', 'type': 'function', 'function': {'name': 'lookup', 'arguments': '{}'}}
    local_server.script(Reply(200, _chat_answer({'content': None, 'tool_calls': [call]})))
    local_server.script(Reply(200, _chat_answer({'content': 'done'})))
    provider = OpenAIProvider(base_url=local_server.url, api_key='sk-x', max_retries=0)
    async with provider:
        model = OpenAIChatModel('mistral-large', provider=provider, profile=ModelProfile(tool_call_id_length=9))
        agent = Agent(model)

        @agent.tool_plain
        def lookup() -> str:
            return 'found'

        result = await agent.run('hi')
    sent = local_server.received[1]['body']['messages']
    [assistant] = [m for m in sent if m['role'] == 'assistant']
    [tool] = [m for m in sent if m['role'] == 'tool']
    fitted = assistant['tool_calls'][0]['id']
    assert len(fitted) == 9
    assert fitted.isalnum()
    assert tool['tool_call_id'] == fitted
    assert result.all_messages()[1].parts[0].tool_call_id == 'call_0123456789abcdef'  # type: ignore[union-attr]


async def test_each_fallback_model_is_sent_ids_of_its_own_length() -> None:
    seen: list[list[str]] = []

    def failing(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise ModelAPIError('first', 'down')

    def answering(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append([p.tool_call_id for m in messages for p in m.parts if isinstance(p, ToolCallPart | ToolReturnPart)])
        return ModelResponse(parts=[TextPart('done')])

    async def answering_stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        answering(messages, info)
        yield 'done'

    short = FunctionModel(answering, stream_function=answering_stream, profile=ModelProfile(tool_call_id_length=5))
    history = [ModelRequest(parts=[UserPromptPart('hi')]), *_tool_round('call_abc')]
    for stream in (False, True):
        agent = Agent(FallbackModel(FunctionModel(failing, stream_function=_failing_stream), short))
        if stream:
            async with agent.run_stream('again', message_history=history) as result:
                await result.get_output()
        else:
            await agent.run('again', message_history=history)
    assert len(seen) == 2
    assert seen[0] == seen[1]
    assert len(seen[0]) == 2
    assert seen[0][0] == seen[0][1]
    assert len(seen[0][0]) == 5


async def _failing_stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    raise ModelAPIError('first', 'down')
    yield 'never'  # pragma: no cover


# The context window.


def test_the_context_window_comes_from_the_profile_or_genai_prices() -> None:
    assert _anthropic(ModelProfile(context_window=1000)).context_window == 1000
    assert _anthropic(ModelProfile(context_window=None)).context_window is None  # set: no lookup
    looked_up = _anthropic()
    assert looked_up.context_window == 200_000  # genai-prices' figure for claude-sonnet-4-5
    assert looked_up.context_window == 200_000
    assert looked_up.profile['context_window'] is None
    assert FunctionModel(lambda m, i: ModelResponse(parts=[])).context_window is None  # no provider: no lookup
    unknown = OpenAIChatModel('no-such-model', provider=OpenAIProvider(base_url='http://127.0.0.1:9', api_key='x'))
    assert unknown.context_window is None


def test_a_provider_profile_setting_the_context_window_wins() -> None:
    class WindowedProvider(AnthropicProvider):
        @staticmethod
        def model_profile(model_name: str) -> ModelProfile | None:
            return ModelProfile(context_window=None)

    model = AnthropicModel('claude-sonnet-4-5', provider=WindowedProvider(api_key='x', base_url='http://127.0.0.1:9'))
    assert model.context_window is None


def test_wrappers_and_fallbacks_use_their_models_windows() -> None:
    small, large = _anthropic(ModelProfile(context_window=100)), _anthropic(ModelProfile(context_window=500))
    none = _anthropic(ModelProfile(context_window=None))
    assert WrapperModel(large).context_window == 500
    assert FallbackModel(large, none, small).context_window == 100
    assert FallbackModel(none).context_window is None


async def test_a_tool_reads_how_full_the_context_window_is() -> None:
    seen: list[float | None] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(
                parts=[ToolCallPart('measure', {})], usage=RequestUsage(input_tokens=300, output_tokens=100)
            )
        return ModelResponse(parts=[TextPart('done')], usage=RequestUsage(input_tokens=500, output_tokens=10))

    agent = Agent(FunctionModel(respond, profile=ModelProfile(context_window=1000)))

    @agent.tool
    def measure(ctx: RunContext) -> str:
        seen.append(ctx.context_window_used)
        return 'ok'

    await agent.run('hi')
    assert seen == [0.4]


def test_the_fraction_reads_the_marked_context_input_tokens() -> None:
    from edgewise.agent._messages.context_size import context_tokens, context_window_fraction, mark_context_input_tokens

    response = ModelResponse(parts=[TextPart('x')], usage=RequestUsage(input_tokens=900, output_tokens=50))
    assert context_window_fraction([response], 1000) == 0.95
    mark_context_input_tokens(response, 200)
    assert context_tokens(response) == 250
    assert context_window_fraction([response], 1000) == 0.25
    # pydantic-ai 2.56's key is still read.
    older = ModelResponse(parts=[], metadata={'__pydantic_ai__': {'initial_input_tokens': 10}})
    assert context_tokens(older) == 10
    assert context_tokens(ModelResponse(parts=[], metadata={'__pydantic_ai__': 'x'})) == 0
    assert context_tokens(ModelResponse(parts=[], metadata={'__pydantic_ai__': {'other': 1}})) == 0
    assert context_window_fraction([older], None) is None
    assert context_window_fraction([older], 0) is None
    assert context_window_fraction([ModelRequest(parts=[UserPromptPart('hi')])], 100) is None
    assert context_window_fraction([ModelResponse(parts=[])], 100) is None


def test_no_warning_is_given_for_current_keys() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        merge_profile(DEFAULT_PROFILE, ModelProfile(thinking_enabled_by_default=True, tool_call_id_length=9))
