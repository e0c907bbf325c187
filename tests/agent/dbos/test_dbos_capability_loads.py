"""`RunContext.load_capability` in runs of an agent with `DBOSDurability` (pydantic-ai 2.68): refused inside a DBOS
step (its recorded result is replayed on recovery without running the code, so the load would be lost), allowed in
code the workflow runs (a tool of the agent) and outside a workflow."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from dbos import DBOS, SetWorkflowID

from edgewise.agent import Agent, RunContext
from edgewise.agent.capabilities import Capability
from edgewise.agent.durable_exec.dbos import DBOSDurability
from edgewise.agent.exceptions import UserError
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.toolsets import FunctionToolset
from edgewise.graph.dbos import DBOSWorker

outcomes: list[tuple[str, str]] = []
tools_seen: list[list[str]] = []


def call_then_answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    tools_seen.append([t.name for t in info.function_tools])
    if len(messages) == 1:
        return ModelResponse([ToolCallPart(str(info.function_tools[-1].name), {}, 'c1')])
    return ModelResponse([TextPart('done')])


def refunds() -> Capability[Any]:
    capability = Capability[Any](
        id='refunds', description='Refund tools.', instructions='Check the policy.', defer_loading=True
    )

    @capability.tool_plain
    def lookup_refund() -> str:
        return 'refundable'

    return capability


def attempt(where: str, ctx: RunContext[Any]) -> str:
    try:
        loaded = ctx.load_capability('refunds')
    except UserError as e:
        outcomes.append((where, str(e)))
        return 'refused'
    outcomes.append((where, f'loaded: {loaded}'))
    return 'loaded'


in_step_agent = Agent(FunctionModel(call_then_answer), name='loads-in-step', capabilities=[DBOSDurability(), refunds()])


@in_step_agent.toolset(id='stepped')
def stepped(ctx: RunContext[Any]) -> FunctionToolset[Any]:
    # A dynamic toolset's tools are called in a DBOS step inside a workflow.
    def triage_in_step(ctx: RunContext[Any]) -> str:
        return attempt('step', ctx)

    return FunctionToolset([triage_in_step])


in_workflow_agent = Agent(
    FunctionModel(call_then_answer), name='loads-in-workflow', capabilities=[DBOSDurability(), refunds()]
)


@in_workflow_agent.tool
def triage(ctx: RunContext[Any]) -> str:
    return attempt('workflow', ctx)


@DBOS.workflow(name='loads-in-step-answer')
async def answer_in_step(prompt: str) -> str:
    return (await in_step_agent.run(prompt)).output


@DBOS.workflow(name='loads-in-workflow-answer')
async def answer_in_workflow(prompt: str) -> str:
    return (await in_workflow_agent.run(prompt)).output


@pytest.fixture(scope='module')
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DBOSWorker]:
    url = f'sqlite:///{tmp_path_factory.mktemp("dbos") / "system.sqlite"}'
    config = {'name': 'edgewise-capability-load-tests', 'system_database_url': url, 'log_level': 'WARNING'}
    with DBOSWorker(config, queues=[]) as started:  # type: ignore[arg-type]
        yield started


def run_workflow(workflow_id: str, workflow: Any) -> Any:
    with SetWorkflowID(workflow_id):
        handle: Any = DBOS.start_workflow(workflow, 'go')
    return handle.get_result()


def test_a_load_inside_a_dbos_step_is_refused_with_a_clear_error(worker: DBOSWorker) -> None:
    outcomes.clear()
    tools_seen.clear()
    assert run_workflow('loads-in-step-run', answer_in_step) == 'done'
    assert outcomes == [
        (
            'step',
            '`ctx.load_capability()` is not supported inside a durable execution activity, step, or task, whose '
            'recorded result is replayed without re-running your code. Load the capability from a tool hook such as '
            '`after_tool_execute` instead.',
        )
    ]
    assert tools_seen == [['load_capability', 'triage_in_step'], ['load_capability', 'triage_in_step']]


def test_a_load_from_a_tool_the_workflow_runs_takes_effect(worker: DBOSWorker) -> None:
    outcomes.clear()
    tools_seen.clear()
    assert run_workflow('loads-in-workflow-run', answer_in_workflow) == 'done'
    assert outcomes == [('workflow', 'loaded: True')]
    assert tools_seen == [['load_capability', 'triage'], ['load_capability', 'triage', 'lookup_refund']]


def test_outside_a_workflow_a_dynamic_toolsets_tool_loads(worker: DBOSWorker) -> None:
    outcomes.clear()
    tools_seen.clear()
    assert in_step_agent.run_sync('go').output == 'done'
    assert outcomes == [('step', 'loaded: True')]
    assert tools_seen[1] == ['load_capability', 'triage_in_step', 'lookup_refund']
