"""TestModel calls the tools once per conversation and gives a retried tool call a new id, as pydantic-ai's does."""

from __future__ import annotations

import pytest

from edgewise.agent import Agent, ModelRetry, RunContext, ToolDefinition, UserError
from edgewise.agent.capabilities import PrepareTools
from edgewise.agent.messages import ModelResponse, TextPart, ToolCallPart
from edgewise.agent.models.test import TestModel

from .._helpers import CALL_ID

pytestmark = pytest.mark.anyio


async def test_a_run_continuing_a_history_answers_without_calling_the_tools_again() -> None:
    agent = Agent(TestModel())
    calls: list[int] = []

    @agent.tool_plain
    def lookup(n: int) -> int:
        calls.append(n)
        return n

    first = await agent.run('first')
    second = await agent.run('second', message_history=first.all_messages())

    assert calls == [0]
    assert [m.parts for m in second.new_messages() if isinstance(m, ModelResponse)] == [[TextPart('{"lookup":0}')]]


async def test_a_retried_tool_call_gets_a_new_call_id() -> None:
    agent = Agent(TestModel())
    attempts: list[int] = []

    @agent.tool_plain
    def flaky(n: int) -> int:
        attempts.append(n)
        if len(attempts) == 1:
            raise ModelRetry('try again')
        return n

    result = await agent.run('go')

    calls = [p for m in result.all_messages() if isinstance(m, ModelResponse) for p in m.parts]
    assert calls == [
        ToolCallPart('flaky', {'n': 0}, 'pyd_ai_tool_call_id__flaky'),
        ToolCallPart('flaky', {'n': 0}, CALL_ID),
        TextPart('{"flaky":0}'),
    ]


async def test_the_seed_picks_which_of_several_output_tools_is_called() -> None:
    from pydantic import BaseModel

    class Cat(BaseModel):
        name: str

    class Dog(BaseModel):
        name: str

    agent = Agent(TestModel(), output_type=[Cat, Dog])
    assert isinstance((await agent.run('x')).output, Cat)
    assert isinstance((await agent.run('x', model=TestModel(seed=1))).output, Dog)
    assert isinstance((await agent.run('x', model=TestModel(seed=2))).output, Cat)


async def test_setting_the_private_system_makes_the_test_model_pose_as_another_family() -> None:
    # pydantic-ai's documentation sets `_system` so that a `prepare_tools` keyed on the model family runs its branch
    model = TestModel()
    seen: list[str] = []

    async def note_system(ctx: RunContext[None], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
        seen.append(ctx.model.system)
        return tool_defs

    agent = Agent(model, capabilities=[PrepareTools(note_system)])

    @agent.tool_plain
    def one() -> int:
        return 1

    await agent.run('a')
    model._system = 'openai'
    await agent.run('b')

    assert seen == ['test', 'test', 'openai', 'openai']
    assert model.system == 'openai'


async def test_calling_a_tool_the_request_does_not_offer_is_a_clear_error() -> None:
    agent = Agent(TestModel(call_tools=['missing']))

    @agent.tool_plain
    def present() -> str:  # pragma: no cover - the request fails before any call
        return 'here'

    with pytest.raises(UserError) as raised:
        await agent.run('x')
    assert str(raised.value) == (
        "TestModel was configured to call unknown tool 'missing': the request offers ['present']."
    )


async def test_calling_a_tool_of_an_agent_without_tools_names_that_none_is_offered() -> None:
    with pytest.raises(UserError, match=r"unknown tool 'missing': the request offers no function tools"):
        await Agent(TestModel(call_tools=['missing'])).run('x')
