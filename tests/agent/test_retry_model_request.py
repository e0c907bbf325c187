"""`RetryModelRequest` (pydantic-ai 2.68) raised from a model request hook makes another attempt at the same request
step: on the same model, or on the one it names. The model is told nothing, the step counts once, and the attempts
that failed are recorded on the response that answers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest

from edgewise.agent import Agent, ModelRetry, ModelServerError, RetryModelRequest, RunContext, UserError
from edgewise.agent.capabilities import AbstractCapability, WrapModelRequestHandler
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from edgewise.agent.models import Model, ModelRequestContext
from edgewise.agent.models.function import AgentInfo, DeltaToolCalls, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.usage import RequestUsage

pytestmark = pytest.mark.anyio


class Flaky(FunctionModel):
    """A function model whose first `failures` requests fail with a server error; it counts its requests."""

    def __init__(self, name: str, failures: int = 0, *, usage: RequestUsage | None = None) -> None:
        self.calls = 0

        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            self.calls += 1
            if self.calls <= failures:
                raise ModelServerError(name, 'overloaded, try again')
            return ModelResponse(parts=[TextPart(f'{name} #{self.calls}')], usage=usage or RequestUsage())

        super().__init__(respond, model_name=name)


@dataclass
class RetryOnError(AbstractCapability[None]):
    """Retries a failed attempt, on `to` when given, at most `limit` times."""

    to: Model | str | None = None
    limit: int = 1
    seen: list[int] = field(default_factory=list[int])

    async def on_model_request_error(
        self, ctx: RunContext[None], *, request_context: ModelRequestContext, error: Exception
    ) -> ModelResponse:
        self.seen.append(request_context.attempt)
        if request_context.attempt > self.limit:
            raise error
        raise RetryModelRequest(self.to)


@dataclass
class RejectFirst(AbstractCapability[None]):
    """Turns down the first `count` responses."""

    count: int = 1
    to: Model | str | None = None
    seen: list[str] = field(default_factory=list[str])

    async def after_model_request(
        self, ctx: RunContext[None], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        self.seen.append(f'{request_context.attempt}:{response.text}')
        if request_context.attempt <= self.count:
            raise RetryModelRequest(self.to)
        return response


async def test_a_failed_attempt_is_made_again_on_the_same_model() -> None:
    model, hook = Flaky('flaky', failures=1), RetryOnError()
    result = await Agent(model, capabilities=[hook]).run('hi')
    assert result.output == 'flaky #2'
    assert model.calls == 2
    assert hook.seen == [1]
    assert result.usage.requests == 1  # one step, however many attempts
    request, response = result.all_messages()
    assert isinstance(request, ModelRequest)
    assert [type(p) for p in request.parts] == [UserPromptPart]
    assert isinstance(response, ModelResponse)
    (attempt,) = response.failed_attempts or []
    assert (attempt.model_name, attempt.provider_name, attempt.outcome, attempt.usage) == (
        'flaky',
        model.system,
        'error',
        None,
    )
    assert attempt.error == 'ModelServerError: overloaded, try again'
    assert attempt.duration.total_seconds() >= 0
    assert attempt.timestamp <= response.timestamp


async def test_a_retry_can_move_the_attempt_to_another_model() -> None:
    down, backup = Flaky('down', failures=10), Flaky('backup')
    result = await Agent(down, capabilities=[RetryOnError(to=backup)]).run('hi')
    assert result.output == 'backup #1'
    response = result.all_messages()[-1]
    assert isinstance(response, ModelResponse)
    assert response.model_id == backup.model_id
    assert [(a.model_name, a.outcome) for a in response.failed_attempts or []] == [('down', 'error')]


async def test_a_model_named_by_id_is_resolved_for_the_next_attempt() -> None:
    result = await Agent(Flaky('down', failures=10), capabilities=[RetryOnError(to='test')]).run('hi')
    assert result.output == 'success (no tool calls)'  # TestModel's answer
    response = result.all_messages()[-1]
    assert isinstance(response, ModelResponse)
    assert response.model_id == 'test'


async def test_the_run_fails_with_the_error_once_the_hook_stops_retrying() -> None:
    model, hook = Flaky('down', failures=10), RetryOnError(limit=2)
    with pytest.raises(ModelServerError, match='overloaded'):
        await Agent(model, capabilities=[hook]).run('hi')
    assert hook.seen == [1, 2, 3]
    assert model.calls == 3


async def test_a_rejected_response_is_dropped_but_its_tokens_count() -> None:
    usage = RequestUsage(input_tokens=10, output_tokens=4)
    model, hook = Flaky('m', usage=usage), RejectFirst(count=2)
    result = await Agent(model, capabilities=[hook]).run('hi')
    assert result.output == 'm #3'
    assert hook.seen == ['1:m #1', '2:m #2', '3:m #3']
    assert [m.text for m in result.all_messages() if isinstance(m, ModelResponse)] == ['m #3']
    assert result.usage.requests == 1
    assert (result.usage.input_tokens, result.usage.output_tokens) == (30, 12)
    response = result.all_messages()[-1]
    assert isinstance(response, ModelResponse)
    assert [(a.outcome, a.error, a.usage) for a in response.failed_attempts or []] == [
        ('rejected', None, usage),
        ('rejected', None, usage),
    ]


async def test_a_rejected_response_can_send_the_request_to_another_model() -> None:
    first, second = Flaky('first'), Flaky('second')
    result = await Agent(first, capabilities=[RejectFirst(to=second)]).run('hi')
    assert result.output == 'second #1'
    response = result.all_messages()[-1]
    assert isinstance(response, ModelResponse)
    assert [(a.model_name, a.outcome) for a in response.failed_attempts or []] == [('first', 'rejected')]


async def test_the_rejected_tokens_count_even_when_the_step_then_fails() -> None:
    usage = RequestUsage(input_tokens=5, output_tokens=5)

    @dataclass
    class RejectThenGiveUp(AbstractCapability[None]):
        async def after_model_request(
            self, ctx: RunContext[None], *, request_context: ModelRequestContext, response: ModelResponse
        ) -> ModelResponse:
            if request_context.attempt == 1:
                raise RetryModelRequest()
            raise ValueError('no good answer')

    agent = Agent(Flaky('m', usage=usage), capabilities=[RejectThenGiveUp()])
    async with agent.iter('hi') as run:
        with pytest.raises(ValueError, match='no good answer'):
            async for _ in run:
                pass
    assert run.usage.input_tokens == 5  # the turned-down response; the second was never taken


async def test_a_model_retry_after_a_retried_attempt_keeps_the_attempts_on_the_kept_response() -> None:
    @dataclass
    class RejectThenAskAgain(AbstractCapability[None]):
        async def after_model_request(
            self, ctx: RunContext[None], *, request_context: ModelRequestContext, response: ModelResponse
        ) -> ModelResponse:
            if ctx.run_step == 1 and request_context.attempt == 1:
                raise RetryModelRequest()
            if ctx.run_step == 1:
                raise ModelRetry('say it differently')
            return response

    result = await Agent(Flaky('m'), capabilities=[RejectThenAskAgain()]).run('hi')
    assert result.output == 'm #3'
    kept = [m for m in result.all_messages() if isinstance(m, ModelResponse)]
    assert [m.text for m in kept] == ['m #2', 'm #3']
    assert [a.outcome for a in kept[0].failed_attempts or []] == ['rejected']
    assert kept[1].failed_attempts is None


async def test_hooks_that_never_stop_retrying_fail_after_the_attempt_ceiling() -> None:
    model = Flaky('down', failures=1000)
    with pytest.raises(UserError, match='attempted 100 times') as caught:
        await Agent(model, capabilities=[RetryOnError(limit=10_000)]).run('hi')
    assert isinstance(caught.value.__cause__, RetryModelRequest)
    assert model.calls == 100


def _hello(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart('hello')])


async def _hello_stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
    yield 'hello'


@dataclass
class RetryFrom(AbstractCapability[None]):
    hook: str

    async def after_model_request(
        self, ctx: RunContext[None], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        if self.hook == 'after_model_request':
            raise RetryModelRequest()
        return response

    async def wrap_model_request(
        self, ctx: RunContext[None], *, request_context: ModelRequestContext, handler: WrapModelRequestHandler
    ) -> ModelResponse:
        if self.hook == 'wrap_model_request':
            raise RetryModelRequest()
        return await handler(request_context)


async def test_retry_model_request_from_wrap_model_request_is_a_clear_user_error() -> None:
    agent = Agent(FunctionModel(_hello), capabilities=[RetryFrom('wrap_model_request')])
    with pytest.raises(UserError) as caught:
        await agent.run('hi')
    assert str(caught.value) == (
        '`RetryModelRequest` was raised from `wrap_model_request`, which runs before the attempts at a model request: '
        'raise it from `on_model_request_error` (after an attempt failed) or `after_model_request` (to turn a '
        'response down).'
    )
    assert isinstance(caught.value.__cause__, RetryModelRequest)


@pytest.mark.parametrize('hook', ['after_model_request', 'wrap_model_request'])
async def test_retry_model_request_from_a_hook_of_a_streamed_request_is_a_clear_user_error(hook: str) -> None:
    agent = Agent(FunctionModel(stream_function=_hello_stream), capabilities=[RetryFrom(hook)])
    expected = {
        'after_model_request': (
            '`RetryModelRequest` cannot be raised from `after_model_request` for a streamed response'
        ),
        'wrap_model_request': '`RetryModelRequest` was raised from `wrap_model_request`',
    }[hook]
    with pytest.raises(UserError, match=f'^{expected}'):
        async with agent.run_stream('hi') as result:
            await result.get_output()


async def test_retry_model_request_for_a_skipped_request_is_a_clear_user_error() -> None:
    from edgewise.agent import SkipModelRequest

    @dataclass
    class Skip(RetryFrom):
        async def before_model_request(
            self, ctx: RunContext[None], request_context: ModelRequestContext
        ) -> ModelRequestContext:
            raise SkipModelRequest(ModelResponse(parts=[TextPart('canned')]))

    with pytest.raises(UserError, match='`SkipModelRequest` \\(no attempt was made\\)'):
        await Agent(TestModel(), capabilities=[Skip('after_model_request')]).run('hi')


async def test_a_model_id_is_resolved_by_the_runs_resolving_capabilities() -> None:
    from edgewise.agent.capabilities import ResolveModelId

    primary, backup = Flaky('primary', failures=10), Flaky('backup')
    aliases = {'primary': primary, 'backup': backup}
    capabilities: list[AbstractCapability[None]] = [
        ResolveModelId(lambda ctx, model_id: aliases.get(model_id)),
        RetryOnError(to='backup'),
    ]
    result = await Agent('primary', capabilities=capabilities).run('hi')
    assert result.output == 'backup #1'
    response = result.all_messages()[-1]
    assert isinstance(response, ModelResponse)
    assert response.model_id == 'backup'


async def test_a_run_whose_model_a_selector_picks_resolves_the_retry_model_the_same_way() -> None:
    from edgewise.agent.capabilities import ResolveModelId, SelectModel

    primary, backup = Flaky('primary', failures=10), Flaky('backup')
    aliases = {'primary': primary, 'backup': backup}
    capabilities: list[AbstractCapability[None]] = [
        ResolveModelId(lambda ctx, model_id: aliases.get(model_id)),
        SelectModel(lambda ctx: 'primary'),
        RetryOnError(to='backup'),
    ]
    result = await Agent(capabilities=capabilities).run('hi')
    assert result.output == 'backup #1'
    assert primary.calls == 1
