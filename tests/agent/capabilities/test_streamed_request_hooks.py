"""The model request hooks of a streamed run: `SkipModelRequest` from `before_model_request` or `wrap_model_request`
streams the hook's response, and a `ModelRetry` from `wrap_model_request` asks the model again, as without a stream."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from edgewise.agent import Agent, ModelRetry, RunContext, SkipModelRequest
from edgewise.agent.capabilities import AbstractCapability, WrapModelRequestHandler
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, RetryPromptPart, TextPart
from edgewise.agent.models import ModelRequestContext
from edgewise.agent.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

pytestmark = pytest.mark.anyio


def _streaming(calls: list[int], first: str | None = None) -> FunctionModel:
    """A model that streams 'from the model' (or, for its first call when given, a call of the tool `first`)."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        calls.append(len(calls) + 1)
        if first is not None and len(calls) == 1:
            yield {0: DeltaToolCall(name=first, json_args='{}', tool_call_id='c1')}
        else:
            yield 'from the model'

    return FunctionModel(stream_function=stream)


def _outline(messages: list[ModelMessage]) -> list[tuple[str, list[str]]]:
    return [
        ('request' if isinstance(m, ModelRequest) else 'response', [type(p).__name__ for p in m.parts])
        for m in messages
    ]


async def test_skip_from_before_model_request_streams_the_hooks_response() -> None:
    @dataclass
    class Skip(AbstractCapability[Any]):
        async def before_model_request(
            self, ctx: RunContext[Any], request_context: ModelRequestContext
        ) -> ModelRequestContext:
            raise SkipModelRequest(ModelResponse([TextPart('from the hook')]))

    calls: list[int] = []
    async with Agent(_streaming(calls), capabilities=[Skip()]).run_stream('go') as stream:
        assert await stream.get_output() == 'from the hook'
    assert calls == []
    assert _outline(stream.all_messages()) == [('request', ['UserPromptPart']), ('response', ['TextPart'])]


async def test_skip_from_before_model_request_streams_the_response_to_a_node_reader() -> None:
    @dataclass
    class Skip(AbstractCapability[Any]):
        async def before_model_request(
            self, ctx: RunContext[Any], request_context: ModelRequestContext
        ) -> ModelRequestContext:
            raise SkipModelRequest(ModelResponse([TextPart('from the hook')]))

    agent = Agent(_streaming([]), capabilities=[Skip()])
    responses: list[ModelResponse] = []
    async with agent.iter('go') as run:
        async for node in run:
            if agent.is_model_request_node(node):
                async with node.stream(run.ctx) as events:
                    assert [event async for event in events] == []  # given whole: no events to replay
                    responses.append(events.response)
    assert [r.parts for r in responses] == [[TextPart('from the hook')]]
    assert run.result is not None
    assert run.result.output == 'from the hook'


async def test_skip_from_wrap_model_request_streams_the_hooks_response() -> None:
    @dataclass
    class Skip(AbstractCapability[Any]):
        async def wrap_model_request(
            self, ctx: RunContext[Any], *, request_context: ModelRequestContext, handler: WrapModelRequestHandler
        ) -> ModelResponse:
            raise SkipModelRequest(ModelResponse([TextPart('from the wrap hook')]))

    calls: list[int] = []
    async with Agent(_streaming(calls), capabilities=[Skip()]).run_stream('go') as stream:
        assert await stream.get_output() == 'from the wrap hook'
    assert calls == []


async def test_model_retry_from_wrap_model_request_without_the_model_asks_again() -> None:
    @dataclass
    class RetryFirst(AbstractCapability[Any]):
        calls: int = 0

        async def wrap_model_request(
            self, ctx: RunContext[Any], *, request_context: ModelRequestContext, handler: WrapModelRequestHandler
        ) -> ModelResponse:
            self.calls += 1
            if self.calls == 1:
                raise ModelRetry('not yet')
            return await handler(request_context)

    calls: list[int] = []
    async with Agent(_streaming(calls), capabilities=[RetryFirst()]).run_stream('go') as stream:
        assert await stream.get_output() == 'from the model'
    assert calls == [1]
    messages = stream.all_messages()
    assert _outline(messages) == [
        ('request', ['UserPromptPart']),
        ('request', ['RetryPromptPart']),
        ('response', ['TextPart']),
    ]
    retry = messages[1].parts[0]
    assert isinstance(retry, RetryPromptPart)
    assert retry.content == 'not yet'


async def test_model_retry_from_wrap_model_request_after_the_model_keeps_its_response_and_asks_again() -> None:
    @dataclass
    class RejectFirst(AbstractCapability[Any]):
        rejected: bool = False

        async def wrap_model_request(
            self, ctx: RunContext[Any], *, request_context: ModelRequestContext, handler: WrapModelRequestHandler
        ) -> ModelResponse:
            response = await handler(request_context)
            if not self.rejected:
                self.rejected = True
                raise ModelRetry('call no tool')
            return response

    calls: list[int] = []
    agent = Agent(_streaming(calls, first='lookup'), capabilities=[RejectFirst()])

    @agent.tool_plain
    def lookup() -> str:
        return 'found'  # pragma: no cover - the call is rejected before it runs

    async with agent.run_stream('go') as stream:
        assert await stream.get_output() == 'from the model'
    assert calls == [1, 2]
    assert _outline(stream.all_messages()) == [
        ('request', ['UserPromptPart']),
        ('response', ['ToolCallPart']),
        ('request', ['RetryPromptPart']),
        ('response', ['TextPart']),
    ]


async def test_another_error_from_wrap_model_request_fails_the_streamed_run() -> None:
    @dataclass
    class Broken(AbstractCapability[Any]):
        async def wrap_model_request(
            self, ctx: RunContext[Any], *, request_context: ModelRequestContext, handler: WrapModelRequestHandler
        ) -> ModelResponse:
            raise LookupError('no route to the model')

    with pytest.raises(LookupError, match='no route to the model'):
        async with Agent(_streaming([]), capabilities=[Broken()]).run_stream('go') as stream:
            await stream.get_output()  # pragma: no cover - the stream does not open
