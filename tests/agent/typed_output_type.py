"""Static checks that `output_type=` types the result of every way to run an agent (mypy only; never run).

Without it the result has the agent's own output type; with it, the run's. The name does not start with
`test_`, so pytest does not collect it; `make typecheck` checks it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_type

from edgewise.agent import (
    Agent,
    AgentEventStream,
    AgentRun,
    AgentRunResult,
    StreamedRunResult,
    ToolOutput,
)
from edgewise.agent.models.test import TestModel


@dataclass
class Deps:
    name: str


@dataclass
class City:
    name: str


agent = Agent(TestModel(), deps_type=Deps, output_type=City)


async def check_run() -> None:
    assert_type(await agent.run('x', deps=Deps('a')), AgentRunResult[City])
    assert_type(await agent.run('x', deps=Deps('a'), output_type=int), AgentRunResult[int])
    assert_type(await agent.run('x', deps=Deps('a'), output_type=ToolOutput(str)), AgentRunResult[str])


def check_run_sync() -> None:
    assert_type(agent.run_sync('x', deps=Deps('a')), AgentRunResult[City])
    assert_type(agent.run_sync('x', deps=Deps('a'), output_type=int), AgentRunResult[int])


async def check_iter() -> None:
    async with agent.iter('x', deps=Deps('a')) as run:
        assert_type(run, AgentRun[Deps, City])
    async with agent.iter('x', deps=Deps('a'), output_type=int) as int_run:
        assert_type(int_run, AgentRun[Deps, int])
        if int_run.result is not None:
            assert_type(int_run.result.output, int)


async def check_run_stream() -> None:
    async with agent.run_stream('x', deps=Deps('a')) as result:
        assert_type(result, StreamedRunResult[Deps, City])
    async with agent.run_stream('x', deps=Deps('a'), output_type=int) as int_result:
        assert_type(int_result, StreamedRunResult[Deps, int])
        assert_type(await int_result.get_output(), int)


def check_run_stream_events() -> None:
    assert_type(agent.run_stream_events('x', deps=Deps('a')), AgentEventStream[City])
    assert_type(agent.run_stream_events('x', deps=Deps('a'), output_type=int), AgentEventStream[int])


async def check_other_arguments_stay_typed() -> None:
    # With or without `output_type`, the other arguments keep their types: deps of the wrong type, or
    # a name no entry point takes, are errors (`warn_unused_ignores` fails the check if they are not).
    agent.run_sync('x', deps='a', output_type=int)  # type: ignore[call-overload]
    agent.run_stream_events('x', deps='a')  # type: ignore[call-overload]
    agent.run_sync('x', deps=Deps('a'), persistence=None, colour=3)  # type: ignore[call-overload]
    async with agent.run_stream('x', deps=Deps('a'), output_type=int, colour=3):  # type: ignore[call-overload]
        pass
