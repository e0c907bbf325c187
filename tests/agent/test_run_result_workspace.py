"""pydantic-ai 2.68's `workspace` on a run's results and `StreamedRunResult.result`: the workspace a run used, still
usable after it (and left behind when a result is pickled); a streamed run settled into an `AgentRunResult` once it
has been read to its end, refused while it streams or after it stopped."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from edgewise.agent import Agent, AgentRunResult, StreamedRunResult, UserError
from edgewise.agent.capabilities import LocalWorkspace
from edgewise.agent.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart
from edgewise.agent.models.test import TestModel
from edgewise.agent.workspaces import WorkspaceRef

pytestmark = pytest.mark.anyio


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return tmp_path.resolve()


async def test_a_runs_result_gives_the_workspace_it_used_still_usable_after_it(workdir: Path) -> None:
    agent = Agent(TestModel(), capabilities=[LocalWorkspace(workdir)])
    result = await agent.run('hi')
    workspace = result.workspace
    assert workspace.attached
    assert workspace.ref == WorkspaceRef(provider='local', id=str(workdir))
    await workspace.write_text('notes.txt', 'kept')
    assert (workdir / 'notes.txt').read_text() == 'kept'
    # the run after it goes on in the same place
    again = await agent.run('again', message_history=result.all_messages(), workspace=workspace)
    assert again.workspace.ref == workspace.ref


async def test_a_run_without_a_workspace_and_a_hand_made_result_give_a_detached_one() -> None:
    result = await Agent(TestModel()).run('hi')
    assert not result.workspace.attached
    assert result.workspace.ref is None
    assert not AgentRunResult('made by hand').workspace.attached


async def test_a_pickled_result_leaves_its_live_workspace_behind(workdir: Path) -> None:
    result = await Agent(TestModel(), capabilities=[LocalWorkspace(workdir)]).run('hi')
    assert result.workspace.attached
    loaded = pickle.loads(pickle.dumps(result))
    assert loaded.output == result.output
    assert loaded.all_messages() == result.all_messages()
    assert not loaded.workspace.attached
    # the ref stays on the responses, for a later run to continue in the workspace
    (response,) = [m for m in loaded.all_messages() if isinstance(m, ModelResponse)]
    assert response.workspace_ref == WorkspaceRef(provider='local', id=str(workdir))
    assert result.workspace.attached  # pickling did not take it from the result itself


async def test_a_streamed_run_settles_into_its_result_once_read_to_its_end(workdir: Path) -> None:
    agent = Agent(TestModel(custom_output_text='The answer.'), capabilities=[LocalWorkspace(workdir)])
    async with agent.run_stream('hi') as streamed:
        assert streamed.workspace.ref == WorkspaceRef(provider='local', id=str(workdir))
        with pytest.raises(UserError) as raised:
            _ = streamed.result
        assert 'still streaming' in str(raised.value)
        assert await streamed.get_output() == 'The answer.'
        settled = streamed.result
    assert isinstance(settled, AgentRunResult)
    assert settled.output == 'The answer.'
    assert settled.all_messages() == streamed.all_messages()
    assert settled.new_messages() == streamed.new_messages()
    assert settled.usage == streamed.usage
    assert settled.run_id == streamed.run_id
    assert settled.workspace is streamed.workspace


async def test_a_streamed_run_that_stopped_has_no_settled_result() -> None:
    agent = Agent(TestModel(custom_output_text='a few words to stream'))
    async with agent.run_stream('hi') as cancelled:
        await cancelled.cancel()
    with pytest.raises(UserError) as raised:
        _ = cancelled.result
    assert 'stopped before it finished' in str(raised.value)

    async with agent.run_stream('hi') as left:
        async for _ in left.stream_text(debounce_by=None):
            break  # the reader leaves the block before the end: the run is stopped
    with pytest.raises(UserError) as raised:
        _ = left.result
    assert 'stopped before it finished' in str(raised.value)


def test_the_sync_stream_gives_the_runs_workspace(workdir: Path) -> None:
    agent = Agent(TestModel(), capabilities=[LocalWorkspace(workdir)])
    streamed = agent.run_stream_sync('hi')
    streamed.get_output()
    assert streamed.workspace.ref == WorkspaceRef(provider='local', id=str(workdir))


async def test_a_hand_made_streamed_result_gives_the_finished_runs_result_and_workspace(workdir: Path) -> None:
    finished = await Agent(TestModel(), capabilities=[LocalWorkspace(workdir)]).run('hi')
    streamed: StreamedRunResult[None, str] = StreamedRunResult(
        finished.all_messages(), len(finished.all_messages()), run_result=finished
    )
    assert streamed.result is finished
    assert streamed.workspace is finished.workspace


async def test_a_hand_made_streamed_result_of_a_stream_settles_once_its_output_is_read() -> None:
    agent = Agent(TestModel(custom_output_text='Streamed by hand.'))
    async with agent.iter('hi') as run:
        node = await run.next()  # the user prompt gives the first request
        assert Agent.is_model_request_node(node)
        async with node.stream(run.ctx) as stream:
            messages = list(run.ctx.state.message_history)
            by_hand: StreamedRunResult[None, str] = StreamedRunResult(messages, 0, stream)
            with pytest.raises(UserError):
                _ = by_hand.result
            assert await by_hand.get_output() == 'Streamed by hand.'
            settled = by_hand.result
    assert settled.output == 'Streamed by hand.'
    assert settled.all_messages() == messages
    assert [type(m) for m in messages] == [ModelRequest, ModelResponse]
    assert [type(part) for part in messages[0].parts] == [UserPromptPart]
    assert isinstance(messages[1], ModelResponse)
    assert messages[1].parts == [TextPart('Streamed by hand.')]
    assert settled.run_id == run.ctx.state.run_id
    assert not settled.workspace.attached


async def test_a_hand_made_streamed_result_read_as_text_only_has_no_settled_output() -> None:
    agent = Agent(TestModel(custom_output_text='Text only.'))
    async with agent.iter('hi') as run:
        node = await run.next()  # the user prompt gives the first request
        assert Agent.is_model_request_node(node)
        async with node.stream(run.ctx) as stream:
            by_hand: StreamedRunResult[None, str] = StreamedRunResult([], 0, stream)
            assert [text async for text in by_hand.stream_text(debounce_by=None)][-1] == 'Text only.'
            assert by_hand.is_complete
            with pytest.raises(UserError) as raised:
                _ = by_hand.result
            assert 'not as output' in str(raised.value)
            assert await by_hand.get_output() == 'Text only.'
            assert by_hand.result.output == 'Text only.'
