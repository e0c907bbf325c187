"""DBOSAgent in this process (DBOS launched on a SQLite system database): steps, replay, errors."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from edgewise.agent import Agent
from edgewise.agent.durable_exec.dbos import DBOSAgent
from edgewise.agent.exceptions import UserError
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.graph.dbos import DBOSWorker

calls = {'model': 0, 'add': 0, 'flaky': 0}


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    calls['model'] += 1
    if len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart('add', {'a': 2, 'b': 3}), ToolCallPart('flaky', {})])
    if len(messages) == 3:  # the tool results, one of them the retry prompt of `flaky`
        return ModelResponse(parts=[ToolCallPart('flaky', {})])
    return ModelResponse(parts=[TextPart('done')])


agent = Agent(FunctionModel(scripted), name='adder')


@agent.tool_plain
def add(a: int, b: int) -> int:
    calls['add'] += 1
    return a + b


@agent.tool_plain
def flaky() -> str:
    from edgewise.agent.exceptions import ModelRetry

    calls['flaky'] += 1
    if calls['flaky'] == 1:
        raise ModelRetry('try again')
    return 'ok'


durable = DBOSAgent(agent)


@pytest.fixture(scope='module')
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DBOSWorker]:
    url = f'sqlite:///{tmp_path_factory.mktemp("dbos") / "system.sqlite"}'
    config = {'name': 'edgewise-agent-tests', 'system_database_url': url, 'log_level': 'WARNING'}
    with DBOSWorker(config, queues=[]) as started:  # type: ignore[arg-type]
        yield started


def test_each_request_and_tool_call_is_a_step_and_a_rerun_replays_them(worker: DBOSWorker) -> None:
    from dbos import DBOS

    before = dict(calls)
    result = durable.run_sync('add 2 and 3', run_id='tools-run')
    assert result.output == 'done'
    assert [m.kind for m in result.all_messages()] == [
        'request',
        'response',
        'request',
        'response',
        'request',
        'response',
    ]
    steps = DBOS.list_workflow_steps('tools-run')
    names = [step['function_name'] for step in steps]
    assert names == [
        'adder__model.request',
        'adder__tool.call_tool',
        'adder__tool.call_tool',
        'adder__model.request',
        'adder__tool.call_tool',
        'adder__model.request',
    ]
    assert all(isinstance(step['output'], str) for step in steps)
    assert calls['model'] - before['model'] == 3
    assert (calls['add'] - before['add'], calls['flaky'] - before['flaky']) == (1, 2)

    again = durable.run_sync('add 2 and 3', run_id='tools-run')  # the same workflow id: its recorded result
    assert again.output == 'done'
    assert again.all_messages() == result.all_messages()
    assert durable.result_sync('tools-run').new_messages() == result.new_messages()
    assert calls['model'] - before['model'] == 3


@pytest.mark.anyio
async def test_async_run_on_both_backends(worker: DBOSWorker, anyio_backend: str) -> None:
    result = await durable.run('add', run_id=f'async-{anyio_backend}')
    assert result.output == 'done'


def test_a_name_and_a_model_instance_are_required() -> None:
    with pytest.raises(UserError, match='needs a unique, stable name'):
        DBOSAgent(Agent(FunctionModel(scripted)))
    with pytest.raises(UserError, match='`Model` instance'):
        DBOSAgent(Agent('test', name='by-name'))
