"""A cancelled run through the UI adapters: `on_cancel` gets the `RunCancelled`, the protocols end their stream as a
cancellation (Vercel AI: an `abort` chunk; AG-UI: a plain `RUN_FINISHED`), and a client that aborts its request
cancels the run on a real HTTP server."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.to_thread
import httpx
import pytest
from ag_ui.core import RunAgentInput, UserMessage
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from edgewise.agent import Agent, RunCancelled, RunContext
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart
from edgewise.agent.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from edgewise.agent.ui.ag_ui import AGUIAdapter
from edgewise.agent.ui.vercel_ai import VercelAIAdapter
from edgewise.agent.ui.vercel_ai.request_types import SubmitMessage, TextUIPart, UIMessage
from edgewise.agent.ui.vercel_ai.response_types import AbortChunk, ErrorChunk, ToolOutputAvailableChunk

from ._server import serving

pytestmark = pytest.mark.anyio


def _self_cancelling_agent() -> Agent[None, str]:
    """A model that calls `stop` and `slow` together: `stop` cancels the run while `slow` still runs."""

    async def model(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[DeltaToolCalls]:
        yield {0: DeltaToolCall('slow', '{}', tool_call_id='s'), 1: DeltaToolCall('stop', '{}', tool_call_id='x')}

    agent: Agent[None, str] = Agent(FunctionModel(stream_function=model))
    stopped = anyio.Event()

    @agent.tool
    async def stop(ctx: RunContext[None]) -> str:
        ctx.cancel()
        stopped.set()
        await anyio.sleep_forever()
        return 'never'  # pragma: no cover

    @agent.tool_plain
    async def slow() -> str:
        await stopped.wait()
        await anyio.sleep_forever()
        return 'never'  # pragma: no cover

    return agent


def _submit(text: str) -> SubmitMessage:
    return SubmitMessage(id='chat', messages=[UIMessage(id='u1', role='user', parts=[TextUIPart(text=text)])])


async def test_vercel_ai_on_cancel_gets_the_run_cancelled_and_the_stream_ends_with_an_abort_chunk() -> None:
    seen: list[RunCancelled] = []
    adapter = VercelAIAdapter(_self_cancelling_agent(), _submit('go'), sdk_version=6)
    chunks = [c async for c in adapter.run_stream(on_cancel=seen.append)]

    assert len(seen) == 1
    assert [m.kind for m in seen[0].all_messages()] == ['request', 'response']  # no tool had finished
    outputs = [c for c in chunks if isinstance(c, ToolOutputAvailableChunk)]
    assert {c.tool_call_id for c in outputs} == {'s', 'x'}  # the calls left running are closed, as interrupted
    assert not any(isinstance(c, ErrorChunk) for c in chunks)
    assert [c.reason for c in chunks if isinstance(c, AbortChunk)] == ['The agent run was cancelled.']


async def test_an_async_generator_on_cancel_adds_its_events_and_the_stream_remembers_the_cancellation() -> None:
    adapter = VercelAIAdapter(_self_cancelling_agent(), _submit('go'), sdk_version=6)
    event_stream = adapter.build_event_stream()

    async def on_cancel(cancelled: RunCancelled) -> AsyncIterator[Any]:
        yield ErrorChunk(error_text=f'stopped after {len(cancelled.all_messages())} messages')

    native = adapter.run_stream_native()
    chunks = [c async for c in event_stream.transform_stream(native, on_cancel=on_cancel)]
    assert isinstance(event_stream.cancelled, RunCancelled)
    assert [c.error_text for c in chunks if isinstance(c, ErrorChunk)] == ['stopped after 2 messages']


async def test_ag_ui_ends_a_cancelled_run_with_run_finished_and_no_run_error() -> None:
    run_input = RunAgentInput(
        thread_id='t', run_id='r', state={}, messages=[UserMessage(id='u', content='go')], tools=[], context=[],
        forwarded_props=None,
    )  # fmt: skip
    seen: list[RunCancelled] = []
    adapter = AGUIAdapter(_self_cancelling_agent(), run_input)
    events = [e async for e in adapter.run_stream(on_cancel=seen.append)]

    kinds = [e.type for e in events]
    assert len(seen) == 1
    assert 'RUN_ERROR' not in kinds
    assert kinds[-1] == 'RUN_FINISHED'


async def test_an_error_is_still_an_error_and_not_a_cancellation() -> None:
    async def model(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        raise RuntimeError('boom')
        yield 'never'  # pragma: no cover

    seen: list[RunCancelled] = []
    adapter = VercelAIAdapter(Agent(FunctionModel(stream_function=model)), _submit('go'), sdk_version=6)
    event_stream = adapter.build_event_stream()
    chunks = [c async for c in event_stream.transform_stream(adapter.run_stream_native(), on_cancel=seen.append)]
    assert seen == []
    assert event_stream.cancelled is None
    assert [c.error_text for c in chunks if isinstance(c, ErrorChunk)] == ['boom']


async def test_a_client_that_aborts_its_request_cancels_the_run_on_a_real_server() -> None:
    """The model streams a first text, then waits for ever; the client reads that text and closes the connection.
    The run is cancelled (not left waiting), and `on_cancel` gets its state: the half response."""
    waiting = threading.Event()
    cancelled: list[RunCancelled] = []
    done = threading.Event()

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        yield 'hello '
        waiting.set()
        await anyio.sleep_forever()
        yield 'never'  # pragma: no cover

    agent = Agent(FunctionModel(stream_function=stream))

    def on_cancel(error: RunCancelled) -> None:
        cancelled.append(error)
        done.set()

    async def endpoint(request: Request) -> Response:
        return await VercelAIAdapter.dispatch_request(request, agent=agent, sdk_version=6, on_cancel=on_cancel)

    app = Starlette(routes=[Route('/chat', endpoint, methods=['POST'])])
    body = _submit('hi').model_dump(mode='json', by_alias=True)

    def read_then_leave(url: str) -> None:  # a plain client in a thread, so that nothing waits in the event loop
        with httpx.Client(base_url=url) as client, client.stream('POST', '/chat', json=body) as response:
            assert response.status_code == 200
            for line in response.iter_lines():
                if '"delta":"hello "' in line:
                    break
            assert waiting.wait(30)
        # leaving the block closes the connection mid-stream: the client is gone

    with serving(app) as url:
        await anyio.to_thread.run_sync(read_then_leave, url)
        assert await anyio.to_thread.run_sync(done.wait, 30)  # (a bound for a broken server, not an ordering)

    assert len(cancelled) == 1
    messages = cancelled[0].all_messages()
    assert [m.kind for m in messages] == ['request', 'response']
    last = messages[-1]
    assert isinstance(last, ModelResponse)
    assert last.state == 'interrupted'
    assert last.parts == [TextPart('hello ')]


async def test_a_send_that_fails_after_the_client_left_counts_as_the_client_leaving() -> None:
    """An ASGI 2.4 server says the client left by failing the next send (uvicorn, on 2.3, sends a disconnect)."""
    from edgewise.agent.ui._starlette import streaming_response

    gone: list[str] = []

    async def body() -> AsyncIterator[str]:
        yield 'first'
        yield 'second'  # read to the end, sent nowhere

    response = streaming_response(
        body(), headers=None, media_type='text/plain', on_disconnect=lambda: gone.append('gone'), what='test'
    )
    sent: list[Any] = []
    never = anyio.Event()

    async def receive() -> dict[str, Any]:
        await never.wait()  # the client says nothing; the watcher is stopped once the body is sent
        raise AssertionError  # pragma: no cover

    async def send(message: dict[str, Any]) -> None:
        if message.get('body') == b'first':
            raise OSError('the client went away')
        sent.append(message)

    await response({'type': 'http'}, receive, send)
    assert gone == ['gone']
    assert [m['type'] for m in sent] == ['http.response.start']
