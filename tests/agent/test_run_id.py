"""`run(run_id=...)` (pydantic-ai 2.x): a caller's own id for the run, on its result, its context and its messages."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.agent import Agent, RunContext, UserError
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from edgewise.agent.models.function import FunctionModel
from edgewise.agent.models.test import TestModel

pytestmark = pytest.mark.anyio


async def test_the_given_run_id_is_the_runs_everywhere() -> None:
    seen: list[str | None] = []
    agent = Agent(TestModel(custom_output_text='ok'))

    @agent.instructions
    def note(ctx: RunContext[None]) -> str:
        seen.append(ctx.run_id)
        return 'be brief'

    result = await agent.run('hi', run_id='app-run-1')
    assert result.run_id == 'app-run-1'
    assert [m.run_id for m in result.all_messages()] == ['app-run-1', 'app-run-1']
    assert set(seen) == {'app-run-1'}


async def test_iter_and_streams_take_the_run_id() -> None:
    agent = Agent(TestModel(custom_output_text='ok'))
    async with agent.iter('hi', run_id='iter-run') as run:
        assert run.run_id == 'iter-run'
        async for _ in run:
            pass
    async with agent.run_stream('hi', run_id='stream-run') as stream:
        assert stream.run_id == 'stream-run'
        await stream.get_output()


async def test_a_continued_conversation_gets_a_new_run_id_unless_given_one() -> None:
    agent = Agent(TestModel(custom_output_text='ok'))
    first = await agent.run('one', run_id='first')
    second = await agent.run('two', message_history=first.all_messages())
    assert second.run_id not in ('first', '')
    third = await agent.run('three', message_history=second.all_messages(), run_id='third')
    assert [m.run_id for m in third.new_messages()] == ['third', 'third']


@pytest.mark.parametrize(
    ('history', 'run_id', 'message'),
    [
        ([], '', '`run_id` must be a non-empty string'),
        ([ModelRequest([UserPromptPart('x')], run_id='taken')], 'taken', "`run_id='taken'` already appears"),
        ([ModelResponse([TextPart('x')], run_id='taken')], 'taken', "`run_id='taken'` already appears"),
    ],
    ids=['empty', 'in_a_request', 'in_a_response'],
)
async def test_a_bad_run_id_is_refused_before_any_request(
    history: list[ModelMessage], run_id: str, message: str
) -> None:
    model = TestModel()
    agent: Agent[None, Any] = Agent(model)
    with pytest.raises(UserError, match=message):
        await agent.run('hi', message_history=history, run_id=run_id)
    assert model.last_model_request_parameters is None


async def test_a_response_keeps_the_run_id_it_already_carries() -> None:
    cached = ModelResponse([TextPart('ok')], run_id='earlier-run', conversation_id='earlier-conversation')
    agent = Agent(FunctionModel(lambda messages, info: cached))
    result = await agent.run('hi', run_id='this-run')
    assert result.run_id == 'this-run'
    assert result.all_messages()[0].run_id == 'this-run'
    assert (result.all_messages()[-1].run_id, result.all_messages()[-1].conversation_id) == (
        'earlier-run',
        'earlier-conversation',
    )
