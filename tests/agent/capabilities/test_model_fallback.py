"""`ModelFallback` (pydantic-ai 2.68): a request step sent down a chain of models while the one asked fails, over
function models and provider models whose servers (real sockets on 127.0.0.1) answer with error statuses."""

from __future__ import annotations

import json
import warnings
from collections.abc import AsyncIterator
from typing import Any

import pytest

from edgewise.agent import Agent
from edgewise.agent.capabilities import CAPABILITY_TYPES, ModelFallback
from edgewise.agent.capabilities.model_fallback import STICKY_METADATA_KEY, _fallen_back_to
from edgewise.agent.exceptions import (
    ContentFilterError,
    FallbackExceptionGroup,
    IncompleteToolCall,
    ModelAPIError,
    ModelHTTPError,
    OutputTokenLimitExceeded,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
    UserError,
)
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from edgewise.agent.models.fallback import ResponseRejected
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.openai import OpenAIChatModel
from edgewise.agent.models.wrapper import WrapperModel
from edgewise.agent.providers.openai import OpenAIProvider
from edgewise.agent.usage import RequestUsage

from ..models.conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio


class Counted(FunctionModel):
    """A function model answering (or failing) the same way each time, counting its requests."""

    def __init__(self, name: str, *, answer: ModelResponse | None = None, error: Exception | None = None) -> None:
        self.calls = 0

        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            self.calls += 1
            if error is not None:
                raise error
            return answer if answer is not None else ModelResponse(parts=[TextPart(name)])

        async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
            self.calls += 1
            if error is not None:
                raise error
            yield name

        super().__init__(respond, stream_function=stream, model_name=name)


def http_error(name: str) -> ModelHTTPError:
    return ModelHTTPError(status_code=503, model_name=name, body=None)


def noted(model_id: str, fell_back: bool = True) -> ModelResponse:
    """A response a sticky `ModelFallback` noted as answered by `model_id`."""
    return ModelResponse(
        parts=[TextPart('x')], metadata={STICKY_METADATA_KEY: {'model_id': model_id, 'fell_back': fell_back}}
    )


def pinned_to(model_id: str) -> list[ModelMessage]:
    """A conversation that fell back to `model_id`."""
    return [ModelRequest(parts=[UserPromptPart('hi')]), noted(model_id)]


async def test_a_failing_step_model_falls_back_to_the_next_model() -> None:
    first, second = Counted('first', error=http_error('first')), Counted('second')
    result = await Agent(first, capabilities=[ModelFallback(second)]).run('hi')
    assert result.output == 'second'
    assert (first.calls, second.calls) == (1, 1)
    assert result.all_messages()[-1].metadata is None  # not sticky: nothing noted
    assert result.usage.requests == 1


async def test_without_an_agent_model_the_first_candidate_serves_the_run() -> None:
    first, second = Counted('first'), Counted('second')
    capability = ModelFallback(first, second)
    assert (await Agent(capabilities=[capability]).run('hi')).output == 'first'
    assert capability.get_model() is None  # the capability given is unchanged: the agent binds a copy
    assert capability.for_agent(Agent(first)).get_model() is None
    assert capability.for_agent(Agent()).get_model() is first
    assert (first.calls, second.calls) == (1, 0)


async def test_a_model_already_asked_in_the_step_is_skipped() -> None:
    first, second = Counted('first', error=http_error('first')), Counted('second')
    agent = Agent(WrapperModel(first), capabilities=[ModelFallback(first, second)])
    assert (await agent.run('hi')).output == 'second'
    assert (first.calls, second.calls) == (1, 1)


async def test_every_model_failing_raises_a_group_of_errors_and_rejections() -> None:
    error_a, error_b = http_error('a'), ModelAPIError('b', 'connection reset')
    a, b = Counted('a', error=error_a), Counted('b', error=error_b)
    refused = Counted('c', answer=ModelResponse(parts=[], finish_reason='content_filter'))
    with pytest.raises(FallbackExceptionGroup) as caught:
        await Agent(a, capabilities=[ModelFallback(b, refused)]).run('hi')
    assert caught.value.message == 'All models from ModelFallback failed'
    assert caught.value.exceptions[:2] == (error_a, error_b)
    assert isinstance(caught.value.exceptions[2], ResponseRejected)
    assert str(caught.value.exceptions[2]) == '1 model response(s) rejected by fallback_on handler'


async def test_an_error_fallback_on_does_not_name_is_raised_at_once() -> None:
    first, second = Counted('first', error=ValueError('bug')), Counted('second')
    with pytest.raises(ValueError, match='bug'):
        await Agent(first, capabilities=[ModelFallback(second)]).run('hi')
    assert second.calls == 0


async def test_the_runs_own_usage_limit_never_falls_back() -> None:
    first, second = Counted('first', error=UsageLimitExceeded('over the limit')), Counted('second')
    with pytest.raises(UsageLimitExceeded, match='over the limit'):
        await Agent(first, capabilities=[ModelFallback(second, fallback_on=Exception)]).run('hi')
    assert second.calls == 0


async def test_refusals_and_cut_off_responses_move_on_and_are_still_counted() -> None:
    usage = RequestUsage(input_tokens=7, output_tokens=3)
    refused = Counted('refused', answer=ModelResponse(parts=[], finish_reason='content_filter', usage=usage))
    cut = Counted('cut', answer=ModelResponse(parts=[TextPart('half')], finish_reason='length', usage=usage))
    result = await Agent(refused, capabilities=[ModelFallback(cut, Counted('whole'))]).run('hi')
    assert result.output == 'whole'
    assert result.usage.requests == 1  # one step: the responses turned down count their tokens, not as requests
    assert result.usage.input_tokens >= 14


async def test_leaving_the_limit_out_of_fallback_on_takes_cut_off_text() -> None:
    cut = Counted('cut', answer=ModelResponse(parts=[TextPart('half')], finish_reason='length'))
    agent = Agent(cut, capabilities=[ModelFallback(Counted('whole'), fallback_on=(ModelAPIError,))])
    assert (await agent.run('hi')).output == 'half'


async def test_response_handlers_turn_responses_down() -> None:
    def too_short(response: ModelResponse) -> bool:
        return len(response.text or '') < 3

    async def never(error: Exception) -> bool:
        return False

    agent = Agent(Counted('no'), capabilities=[ModelFallback(Counted('yes'), fallback_on=[never, too_short])])
    assert (await agent.run('hi')).output == 'yes'


async def test_a_streamed_response_is_taken_as_it_comes_with_a_warning_for_response_handlers() -> None:
    def rejects_all(response: ModelResponse) -> bool:
        return True  # pragma: no cover - streamed responses are not judged

    agent = Agent(Counted('streamed'), capabilities=[ModelFallback(Counted('other'), fallback_on=rejects_all)])
    with pytest.warns(UserWarning, match='not applied to streamed requests'):
        async with agent.run_stream('hi') as result:
            assert await result.get_output() == 'streamed'


async def test_a_stream_that_fails_to_open_falls_back_without_a_warning() -> None:
    first, second = Counted('first', error=http_error('first')), Counted('second')
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        async with Agent(first, capabilities=[ModelFallback(second)]).run_stream('hi') as result:
            assert await result.get_output() == 'second'


async def test_candidates_given_by_name_are_resolved_once_per_run() -> None:
    failing = Counted('failing', error=http_error('failing'))
    agent = Agent(failing, capabilities=[ModelFallback('test')])

    @agent.tool_plain
    def ping() -> str:
        return 'pong'

    result = await agent.run('hi')  # two steps, both answered by the same resolved model
    assert result.output == '{"ping":"pong"}'
    assert failing.calls == 2
    assert [m.model_name for m in result.all_messages() if isinstance(m, ModelResponse)] == ['test', 'test']


async def test_sticky_conversations_stay_on_the_model_that_answered() -> None:
    first, second = Counted('first', error=http_error('first')), Counted('second')
    agent = Agent(first, capabilities=[ModelFallback(second, sticky=True)])
    result = await agent.run('hi')
    assert result.all_messages()[-1].metadata == {
        STICKY_METADATA_KEY: {'model_id': 'function:second', 'fell_back': True}
    }
    again = await agent.run('again', message_history=result.all_messages())
    assert again.output == 'second'
    assert (first.calls, second.calls) == (1, 2)  # the second run did not ask the failing model first
    assert again.all_messages()[-1].metadata == noted('function:second', fell_back=False).metadata
    third = await agent.run('third', message_history=again.all_messages())  # still pinned: the fallback is older
    assert third.output == 'second'
    assert first.calls == 1


async def test_a_failing_sticky_model_goes_on_down_the_chain_and_back_to_the_step_model() -> None:
    first, second, third = Counted('first'), Counted('second', error=http_error('second')), Counted('third')
    history = pinned_to('function:second')
    agent = Agent(first, capabilities=[ModelFallback(second, third, sticky=True)])
    assert (await agent.run('again', message_history=history)).output == 'third'
    assert (first.calls, second.calls, third.calls) == (0, 1, 1)
    failing_third = Counted('third', error=http_error('third'))
    agent = Agent(first, capabilities=[ModelFallback(second, failing_third, sticky=True)])
    assert (await agent.run('again', message_history=history)).output == 'first'  # back round to the step's model


async def test_a_model_given_to_the_run_is_not_pinned_over() -> None:
    first, second, chosen = Counted('first'), Counted('second'), Counted('chosen')
    history = pinned_to('function:second')
    agent = Agent(first, capabilities=[ModelFallback(second, sticky=True)])
    assert (await agent.run('again', message_history=history, model=chosen)).output == 'chosen'


async def test_a_pin_on_the_step_model_or_on_a_model_left_out_changes_nothing() -> None:
    first, second = Counted('first'), Counted('second')
    for pinned in ('function:first', 'function:gone'):
        history = pinned_to(pinned)
        agent = Agent(first, capabilities=[ModelFallback(second, sticky=True)])
        assert (await agent.run('again', message_history=history)).output == 'first'


async def test_a_sticky_agent_model_given_by_name_is_the_default() -> None:
    history = pinned_to('function:second')
    second = Counted('second')
    by_name = Agent('test', capabilities=[ModelFallback(second, sticky=True)])
    assert (await by_name.run('a', message_history=history)).output == 'second'
    # With no agent model, the first candidate is the default: the pin moves the step from it.
    first = Counted('first')
    agent = Agent(capabilities=[ModelFallback(first, second, sticky=True)])
    assert (await agent.run('a', message_history=history)).output == 'second'
    assert first.calls == 0


def test_the_pin_is_the_model_of_the_latest_responses_since_a_fallback() -> None:
    request = ModelRequest(parts=[UserPromptPart('hi')])
    assert _fallen_back_to([request]) is None
    assert _fallen_back_to([noted('b', True), request, noted('b', False)]) == 'b'
    assert _fallen_back_to([noted('b', False), request, noted('b', False)]) is None
    assert _fallen_back_to([noted('a', True), request, noted('b', False)]) is None
    assert _fallen_back_to([noted('b', True), ModelResponse(parts=[])]) is None
    assert _fallen_back_to([ModelResponse(parts=[], metadata={STICKY_METADATA_KEY: 'odd'})]) is None


def test_it_needs_a_model_and_a_fallback_on() -> None:
    with pytest.raises(UserError, match='requires at least one model'):
        ModelFallback()
    with pytest.raises(UserError, match='created with empty fallback_on'):
        ModelFallback('test', fallback_on=())


def test_it_is_the_innermost_capability_and_shows_its_models() -> None:
    capability: ModelFallback[None] = ModelFallback('openai:gpt-5', sticky=True)
    assert capability.get_ordering().position == 'innermost'
    assert repr(capability).endswith("models=['openai:gpt-5'], sticky=True)")


def test_the_output_token_limit_error_is_an_unexpected_model_behavior() -> None:
    assert issubclass(OutputTokenLimitExceeded, UnexpectedModelBehavior)
    assert issubclass(IncompleteToolCall, OutputTokenLimitExceeded)
    only_incomplete = ModelFallback('test', fallback_on=IncompleteToolCall)
    assert not only_incomplete._predicates.output_token_limit
    assert ModelFallback('test', fallback_on=ContentFilterError)._predicates.content_filter


def test_specs_name_models_and_exception_classes() -> None:
    assert CAPABILITY_TYPES['ModelFallback'] is ModelFallback
    one = ModelFallback.from_spec('openai:gpt-5')
    assert one.models == ['openai:gpt-5']
    assert not one.sticky
    many = ModelFallback.from_spec(['a:b', 'c:d'], fallback_on='ModelHTTPError', sticky=True)
    assert many.models == ['a:b', 'c:d']
    assert many.sticky
    assert not many._predicates.content_filter
    with pytest.raises(UserError, match=r'takes model names, got \[3\]'):
        ModelFallback.from_spec(['a:b', 3])  # type: ignore[list-item]
    with pytest.raises(UserError, match=r"got \['ValueError'\]. Valid names: ModelAPIError, ModelHTTPError"):
        ModelFallback.from_spec('a:b', fallback_on=['ValueError'])  # type: ignore[list-item]
    with pytest.raises(UserError, match='must be a name or a list of names'):
        ModelFallback.from_spec({'a:b': 1})  # type: ignore[arg-type]


async def test_an_agent_spec_builds_it() -> None:
    agent = Agent.from_spec(
        {'model': 'test', 'capabilities': [{'ModelFallback': {'models': ['test'], 'fallback_on': ['ModelAPIError']}}]}
    )
    assert (await agent.run('hi')).output == 'success (no tool calls)'


def _chat_answer(text: str) -> dict[str, Any]:
    return {
        'id': 'chatcmpl-1',
        'object': 'chat.completion',
        'created': 1,
        'model': 'gpt-4o',
        'choices': [{'index': 0, 'message': {'role': 'assistant', 'content': text}, 'finish_reason': 'stop'}],
        'usage': {'prompt_tokens': 5, 'completion_tokens': 1, 'total_tokens': 6},
    }


async def test_a_provider_error_status_falls_back_to_another_provider_model(local_server: LocalServer) -> None:
    local_server.script(Reply(503, {'error': {'message': 'overloaded'}}), Reply(200, _chat_answer('from backup')))
    provider = OpenAIProvider(base_url=local_server.url, api_key='sk-x', max_retries=0)
    failing, backup = OpenAIChatModel('gpt-4o', provider=provider), OpenAIChatModel('gpt-4o-mini', provider=provider)
    async with provider:  # closes the client's connections
        result = await Agent(failing, capabilities=[ModelFallback(backup)]).run('hi')
    assert result.output == 'from backup'
    assert [r['body']['model'] for r in local_server.received] == ['gpt-4o', 'gpt-4o-mini']


async def test_a_streamed_provider_error_status_falls_back(local_server: LocalServer) -> None:
    delta = {'role': 'assistant', 'content': 'streamed backup'}
    event = {'id': 'c', 'object': 'chat.completion.chunk', 'created': 1, 'model': 'gpt-4o-mini',
             'choices': [{'index': 0, 'delta': delta, 'finish_reason': 'stop'}]}  # fmt: skip
    chunk = f'data: {json.dumps(event)}\n\n'.encode()
    local_server.script(
        Reply(429, {'error': {'message': 'slow down'}}),
        Reply(200, headers={'content-type': 'text/event-stream'}, chunks=[chunk, b'data: [DONE]\n\n']),
    )
    provider = OpenAIProvider(base_url=local_server.url, api_key='sk-x', max_retries=0)
    failing, backup = OpenAIChatModel('gpt-4o', provider=provider), OpenAIChatModel('gpt-4o-mini', provider=provider)
    async with provider, Agent(failing, capabilities=[ModelFallback(backup)]).run_stream('hi') as result:
        assert await result.get_output() == 'streamed backup'
    assert [r['body']['stream'] for r in local_server.received] == [True, True]
