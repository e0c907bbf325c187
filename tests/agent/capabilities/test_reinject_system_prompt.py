"""`ReinjectSystemPrompt`: the agent's system prompt put back into a history that lost it."""

from __future__ import annotations

import pytest

from edgewise.agent import Agent, RunContext
from edgewise.agent.capabilities import CAPABILITY_TYPES, ReinjectSystemPrompt
from edgewise.agent.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    UserPromptPart,
)

from .._helpers import Recorder

pytestmark = pytest.mark.anyio


def _first_request_parts(recorder: Recorder) -> list[tuple[str, str]]:
    """The parts of the first `ModelRequest` the last request sent."""
    first = next(m for m in recorder.received[-1] if isinstance(m, ModelRequest))
    return [(type(p).__name__, str(p.content)) for p in first.parts]  # type: ignore[union-attr]


def _history(*parts: SystemPromptPart | UserPromptPart) -> list[ModelMessage]:
    return [ModelRequest(parts=list(parts)), ModelResponse(parts=[TextPart('earlier answer')])]


async def test_a_history_without_system_prompt_gets_the_agent_one_at_its_head() -> None:
    model = Recorder()
    agent = Agent(model.model, system_prompt='be brief', capabilities=[ReinjectSystemPrompt()])
    result = await agent.run('next', message_history=_history(UserPromptPart('first')))
    assert _first_request_parts(model) == [('SystemPromptPart', 'be brief'), ('UserPromptPart', 'first')]
    first = result.all_messages()[0]
    assert isinstance(first, ModelRequest)
    assert isinstance(first.parts[0], SystemPromptPart)  # the run's history holds it too


async def test_without_the_capability_such_a_history_sends_no_system_prompt() -> None:
    model = Recorder()
    agent = Agent(model.model, system_prompt='be brief')
    await agent.run('next', message_history=_history(UserPromptPart('first')))
    assert _first_request_parts(model) == [('UserPromptPart', 'first')]


async def test_a_history_holding_a_system_prompt_is_left_alone_by_default() -> None:
    model = Recorder()
    agent = Agent(model.model, system_prompt='be brief', capabilities=[ReinjectSystemPrompt()])
    history = _history(UserPromptPart('first'))
    history.append(ModelRequest(parts=[SystemPromptPart('handed over'), UserPromptPart('second')]))
    history.append(ModelResponse(parts=[TextPart('second answer')]))
    await agent.run('next', message_history=history)
    assert _first_request_parts(model) == [('UserPromptPart', 'first')]
    assert sum(isinstance(p, SystemPromptPart) for m in model.received[-1] for p in m.parts) == 1


async def test_replace_existing_puts_the_agent_prompt_in_place_of_the_history_ones() -> None:
    model = Recorder()
    agent = Agent(model.model, system_prompt='server rules', capabilities=[ReinjectSystemPrompt(replace_existing=True)])
    history: list[ModelMessage] = [
        ModelRequest(parts=[SystemPromptPart('client rules')]),  # left empty without it: dropped
        ModelResponse(parts=[TextPart('hm')]),
        ModelRequest(parts=[SystemPromptPart('more client rules'), UserPromptPart('first')]),
        ModelResponse(parts=[TextPart('earlier answer')]),
    ]
    await agent.run('next', message_history=history)
    assert isinstance(model.received[-1][0], ModelResponse)
    assert _first_request_parts(model) == [('SystemPromptPart', 'server rules'), ('UserPromptPart', 'first')]
    system = [p.content for m in model.received[-1] for p in m.parts if isinstance(p, SystemPromptPart)]
    assert system == ['server rules']


async def test_a_new_run_keeps_a_single_system_prompt() -> None:
    model = Recorder()
    agent = Agent(model.model, system_prompt='be brief', capabilities=[ReinjectSystemPrompt()])
    await agent.run('hello')
    assert _first_request_parts(model) == [('SystemPromptPart', 'be brief'), ('UserPromptPart', 'hello')]


async def test_dynamic_system_prompts_are_built_for_the_run() -> None:
    model = Recorder()
    agent = Agent(model.model, deps_type=str, capabilities=[ReinjectSystemPrompt[str]()])

    @agent.system_prompt
    def who(ctx: RunContext[str]) -> str:
        return f'you talk to {ctx.deps}'

    await agent.run('next', deps='Ada', message_history=_history(UserPromptPart('first')))
    assert _first_request_parts(model) == [('SystemPromptPart', 'you talk to Ada'), ('UserPromptPart', 'first')]


async def test_an_agent_without_system_prompt_changes_nothing() -> None:
    model = Recorder()
    agent = Agent(model.model, capabilities=[ReinjectSystemPrompt(replace_existing=True)])
    await agent.run('next', message_history=_history(SystemPromptPart('old'), UserPromptPart('first')))
    assert _first_request_parts(model) == [('UserPromptPart', 'first')]


async def test_it_can_be_given_per_run_and_from_a_spec() -> None:
    assert CAPABILITY_TYPES['ReinjectSystemPrompt'] is ReinjectSystemPrompt
    model = Recorder()
    spec = {'model': 'test', 'capabilities': [{'ReinjectSystemPrompt': {'replace_existing': True}}]}
    agent = Agent.from_spec(spec, system_prompt='spec rules')
    history = _history(SystemPromptPart('client rules'), UserPromptPart('first'))
    await agent.run('next', model=model.model, message_history=history)
    assert _first_request_parts(model) == [('SystemPromptPart', 'spec rules'), ('UserPromptPart', 'first')]
    other = Agent(model.model, system_prompt='run rules')
    await other.run('next', message_history=_history(UserPromptPart('first')), capabilities=[ReinjectSystemPrompt()])
    assert _first_request_parts(model)[0] == ('SystemPromptPart', 'run rules')
