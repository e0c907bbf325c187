"""`AGUIAdapter` and `AGUIEventStream`: every event sent is checked with the AG-UI SDK's own models; approvals
go out as interrupts and come back as resume entries; frontend tools, state, and the messages both ways."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from ag_ui.core import (
    ActivityMessage,
    AssistantMessage,
    DataSource,
    DeveloperMessage,
    DocumentPart,
    Event,
    FileSource,
    FunctionCall,
    ImagePart,
    ReasoningMessage,
    ResumeEntry,
    RunAgentInput,
    SystemMessage,
    TextPart,
    Tool,
    ToolCall,
    ToolMessage,
    UrlSource,
    UserMessage,
)
from pydantic import BaseModel, TypeAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from edgewise.agent import Agent
from edgewise.agent.exceptions import UserError
from edgewise.agent.messages import (
    BinaryContent,
    DocumentUrl,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    PartEndEvent,
    PartStartEvent,
    RetryPromptPart,
    SystemPromptPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UploadedFile,
    UserPromptPart,
)
from edgewise.agent.messages import (
    TextPart as ModelTextPart,
)
from edgewise.agent.models.function import AgentInfo, DeltaThinkingPart, FunctionModel
from edgewise.agent.result import AgentRunResultEvent
from edgewise.agent.tools import RunContext, ToolApproved, ToolDenied
from edgewise.agent.ui import NativeEvent, StateDeps
from edgewise.agent.ui.ag_ui import DEFAULT_AG_UI_VERSION, AGUIAdapter, AGUIEventStream

from ._scripts import call, refund_agent, returned, streamed_agent

pytestmark = pytest.mark.anyio

EVENT: TypeAdapter[Any] = TypeAdapter(Event)


def run_input(*messages: Any, **fields: Any) -> RunAgentInput:
    values: dict[str, Any] = {
        'thread_id': 'thread-1',
        'run_id': 'run-1',
        'state': {},
        'messages': list(messages),
        'tools': [],
        'context': [],
        'forwarded_props': None,
    }
    values.update(fields)
    return RunAgentInput(**values)


async def sent(adapter: AGUIAdapter[Any, Any], **options: Any) -> list[dict[str, Any]]:
    """The events as sent over SSE, each parsed back with the AG-UI SDK's models."""
    stream = adapter.build_event_stream()
    out: list[dict[str, Any]] = []
    async for text in stream.encode_stream(adapter.run_stream(**options)):
        assert text.startswith('data: ')
        assert text.endswith('\n\n')
        payload = text.removeprefix('data: ').strip()
        EVENT.validate_json(payload)  # the SDK's own check of the event
        out.append(json.loads(payload))
    return out


def types(events: list[dict[str, Any]]) -> list[str]:
    return [e['type'] for e in events]


async def test_a_call_needing_approval_finishes_the_run_with_an_interrupt() -> None:
    events = await sent(AGUIAdapter(refund_agent(), run_input(UserMessage(id='u1', content='refund it'))))
    assert types(events) == [
        'RUN_STARTED',
        'TEXT_MESSAGE_START',
        'TEXT_MESSAGE_CONTENT',
        'TEXT_MESSAGE_END',
        'TOOL_CALL_START',
        'TOOL_CALL_ARGS',
        'TOOL_CALL_END',
        'RUN_FINISHED',
    ]
    assert all(isinstance(e['timestamp'], int) for e in events)
    assert (events[0]['threadId'], events[0]['runId']) == ('thread-1', 'run-1')
    (interrupt,) = events[-1]['outcome']['interrupts']
    assert interrupt['id'] == 'int-r1'
    assert interrupt['toolCallId'] == 'r1'
    assert interrupt['message'] == 'Approve refund({"order": "A1"})?'  # the call's arguments as the model sent them
    assert interrupt['responseSchema']['required'] == ['approved']


async def first_history(agent: Agent[None, Any]) -> list[Any]:
    async with agent.run_stream_events('refund it') as stream:
        last = [e async for e in stream][-1]
    assert isinstance(last, AgentRunResultEvent)
    return AGUIAdapter.dump_messages(last.result.all_messages())


@pytest.mark.parametrize(
    ('entry', 'expected'),
    [
        (ResumeEntry(interrupt_id='int-r1', status='resolved', payload={'approved': True}), 'done: A1 refunded'),
        (
            ResumeEntry(
                interrupt_id='int-r1', status='resolved', payload={'approved': True, 'editedArgs': {'order': 'B2'}}
            ),
            'done: B2 refunded',
        ),
        (
            ResumeEntry(interrupt_id='int-r1', status='resolved', payload={'approved': False, 'reason': 'too much'}),
            'done: too much',
        ),
        (ResumeEntry(interrupt_id='int-r1', status='cancelled'), 'done: Cancelled by user.'),
        (
            ResumeEntry(interrupt_id='int-r1', status='resolved', payload={'approved': 'yes'}),
            'done: The tool call was denied.',
        ),
        (
            ResumeEntry(interrupt_id='int-r1', status='resolved', payload={'approved': False}),
            'done: The tool call was denied.',
        ),
    ],
)
async def test_resume_entries_answer_the_interrupt_approving_only_an_explicit_yes(
    entry: ResumeEntry, expected: str
) -> None:
    agent = refund_agent()
    history = await first_history(agent)
    adapter = AGUIAdapter(agent, run_input(*history, resume=[entry]))
    events = await sent(adapter)
    text = ''.join(e['delta'] for e in events if e['type'] == 'TEXT_MESSAGE_CONTENT')
    assert text == expected
    assert 'outcome' not in events[-1]  # a plain success


async def test_the_approvals_read_from_resume_entries() -> None:
    adapter = AGUIAdapter(
        refund_agent(),
        run_input(resume=[ResumeEntry(interrupt_id='int-a', status='resolved', payload={'approved': True})]),
    )
    assert adapter.deferred_tool_results is not None
    assert adapter.deferred_tool_results.approvals == {'a': ToolApproved()}
    assert AGUIAdapter(refund_agent(), run_input()).deferred_tool_results is None
    foreign = AGUIAdapter(refund_agent(), run_input(resume=[ResumeEntry(interrupt_id='x-1', status='cancelled')]))
    with pytest.raises(UserError, match="interrupt 'x-1'"):
        foreign.deferred_tool_results  # noqa: B018
    denied = AGUIAdapter(
        refund_agent(), run_input(resume=[ResumeEntry(interrupt_id='int-b', status='resolved', payload=[1])])
    )
    assert denied.deferred_tool_results is not None
    assert denied.deferred_tool_results.approvals == {'b': ToolDenied()}


async def test_frontend_tools_end_the_run_and_their_results_come_back_as_tool_messages() -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        if isinstance(messages[-1], ModelRequest) and returned(messages):
            yield f'colour set: {returned(messages)[0].content}'
            return
        assert [t.name for t in info.function_tools] == ['set_colour']
        yield call('set_colour', {'colour': 'red'}, 'f1')

    agent = Agent(FunctionModel(stream_function=stream))
    tool = Tool(name='set_colour', description='Set the page colour', parameters={'type': 'object'})
    first = await sent(AGUIAdapter(agent, run_input(UserMessage(id='u', content='make it red'), tools=[tool])))
    assert types(first)[-2:] == ['TOOL_CALL_END', 'RUN_FINISHED']
    assert 'outcome' not in first[-1]  # the run ended on a frontend tool's call: no interrupt
    history = [
        UserMessage(id='u', content='make it red'),
        AssistantMessage(
            id='a',
            tool_calls=[ToolCall(id='f1', function=FunctionCall(name='set_colour', arguments='{"colour":"red"}'))],
        ),
        ToolMessage(id='t', tool_call_id='f1', content='ok'),
    ]
    second = await sent(AGUIAdapter(agent, run_input(*history, tools=[tool])))
    assert ''.join(e['delta'] for e in second if e['type'] == 'TEXT_MESSAGE_CONTENT') == 'colour set: ok'


class Counter(BaseModel):
    count: int = 0


async def test_the_state_is_validated_into_state_deps() -> None:
    seen: list[int] = []
    agent = streamed_agent([call('bump', {}, 'b1')], ['ok'])

    @agent.tool
    def bump(ctx: RunContext[StateDeps[Counter]]) -> int:
        seen.append(ctx.deps.state.count)
        return ctx.deps.state.count + 1

    deps = StateDeps(Counter())
    adapter = AGUIAdapter(agent, run_input(UserMessage(id='u', content='go'), state={'count': 41}))
    assert adapter.state == {'count': 41}
    await sent(adapter, deps=deps)
    assert seen == [41]
    assert deps.state == Counter(count=41)


async def test_a_state_for_deps_that_take_none_is_ignored_with_a_warning() -> None:
    adapter = AGUIAdapter(streamed_agent(['ok']), run_input(UserMessage(id='u', content='go'), state={'count': 1}))
    with pytest.warns(UserWarning, match='StateDeps'):
        await sent(adapter)
    assert AGUIAdapter(streamed_agent(['ok']), run_input(state=[1])).state is None


async def test_a_failing_run_sends_run_error_and_no_run_finished() -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield 'partial'
        raise RuntimeError('model unreachable')

    events = await sent(
        AGUIAdapter(Agent(FunctionModel(stream_function=stream)), run_input(UserMessage(id='u', content='hi')))
    )
    assert types(events)[-2:] == ['TEXT_MESSAGE_END', 'RUN_ERROR']
    assert events[-1]['message'] == 'model unreachable'


async def test_thinking_streams_as_reasoning_events_with_its_signature() -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        yield {0: DeltaThinkingPart(signature='sig')}
        yield {0: DeltaThinkingPart(content='hmm')}
        yield 'answer'

    events = await sent(
        AGUIAdapter(Agent(FunctionModel(stream_function=stream)), run_input(UserMessage(id='u', content='hi')))
    )
    reasoning = [e for e in events if e['type'].startswith('REASONING')]
    assert types(reasoning) == [
        'REASONING_START',
        'REASONING_MESSAGE_START',
        'REASONING_MESSAGE_CONTENT',
        'REASONING_MESSAGE_END',
        'REASONING_ENCRYPTED_VALUE',
        'REASONING_END',
    ]
    assert json.loads(reasoning[4]['encryptedValue']) == {'signature': 'sig'}


async def _iterate(events: list[NativeEvent]) -> AsyncIterator[NativeEvent]:
    for event in events:
        yield event


async def test_native_tools_travel_under_a_prefixed_id() -> None:
    native = NativeToolCallPart('web_search', {'q': 'x'}, 'n1', provider_name='openai')
    events: list[NativeEvent] = [
        PartStartEvent(index=0, part=native),
        PartEndEvent(index=0, part=native),
        PartStartEvent(index=1, part=NativeToolReturnPart('web_search', {'hits': 2}, 'n1', provider_name='openai')),
    ]
    stream: AGUIEventStream[None, Any] = AGUIEventStream(thread_id='t', run_id='r')
    out = [
        json.loads(stream.encode_event(e).removeprefix('data: '))
        async for e in stream.transform_stream(_iterate(events))
    ]
    ids = {e.get('toolCallId') for e in out if 'toolCallId' in e}
    assert ids == {'pyd_ai_builtin|openai|n1'}
    assert out[-2]['content'] == '{"hits":2}'


async def test_a_stream_without_run_input_makes_its_own_ids() -> None:
    stream: AGUIEventStream[None, Any] = AGUIEventStream()
    other: AGUIEventStream[None, Any] = AGUIEventStream()
    assert stream.thread_id != other.thread_id
    assert stream.content_type == 'text/event-stream'
    assert stream.ag_ui_version == DEFAULT_AG_UI_VERSION
    from edgewise.agent.ui.ag_ui._utils import detect_ag_ui_version, parse_ag_ui_version

    assert parse_ag_ui_version('0.1.13rc1') == (0, 1, 13)
    assert detect_ag_ui_version() == DEFAULT_AG_UI_VERSION


async def test_a_tool_can_send_ag_ui_events_as_its_metadata() -> None:
    from ag_ui.core import StateSnapshotEvent

    from edgewise.agent.messages import ToolReturn

    agent = streamed_agent([call('snap', {}, 's1')], ['ok'])

    @agent.tool_plain
    def snap() -> ToolReturn:
        return ToolReturn(return_value='saved', metadata=[StateSnapshotEvent(snapshot={'saved': True})])

    events = await sent(AGUIAdapter(agent, run_input(UserMessage(id='u', content='go'))))
    assert {'type': 'STATE_SNAPSHOT', 'snapshot': {'saved': True}} in [
        {k: v for k, v in e.items() if k in ('type', 'snapshot')} for e in events
    ]


async def test_dispatch_request_streams_events_and_refuses_a_bad_body() -> None:
    agent = streamed_agent(['hi'])

    async def endpoint(request: Request) -> Response:
        return await AGUIAdapter.dispatch_request(request, agent=agent)

    app = Starlette(routes=[Route('/agent', endpoint, methods=['POST'])])
    body = run_input(UserMessage(id='u', content='hello')).model_dump(mode='json', by_alias=True)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url='http://test') as client:
        response = await client.post('/agent', json=body, headers={'accept': 'text/event-stream'})
        assert response.status_code == 200
        assert response.headers['content-type'].startswith('text/event-stream')
        payloads = [p.removeprefix('data: ') for p in response.text.split('\n\n') if p]
        assert [EVENT.validate_json(p).type.value for p in payloads][-1] == 'RUN_FINISHED'
        bad = await client.post('/agent', json={'threadId': 't'})
        assert bad.status_code == 422


def test_messages_load_from_every_ag_ui_role() -> None:
    messages = [
        SystemMessage(id='s', content='sys'),
        DeveloperMessage(id='d', content='dev'),
        UserMessage(id='u1', content='plain'),
        UserMessage(
            id='u2',
            content=[
                TextPart(text='look'),
                ImagePart(source=DataSource(value='iVBORw0KGgo=', mime_type='image/png')),
                ImagePart(source=UrlSource(value='https://x.test/a.png', mime_type='image/png')),
                ImagePart(source=UrlSource(value='data:image/png;base64,iVBORw0KGgo=')),
                DocumentPart(source=UrlSource(value='https://x.test/b.pdf')),
                DocumentPart(source=FileSource(value='file-9', provider='openai', mime_type='application/pdf')),
            ],
        ),
        ReasoningMessage(id='r', content='hmm', encrypted_value='{"signature": "s"}'),
        AssistantMessage(
            id='a',
            content='calling',
            tool_calls=[
                ToolCall(id='c1', function=FunctionCall(name='f', arguments='{"x": 1}')),
                ToolCall(id='pyd_ai_builtin|openai|n1', function=FunctionCall(name='web_search', arguments='{}')),
            ],
        ),
        ToolMessage(id='t1', tool_call_id='c1', content='ok'),
        ToolMessage(id='t2', tool_call_id='pyd_ai_builtin|openai|n1', content='found', error=None),
        ToolMessage(id='t3', tool_call_id='c1', content='broke', error='broke'),
        ReasoningMessage(id='r2', content='x', encrypted_value='not json'),
        ReasoningMessage(id='r3', content='y', encrypted_value='[1]'),
    ]
    loaded = AGUIAdapter.load_messages(messages)
    first = loaded[0]
    assert isinstance(first, ModelRequest)
    assert [type(p) for p in first.parts] == [SystemPromptPart, SystemPromptPart, UserPromptPart, UserPromptPart]
    prompt = first.parts[3]
    assert isinstance(prompt, UserPromptPart)
    assert isinstance(prompt.content, list)
    assert prompt.content[0] == 'look'
    assert isinstance(prompt.content[1], BinaryContent)
    assert isinstance(prompt.content[2], ImageUrl)
    assert isinstance(prompt.content[3], BinaryContent)
    assert isinstance(prompt.content[4], DocumentUrl)
    assert isinstance(prompt.content[5], UploadedFile)
    assert prompt.content[5].file_id == 'file-9'
    response = loaded[1]
    assert isinstance(response, ModelResponse)
    assert [p.part_kind for p in response.parts] == ['thinking', 'text', 'tool-call', 'builtin-tool-call']
    assert isinstance(response.parts[0], ThinkingPart)
    assert response.parts[0].signature == 's'
    native = response.parts[3]
    assert isinstance(native, NativeToolCallPart)
    assert (native.tool_call_id, native.provider_name) == ('n1', 'openai')
    # A native tool's return is a response part: it goes between the requests holding the function tools' returns.
    kinds = [
        (type(p).__name__, getattr(p, 'tool_call_id', None), getattr(p, 'outcome', None))
        for m in loaded[2:5]
        for p in m.parts
    ]
    assert kinds == [
        ('ToolReturnPart', 'c1', 'success'),
        ('NativeToolReturnPart', 'n1', 'success'),
        ('ToolReturnPart', 'c1', 'failed'),
    ]


def test_a_tool_message_without_its_call_and_an_activity_message_are_reported() -> None:
    with pytest.raises(ValueError, match="tool call 'missing'"):
        AGUIAdapter.load_messages([ToolMessage(id='t', tool_call_id='missing', content='x')])
    nameless = UserMessage(id='u', content=[DocumentPart(source=FileSource(value='f-1'))])
    with pytest.raises(ValueError, match='names no provider'):
        AGUIAdapter.load_messages([nameless])
    with pytest.warns(UserWarning, match='ActivityMessage'):
        assert AGUIAdapter.load_messages([ActivityMessage(id='a', activity_type='x', content={})]) == []


def test_a_request_scoped_system_prompt_is_not_dumped() -> None:
    history: list[ModelMessage] = [
        ModelRequest([SystemPromptPart('sys'), UserPromptPart('hi'), SystemPromptPart('3 left', scope='request')]),
    ]
    assert [(m.role, m.content) for m in AGUIAdapter.dump_messages(history)] == [('system', 'sys'), ('user', 'hi')]


def test_dump_then_load_keeps_the_conversation() -> None:
    history: list[ModelMessage] = [
        ModelRequest(
            [
                SystemPromptPart('sys'),
                UserPromptPart('hi'),
                UserPromptPart(['see', ImageUrl('https://x.test/i.png'), BinaryContent(b'x', media_type='image/png')]),
            ]
        ),
        ModelResponse(
            [
                ThinkingPart('hmm', signature='s', provider_name='anthropic'),
                ModelTextPart('a'),
                ToolCallPart('f', {'x': 1}, 'c1'),
                ToolCallPart('g', '{"y": 2}', 'c2'),
                NativeToolCallPart('web_search', {}, 'n1', provider_name='openai'),
                NativeToolReturnPart('web_search', {'hits': 1}, 'n1', provider_name='openai'),
            ]
        ),
        ModelRequest(
            [
                ToolReturnPart('f', 'ok', 'c1'),
                ToolReturnPart('g', 'no', 'c2', outcome='failed'),
                RetryPromptPart('again', tool_name='f', tool_call_id='c1'),
                RetryPromptPart('plain'),
            ]
        ),
    ]
    old_client = AGUIAdapter.dump_messages(history, ag_ui_version='0.1.10')
    assert 'reasoning' not in [m.role for m in old_client]
    with pytest.raises(UserError, match='dotted number'):
        AGUIAdapter.dump_messages(history, ag_ui_version='latest')
    dumped = AGUIAdapter.dump_messages(history)
    assert [m.role for m in dumped] == [
        'system',
        'user',
        'user',
        'reasoning',
        'assistant',
        'tool',
        'tool',
        'tool',
        'tool',
        'user',
    ]
    loaded = AGUIAdapter.load_messages(dumped)
    flat = [p.part_kind for m in loaded for p in m.parts]
    assert flat == [
        'system-prompt',
        'user-prompt',
        'user-prompt',
        'thinking',
        'text',
        'tool-call',
        'tool-call',
        'builtin-tool-call',
        'builtin-tool-return',
        'tool-return',
        'tool-return',
        'tool-return',
        'user-prompt',
    ]
