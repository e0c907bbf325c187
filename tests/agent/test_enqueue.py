"""Content queued into a running agent (`RunContext.enqueue`, `AgentRun.enqueue`): what it becomes, when the model
gets it, and how each way of driving a run delivers it (as pydantic-ai 1.107 does)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any
from uuid import RFC_4122, UUID

import pytest
from pydantic import BaseModel

from edgewise.agent import Agent, RunContext, UserError
from edgewise.agent._message_flow.pending import PendingMessage
from edgewise.agent.capabilities import AbstractCapability
from edgewise.agent.messages import (
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.models import ModelRequestContext
from edgewise.agent.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.usage import RunUsage
from edgewise.graph import End

from ._helpers import CONVERSATION_ID, NOW, RUN_ID

pytestmark = pytest.mark.anyio


def outline(messages: list[ModelMessage]) -> list[tuple[str, list[tuple[str, Any]]]]:
    """Each message as its kind and its parts' kinds and contents (tool calls: their tool's name)."""
    return [
        (
            message.kind,
            [(part.part_kind, part.tool_name if isinstance(part, ToolCallPart) else part.content)  # type: ignore[union-attr]
             for part in message.parts],
        )
        for message in messages
    ]  # fmt: skip


@dataclass
class Script:
    """A model that calls `tool` on its first request, then answers `answer <n>` (n: the responses so far);
    it keeps every message list it was sent."""

    tool: str = 'inject'
    sent: list[list[ModelMessage]] = field(default_factory=list)

    def respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.sent.append(messages)
        done = sum(isinstance(m, ModelResponse) for m in messages)
        return ModelResponse([ToolCallPart(self.tool, {})] if done == 0 else [TextPart(f'answer {done}')])

    async def stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        self.sent.append(messages)
        done = sum(isinstance(m, ModelResponse) for m in messages)
        if done == 0:
            yield {0: DeltaToolCall(name=self.tool, json_args='{}')}
        else:
            yield f'answer {done}'

    def model(self) -> FunctionModel:
        return FunctionModel(self.respond, stream_function=self.stream)


# -- what the items become ------------------------------------------------------------------------------------------


def test_user_content_in_a_row_is_one_prompt_and_parts_in_a_row_are_one_request() -> None:
    image = ImageUrl('https://example.com/a.png')
    pending = PendingMessage.from_content('look', image, SystemPromptPart('mode'), 'then this', priority='when_idle')
    assert pending is not None
    assert pending.priority == 'when_idle'
    assert outline(pending.messages) == [
        ('request', [('user-prompt', ['look', image]), ('system-prompt', 'mode'), ('user-prompt', 'then this')])
    ]


def test_whole_messages_stay_messages_of_their_own_between_requests_made_of_parts() -> None:
    given = ModelRequest([UserPromptPart('as given')], instructions='mine')
    response = ModelResponse([TextPart('earlier turn')])
    pending = PendingMessage.from_content('before', response, given, 'after')
    assert pending is not None
    assert pending.priority == 'asap'
    assert outline(pending.messages) == [
        ('request', [('user-prompt', 'before')]),
        ('response', [('text', 'earlier turn')]),
        ('request', [('user-prompt', 'as given')]),
        ('request', [('user-prompt', 'after')]),
    ]
    assert pending.messages[2] is given


def test_an_enqueue_id_is_a_time_ordered_uuid_after_the_priority() -> None:
    first = PendingMessage([ModelRequest([UserPromptPart('hi')])], 'when_idle')
    second = PendingMessage([ModelRequest([UserPromptPart('hi')])])
    assert first.priority == 'when_idle'
    assert (UUID(first.enqueue_id).version, UUID(first.enqueue_id).variant) == (7, RFC_4122)
    assert first.enqueue_id != second.enqueue_id
    assert UUID(first.enqueue_id).bytes[:6] <= UUID(second.enqueue_id).bytes[:6]


def test_no_content_makes_nothing_to_queue() -> None:
    assert PendingMessage.from_content() is None


def test_content_that_does_not_end_with_a_request_is_refused() -> None:
    with pytest.raises(UserError, match=r'^Enqueued content must end with a `ModelRequest` \(or user content'):
        PendingMessage.from_content('question', ModelResponse([TextPart('answer')]))


def test_a_run_context_of_no_running_agent_cannot_enqueue() -> None:
    ctx = RunContext[None](deps=None, model=TestModel(), usage=RunUsage())
    assert ctx.pending_messages is None
    with pytest.raises(UserError, match='`enqueue` is only available during an agent run'):
        ctx.enqueue('nowhere to go')


# -- when the model gets it -----------------------------------------------------------------------------------------


async def test_asap_content_from_a_tool_follows_the_tool_returns_and_is_sent_merged_with_them() -> None:
    script = Script()
    agent = Agent(script.model())

    @agent.tool
    def inject(ctx: RunContext[None]) -> str:
        assert ctx.pending_messages == []
        ctx.enqueue('first hint')
        ctx.enqueue(SystemPromptPart('incident mode'), 'second hint')
        assert ctx.pending_messages is not None
        assert len(ctx.pending_messages) == 2
        return 'ok'

    result = await agent.run('hello')
    assert result.output == 'answer 1'
    assert outline(result.all_messages()) == [
        ('request', [('user-prompt', 'hello')]),
        ('response', [('tool-call', 'inject')]),
        ('request', [('tool-return', 'ok')]),
        ('request', [('user-prompt', 'first hint')]),
        ('request', [('system-prompt', 'incident mode'), ('user-prompt', 'second hint')]),
        ('response', [('text', 'answer 1')]),
    ]
    queued = result.all_messages()[3]
    assert (queued.timestamp, queued.run_id, queued.conversation_id) == (NOW, RUN_ID, CONVERSATION_ID)
    assert result.new_messages() == result.all_messages()
    # The model gets one request holding the tool's return, then the queued content in order.
    assert outline(script.sent[1])[2:] == [
        (
            'request',
            [('tool-return', 'ok'), ('user-prompt', 'first hint'), ('system-prompt', 'incident mode'),
             ('user-prompt', 'second hint')],
        )
    ]  # fmt: skip


async def test_asap_content_after_a_history_ending_with_a_request_follows_the_request_sent_again() -> None:
    sent: list[list[ModelMessage]] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        sent.append(messages)
        return ModelResponse([TextPart('done')])

    history: list[ModelMessage] = [
        ModelRequest([UserPromptPart('first question')]),
        ModelResponse([ToolCallPart('hint', {}, 'c1')]),
        ModelRequest([ToolReturnPart('hint', 'ok', 'c1'), UserPromptPart('second question')]),
    ]
    agent = Agent(FunctionModel(respond))
    async with agent.iter(message_history=history) as run:
        run.enqueue('one more thing')
        async for _ in run:
            pass
    assert run.result is not None
    messages = run.result.all_messages()
    assert outline(messages) == [
        ('request', [('user-prompt', 'first question')]),
        ('response', [('tool-call', 'hint')]),
        ('request', [('tool-return', 'ok'), ('user-prompt', 'second question')]),
        ('request', [('user-prompt', 'one more thing')]),
        ('response', [('text', 'done')]),
    ]
    resent, queued = messages[2], messages[3]
    # Followed by queued content, the request sent again keeps the ids it had (none), as in pydantic-ai (alone, it
    # takes the run's); the queued content has the run's.
    assert (resent.timestamp, resent.run_id, resent.conversation_id) == (NOW, None, None)
    assert (queued.run_id, queued.conversation_id) == (RUN_ID, CONVERSATION_ID)
    assert run.result.new_messages() == messages[3:]
    assert outline(sent[0])[2:] == [
        ('request', [('tool-return', 'ok'), ('user-prompt', 'second question'), ('user-prompt', 'one more thing')])
    ]

    alone = await agent.run(message_history=[ModelRequest([UserPromptPart('just this')])])
    assert (alone.all_messages()[0].run_id, alone.all_messages()[0].conversation_id) == (RUN_ID, CONVERSATION_ID)


async def test_when_idle_content_waits_for_the_end_and_the_run_makes_one_more_request_for_it() -> None:
    script = Script()
    agent = Agent(script.model())

    @agent.tool
    def inject(ctx: RunContext[None]) -> str:
        ctx.enqueue('follow-up', priority='when_idle')
        return 'ok'

    result = await agent.run('hello')
    assert result.output == 'answer 2'
    assert outline(result.all_messages()) == [
        ('request', [('user-prompt', 'hello')]),
        ('response', [('tool-call', 'inject')]),
        ('request', [('tool-return', 'ok')]),
        ('response', [('text', 'answer 1')]),
        ('request', [('user-prompt', 'follow-up')]),
        ('response', [('text', 'answer 2')]),
    ]
    assert len(script.sent) == 3
    assert result.usage.requests == 3


async def test_at_the_end_asap_content_left_goes_first_then_when_idle_content_each_in_its_own_request() -> None:
    @dataclass
    class LateNews(AbstractCapability[Any]):
        """Enqueues 'asap' content once the model has given its final answer (after that request's delivery)."""

        sent: bool = False

        async def after_model_request(
            self, ctx: RunContext[Any], *, request_context: ModelRequestContext, response: ModelResponse
        ) -> ModelResponse:
            if not self.sent and response.text == 'answer 1':
                self.sent = True
                ctx.enqueue('late news')
            return response

    agent = Agent(Script().model(), capabilities=[LateNews()])

    @agent.tool
    def inject(ctx: RunContext[None]) -> str:
        ctx.enqueue('later task', priority='when_idle')
        return 'ok'

    result = await agent.run('hello')
    assert result.output == 'answer 2'
    assert outline(result.all_messages())[3:] == [
        ('response', [('text', 'answer 1')]),
        ('request', [('user-prompt', 'late news')]),
        ('request', [('user-prompt', 'later task')]),
        ('response', [('text', 'answer 2')]),
    ]


async def test_when_idle_content_redirects_a_run_that_an_output_tool_would_end() -> None:
    class Answer(BaseModel):
        value: int

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        done = sum(isinstance(m, ModelResponse) for m in messages)
        if done == 0:
            return ModelResponse([ToolCallPart('inject', {})])
        return ModelResponse([ToolCallPart(info.output_tools[0].name, {'value': done})])

    agent = Agent(FunctionModel(respond), output_type=Answer)

    @agent.tool
    def inject(ctx: RunContext[None]) -> str:
        ctx.enqueue('one more thing', priority='when_idle')
        return 'ok'

    result = await agent.run('hello')
    assert result.output == Answer(value=2)
    assert outline(result.all_messages())[3:] == [
        ('response', [('tool-call', 'final_result')]),
        ('request', [('tool-return', 'Final result processed.')]),
        ('request', [('user-prompt', 'one more thing')]),
        ('response', [('tool-call', 'final_result')]),
        ('request', [('tool-return', 'Final result processed.')]),
    ]


async def test_a_response_queued_before_a_request_enters_the_history_before_the_request_sent_at_the_end() -> None:
    script = Script()
    agent = Agent(script.model())

    @agent.tool
    def inject(ctx: RunContext[None]) -> str:
        made_up = ModelResponse([TextPart('a turn the model never took')])
        ctx.enqueue(made_up, ModelRequest([UserPromptPart('about that turn')]), priority='when_idle')
        return 'ok'

    result = await agent.run('hello')
    assert outline(result.all_messages())[3:] == [
        ('response', [('text', 'answer 1')]),
        ('response', [('text', 'a turn the model never took')]),
        ('request', [('user-prompt', 'about that turn')]),
        ('response', [('text', 'answer 3')]),
    ]
    made_up = result.all_messages()[4]
    assert (made_up.timestamp, made_up.run_id, made_up.conversation_id) == (NOW, RUN_ID, CONVERSATION_ID)


async def test_a_whole_request_keeps_its_fields_asap_and_takes_the_run_instructions_when_sent_at_the_end() -> None:
    agent = Agent(Script().model(), instructions='agent rules')
    stamped_at = datetime(2024, 1, 1, tzinfo=timezone.utc)

    @agent.tool
    def inject(ctx: RunContext[None]) -> str:
        ctx.enqueue(ModelRequest([UserPromptPart('fresh')], instructions='careful', metadata={'from': 'hook'}))
        ctx.enqueue(
            ModelRequest([UserPromptPart('stamped')], timestamp=stamped_at, run_id='theirs', conversation_id='conv')
        )
        ctx.enqueue(ModelRequest([UserPromptPart('idle')], instructions='mine'), priority='when_idle')
        return 'ok'

    result = await agent.run('hello')
    fresh, stamped = result.all_messages()[3:5]
    assert isinstance(fresh, ModelRequest)
    assert isinstance(stamped, ModelRequest)
    assert (fresh.instructions, fresh.metadata, fresh.timestamp, fresh.run_id) == (
        'careful', {'from': 'hook'}, NOW, RUN_ID,
    )  # fmt: skip
    assert (stamped.timestamp, stamped.run_id, stamped.conversation_id) == (stamped_at, 'theirs', 'conv')
    idle = result.all_messages()[6]
    assert outline([idle]) == [('request', [('user-prompt', 'idle')])]
    assert isinstance(idle, ModelRequest)
    assert idle.instructions == 'agent rules'


async def test_content_queued_by_hand_that_does_not_end_with_a_request_fails_the_run_at_its_end() -> None:
    agent = Agent(Script().model())

    @agent.tool
    def inject(ctx: RunContext[None]) -> str:
        assert ctx.pending_messages is not None
        ctx.pending_messages.append(PendingMessage([ModelResponse([TextPart('alone')])], 'when_idle'))
        return 'ok'

    with pytest.raises(UserError, match=r'but the last queued message is a `ModelResponse`\.$'):
        await agent.run('hello')


# -- how each way of driving a run delivers it ----------------------------------------------------------------------


async def test_agent_run_enqueue_and_next_driving_deliver_at_the_end() -> None:
    agent = Agent(Script().model())

    @agent.tool_plain
    def inject() -> str:
        return 'ok'

    async with agent.iter('hello') as run:
        assert run.pending_messages == []
        run.enqueue()
        assert run.pending_messages == []
        run.enqueue('from outside', priority='when_idle')
        assert [p.priority for p in run.pending_messages] == ['when_idle']
        kinds = []
        node = run.next_node
        while not isinstance(node, End):
            node = await run.next(node)
            kinds.append(type(node).__name__)
    assert kinds == [
        'ModelRequestNode', 'CallToolsNode', 'ModelRequestNode', 'CallToolsNode',
        'ModelRequestNode', 'CallToolsNode', 'End',
    ]  # fmt: skip
    assert run.pending_messages == []
    assert run.result is not None
    assert run.result.output == 'answer 2'
    assert outline(run.result.all_messages())[4] == ('request', [('user-prompt', 'from outside')])


async def test_a_bare_async_for_delivers_asap_content_before_a_request() -> None:
    agent = Agent(Script().model())

    @agent.tool_plain
    def inject() -> str:
        return 'ok'

    async with agent.iter('hello') as run:
        run.enqueue('right away')
        async for _ in run:
            pass
    assert run.result is not None
    assert outline(run.result.all_messages())[:2] == [
        ('request', [('user-prompt', 'hello')]),
        ('request', [('user-prompt', 'right away')]),
    ]


async def test_a_bare_async_for_delivers_the_content_queued_at_the_end() -> None:
    agent = Agent(Script().model())

    @agent.tool
    def inject(ctx: RunContext[None]) -> str:
        ctx.enqueue('later', priority='when_idle')
        return 'ok'

    seen: list[str] = []
    async with agent.iter('hello') as run:
        async for node in run:
            seen.append(type(node).__name__)
    assert seen == [
        'UserPromptNode', 'ModelRequestNode', 'CallToolsNode', 'ModelRequestNode', 'CallToolsNode',
        'ModelRequestNode', 'CallToolsNode', 'End',
    ]  # fmt: skip
    assert run.pending_messages == []
    assert run.result is not None
    assert ('request', [('user-prompt', 'later')]) in outline(run.result.all_messages())


async def test_node_hooks_see_the_end_and_the_redirect_comes_after_them() -> None:
    @dataclass
    class Watch(AbstractCapability[Any]):
        results: list[str] = field(default_factory=list)

        async def after_node_run(self, ctx: RunContext[Any], *, node: Any, result: Any) -> Any:
            self.results.append(type(result).__name__)
            return result

    watch = Watch()
    agent = Agent(Script().model(), capabilities=[watch])

    @agent.tool
    def inject(ctx: RunContext[None]) -> str:
        ctx.enqueue('later', priority='when_idle')
        return 'ok'

    result = await agent.run('hello')
    assert result.output == 'answer 2'
    # The hook sees the first `End`; the run then goes on with the request for the queued content.
    assert watch.results == [
        'ModelRequestNode', 'CallToolsNode', 'ModelRequestNode', 'CallToolsNode', 'End', 'CallToolsNode', 'End',
    ]  # fmt: skip


async def test_streamed_runs_deliver_when_idle_content_and_go_on_to_the_last_answer() -> None:
    agent = Agent(Script().model())

    @agent.tool
    def inject(ctx: RunContext[None]) -> str:
        ctx.enqueue('follow-up', priority='when_idle')
        return 'ok'

    async with agent.run_stream('hello') as streamed:
        texts = [text async for text in streamed.stream_text(debounce_by=None)]
    assert texts == ['answer 1', 'answer 2']
    assert await streamed.get_output() == 'answer 2'
    assert outline(streamed.all_messages())[4] == ('request', [('user-prompt', 'follow-up')])

    async with agent.run_stream_events('hello') as events:
        kinds = [event.event_kind async for event in events]
    assert kinds[-1] == 'agent_run_result'
    assert kinds.count('final_result') == 2  # each text answer started as the final result

    handled: list[str] = []

    async def handler(ctx: RunContext[None], stream: Any) -> None:
        async for event in stream:
            handled.append(event.event_kind)

    result = await agent.run('hello', event_stream_handler=handler)
    assert result.output == 'answer 2'
    assert outline(result.all_messages())[4] == ('request', [('user-prompt', 'follow-up')])
    assert handled.count('final_result') == 2


async def test_enqueue_from_a_sync_tool_running_in_a_worker_thread() -> None:
    agent = Agent(Script().model())

    @agent.tool
    def inject(ctx: RunContext[None]) -> str:  # a sync tool: run in a worker thread
        ctx.enqueue('from the thread')
        return 'ok'

    result = await agent.run('hello')
    assert outline(result.all_messages())[3] == ('request', [('user-prompt', 'from the thread')])


async def test_enqueue_checks_its_content_at_once_wherever_it_is_called() -> None:
    agent = Agent(Script().model())
    refused: list[str] = []

    @agent.tool
    def inject(ctx: RunContext[None]) -> str:
        with pytest.raises(UserError, match='must end with a `ModelRequest`'):
            ctx.enqueue(ModelResponse([TextPart('alone')]))
        refused.append('tool')
        return 'ok'

    async with agent.iter('hello') as run:
        with pytest.raises(UserError, match='must end with a `ModelRequest`'):
            run.enqueue(ModelResponse([TextPart('alone')]))
        async for _ in run:
            pass
    assert refused == ['tool']
    assert run.pending_messages == []
    assert run.result is not None
    assert run.result.output == 'answer 1'
