"""`RetryModelRequest` (pydantic-ai 2.68) raised from a model request hook: Edgewise makes no second attempt yet, so
the run fails with a `UserError` that says so and what to use instead, never with the bare signal."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from edgewise.agent import Agent, ModelServerError, RetryModelRequest, RunContext, UserError
from edgewise.agent.capabilities import AbstractCapability, WrapModelRequestHandler
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart
from edgewise.agent.models import ModelRequestContext
from edgewise.agent.models.function import AgentInfo, DeltaToolCalls, FunctionModel

pytestmark = pytest.mark.anyio


def _failing(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    raise ModelServerError('down', 'The server failed')


def _hello(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart('hello')])


async def _hello_stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
    yield 'hello'


@dataclass
class RetryFrom(AbstractCapability[None]):
    hook: str

    async def on_model_request_error(
        self, ctx: RunContext[None], *, request_context: ModelRequestContext, error: Exception
    ) -> ModelResponse:
        if self.hook == 'on_model_request_error':
            raise RetryModelRequest()
        raise error

    async def after_model_request(
        self, ctx: RunContext[None], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        if self.hook == 'after_model_request':
            raise RetryModelRequest('test')
        return response

    async def wrap_model_request(
        self, ctx: RunContext[None], *, request_context: ModelRequestContext, handler: WrapModelRequestHandler
    ) -> ModelResponse:
        if self.hook == 'wrap_model_request':
            raise RetryModelRequest()
        return await handler(request_context)


@pytest.mark.parametrize(
    ('hook', 'model'),
    [
        ('on_model_request_error', FunctionModel(_failing)),
        ('after_model_request', FunctionModel(_hello)),
        ('wrap_model_request', FunctionModel(_hello)),
    ],
)
async def test_retry_model_request_from_a_hook_is_a_clear_user_error(hook: str, model: FunctionModel) -> None:
    agent = Agent(model, capabilities=[RetryFrom(hook)])
    with pytest.raises(UserError) as caught:
        await agent.run('hi')
    assert str(caught.value) == (
        f'`RetryModelRequest` was raised from `{hook}`, but Edgewise does not make another attempt at a model request '
        'yet (pydantic-ai 2.68 does); raise `ModelRetry` to ask the model again, or use a `FallbackModel` to try '
        'other models.'
    )
    assert isinstance(caught.value.__cause__, RetryModelRequest)


@pytest.mark.parametrize('hook', ['after_model_request', 'wrap_model_request'])
async def test_retry_model_request_from_a_hook_of_a_streamed_request_is_a_clear_user_error(hook: str) -> None:
    agent = Agent(FunctionModel(stream_function=_hello_stream), capabilities=[RetryFrom(hook)])
    with pytest.raises(UserError, match=f'^`RetryModelRequest` was raised from `{hook}`'):
        async with agent.run_stream('hi') as result:
            await result.get_output()
