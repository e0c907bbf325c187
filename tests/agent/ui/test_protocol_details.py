"""Details of the UI event streams and the chat app that the scenario tests do not reach: default handlers, events
arriving out of the usual order, every kind of content in the messages, and the missing extras."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from types import SimpleNamespace
from typing import Any

import pytest
from ag_ui.core import CustomEvent
from starlette.types import Message, Scope

from edgewise.agent.messages import (
    BinaryContent,
    BuiltinToolCallEvent,
    CachePoint,
    FilePart,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    OutputToolCallEvent,
    OutputToolResultEvent,
    PartDeltaEvent,
    PartEndEvent,
    PartStartEvent,
    TextContent,
    TextPart,
    ThinkingPart,
    ThinkingPartDelta,
    ToolCallPart,
    ToolCallPartDelta,
    ToolReturnPart,
    UploadedFile,
    UserPromptPart,
)
from edgewise.agent.result import AgentRunResult
from edgewise.agent.ui import NativeEvent, UIAdapter, UIEventStream
from edgewise.agent.ui.ag_ui import AGUIEventStream
from edgewise.agent.ui.ag_ui._messages import dump_ag_ui_messages, load_ag_ui_messages
from edgewise.agent.ui.vercel_ai import VercelAIAdapter, VercelAIEventStream
from edgewise.agent.ui.web._durable import stored_messages
from edgewise.agent.ui.web._hosts import HostCheck, host_allowed

from ..._without_module import run_without
from ._scripts import streamed_agent

pytestmark = pytest.mark.anyio


async def _iterate(events: Sequence[NativeEvent]) -> AsyncIterator[NativeEvent]:
    for event in events:
        yield event


def _deprecated_call_event(part: NativeToolCallPart) -> NativeEvent:
    """A `BuiltinToolCallEvent`: deprecated, it says again what the parts said (the streams skip it)."""
    with pytest.deprecated_call():
        return BuiltinToolCallEvent(part)


def _every_kind() -> list[NativeEvent]:
    native = NativeToolCallPart('web_search', {'q': 'x'}, 'n1', provider_name='openai')
    call = ToolCallPart('f', {'a': 1}, 'c1')
    output = ToolCallPart('final_result', {'a': 1}, 'o1')
    return [
        PartStartEvent(index=0, part=ThinkingPart('')),
        PartDeltaEvent(index=0, delta=ThinkingPartDelta(content_delta='late thought')),
        PartEndEvent(index=0, part=ThinkingPart('late thought')),
        PartStartEvent(index=1, part=native),
        PartDeltaEvent(index=1, delta=ToolCallPartDelta(args_delta={'more': 1}, tool_call_id='n1')),
        PartDeltaEvent(index=1, delta=ToolCallPartDelta(args_delta=None, tool_call_id='n1')),
        PartEndEvent(index=1, part=native),
        _deprecated_call_event(native),
        PartStartEvent(index=2, part=NativeToolReturnPart('web_search', 'no', 'n1', outcome='denied')),
        PartStartEvent(index=3, part=FilePart(BinaryContent(b'x', media_type='image/png'))),
        PartStartEvent(index=4, part=call),
        PartEndEvent(index=4, part=call),
        FunctionToolCallEvent(call, args_valid=None),
        PartStartEvent(index=5, part=TextPart('')),
        PartEndEvent(index=5, part=TextPart('')),
        OutputToolCallEvent(output, args_valid=True),
        OutputToolResultEvent(ToolReturnPart('final_result', 'Final result processed.', 'o1')),
    ]


async def test_a_stream_without_overrides_passes_every_event_kind_without_sending_anything() -> None:
    @dataclass
    class Bare(UIEventStream[None, str, None, Any]):
        def encode_event(self, event: str) -> str:
            return event

    assert [e async for e in Bare().transform_stream(_iterate(_every_kind()))] == []


async def test_the_vercel_stream_handles_every_event_kind() -> None:
    chunks = [c async for c in VercelAIEventStream(sdk_version=6).transform_stream(_iterate(_every_kind()))]
    kinds = [c.type for c in chunks]
    assert 'tool-output-denied' in kinds
    assert 'file' in kinds
    assert kinds.count('tool-input-available') == 2  # the native call, and the output call (not the earlier run's)
    assert kinds[-4:] == ['tool-output-available', 'finish-step', 'finish', 'done']
    v5 = [c.type async for c in VercelAIEventStream(sdk_version=5).transform_stream(_iterate(_every_kind()))]
    assert 'tool-output-denied' not in v5
    assert 'tool-output-available' in v5


async def test_the_ag_ui_stream_handles_every_event_kind() -> None:
    stream: AGUIEventStream[None, Any] = AGUIEventStream()
    events = [e async for e in stream.transform_stream(_iterate(_every_kind()))]
    kinds = [e.type.value for e in events]
    assert kinds[1:5] == [
        'REASONING_START',
        'REASONING_MESSAGE_START',
        'REASONING_MESSAGE_CONTENT',
        'REASONING_MESSAGE_END',
    ]
    assert kinds[5] == 'REASONING_END'  # no signature: no encrypted value
    assert kinds[-1] == 'RUN_FINISHED'


async def test_the_ag_ui_stream_ignores_reasoning_events_without_their_start() -> None:
    events: list[NativeEvent] = [
        PartDeltaEvent(index=0, delta=ThinkingPartDelta(content_delta='orphan')),
        PartEndEvent(index=0, part=ThinkingPart('orphan')),
    ]
    stream: AGUIEventStream[None, Any] = AGUIEventStream()
    kinds = [e.type.value async for e in stream.transform_stream(_iterate(events))]
    assert kinds == ['RUN_STARTED', 'RUN_FINISHED']


async def test_a_tool_returning_one_ag_ui_event_as_metadata_sends_it() -> None:
    part = ToolReturnPart('f', 'ok', 'c1', metadata=CustomEvent(name='done', value=1))

    stream: AGUIEventStream[None, Any] = AGUIEventStream()
    kinds = [e.type.value async for e in stream.transform_stream(_iterate([FunctionToolResultEvent(part)]))]
    assert kinds == ['RUN_STARTED', 'TOOL_CALL_RESULT', 'CUSTOM', 'RUN_FINISHED']


async def test_a_stream_without_aclose_and_an_on_complete_returning_an_awaitable() -> None:
    class Events:
        def __init__(self, events: list[NativeEvent]) -> None:
            self.events = iter(events)

        def __aiter__(self) -> Events:
            return self

        async def __anext__(self) -> NativeEvent:
            try:
                return next(self.events)
            except StopIteration:
                raise StopAsyncIteration from None

    async with streamed_agent(['hi']).run_stream_events('hi') as stream:
        native = [e async for e in stream]
    seen: list[str] = []

    async def later(result: AgentRunResult[Any]) -> None:
        seen.append(str(result.output))

    def returns_awaitable(result: AgentRunResult[Any]) -> Any:
        return later(result)

    chunks = [c async for c in VercelAIEventStream().transform_stream(Events(native), on_complete=returns_awaitable)]
    assert seen == ['hi']
    assert chunks[-1].type == 'done'


async def test_an_error_while_a_call_streams_announces_its_input_before_the_error() -> None:
    call = ToolCallPart('f', {'a': 1}, 'c1')

    async def failing() -> AsyncIterator[NativeEvent]:
        yield PartStartEvent(index=0, part=call)
        yield PartEndEvent(index=0, part=call)
        raise RuntimeError('gone')

    chunks = [c.type async for c in VercelAIEventStream().transform_stream(failing())]
    # No call event came: the call was not running yet, so it gets no result, only its input.
    assert chunks[-5:] == ['tool-input-available', 'error', 'finish-step', 'finish', 'done']


async def test_an_adapter_of_a_protocol_without_approvals_or_conversations() -> None:
    @dataclass
    class Minimal(UIAdapter[list[str], str, str, None, Any]):
        @classmethod
        def build_run_input(cls, body: bytes) -> list[str]:
            return body.decode().split()

        @classmethod
        def load_messages(cls, messages: Sequence[str]) -> list[ModelMessage]:
            return [ModelRequest([UserPromptPart(' '.join(messages))])]

        def build_event_stream(self) -> UIEventStream[list[str], str, None, Any]:
            @dataclass
            class Words(UIEventStream[list[str], str, None, Any]):
                def encode_event(self, event: str) -> str:
                    return event + '\n'

            return Words()

        @cached_property
        def messages(self) -> list[ModelMessage]:
            return self.load_messages(self.run_input)

    adapter = Minimal(streamed_agent(['x']), ['hello', 'there'])
    assert adapter.deferred_tool_results is None
    assert adapter.conversation_id is None
    assert adapter.toolset is None
    assert [t async for t in adapter.encode_stream(_strings('a', 'b'))] == ['a\n', 'b\n']
    with pytest.raises(NotImplementedError, match='Minimal cannot dump messages'):
        Minimal.dump_messages([])


async def _strings(*items: str) -> AsyncIterator[str]:
    for item in items:
        yield item


def test_vercel_messages_of_every_content_kind_dump_and_load() -> None:
    history: list[ModelMessage] = [
        ModelRequest(
            [
                UserPromptPart(
                    [
                        TextContent('note'),
                        BinaryContent(b'x', media_type='image/png'),
                        UploadedFile('f-1', 'openai', media_type='application/pdf'),
                        CachePoint(),
                    ]
                )
            ]
        ),
        ModelResponse(
            [
                FilePart(BinaryContent(b'y', media_type='image/png')),
                NativeToolCallPart('web_search', {}, 'n1'),
                ToolCallPart('f', '[1, 2]', 'c1'),
            ]
        ),
    ]
    dumped = VercelAIAdapter.dump_messages(history)
    assert [p.type for p in dumped[0].parts] == ['text', 'file', 'file']
    assert [p.type for p in dumped[1].parts] == ['file', 'tool-web_search', 'tool-f']
    loaded = VercelAIAdapter.load_messages(dumped)
    prompt = loaded[0].parts[0]
    assert isinstance(prompt, UserPromptPart)
    assert isinstance(prompt.content, list)
    assert prompt.content[0] == 'note'
    assert isinstance(prompt.content[2], UploadedFile)
    calls = [p for p in loaded[1].parts if isinstance(p, ToolCallPart)]
    assert calls[-1].args == {'INVALID_JSON': '[1, 2]'}  # arguments that are no object come back wrapped


def test_vercel_tool_inputs_that_are_no_object() -> None:
    from edgewise.agent.ui.vercel_ai.request_types import UIMessage

    message = UIMessage.model_validate(
        {
            'id': 'a',
            'role': 'assistant',
            'parts': [
                {'type': 'tool-f', 'toolCallId': 'c1', 'state': 'input-available', 'input': '[1]'},
                {'type': 'tool-g', 'toolCallId': 'c2', 'state': 'input-available', 'input': [1, 2]},
                {'type': 'tool-h', 'toolCallId': 'c3', 'state': 'input-available', 'input': 'not json'},
            ],
        }
    )
    (response,) = VercelAIAdapter.load_messages([message])
    assert [p.args for p in response.parts if isinstance(p, ToolCallPart)] == ['[1]', '[1, 2]', 'not json']


def test_ag_ui_messages_of_every_content_kind() -> None:
    history: list[ModelMessage] = [
        ModelRequest([UserPromptPart([TextContent('note'), CachePoint(), UploadedFile('f', 'openai')])]),
        ModelResponse([ThinkingPart('plain')]),
    ]
    dumped = dump_ag_ui_messages(history)
    assert [type(p).__name__ for p in dumped[0].content] == ['TextPart', 'DocumentPart']
    assert dumped[1].encrypted_value is None
    loaded = load_ag_ui_messages(dumped)
    assert isinstance(loaded[1].parts[0], ThinkingPart)
    assert loaded[1].parts[0].signature is None


def test_a_snapshot_of_another_graph_adds_no_messages() -> None:
    response = ModelResponse([TextPart('kept')])
    agent_state = SimpleNamespace(message_history=[response], message_offset=0, response_in_node=False)
    assert stored_messages([SimpleNamespace(state=None), SimpleNamespace(state=agent_state, node=None)]) == [response]


@pytest.mark.parametrize('header', ['[::1', ':8000', 'a b'])
def test_unparsable_hosts_are_refused(header: str) -> None:
    assert not host_allowed(header, [])


async def test_the_host_check_passes_lifespan_events_and_closes_foreign_websockets() -> None:
    reached: list[str] = []

    async def app(scope: Scope, receive: Any, send: Any) -> None:
        reached.append(scope['type'])

    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    async def receive() -> Message:
        return {'type': 'websocket.connect'}

    check = HostCheck(app, [])
    await check({'type': 'lifespan'}, receive, send)
    await check({'type': 'websocket', 'headers': [(b'host', b'evil.example')]}, receive, send)
    await check({'type': 'websocket', 'headers': [(b'host', b'localhost')]}, receive, send)
    assert reached == ['lifespan', 'websocket']
    assert sent == [{'type': 'websocket.close', 'code': 1008}]


def test_without_starlette_the_http_helpers_name_the_extra() -> None:
    code = (
        'from edgewise.agent.ui.vercel_ai import VercelAIEventStream\n'
        'try:\n'
        '    VercelAIEventStream().streaming_response(None)\n'
        'except ModuleNotFoundError as e:\n'
        '    print(e.name, "|", e)\n'
        'try:\n'
        '    import edgewise.agent.ui.web\n'
        'except ModuleNotFoundError as e:\n'
        '    print(e.name)\n'
    )
    done = run_without('starlette', code)
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.strip().splitlines()
    assert first.startswith('starlette | `UIEventStream.streaming_response()` needs Starlette: install the `ui` extra')
    assert second == 'starlette'


def test_without_the_ag_ui_sdk_the_adapter_names_its_extra() -> None:
    done = run_without('ag_ui', 'import edgewise.agent.ui.ag_ui')
    assert done.returncode == 1
    assert 'ModuleNotFoundError: edgewise.agent.ui.ag_ui needs the AG-UI protocol SDK: install the `ag-ui` extra' in (
        done.stderr
    )


def test_another_missing_module_under_starlette_is_not_taken_for_starlette() -> None:
    from edgewise.agent.ui._starlette import starlette_module

    with pytest.raises(ModuleNotFoundError) as caught:
        starlette_module('no_such_module', 'this')
    assert caught.value.name == 'starlette.no_such_module'


async def test_a_bare_stream_says_nothing_of_text_or_errors() -> None:
    @dataclass
    class Bare(UIEventStream[None, str, None, Any]):
        def encode_event(self, event: str) -> str:
            return event

    async def failing() -> AsyncIterator[NativeEvent]:
        from edgewise.agent.messages import TextPartDelta

        yield PartStartEvent(index=0, part=TextPart('a'))
        yield PartDeltaEvent(index=0, delta=TextPartDelta('b'))
        raise RuntimeError('stop')

    assert [e async for e in Bare().transform_stream(failing())] == []


async def test_ag_ui_thinking_that_starts_with_text_and_a_signature() -> None:
    part = ThinkingPart('first', signature='sig', id='t1', provider_name='anthropic')
    events: list[NativeEvent] = [PartStartEvent(index=0, part=part), PartEndEvent(index=0, part=part)]
    stream: AGUIEventStream[None, Any] = AGUIEventStream()
    out = [e async for e in stream.transform_stream(_iterate(events))]
    assert [e.type.value for e in out][1:-1] == [
        'REASONING_START',
        'REASONING_MESSAGE_START',
        'REASONING_MESSAGE_CONTENT',
        'REASONING_MESSAGE_END',
        'REASONING_ENCRYPTED_VALUE',
        'REASONING_END',
    ]
    assert out[5].encrypted_value == '{"id": "t1", "signature": "sig", "provider_name": "anthropic"}'


async def test_a_call_deferred_before_its_event_is_announced_with_the_result() -> None:
    async with streamed_agent(['hi']).run_stream_events('hi') as stream:
        result = [e async for e in stream][-1]
    call = ToolCallPart('later', {}, 'd1')
    events: list[NativeEvent] = [PartStartEvent(index=0, part=call), PartEndEvent(index=0, part=call), result]
    chunks = [c.type async for c in VercelAIEventStream().transform_stream(_iterate(events))]
    assert chunks == [
        'start',
        'start-step',
        'tool-input-start',
        'tool-input-available',  # announced with the result: no call event came for it
        'message-metadata',
        'finish-step',
        'finish',
        'done',
    ]


async def test_a_durable_chat_refuses_a_request_without_a_new_message_after_a_finished_turn(tmp_path: Any) -> None:
    import httpx

    from edgewise.agent.ui.web import create_web_app

    app = create_web_app(streamed_agent(['one']), persistence=f'sqlite:///{tmp_path}/d.db')
    question = {'id': 'u', 'role': 'user', 'parts': [{'type': 'text', 'text': 'hi'}]}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url='http://127.0.0.1') as http:
        await http.post('/api/chat', json={'trigger': 'submit-message', 'id': 'd', 'messages': [question]})
        stored = (await http.get('/api/chats/d')).json()
        again = await http.post(
            '/api/chat', json={'trigger': 'submit-message', 'id': 'd', 'messages': stored['messages']}
        )
    assert again.status_code == 400
    assert "not the user's" in again.json()['error']
