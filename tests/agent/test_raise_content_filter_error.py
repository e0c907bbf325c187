"""`RaiseContentFilterError` (pydantic-ai 2.x): any response the content filter stopped ends the run."""

from __future__ import annotations

import json
from typing import Any

import pytest

from edgewise.agent import Agent
from edgewise.agent.capabilities import CAPABILITY_TYPES, RaiseContentFilterError
from edgewise.agent.exceptions import ContentFilterError
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart
from edgewise.agent.models.function import AgentInfo, FunctionModel

pytestmark = pytest.mark.anyio


def _filtered(details: dict[str, Any] | None) -> FunctionModel:
    def llm(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse([TextPart('partial')], finish_reason='content_filter', provider_details=details)

    return FunctionModel(llm)


@pytest.mark.parametrize(
    ('details', 'message'),
    [
        ({'finish_reason': 'SAFETY'}, "Content filter triggered. Finish reason: 'SAFETY'"),
        ({'block_reason': 'OTHER'}, "Content filter triggered. Block reason: 'OTHER'"),
        ({'refusal': 'I cannot'}, "Content filter triggered. Refusal: 'I cannot'"),
        (None, 'Content filter triggered.'),
    ],
)
async def test_a_filtered_response_with_text_ends_the_run(details: dict[str, Any] | None, message: str) -> None:
    agent = Agent(_filtered(details), capabilities=[RaiseContentFilterError()])
    with pytest.raises(ContentFilterError) as caught:
        await agent.run('hi')
    assert caught.value.message == message
    assert caught.value.body is not None
    [stored] = json.loads(caught.value.body)
    assert (stored['finish_reason'], stored['parts'][0]['content']) == ('content_filter', 'partial')


async def test_without_the_capability_the_partial_text_is_the_output() -> None:
    assert (await Agent(_filtered(None)).run('hi')).output == 'partial'


async def test_other_responses_pass() -> None:
    agent = Agent(
        FunctionModel(lambda m, i: ModelResponse([TextPart('fine')])), capabilities=[RaiseContentFilterError()]
    )
    assert (await agent.run('hi')).output == 'fine'


def test_it_can_be_named_in_a_spec() -> None:
    assert CAPABILITY_TYPES['RaiseContentFilterError'] is RaiseContentFilterError
