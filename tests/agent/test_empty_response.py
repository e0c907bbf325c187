"""A response with nothing to act on (no parts, only empty text, or only reasoning), as pydantic-ai 2.x handles it:
`None` when the output type allows it, an error for the token limit or the content filter, else a retry prompt
naming the kinds of output the model may give."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.agent import Agent, capture_run_messages
from edgewise.agent.exceptions import ContentFilterError, UnexpectedModelBehavior
from edgewise.agent.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from edgewise.agent.models.function import AgentInfo, FunctionModel

pytestmark = pytest.mark.anyio

STR_OR_NONE: Any = str | None


def answering(*responses: ModelResponse) -> FunctionModel:
    """A model giving these responses in order."""
    remaining = list(responses)

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return remaining.pop(0)

    return FunctionModel(answer)


async def test_only_empty_text_is_a_none_output_when_none_is_allowed() -> None:
    result = await Agent(answering(ModelResponse([TextPart('')])), output_type=STR_OR_NONE).run('go')
    assert result.output is None
    assert [m.parts for m in result.all_messages()][1:] == [[TextPart('')]]


async def test_empty_text_with_reasoning_is_a_none_output_when_none_is_allowed() -> None:
    model = answering(ModelResponse([TextPart(''), ThinkingPart('nothing to add')]))
    assert (await Agent(model, output_type=STR_OR_NONE).run('go')).output is None


async def test_reasoning_only_after_a_tool_call_is_a_none_output_when_none_is_allowed() -> None:
    model = answering(ModelResponse([ToolCallPart('noop', {}, 'c1')]), ModelResponse([ThinkingPart('done')]))
    agent = Agent(model, output_type=STR_OR_NONE)

    @agent.tool_plain
    def noop() -> str:
        return 'ok'

    result = await agent.run('go')
    assert result.output is None
    assert len(result.all_messages()) == 4


async def test_text_sent_with_tool_calls_is_not_the_output_of_a_later_reasoning_only_response() -> None:
    model = answering(
        ModelResponse([TextPart('saving'), ToolCallPart('noop', {}, 'c1')]),
        ModelResponse([ThinkingPart('done')]),
        ModelResponse([TextPart('saved')]),
    )
    agent = Agent(model)

    @agent.tool_plain
    def noop() -> str:
        return 'ok'

    result = await agent.run('go')
    assert result.output == 'saved'
    retry = result.all_messages()[4]
    assert isinstance(retry, ModelRequest)
    assert isinstance(retry.parts[0], RetryPromptPart)
    assert len(retry.parts) == 1
    assert retry.parts[0].content == 'Please return text or call a tool.'


async def test_empty_text_cut_by_the_content_filter_raises_even_when_none_is_allowed() -> None:
    response = ModelResponse(
        [TextPart('')], finish_reason='content_filter', provider_details={'finish_reason': 'content_filter'}
    )
    with pytest.raises(ContentFilterError) as raised:
        await Agent(answering(response), output_type=STR_OR_NONE).run('go')
    assert raised.value.message == "Content filter triggered. Finish reason: 'content_filter'"


async def test_reasoning_only_cut_by_the_content_filter_gets_a_retry_prompt() -> None:
    model = answering(
        ModelResponse([ThinkingPart('hmm')], finish_reason='content_filter'), ModelResponse([TextPart('ok')])
    )
    result = await Agent(model).run('go')
    assert result.output == 'ok'
    retry = result.all_messages()[2]
    assert isinstance(retry, ModelRequest)
    assert isinstance(retry.parts[0], RetryPromptPart)
    assert retry.parts[0].content == 'Please return text.'


@pytest.mark.parametrize('output_type', [str, STR_OR_NONE])
async def test_empty_text_at_the_token_limit_raises_the_token_limit_error(output_type: Any) -> None:
    model = answering(ModelResponse([TextPart('')], finish_reason='length'))
    with pytest.raises(UnexpectedModelBehavior, match=r'^Model token limit \(provider default\) exceeded before any'):
        await Agent(model, output_type=output_type).run('go')


async def test_an_empty_response_with_a_plain_structured_type_may_also_answer_with_text() -> None:
    agent = Agent(answering(ModelResponse([]), ModelResponse([])), output_type=tuple[str, int])
    with capture_run_messages() as messages, pytest.raises(UnexpectedModelBehavior, match='output retries'):
        await agent.run('go')
    retry = messages[2]
    assert isinstance(retry, ModelRequest)
    assert isinstance(retry.parts[0], RetryPromptPart)
    assert retry.parts[0].content == 'Please return text or include your response in a tool call.'


async def test_output_tools_carry_the_output_toolset_id() -> None:
    seen: list[str | None] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.extend(tool.toolset_id for tool in info.output_tools)
        return ModelResponse([ToolCallPart('final_result', {'response': 1})])

    assert (await Agent(FunctionModel(answer), output_type=int).run('go')).output == 1
    assert seen == ['<output>']
