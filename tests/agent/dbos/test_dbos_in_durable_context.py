"""`RunContext.in_durable_context` (pydantic-ai 2.68) in runs of an agent with `DBOSDurability`: `True` for code the
DBOS workflow replays (tools run in the workflow), `False` inside a step and outside a workflow."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from dbos import DBOS, SetWorkflowID

from edgewise.agent import Agent, RunContext
from edgewise.agent.durable_exec.dbos import DBOSDurability
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.toolsets import FunctionToolset
from edgewise.graph.dbos import DBOSWorker

seen: list[tuple[str, bool]] = []


def call_both_then_answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if len(messages) == 1:
        return ModelResponse([ToolCallPart('in_workflow', {}, 'c1'), ToolCallPart('built_in_step', {}, 'c2')])
    return ModelResponse([TextPart('done')])


agent = Agent(FunctionModel(call_both_then_answer), name='durable-context', capabilities=[DBOSDurability()])


@agent.tool
def in_workflow(ctx: RunContext[Any]) -> str:
    seen.append(('tool', ctx.in_durable_context))
    return 'ok'


@agent.toolset(id='stepped')
def stepped(ctx: RunContext[Any]) -> FunctionToolset[Any]:
    # A dynamic toolset's function runs in a DBOS step inside a workflow.
    seen.append(('toolset function', ctx.in_durable_context))

    def built_in_step() -> str:
        return 'ok'

    return FunctionToolset([built_in_step])


@DBOS.workflow(name='durable-context-answer')
async def answer(prompt: str) -> str:
    return (await agent.run(prompt)).output


@pytest.fixture(scope='module')
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DBOSWorker]:
    url = f'sqlite:///{tmp_path_factory.mktemp("dbos") / "system.sqlite"}'
    config = {'name': 'edgewise-durable-context-tests', 'system_database_url': url, 'log_level': 'WARNING'}
    with DBOSWorker(config, queues=[]) as started:  # type: ignore[arg-type]
        yield started


def test_a_tool_in_the_workflow_is_in_a_durable_context_and_a_step_is_not(worker: DBOSWorker) -> None:
    seen.clear()
    with SetWorkflowID('durable-context-run'):
        handle: Any = DBOS.start_workflow(answer, 'go')
    assert handle.get_result() == 'done'
    assert ('tool', True) in seen
    assert ('toolset function', False) in seen
    assert {flag for kind, flag in seen if kind == 'toolset function'} == {False}


def test_outside_a_workflow_nothing_is_in_a_durable_context(worker: DBOSWorker) -> None:
    seen.clear()
    assert agent.run_sync('go').output == 'done'
    assert set(seen) == {('tool', False), ('toolset function', False)}
