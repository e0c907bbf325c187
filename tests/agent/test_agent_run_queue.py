"""`AgentRun.dequeue` and `AgentRun.set_enqueue_priority` (pydantic-ai 2.68): the code driving a run through
`Agent.iter` takes back or re-times content it queued, before it reaches the model."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from edgewise.agent import Agent, ModelRequestNode, RunContext
from edgewise.agent.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from edgewise.agent.models.function import AgentInfo, FunctionModel

pytestmark = pytest.mark.anyio


def prompts(messages: Sequence[ModelMessage]) -> list[str]:
    return [
        part.content
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart) and isinstance(part.content, str)
    ]


def recording(sent: list[list[str]]) -> FunctionModel:
    """A model that answers each request with `answer <n>` and records the user prompts it was sent."""

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        sent.append(prompts(messages))
        return ModelResponse([TextPart(f'answer {sum(isinstance(m, ModelResponse) for m in messages) + 1}')])

    return FunctionModel(answer)


async def test_content_dequeued_by_the_driving_code_never_reaches_the_model() -> None:
    sent: list[list[str]] = []
    agent = Agent(recording(sent))
    async with agent.iter('go') as run:
        kept = run.enqueue('keep this')
        dropped = run.enqueue('drop this')
        assert dropped is not None
        answers = [run.dequeue(dropped), run.dequeue(dropped), run.dequeue('never-queued')]
        async for _ in run:
            pass
    assert answers == [True, False, False]
    assert sent == [['go', 'keep this']]
    assert run.result is not None
    assert prompts(run.result.all_messages()) == ['go', 'keep this']
    assert run.pending_messages == []
    assert kept is not None


async def test_the_driving_code_dequeues_content_a_tool_queued() -> None:
    sent: list[list[str]] = []
    ids: list[str] = []
    answers: list[bool] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        sent.append(prompts(messages))
        if len(sent) == 1:
            return ModelResponse([ToolCallPart('steer', {}, 'c1')])
        return ModelResponse([TextPart('done')])

    agent = Agent(FunctionModel(answer))

    @agent.tool
    def steer(ctx: RunContext[None]) -> str:
        enqueue_id = ctx.enqueue('from the tool')
        assert enqueue_id is not None
        ids.append(enqueue_id)
        return 'ok'

    async with agent.iter('go') as run:
        async for node in run:
            if isinstance(node, ModelRequestNode) and ids:  # the tool has run; its content is not sent yet
                answers.append(run.dequeue(ids[0]))
    assert answers == [True]
    assert sent == [['go'], ['go']]


async def test_when_idle_content_promoted_by_the_driving_code_goes_with_the_first_request() -> None:
    sent: list[list[str]] = []
    agent = Agent(recording(sent))
    async with agent.iter('go') as run:
        later = run.enqueue('later', priority='when_idle')
        assert later is not None
        answers = [run.set_enqueue_priority(later, 'asap'), run.set_enqueue_priority('never-queued', 'asap')]
        assert [item.priority for item in run.pending_messages] == ['asap']
        async for _ in run:
            pass
    assert answers == [True, False]
    assert sent == [['go', 'later']]  # with the first request: no extra one at the end
    assert run.result is not None
    assert run.result.output == 'answer 1'


async def test_asap_content_demoted_by_the_driving_code_waits_for_the_end_and_keeps_its_id() -> None:
    sent: list[list[str]] = []
    agent = Agent(recording(sent))
    async with agent.iter('go') as run:
        hint = run.enqueue('hint')
        assert hint is not None
        assert run.set_enqueue_priority(hint, 'when_idle') is True
        assert [(item.enqueue_id, item.priority) for item in run.pending_messages] == [(hint, 'when_idle')]
        async for _ in run:
            pass
    assert sent == [['go'], ['go', 'hint']]  # after the first answer, in one more request
    assert run.result is not None
    assert run.result.output == 'answer 2'


async def test_after_the_run_has_ended_nothing_can_be_dequeued_or_reprioritized() -> None:
    agent = Agent(recording([]))
    async with agent.iter('go') as run:
        async for _ in run:
            pass
        late = run.enqueue('too late')
        assert late is not None
        assert run.dequeue(late) is False
        assert run.set_enqueue_priority(late, 'when_idle') is False


async def test_an_unknown_priority_is_refused_not_queued_forever() -> None:
    from edgewise.agent import UserError

    sent: list[list[str]] = []
    agent = Agent(recording(sent))
    async with agent.iter('go') as run:
        queued = run.enqueue('later', priority='when_idle')
        assert queued is not None
        with pytest.raises(UserError, match="Unknown enqueue priority 'soon'"):
            run.set_enqueue_priority(queued, 'soon')  # type: ignore[arg-type]
        with pytest.raises(UserError, match="Unknown enqueue priority 'now'"):
            run.enqueue('never', priority='now')  # type: ignore[arg-type]
        async for _ in run:
            pass
    assert sent == [['go'], ['go', 'later']]  # still delivered, at its priority
