"""DBOSAgent in this process (DBOS launched on a SQLite system database): steps, replay, errors, runs put on a
queue (by this process or a `DBOSClient`) and waited for."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from dbos import DBOS, DBOSClient, SetWorkflowID

from edgewise.agent import Agent, DeferredToolRequests
from edgewise.agent.durable_exec.dbos import DBOSAgent, DBOSModel
from edgewise.agent.exceptions import AgentRunError, CallDeferred, UserError
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.graph.dbos import DBOSQueue, DBOSWorker

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


async def stream_text(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
    calls['model'] += 1
    for piece in ('str', 'eamed'):
        yield piece


streaming = DBOSModel(FunctionModel(stream_function=stream_text), step_name_prefix='streamer__model')


@DBOS.workflow(name='streamer.run')
async def stream_once() -> str:
    request = ModelRequest(parts=[UserPromptPart('hi')])
    async with streaming.request_stream([request], None, ModelRequestParameters()) as stream:
        events = [event async for event in stream]
        response = stream.get()
    part = response.parts[0]
    assert isinstance(part, TextPart)
    return f'{len(events)}:{part.content}'


def broken(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    raise ValueError('the model is down')


failing = DBOSAgent(Agent(FunctionModel(broken), name='failing'))
QUEUE = DBOSQueue('agent-tests', polling_interval=0.05)


@pytest.fixture(scope='module')
def system_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    return f'sqlite:///{tmp_path_factory.mktemp("dbos") / "system.sqlite"}'


@pytest.fixture(scope='module')
def worker(system_url: str) -> Iterator[DBOSWorker]:
    config = {'name': 'edgewise-agent-tests', 'system_database_url': system_url, 'log_level': 'WARNING'}
    with DBOSWorker(config, queues=[QUEUE]) as started:  # type: ignore[arg-type]
        yield started


@pytest.fixture
def client(system_url: str, worker: DBOSWorker) -> Iterator[DBOSClient]:
    started = DBOSClient(system_database_url=system_url)
    yield started
    started.destroy()


def test_each_request_and_tool_call_is_a_step_and_a_rerun_replays_them(worker: DBOSWorker) -> None:
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


def test_a_streamed_request_is_one_step_replayed_whole(worker: DBOSWorker) -> None:
    before = calls['model']
    with SetWorkflowID('stream-run'):
        handle: Any = DBOS.start_workflow(stream_once)  # an async workflow run on DBOS's loop; its result a str
    assert handle.get_result() == '0:streamed'
    steps = DBOS.list_workflow_steps('stream-run')
    assert [step['function_name'] for step in steps] == ['streamer__model.request_stream']
    assert calls['model'] - before == 1


def test_streaming_entry_points_are_refused() -> None:
    with pytest.raises(UserError, match=r'DBOSAgent\.run_stream` is not supported'):
        durable.run_stream('hi')
    with pytest.raises(UserError, match=r'DBOSAgent\.run_stream_sync` is not supported'):
        durable.run_stream_sync('hi')
    with pytest.raises(UserError, match=r'DBOSAgent\.run_stream_events` is not supported'):
        durable.run_stream_events('hi')


def deferring(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    calls['model'] += 1
    return ModelResponse(parts=[ToolCallPart('later', {'x': 1}, tool_call_id='c1')])


deferring_agent: Agent[None, Any] = Agent(
    FunctionModel(deferring), name='deferrer', output_type=[str, DeferredToolRequests]
)


@deferring_agent.tool_plain
def later(x: int) -> str:
    calls['later'] = calls.get('later', 0) + 1
    raise CallDeferred(metadata={'x': x})


durable_deferring = DBOSAgent(deferring_agent)


def test_a_deferred_tool_call_is_recorded_and_the_output_typed_again(worker: DBOSWorker) -> None:
    result = durable_deferring.run_sync('defer', run_id='deferred-run')
    assert result.output == DeferredToolRequests(
        calls=[ToolCallPart('later', {'x': 1}, tool_call_id='c1')], metadata={'c1': {'x': 1}}
    )
    steps = DBOS.list_workflow_steps('deferred-run')
    assert [step['function_name'] for step in steps] == ['deferrer__model.request', 'deferrer__tool.call_tool']
    assert '"deferred"' in str(steps[1]['output'])
    assert durable_deferring.result_sync('deferred-run').output == result.output
    assert calls['later'] == 1


def test_a_run_put_on_the_queue_is_taken_by_the_worker(worker: DBOSWorker) -> None:
    run_id = durable.enqueue_sync(QUEUE, 'add', run_id='queued-here')
    assert run_id == 'queued-here'
    assert durable.result_sync(run_id).output == 'done'


def test_a_client_puts_a_run_on_the_queue_and_reads_its_result(client: DBOSClient) -> None:
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart('earlier')]),
        ModelResponse(parts=[TextPart('noted')]),
    ]
    run_id = durable.enqueue_sync('agent-tests', 'add', message_history=history, client=client)
    result = durable.result_sync(run_id, client=client)
    assert result.output == 'done'
    assert result.all_messages()[:2] == history
    assert client.retrieve_workflow(run_id).get_status().name == durable.workflow_name == 'adder.run'


def test_enqueuing_an_existing_run_id_again_starts_no_second_run(client: DBOSClient) -> None:
    first = durable.enqueue_sync(QUEUE, 'add', run_id='queued-once', client=client)
    durable.result_sync(first, client=client)
    before = dict(calls)
    second = durable.enqueue_sync(QUEUE, 'add', run_id='queued-once', client=client)
    assert second == first
    assert durable.result_sync(second, client=client).output == 'done'
    assert calls == before


def test_a_failed_run_read_through_a_client_names_the_run_and_the_error(client: DBOSClient) -> None:
    run_id = failing.enqueue_sync(QUEUE, 'hello', run_id='down', client=client)
    with pytest.raises(AgentRunError) as caught:
        failing.result_sync(run_id, client=client)
    assert str(caught.value) == "Run 'down' of agent `failing` failed: ValueError: the model is down"


def test_a_run_started_without_waiting_is_waited_for_by_id(worker: DBOSWorker) -> None:
    run_id = durable.start_sync('add', run_id='started-only')
    assert run_id == 'started-only'
    assert durable.result_sync('started-only').output == 'done'


@pytest.mark.anyio
async def test_async_enqueue_start_and_result_on_both_backends(client: DBOSClient, anyio_backend: str) -> None:
    queued = await durable.enqueue(QUEUE, 'add', run_id=f'queued-async-{anyio_backend}', client=client)
    started = await durable.start('add', run_id=f'started-async-{anyio_backend}')
    assert (await durable.result(queued, client=client)).output == 'done'
    assert (await durable.result(started)).output == 'done'
