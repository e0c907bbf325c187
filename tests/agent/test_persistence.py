"""An agent run is a graph run: its snapshots go to any Edgewise persistence and load back from JSON."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from edgewise.agent import Agent, CallToolsNode, FinalResult, ModelRequestNode, UserPromptNode
from edgewise.agent.messages import TextPart, ToolCallPart
from edgewise.graph import End, EndSnapshot, FullStatePersistence, NodeSnapshot

from ._helpers import scripted

pytestmark = pytest.mark.anyio


class Answer(BaseModel):
    value: int


async def test_a_run_persists_every_step_and_its_snapshots_round_trip_through_json() -> None:
    agent = Agent(scripted([ToolCallPart('t', {'x': 1}, 'c1')], [ToolCallPart('final_result', {'value': 2}, 'c2')]),
                  output_type=Answer)  # fmt: skip

    @agent.tool_plain
    def t(x: int) -> dict[str, int]:
        return {'x': x}

    persistence = FullStatePersistence()
    result = await agent.run('go', persistence=persistence)
    assert result.output == Answer(value=2)
    history = persistence.history
    assert [type(s.node).__name__ for s in history] == [
        'UserPromptNode',
        'ModelRequestNode',
        'CallToolsNode',
        'ModelRequestNode',
        'CallToolsNode',
        'End',
    ]
    assert all(s.status == 'success' for s in history if isinstance(s, NodeSnapshot))

    data = persistence.dump_json()
    restored = FullStatePersistence()
    restored.set_graph_types(agent.graph)
    restored.load_json(data)
    assert [type(s.node) for s in restored.history] == [
        UserPromptNode,
        ModelRequestNode,
        CallToolsNode,
        ModelRequestNode,
        CallToolsNode,
        End,
    ]
    assert [s.state.message_history for s in restored.history] == [s.state.message_history for s in history]
    assert [s.state.usage for s in restored.history] == [s.state.usage for s in history]
    last = restored.history[-1]
    assert isinstance(last, EndSnapshot)
    assert last.result.data == FinalResult({'value': 2}, 'final_result', 'c2')
    assert restored.dump_json() == data
    raw = json.loads(data)
    assert [s['node']['node_id'] for s in raw if s['kind'] == 'node'] == [
        'UserPromptNode',
        'ModelRequestNode',
        'CallToolsNode',
        'ModelRequestNode',
        'CallToolsNode',
    ]
    assert raw[0]['node'] == {'user_prompt': 'go', 'deferred_tool_results': None, 'node_id': 'UserPromptNode'}


async def test_the_snapshot_states_are_copies_taken_at_each_step() -> None:
    persistence = FullStatePersistence()
    await Agent(scripted([TextPart('a')])).run('go', persistence=persistence)
    sizes = [len(s.state.message_history) for s in persistence.history]
    assert sizes == [0, 0, 2, 2]
