"""Static checks of the generics of `Agent`, `AgentRunResult` and `AgentRun` (type-checked by mypy, never run)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import assert_type

from pydantic import BaseModel

from edgewise.agent import Agent, AgentRun, AgentRunResult, RunContext, RunUsage, ToolOutput
from edgewise.agent.models.test import TestModel


@dataclass
class Deps:
    name: str


class City(BaseModel):
    name: str


def check_agent_generics() -> None:
    plain = Agent(TestModel())
    assert_type(plain, Agent[object, str])

    typed = Agent(TestModel(), deps_type=Deps, output_type=City)
    assert_type(typed, Agent[Deps, City])

    with_tool_output = Agent(TestModel(), output_type=ToolOutput(int, name='n'))
    assert_type(with_tool_output, Agent[object, int])

    @typed.tool
    def greet(ctx: RunContext[Deps], greeting: str) -> str:
        return f'{greeting} {ctx.deps.name}'

    # The decorators hand the function back with its signature.
    same: Callable[[RunContext[Deps], str], str] = greet
    assert_type(same(RunContext(deps=Deps('a'), model=TestModel(), usage=RunUsage()), 'hi'), str)

    result = typed.run_sync('x', deps=Deps('a'))
    assert_type(result, AgentRunResult[City])
    assert_type(result.output, City)

    as_int = typed.run_sync('x', deps=Deps('a'), output_type=int)
    assert_type(as_int, AgentRunResult[int])


async def check_iter() -> None:
    agent = Agent(TestModel(), deps_type=Deps, output_type=City)
    async with agent.iter('x', deps=Deps('a')) as run:
        assert_type(run, AgentRun[Deps, City])
        async for _node in run:
            pass
        if run.result is not None:
            assert_type(run.result.output, City)
