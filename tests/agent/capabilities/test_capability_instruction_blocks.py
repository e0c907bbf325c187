"""The instructions of an always-on capability that has an `id` are its own blocks, keyed `capability:<id>`
(`capability:<id>:<name>` for a named part), as pydantic-ai 2.68 keys them; a capability without an `id` adds to the
agent's."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from edgewise.agent import Agent, RunContext
from edgewise.agent.capabilities import Capability, CombinedCapability
from edgewise.agent.messages import InstructionBaselinePart, InstructionPart, ModelMessage, ModelResponse, TextPart
from edgewise.agent.models.function import AgentInfo, FunctionModel

pytestmark = pytest.mark.anyio


@dataclass
class Seen:
    """Each request's instructions as sent, and its blocks: (content, id, dynamic)."""

    instructions: list[str | None] = field(default_factory=list)
    blocks: list[list[tuple[str, str | None, bool]]] = field(default_factory=list)


def watching(seen: Seen) -> FunctionModel:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.instructions.append(info.instructions)
        parts = info.model_request_parameters.instruction_parts or []
        seen.blocks.append([(p.content, None if p.id is None else str(p.id), p.dynamic) for p in parts])
        return ModelResponse([TextPart('done')])

    return FunctionModel(answer)


async def test_a_capabilitys_literal_text_is_its_own_block_after_the_agents() -> None:
    seen = Seen()
    tone = Capability[None](id='tone', instructions='Be brief.')
    await Agent(watching(seen), instructions='Base.', capabilities=[tone]).run('hi')
    assert seen.blocks == [[('Base.', None, False), ('Be brief.', 'capability:tone', False)]]
    assert seen.instructions == ['Base.\n\nBe brief.']


async def test_a_capabilitys_functions_give_its_blocks_and_a_named_part_is_keyed_beneath_it() -> None:
    seen = Seen()

    def step(ctx: RunContext[None]) -> str:
        return f'Step {ctx.run_step}.'

    def limits() -> InstructionPart:
        return InstructionPart('Two refunds a day.', name='limits')

    policy = Capability[None](id='policy', instructions=['Be fair.', step, limits])
    await Agent(watching(seen), instructions='Base.', capabilities=[policy]).run('hi')
    assert seen.blocks == [
        [
            ('Base.', None, False),
            ('Be fair.', 'capability:policy', False),
            ('Step 1.', 'capability:policy', True),
            ('Two refunds a day.', 'capability:policy:limits', True),
        ]
    ]


async def test_a_capability_without_an_id_adds_to_the_agents_text() -> None:
    seen = Seen()
    plain = Capability[None](instructions='Always on.')
    await Agent(watching(seen), instructions='Base.', capabilities=[plain]).run('hi')
    assert seen.blocks == [[('Base.\nAlways on.', None, False)]]


async def test_each_capability_of_a_combination_is_keyed_on_its_own() -> None:
    seen = Seen()
    both = CombinedCapability(
        [Capability[None](id='a', instructions='From a.'), Capability[None](instructions='Anonymous.')]
    )
    await Agent(watching(seen), capabilities=[both, Capability[None](id='b', instructions='From b.')]).run('hi')
    assert seen.blocks == [
        [('Anonymous.', None, False), ('From a.', 'capability:a', False), ('From b.', 'capability:b', False)]
    ]


async def test_a_capabilitys_appending_block_is_recorded_under_its_key() -> None:
    seen = Seen()
    count = [0]

    def budget() -> InstructionPart:
        count[0] += 1
        return InstructionPart(f'{count[0]} left.', name='budget', on_change='append')

    agent = Agent(watching(seen), capabilities=[Capability[None](id='spend', instructions=budget)])
    result = await agent.run('hi')
    baseline = next(p for m in result.all_messages() for p in m.parts if isinstance(p, InstructionBaselinePart))
    (block,) = baseline.instructions
    assert isinstance(block, InstructionPart)
    assert (str(block.id), block.content) == ('capability:spend:budget', '1 left.')
