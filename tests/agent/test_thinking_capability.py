"""`capabilities.Thinking`: the unified `thinking` model setting as a capability, resolved against the model's profile
and mapped to each API's own reasoning settings, under the agent's and the run's settings."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.agent import Agent
from edgewise.agent.capabilities import CAPABILITY_TYPES, Thinking
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.openai import OpenAIChatModelSettings
from edgewise.agent.native_tools import WebSearchTool
from edgewise.agent.profiles import ModelProfile
from edgewise.agent.settings import ModelSettings, ThinkingLevel

from .models.test_thinking_settings import model_for

pytestmark = pytest.mark.anyio


def _recording(profile: ModelProfile, seen: list[ThinkingLevel | None]) -> FunctionModel:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info.model_request_parameters.thinking)
        return ModelResponse(parts=[TextPart('done')])

    return FunctionModel(answer, profile=profile)


def test_thinking_is_a_model_setting() -> None:
    assert Thinking().get_model_settings() == {'thinking': True}
    assert Thinking(effort='xhigh').get_model_settings() == {'thinking': 'xhigh'}
    assert Thinking(False).effort is False


@pytest.mark.parametrize(
    ('profile', 'effort', 'expected'),
    [
        (ModelProfile(supports_thinking=True), 'high', 'high'),
        (ModelProfile(supports_thinking=True), True, True),
        (ModelProfile(supports_thinking=True), False, False),
        (ModelProfile(), 'high', None),  # a model that cannot reason ignores it
        (ModelProfile(thinking_always_enabled=True), False, None),  # nor can it be turned off where always on
        (ModelProfile(thinking_always_enabled=True), 'low', 'low'),
    ],
)
async def test_the_effort_reaches_the_request_as_the_profile_allows(
    profile: ModelProfile, effort: ThinkingLevel, expected: ThinkingLevel | None
) -> None:
    seen: list[ThinkingLevel | None] = []
    await Agent(_recording(profile, seen), capabilities=[Thinking(effort=effort)]).run('x')
    assert seen == [expected]


async def test_the_agents_and_the_runs_settings_win_over_the_capability() -> None:
    seen: list[ThinkingLevel | None] = []
    model = _recording(ModelProfile(supports_thinking=True), seen)
    agent = Agent(model, capabilities=[Thinking(effort='high')], model_settings=ModelSettings(thinking='low'))
    await agent.run('x')
    await agent.run('x', model_settings={'thinking': 'minimal'})
    await Agent(model).run('x', capabilities=[Thinking(effort='medium')])
    assert seen == ['low', 'minimal', 'medium']


@pytest.mark.parametrize(
    ('api', 'model_name', 'read', 'expected'),
    [
        ('chat', 'o3-mini', lambda body: body['reasoning_effort'], 'high'),
        ('responses', 'gpt-5', lambda body: body['reasoning']['effort'], 'high'),
        (
            'google',
            'gemini-3-pro-preview',
            lambda body: body['generationConfig']['thinkingConfig']['thinkingLevel'],
            'HIGH',
        ),
        ('anthropic', 'claude-sonnet-4-5', lambda body: body['thinking']['type'], 'enabled'),
    ],
)
async def test_each_api_gets_its_own_reasoning_setting(api: str, model_name: str, read: Any, expected: Any) -> None:
    model, sent = model_for(api, model_name)
    await Agent(model, capabilities=[Thinking(effort='high')]).run('x')
    assert read(sent.bodies[0]) == expected


async def test_a_providers_own_setting_wins_over_the_capability() -> None:
    model, sent = model_for('chat', 'o3-mini')
    settings = OpenAIChatModelSettings(openai_reasoning_effort='low')
    await Agent(model, capabilities=[Thinking(effort='high')], model_settings=settings).run('x')
    assert sent.bodies[0]['reasoning_effort'] == 'low'


def test_agent_specs_name_thinking() -> None:
    assert CAPABILITY_TYPES['Thinking'] is Thinking
    entries: list[tuple[Any, ThinkingLevel]] = [
        ('Thinking', True),
        ({'Thinking': 'low'}, 'low'),
        ({'Thinking': {'effort': False}}, False),
    ]
    for entry, effort in entries:
        [capability] = Agent.from_spec({'model': 'test', 'capabilities': [entry]}).root_capability.capabilities
        assert capability == Thinking(effort=effort)


def test_prepare_request_resolves_thinking_and_native_tools_for_the_model() -> None:
    model = FunctionModel(lambda m, i: ModelResponse(parts=[]), profile=ModelProfile(supports_thinking=True))
    model_with_defaults = FunctionModel(
        lambda m, i: ModelResponse(parts=[]),
        settings=ModelSettings(temperature=0.5),
        profile=ModelProfile(supported_native_tools=frozenset()),
    )
    settings, params = model.prepare_request(ModelSettings(thinking='high', max_tokens=10), ModelRequestParameters())
    assert (settings, params.thinking) == ({'max_tokens': 10}, 'high')
    settings, params = model.prepare_request(None, ModelRequestParameters())
    assert (settings, params.thinking) == (None, None)
    optional = ModelRequestParameters(native_tools=[WebSearchTool(optional=True)])
    settings, params = model_with_defaults.prepare_request(ModelSettings(thinking=True), optional)
    assert (settings, params.thinking, params.native_tools) == ({'temperature': 0.5}, None, [])
