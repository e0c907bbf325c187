"""pydantic-ai 2.68's `thinking='max'`, and the profile keys that narrow a unified thinking level to the efforts a
model takes: `openai_reasoning_efforts`, `openai_supports_minimal_reasoning_effort`, `'max'` per API, Chat
Completions' `openai_chat_thinking_false_body`, and Anthropic's `anthropic_supports_max_effort`."""

from __future__ import annotations

import json
from typing import Any, cast

import httpx
import pytest

from edgewise.agent import Agent
from edgewise.agent.capabilities import Thinking
from edgewise.agent.messages import ModelRequest
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models.openai import OpenAIChatModel, OpenAIResponsesModel
from edgewise.agent.models.openrouter import OpenRouterModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.profiles.openai import OpenAIModelProfile
from edgewise.agent.providers.deepseek import DeepSeekProvider
from edgewise.agent.providers.moonshotai import MoonshotAIProvider
from edgewise.agent.providers.openai import OpenAIProvider
from edgewise.agent.providers.openrouter import OpenRouterProvider
from edgewise.agent.settings import ModelSettings

from ._chat import completion
from ._provider_specs import RESPONSES
from .test_thinking_settings import send

pytestmark = pytest.mark.anyio


async def _body(
    model_class: Any,
    model_name: str,
    settings: dict[str, Any],
    *,
    provider: Any,
    profile: Any = None,
    reply: Any = None,
) -> Any:
    """The body a `model_class` model on `provider` (with `profile`) sends for one request with `settings`."""
    bodies: list[Any] = []

    def respond(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json=completion() if reply is None else reply)

    client = httpx.AsyncClient(transport=httpx.MockTransport(respond))
    model = model_class(model_name, provider=provider(api_key='test-key', http_client=client), profile=profile)
    await model.request([ModelRequest.user_text_prompt('hi')], cast(ModelSettings, settings), ModelRequestParameters())
    return bodies[0]


async def _chat_body(model_name: str, settings: dict[str, Any], *, profile: Any = None, provider: Any = None) -> Any:
    """The Chat Completions body `model_name` sends for one request with `settings` (on `provider`, with `profile`)."""
    return await _body(OpenAIChatModel, model_name, settings, provider=provider or OpenAIProvider, profile=profile)


async def _openrouter_body(model_name: str, settings: dict[str, Any]) -> Any:
    return await _body(OpenRouterModel, model_name, settings, provider=OpenRouterProvider)


# --- the level itself ------------------------------------------------------------------------------------------


async def test_max_is_a_thinking_level_of_the_setting_and_the_capability() -> None:
    agent = Agent(TestModel(), capabilities=[Thinking(effort='max')])
    assert (await agent.run('hi')).output == 'success (no tool calls)'
    assert (await agent.run('hi', model_settings=ModelSettings(thinking='max'))).output == 'success (no tool calls)'


# --- OpenAI ------------------------------------------------------------------------------------------------------


async def test_max_goes_to_the_responses_api_of_the_models_that_take_it_and_is_xhigh_on_chat() -> None:
    assert (await send('responses', 'gpt-5.6', {'thinking': 'max'}))['reasoning'] == {'effort': 'max'}
    assert (await send('chat', 'gpt-5.6', {'thinking': 'max'}))['reasoning_effort'] == 'xhigh'
    assert (await send('responses', 'gpt-5.5', {'thinking': 'max'}))['reasoning'] == {'effort': 'xhigh'}


async def test_an_explicit_effort_is_sent_as_given() -> None:
    settings = {'thinking': 'max', 'openai_reasoning_effort': 'max'}
    assert (await send('chat', 'gpt-5.5', settings))['reasoning_effort'] == 'max'
    minimal = {'thinking': 'low', 'openai_reasoning_effort': 'minimal'}
    assert (await send('responses', 'gpt-5.6', minimal))['reasoning'] == {'effort': 'minimal'}


async def test_minimal_is_low_on_the_models_without_a_minimal_effort() -> None:
    assert (await send('chat', 'gpt-5.6', {'thinking': 'minimal'}))['reasoning_effort'] == 'low'
    assert (await send('responses', 'gpt-5.6', {'thinking': 'minimal'}))['reasoning'] == {'effort': 'low'}
    assert (await send('chat', 'gpt-5', {'thinking': 'minimal'}))['reasoning_effort'] == 'minimal'


@pytest.mark.parametrize(
    ('model_name', 'thinking', 'chat', 'responses'),
    [
        ('gpt-6-astra', False, 'low', 'low'),  # cannot stop reasoning: its least effort
        ('gpt-6-astra', 'minimal', 'low', 'low'),
        ('gpt-6-astra', 'max', 'xhigh', 'max'),  # `max` on the Responses API only
        ('gpt-6-sol', False, 'none', 'none'),
        ('gpt-5.6', False, 'none', 'none'),
        ('gpt-5.5-pro', 'low', 'medium', 'medium'),  # medium, high and xhigh only
        ('gpt-5.5-pro', False, 'medium', 'medium'),
        ('gpt-5-pro', 'xhigh', 'high', 'high'),
        ('o3-mini', 'minimal', 'low', 'low'),  # the o-series: low, medium and high
        ('o3-mini', 'max', 'high', 'high'),
        ('o1', False, 'low', 'low'),
        ('gpt-5-mini', False, 'minimal', 'minimal'),  # gpt-5: minimal to high
        ('gpt-5', 'xhigh', 'high', 'high'),
        ('gpt-5.1-chat-latest', 'high', 'medium', 'medium'),  # the chat variants: medium only
        ('gpt-5.3-chat-latest', 'low', 'medium', 'medium'),
    ],
)
async def test_the_newest_families_and_the_pro_models_get_the_efforts_they_take(
    model_name: str, thinking: Any, chat: str, responses: str
) -> None:
    assert (await send('chat', model_name, {'thinking': thinking}))['reasoning_effort'] == chat
    assert (await send('responses', model_name, {'thinking': thinking}))['reasoning'] == {'effort': responses}


_REASONS = OpenAIModelProfile(supports_thinking=True, openai_supports_reasoning=True)


@pytest.mark.parametrize(
    ('thinking', 'takes_max', 'effort'),
    [
        ('minimal', False, 'low'),  # below the least: the least
        ('medium', False, 'high'),  # between two: the one above
        (True, False, 'high'),
        ('high', False, 'high'),
        ('xhigh', False, 'high'),  # above the most: the most
        ('max', False, 'high'),
        ('xhigh', True, 'max'),
        ('max', True, 'max'),
        (False, False, 'low'),  # no `none`: the least reasoning the model does
    ],
)
async def test_a_level_is_the_nearest_effort_the_model_takes(thinking: Any, takes_max: bool, effort: str) -> None:
    profile = OpenAIModelProfile(
        **_REASONS,
        thinking_always_enabled=True,
        openai_reasoning_efforts=frozenset({'low', 'high', 'max'}),
        openai_chat_supports_max_reasoning_effort=takes_max,
    )
    assert (await _chat_body('kimi-like', {'thinking': thinking}, profile=profile))['reasoning_effort'] == effort


async def test_thinking_false_is_none_where_the_model_takes_it() -> None:
    profile = OpenAIModelProfile(**_REASONS, openai_reasoning_efforts=frozenset({'none', 'medium'}))
    body = await _chat_body('switchable', {'thinking': False, 'temperature': 0.2}, profile=profile)
    assert (body['reasoning_effort'], body['temperature']) == ('none', 0.2)  # not reasoning: sampling settings go


async def test_a_model_with_no_effort_knob_is_sent_no_effort() -> None:
    profile = OpenAIModelProfile(**_REASONS, openai_reasoning_efforts=frozenset())
    assert 'reasoning_effort' not in await _chat_body('fixed', {'thinking': 'high'}, profile=profile)


async def test_thinking_false_on_a_model_that_always_reasons_with_no_known_efforts_sends_nothing() -> None:
    profile = OpenAIModelProfile(**_REASONS, thinking_always_enabled=True)
    assert 'reasoning_effort' not in await _chat_body('always', {'thinking': False}, profile=profile)


async def test_the_efforts_apply_on_the_responses_api_too() -> None:
    profile = OpenAIModelProfile(
        **_REASONS,
        openai_reasoning_efforts=frozenset({'low', 'max'}),
        openai_responses_supports_max_reasoning_effort=True,
    )
    body = await _body(
        OpenAIResponsesModel, 'custom', {'thinking': 'high'}, provider=OpenAIProvider, profile=profile,
        reply=RESPONSES.reply,
    )  # fmt: skip
    assert body['reasoning'] == {'effort': 'max'}


# --- Chat Completions servers that turn reasoning off their own way ---------------------------------------------


async def test_kimi_k2_6_turns_thinking_off_with_its_own_field_and_takes_max() -> None:
    off = await _chat_body('kimi-k2.6', {'thinking': False}, provider=MoonshotAIProvider)
    assert off['thinking'] == {'type': 'disabled'}
    assert 'reasoning_effort' not in off
    assert (await _chat_body('kimi-k2.6', {'thinking': 'max'}, provider=MoonshotAIProvider))[
        'reasoning_effort'
    ] == 'max'


async def test_kimi_k3_always_reasons_and_is_asked_for_its_least() -> None:
    off = await _chat_body('kimi-k3', {'thinking': False}, provider=MoonshotAIProvider)
    assert off['reasoning_effort'] == 'low'


async def test_kimi_k2_7_code_always_reasons_and_is_sent_nothing_for_thinking_false() -> None:
    off = await _chat_body('kimi-k2.7-code', {'thinking': False}, provider=MoonshotAIProvider)
    assert 'reasoning_effort' not in off
    assert 'thinking' not in off


async def test_the_caller_s_extra_body_wins_over_the_off_fields() -> None:
    settings = {'thinking': False, 'extra_body': {'thinking': {'type': 'enabled'}, 'seed_extra': 1}}
    body = await _chat_body('kimi-k2.5', settings, provider=MoonshotAIProvider)
    assert (body['thinking'], body['seed_extra']) == ({'type': 'enabled'}, 1)


async def test_a_non_thinking_kimi_model_is_sent_nothing() -> None:
    assert 'reasoning_effort' not in await _chat_body(
        'moonshot-v1-8k', {'thinking': 'max'}, provider=MoonshotAIProvider
    )


async def test_deepseek_v4_takes_max_on_chat() -> None:
    body = await _chat_body('deepseek-v4-pro', {'thinking': 'max'}, provider=DeepSeekProvider)
    assert body['reasoning_effort'] == 'max'


async def test_openrouter_is_sent_max_for_the_route_to_lower() -> None:
    body = await _openrouter_body('openai/gpt-5', {'thinking': 'max'})
    assert body['reasoning'] == {'effort': 'max', 'enabled': True}


async def test_a_model_that_cannot_stop_reasoning_is_sent_nothing_for_thinking_false_on_openrouter() -> None:
    """OpenRouter's `none` such a model refuses; OpenAI's own APIs send it its least effort instead."""
    assert 'reasoning' not in await _openrouter_body('openai/gpt-5-pro', {'thinking': False})


# --- Anthropic ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(('thinking', 'effort'), [('max', 'high'), ('xhigh', 'high'), ('high', 'high')])
async def test_claude_opus_4_5_takes_no_max_effort(thinking: str, effort: str) -> None:
    body = await send('anthropic', 'claude-opus-4-5', {'thinking': thinking, 'max_tokens': 40000})
    assert body['output_config'] == {'effort': effort}


async def test_an_explicit_anthropic_effort_is_sent_as_given() -> None:
    body = await send(
        'anthropic', 'claude-opus-4-5', {'thinking': 'max', 'anthropic_effort': 'max', 'max_tokens': 40000}
    )
    assert body['output_config'] == {'effort': 'max'}


# --- every table knows every level -------------------------------------------------------------------------------


def test_every_thinking_table_maps_every_level() -> None:
    from typing import get_args

    from edgewise.agent.models import _bedrock_mapping, _cohere_mapping, _thinking, openrouter, snowflake
    from edgewise.agent.profiles import anthropic, openai
    from edgewise.agent.settings import ThinkingEffort

    efforts = set(get_args(ThinkingEffort))
    tables: dict[str, tuple[dict[Any, Any], set[Any]]] = {
        'openai': (openai.OPENAI_REASONING_EFFORT_MAP, {True, False} | efforts),
        'anthropic budgets': (anthropic.ANTHROPIC_THINKING_BUDGET_MAP, {True} | efforts),
        'anthropic efforts': (anthropic.ANTHROPIC_THINKING_EFFORT_MAP, efforts),
        'gemini levels': (_thinking.GOOGLE_THINKING_LEVELS, efforts),
        'gemini budgets': (_thinking.GOOGLE_THINKING_BUDGETS, efforts),
        'cohere budgets': (_cohere_mapping.THINKING_TOKEN_BUDGETS, efforts),
        'openrouter': (openrouter._EFFORT_OF_THINKING, {True, False} | efforts),
        'snowflake': (snowflake._EFFORTS, {True} | efforts),
        'bedrock qwen': (_bedrock_mapping._QWEN_CONFIG, {True, False} | efforts),
        **{
            f'bedrock {name}': (table, {True, False} | efforts) for name, table in _bedrock_mapping._EFFORT_MAPS.items()
        },
    }
    missing = {name: levels - set(table) for name, (table, levels) in tables.items() if levels - set(table)}
    assert missing == {}


@pytest.mark.parametrize(
    ('provider', 'model_name', 'thinking', 'effort'),
    [
        ('codex', 'gpt-5.6', 'max', 'xhigh'),  # `max` is not known to be taken on the Codex backend
        ('chatgpt', 'gpt-6-astra', 'max', 'xhigh'),  # nor on ChatGPT plan usage
    ],
)
def test_the_codex_and_chatgpt_routes_take_no_max(provider: str, model_name: str, thinking: Any, effort: str) -> None:
    from edgewise.agent.models._thinking import openai_effort
    from edgewise.agent.providers.openai_chatgpt import OpenAIChatGPTProvider
    from edgewise.agent.providers.openai_codex import OpenAICodexProvider

    route = OpenAICodexProvider if provider == 'codex' else OpenAIChatGPTProvider
    profile = cast(OpenAIModelProfile, route.model_profile(model_name))
    assert openai_effort(thinking, profile, 'responses') == effort


async def test_deepseek_flash_reasons() -> None:
    body = await _chat_body('deepseek-flash', {'thinking': 'max'}, provider=DeepSeekProvider)
    assert body['reasoning_effort'] == 'max'
