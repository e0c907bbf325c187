"""Static checks of the generic defaults and variances pydantic-ai 2.x gives the agent's classes: dependencies
default to `object` (not `None`), a `RunContext` is covariant in its dependencies, and tools, toolsets and
capabilities are contravariant in theirs (type-checked by mypy, never run)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_type

from edgewise.agent import Agent, AgentRun, RunContext, RunUsage, Tool
from edgewise.agent.capabilities import AbstractCapability, Toolset
from edgewise.agent.models import ModelSelectionContext
from edgewise.agent.models.test import TestModel
from edgewise.agent.toolsets import AbstractToolset, FunctionToolset


@dataclass
class Deps:
    name: str


def _any_deps(ctx: RunContext[object]) -> str:
    return repr(ctx.deps)


def _named(ctx: RunContext[Deps]) -> str:
    return ctx.deps.name


class Anything(AbstractCapability[object]):
    """A capability that asks nothing of the dependencies."""


class NeedsDeps(AbstractCapability[Deps]):
    """A capability that reads `Deps`."""


def check_the_defaults_are_object(
    agent: Agent, ctx: RunContext, tool: Tool, toolset: AbstractToolset, capability: AbstractCapability
) -> None:
    assert_type(agent, Agent[object, str])
    assert_type(ctx, RunContext[object])
    assert_type(ctx.deps, object)
    assert_type(tool, Tool[object])
    assert_type(toolset, AbstractToolset[object])
    assert_type(capability, AbstractCapability[object])
    assert_type(Agent(TestModel()), Agent[object, str])
    assert_type(FunctionToolset(), FunctionToolset[object])
    assert_type(Tool(_any_deps), Tool[object])


def check_selection_context_default(ctx: ModelSelectionContext) -> None:
    assert_type(ctx, ModelSelectionContext[object])


async def check_an_agent_run_without_deps_type() -> None:
    async with Agent(TestModel()).iter('x') as run:
        assert_type(run, AgentRun[object, str])


def check_a_run_context_is_covariant(ctx: RunContext[Deps]) -> None:
    # A context with `Deps` is a context with any dependencies, so `RunContext[object]` functions take it.
    wider: RunContext[object] = ctx
    assert_type(_any_deps(ctx), str)
    assert_type(wider.deps, object)


def check_what_takes_any_deps_serves_an_agent_with_deps() -> None:
    # Tools, toolsets and capabilities typed for `object` work with any agent's dependencies.
    toolset: FunctionToolset[object] = FunctionToolset([_any_deps])
    agent = Agent(
        TestModel(),
        deps_type=Deps,
        tools=[Tool(_any_deps), _named],
        toolsets=[toolset],
        capabilities=[Anything(), NeedsDeps(), Toolset(toolset)],
    )
    assert_type(agent, Agent[Deps, str])
    as_deps_toolset: AbstractToolset[Deps] = toolset
    as_deps_capability: AbstractCapability[Deps] = Anything()
    as_deps_tool: Tool[Deps] = Tool(_any_deps)
    del as_deps_toolset, as_deps_capability, as_deps_tool


def check_what_needs_deps_does_not_serve_any_agent() -> None:
    # The other way round is an error: a tool that reads `Deps` cannot go to an agent of any dependencies.
    needs: Tool[Deps] = Tool(_named)
    wrong_tool: Tool[object] = needs  # type: ignore[assignment]
    wrong_capability: AbstractCapability[object] = NeedsDeps()  # type: ignore[assignment]
    wrong_context: RunContext[Deps] = RunContext[object](deps=object(), model=TestModel(), usage=RunUsage())  # type: ignore[assignment]
    del wrong_tool, wrong_capability, wrong_context
