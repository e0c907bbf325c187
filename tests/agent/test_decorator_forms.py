"""Decorators used with and without parentheses, as pydantic-ai allows."""

from __future__ import annotations

import pytest

from edgewise.agent import Agent, RunContext
from edgewise.agent.messages import ModelRequest
from edgewise.agent.models.test import TestModel

pytestmark = pytest.mark.anyio


async def test_instructions_registered_with_parentheses_are_sent() -> None:
    agent = Agent(TestModel())

    @agent.instructions()
    def first(ctx: RunContext[None]) -> str:
        return 'first'

    @agent.instructions
    def second() -> str:
        return 'second'

    result = await agent.run('x')

    requests = [m for m in result.all_messages() if isinstance(m, ModelRequest)]
    assert [r.instructions for r in requests] == ['first\n\nsecond']


def test_one_tool_decorator_object_gives_its_options_to_every_function() -> None:
    agent = Agent(TestModel())
    with_three_retries = agent.tool_plain(retries=3)

    @with_three_retries
    def first() -> str:
        return 'first'

    @with_three_retries
    def second() -> str:
        return 'second'

    assert [agent._tools.function_toolset.tools[name].max_retries for name in ('first', 'second')] == [3, 3]
