"""`ToolFailed`: a tool call that is done and failed reaches the model as a tool return with `outcome='failed'`,
without a retry prompt and without spending the tool's retry budget (pydantic-ai 2.x)."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from pydantic import TypeAdapter

from edgewise.agent import Agent, RunContext, ToolFailed
from edgewise.agent.capabilities import AbstractCapability
from edgewise.agent.exceptions import ModelRetry, ToolFailedError
from edgewise.agent.messages import (
    BinaryContent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models._anthropic_mapping import anthropic_request_body
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.profiles.anthropic import anthropic_model_profile
from edgewise.agent.tools import DeferredToolCallResult, DeferredToolRequests, DeferredToolResults, ToolDefinition

pytestmark = pytest.mark.anyio


def _call_then_answer(*calls: ToolCallPart) -> FunctionModel:
    """A model that calls `calls` first, then answers with the tool returns it was sent, as text."""

    def llm(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=list(calls))
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        sent = [p.model_response_str() for p in last.parts if isinstance(p, ToolReturnPart)]
        return ModelResponse(parts=[TextPart(' | '.join(sent))])

    return FunctionModel(llm)


def _returns(messages: list[ModelMessage]) -> dict[str, ToolReturnPart]:
    return {p.tool_call_id: p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)}


async def test_a_tool_raising_tool_failed_gives_a_failed_return_and_the_run_goes_on() -> None:
    agent = Agent(_call_then_answer(ToolCallPart('fail', {}, 'c1'), ToolCallPart('ok', {}, 'c2')))

    @agent.tool_plain
    def fail() -> str:
        raise ToolFailed('Disk full')

    @agent.tool_plain
    def ok() -> str:
        return 'fine'

    result = await agent.run('go')
    returns = _returns(result.all_messages())
    assert (returns['c1'].outcome, returns['c1'].content) == ('failed', 'Disk full')
    assert (returns['c2'].outcome, returns['c2'].content) == ('success', 'fine')
    assert not any(isinstance(p, RetryPromptPart) for m in result.all_messages() for p in m.parts)
    # The model sees the failure wrapped as an error (it has no error channel of its own).
    assert result.output == '{"error":"Disk full"} | fine'
    assert result.usage.tool_calls == 2


async def test_tool_failed_does_not_spend_the_retry_budget() -> None:
    count = 0

    def llm(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        nonlocal count
        count += 1
        if count <= 4:
            return ModelResponse(parts=[ToolCallPart('fail', {}, f'c{count}')])
        return ModelResponse(parts=[TextPart('gave up')])

    agent = Agent(FunctionModel(llm), retries=0)

    @agent.tool_plain
    def fail() -> str:
        raise ToolFailed('still down')

    result = await agent.run('go')
    assert result.output == 'gave up'
    assert [p.outcome for p in _returns(result.all_messages()).values()] == ['failed'] * 4


async def test_an_args_validator_raising_tool_failed_fails_the_call_without_running_it() -> None:
    ran: list[int] = []

    def check(ctx: RunContext[object], x: int) -> None:
        raise ToolFailed(f'{x} is not served here')

    agent = Agent(_call_then_answer(ToolCallPart('tool', {'x': 3}, 'c1')), retries=0)

    @agent.tool_plain(args_validator=check)
    def tool(x: int) -> int:
        ran.append(x)  # pragma: no cover
        return x  # pragma: no cover

    result = await agent.run('go')
    assert (_returns(result.all_messages())['c1'].outcome, ran) == ('failed', [])


class _FailBeforeExecute(AbstractCapability[Any]):
    async def before_tool_execute(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: dict[str, Any]
    ) -> dict[str, Any]:
        raise ToolFailed('blocked before running')


class _FailInWrap(AbstractCapability[Any]):
    async def wrap_tool_execute(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: dict[str, Any], handler: Any
    ) -> Any:
        try:
            return await handler(args)
        except RuntimeError as error:
            raise ToolFailed(f'wrapped: {error}') from error


class _RecoverError(AbstractCapability[Any]):
    """An `on_tool_execute_error` that would turn any error into a success: `ToolFailed` must pass it by."""

    async def on_tool_execute_error(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: dict[str, Any], error: Any
    ) -> Any:
        return 'recovered'


class _FailBeforeValidate(AbstractCapability[Any]):
    async def before_tool_validate(
        self, ctx: RunContext[Any], *, call: ToolCallPart, tool_def: ToolDefinition, args: Any
    ) -> Any:
        raise ToolFailed('refused before validation')


@pytest.mark.parametrize(
    ('capabilities', 'raises', 'message', 'ran'),
    [
        ([_FailBeforeExecute()], False, 'blocked before running', False),
        ([_FailInWrap()], True, 'wrapped: broken', True),
        ([_FailInWrap(), _RecoverError()], True, 'wrapped: broken', True),
        ([_FailBeforeValidate()], False, 'refused before validation', False),
    ],
    ids=['before_execute', 'wrap_execute', 'wrap_execute_not_recovered', 'before_validate'],
)
async def test_tool_failed_from_a_tool_hook_fails_the_call(
    capabilities: list[AbstractCapability[Any]], raises: bool, message: str, ran: bool
) -> None:
    calls: list[int] = []
    agent = Agent(_call_then_answer(ToolCallPart('tool', {}, 'c1')), capabilities=capabilities, retries=0)

    @agent.tool_plain
    def tool() -> str:
        calls.append(1)
        if raises:
            raise RuntimeError('broken')
        return 'ok'  # pragma: no cover

    result = await agent.run('go')
    part = _returns(result.all_messages())['c1']
    assert (part.outcome, part.content, bool(calls)) == ('failed', message, ran)


async def test_tool_failed_from_a_validate_hook_overrides_an_approval_deferral() -> None:
    agent: Agent[None, Any] = Agent(
        _call_then_answer(ToolCallPart('tool', {}, 'c1')),
        capabilities=[_FailBeforeValidate()],
        output_type=[str, DeferredToolRequests],
    )

    @agent.tool_plain(requires_approval=True)
    def tool() -> str:
        return 'ok'  # pragma: no cover

    result = await agent.run('go')
    assert result.output == '{"error":"refused before validation"}'


async def test_tool_failed_as_a_deferred_result_reaches_the_model_as_a_failed_return() -> None:
    agent: Agent[None, Any] = Agent(
        _call_then_answer(ToolCallPart('external', {}, 'c1')), output_type=[str, DeferredToolRequests]
    )

    @agent.tool_plain(requires_approval=True)
    def external() -> str:
        return 'ran'  # pragma: no cover

    first = await agent.run('go')
    assert isinstance(first.output, DeferredToolRequests)
    results = DeferredToolResults(calls={'c1': ToolFailed('The store is closed')})
    second = await agent.run(message_history=first.all_messages(), deferred_tool_results=results)
    part = _returns(second.all_messages())['c1']
    assert (part.outcome, part.content) == ('failed', 'The store is closed')


def test_tool_failed_is_stored_with_its_kind_and_loads_back() -> None:
    adapter = TypeAdapter(DeferredToolResults)
    results = DeferredToolResults(calls={'a': ToolFailed('gone'), 'b': ModelRetry('again'), 'c': 3})
    stored = adapter.dump_json(results)
    assert stored == (
        b'{"calls":{"a":{"message":"gone","kind":"tool-failed"},"b":{"message":"again","kind":"model-retry"},'
        b'"c":3},"approvals":{},"metadata":{}}'
    )
    assert adapter.validate_json(stored) == results
    assert TypeAdapter(DeferredToolCallResult).validate_python(ToolFailed('x')) == ToolFailed('x')
    assert TypeAdapter(ToolFailed).json_schema()['required'] == ['message', 'kind']


def test_tool_failed_equality_and_hash() -> None:
    assert ToolFailed('a') == ToolFailed('a')
    assert ToolFailed('a') != ToolFailed('b')
    assert ToolFailed('a') != ModelRetry('a')
    assert hash(ToolFailed('a')) == hash(ToolFailed('a'))
    assert ToolFailed('a').message == str(ToolFailed('a')) == 'a'


def test_tool_failed_error_carries_the_part_and_pickles() -> None:
    part = ToolReturnPart('tool', {'code': 42}, 'c1', outcome='failed')
    error = ToolFailedError(part)
    assert str(error) == '{"code":42}'
    restored = pickle.loads(pickle.dumps(error))
    assert restored.tool_failed == part
    assert str(restored) == str(error)


def test_a_failed_return_is_wrapped_as_an_error_unless_asked_not_to() -> None:
    image = BinaryContent(b'\x89PNG', media_type='image/png', identifier='img')
    failed = ToolReturnPart('tool', ['broken', image], 'c1', outcome='failed')
    assert failed.model_response_str() == '{"error":"broken"}'
    assert failed.model_response_str(wrap_if_error=False) == 'broken'
    assert failed.model_response_object() == {'error': 'broken'}
    assert failed.model_response_object(wrap_if_error=False) == {'return_value': 'broken'}
    assert failed.content_items(mode='str') == ['{"error":"broken"}', image]
    assert failed.content_items(mode='jsonable') == [{'error': 'broken'}, image]
    assert failed.content_items(mode='str', wrap_if_error=False) == ['broken', image]
    assert failed.content_items() == ['broken', image]
    assert failed.model_response_str_and_user_content() == (
        '[{"error":"broken"},"See file img."]',
        ['<pyai:tool_result tool_name="tool" tool_call_id="c1" file_id="img">', image, '</pyai:tool_result>'],
    )
    assert failed.model_response_str_and_user_content(wrap_if_error=False) == (
        '["broken","See file img."]',
        ['<pyai:tool_result tool_name="tool" tool_call_id="c1" file_id="img">', image, '</pyai:tool_result>'],
    )
    assert ToolReturnPart('tool', 'plain', 'c1', outcome='failed').model_response_str_and_user_content() == (
        '{"error":"plain"}',
        [],
    )
    assert "outcome='failed'" in repr(failed)
    assert 'outcome' not in repr(ToolReturnPart('tool', 'fine', 'c1'))


def test_anthropic_flags_a_failed_return_with_is_error_and_sends_it_unwrapped() -> None:
    profile = anthropic_model_profile('claude-sonnet-4-5')
    assert profile is not None
    messages: list[ModelMessage] = [
        ModelRequest.user_text_prompt('go'),
        ModelResponse(parts=[ToolCallPart('tool', {}, 'c1')]),
        ModelRequest(parts=[ToolReturnPart('tool', 'Disk full', 'c1', outcome='failed')]),
    ]
    body = anthropic_request_body('claude-sonnet-4-5', messages, None, ModelRequestParameters(), profile)
    assert body['messages'][-1]['content'] == [
        {
            'type': 'tool_result',
            'tool_use_id': 'c1',
            'content': [{'type': 'text', 'text': 'Disk full'}],
            'is_error': True,
        }
    ]
