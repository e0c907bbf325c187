"""Every way a run fails: retry budgets, usage limits, missing model, wrong deps, bad histories."""

from __future__ import annotations

import pytest

from edgewise.agent import (
    Agent,
    AgentRunError,
    ModelRetry,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
    UsageLimits,
    UserError,
    capture_run_messages,
)
from edgewise.agent.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart

from ._helpers import CONVERSATION_ID, NOW, RUN_ID, scripted

pytestmark = pytest.mark.anyio


def _looping_tool_agent() -> Agent[None, str]:
    agent = Agent(scripted(*[[ToolCallPart('t', {}, f'c{i}')] for i in range(10)]))

    @agent.tool_plain
    def t() -> str:
        return 'ok'

    return agent


async def test_a_tool_retried_past_its_budget_raises_naming_the_tool_and_the_budget() -> None:
    agent = Agent(scripted([ToolCallPart('t', {})], [ToolCallPart('t', {})]))

    @agent.tool_plain
    def t() -> str:
        raise ModelRetry('nope')

    with pytest.raises(UnexpectedModelBehavior) as exc_info:
        await agent.run('x')
    assert str(exc_info.value) == "Tool 't' exceeded max retries count of 1"
    assert isinstance(exc_info.value.__cause__, ModelRetry)
    assert isinstance(exc_info.value, AgentRunError | RuntimeError)


async def test_per_tool_retries_override_the_agent_budget() -> None:
    agent = Agent(scripted(*[[ToolCallPart('t', {'n': 'bad'})] for _ in range(3)]), retries=5)

    @agent.tool_plain(retries=0)
    def t(n: int) -> int:  # pragma: no cover - its arguments never validate
        return n

    with pytest.raises(UnexpectedModelBehavior, match="Tool 't' exceeded max retries count of 0"):
        await agent.run('x')


async def test_text_where_structured_output_is_required_exhausts_the_output_retries() -> None:
    agent = Agent(scripted([TextPart('plain')], [TextPart('plain')]), output_type=int)
    with pytest.raises(UnexpectedModelBehavior) as exc_info:
        await agent.run('x')
    assert str(exc_info.value) == 'Exceeded maximum output retries (1)'


async def test_output_retries_are_separate_from_tool_retries() -> None:
    agent = Agent(
        scripted(*[[TextPart('plain')] for _ in range(4)]), output_type=int, retries={'tools': 5, 'output': 2}
    )
    with pytest.raises(UnexpectedModelBehavior, match=r'Exceeded maximum output retries \(2\)'):
        await agent.run('x')


async def test_an_unknown_tool_is_retried_on_its_own_count_and_the_tool_budget() -> None:
    agent = Agent(scripted([ToolCallPart('zz', {})], [ToolCallPart('zz', {})]))
    with pytest.raises(UnexpectedModelBehavior, match=r"^Tool 'zz' exceeded max retries count of 1$"):
        await agent.run('x')


async def test_request_limit_raises_before_the_request_and_carries_the_messages() -> None:
    with pytest.raises(UsageLimitExceeded) as exc_info:
        await _looping_tool_agent().run('x', usage_limits=UsageLimits(request_limit=2))
    assert str(exc_info.value) == 'The next request would exceed the request_limit of 2'
    assert len(exc_info.value.messages) == 4
    assert exc_info.value.messages[0] == ModelRequest(
        parts=[UserPromptPart('x', timestamp=NOW)], timestamp=NOW, run_id=RUN_ID, conversation_id=CONVERSATION_ID
    )


@pytest.mark.parametrize(
    ('limits', 'message'),
    [
        (
            UsageLimits(tool_calls_limit=1),
            'The next tool call(s) would exceed the tool_calls_limit of 1 (tool_calls=2).',
        ),
        (UsageLimits(total_tokens_limit=60), 'Exceeded the total_tokens_limit of 60 (total_tokens=109)'),
        (UsageLimits(input_tokens_limit=55), 'Exceeded the input_tokens_limit of 55 (input_tokens=103)'),
        (UsageLimits(output_tokens_limit=1), 'Exceeded the output_tokens_limit of 1 (output_tokens=2)'),
    ],
)
async def test_usage_limits_match_pydantic_ai_messages(limits: UsageLimits, message: str) -> None:
    with pytest.raises(UsageLimitExceeded) as exc_info:
        await _looping_tool_agent().run('x', usage_limits=limits)
    assert str(exc_info.value) == message
    assert exc_info.value.messages


async def test_a_run_without_a_model_is_a_user_error() -> None:
    with pytest.raises(UserError, match=r'`model` must either be set on the agent or included when calling it\.'):
        await Agent().run('x')


async def test_a_provider_model_name_is_a_clear_error_until_providers_land() -> None:
    with pytest.raises(UserError, match=r"Model provider 'typesafe' .* is not available in edgewise.agent yet"):
        await Agent('typesafe:claude-sonnet-4-5').run('x')


class Deps:
    pass


async def test_deps_of_the_wrong_type_fail_at_once() -> None:
    agent = Agent(scripted(), deps_type=Deps, name='typed')
    with pytest.raises(UserError) as exc_info:
        await agent.run('x', deps='not deps')  # type: ignore[call-overload]
    assert str(exc_info.value) == "Agent 'typed' expects deps of type Deps, got str: pass `deps=` a Deps instance."


async def test_a_history_of_invalid_dicts_is_rejected() -> None:
    with pytest.raises(UserError, match='`message_history` holds items that are not valid messages'):
        await Agent(scripted([TextPart('ok')])).run('x', message_history=[{'kind': 'nonsense'}])  # type: ignore[list-item]


async def test_capture_run_messages_keeps_the_messages_of_a_failed_run() -> None:
    agent = Agent(scripted([TextPart('plain')], [TextPart('plain')]), output_type=int)
    with capture_run_messages() as messages, pytest.raises(UnexpectedModelBehavior):
        await agent.run('x')
    assert [type(m) for m in messages] == [ModelRequest, ModelResponse, ModelRequest, ModelResponse]


async def test_capture_run_messages_captures_only_the_first_run() -> None:
    agent = Agent(scripted([TextPart('one')], [TextPart('two')]))
    with capture_run_messages() as messages:
        await agent.run('first')
        await agent.run('second')
    assert [m.parts[0] for m in messages] == [UserPromptPart('first', timestamp=NOW), TextPart('one')]


async def test_a_tool_error_that_is_not_a_retry_propagates_and_stops_concurrent_calls() -> None:
    agent = Agent(scripted([ToolCallPart('boom', {}), ToolCallPart('slow', {})]))

    @agent.tool_plain
    async def boom() -> None:
        raise LookupError('broken')

    @agent.tool_plain
    async def slow() -> None:
        import anyio

        await anyio.sleep(10)

    with pytest.raises(LookupError, match='broken'):
        await agent.run('x')
