"""Toolset instructions as `InstructionPart` blocks: static texts and dynamic functions, their combination, and how
an agent's request carries them."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.agent import Agent, CombinedToolset, FunctionToolset, RunContext
from edgewise.agent.messages import InstructionPart
from edgewise.agent.models.test import TestModel
from edgewise.agent.toolsets import AbstractToolset, ToolsetTool
from edgewise.agent.toolsets.abstract import ToolsetInstructions
from edgewise.agent.usage import RunUsage

pytestmark = pytest.mark.anyio


def ctx_of(deps: Any = None) -> RunContext[Any]:
    return RunContext(deps=deps, model=TestModel(), usage=RunUsage())


class Fixed(AbstractToolset[Any]):
    """A toolset without tools whose instructions are whatever it is given."""

    def __init__(self, instructions: ToolsetInstructions) -> None:
        self.given = instructions

    @property
    def id(self) -> str | None:
        return None

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        return {}

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:  # pragma: no cover - it lists no tools
        raise AssertionError(name)

    async def get_instructions(self, ctx: RunContext[Any]) -> ToolsetInstructions:
        return self.given


async def test_function_toolset_texts_are_static_blocks_and_functions_dynamic_ones() -> None:
    toolset: FunctionToolset[str] = FunctionToolset(instructions=['Static.', lambda ctx: f'Deps {ctx.deps}.'])

    @toolset.instructions
    async def later() -> str:
        return 'Later.'

    assert await toolset.get_instructions(ctx_of('d')) == [
        InstructionPart('Static.'),
        InstructionPart('Deps d.', dynamic=True),
        InstructionPart('Later.', dynamic=True),
    ]


async def test_combined_toolset_flattens_texts_blocks_and_sequences_in_order() -> None:
    inner = CombinedToolset([FunctionToolset(instructions='A.'), Fixed(['b', InstructionPart('C.', dynamic=True)])])
    combined = CombinedToolset([inner, Fixed(None), Fixed('d'), Fixed(InstructionPart('E.'))])

    assert await combined.get_instructions(ctx_of()) == [
        InstructionPart('A.'),
        'b',
        InstructionPart('C.', dynamic=True),
        'd',
        InstructionPart('E.'),
    ]


async def test_combined_toolset_without_instructions_gives_none() -> None:
    assert await CombinedToolset([Fixed(None), Fixed([]), FunctionToolset()]).get_instructions(ctx_of()) is None


async def test_agent_request_joins_toolset_blocks_and_leaves_blank_ones_out() -> None:
    given: list[str | InstructionPart] = ['', '  ', InstructionPart('', dynamic=True), 'one', InstructionPart(' two ')]
    agent = Agent(TestModel(call_tools=[]), toolsets=[Fixed(given), Fixed(InstructionPart('three', dynamic=True))])

    result = await agent.run('go')

    assert result.all_messages()[0].instructions == 'one\n\ntwo\n\nthree'  # type: ignore[union-attr]


async def test_agent_request_takes_a_single_text_from_a_toolset() -> None:
    agent = Agent(TestModel(call_tools=[]), toolsets=[Fixed('Use nothing.')])

    result = await agent.run('go')

    assert result.all_messages()[0].instructions == 'Use nothing.'  # type: ignore[union-attr]
