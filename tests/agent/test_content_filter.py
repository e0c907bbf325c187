"""A response emptied by the provider's content filter ends the run with `ContentFilterError`."""

from __future__ import annotations

import json

import pytest

from edgewise.agent import Agent
from edgewise.agent.exceptions import ContentFilterError
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart
from edgewise.agent.models.function import AgentInfo, FunctionModel

pytestmark = pytest.mark.anyio


def _filtered(details: dict[str, str] | None) -> FunctionModel:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[], model_name='m', finish_reason='content_filter', provider_details=details)

    return FunctionModel(model)


@pytest.mark.parametrize(
    ('details', 'message'),
    [
        ({'finish_reason': 'content_filter'}, "Content filter triggered. Finish reason: 'content_filter'"),
        ({'block_reason': 'SAFETY'}, "Content filter triggered. Block reason: 'SAFETY'"),
        ({'refusal': 'I cannot'}, "Content filter triggered. Refusal: 'I cannot'"),
        (None, 'Content filter triggered.'),
    ],
)
async def test_an_empty_filtered_response_raises_content_filter_error(
    details: dict[str, str] | None, message: str
) -> None:
    with pytest.raises(ContentFilterError) as info:
        await Agent(_filtered(details)).run('go')
    assert info.value.message == message
    assert info.value.body is not None
    [response] = json.loads(info.value.body)
    assert (response['finish_reason'], response['parts']) == ('content_filter', [])


async def test_a_filtered_response_with_content_is_used() -> None:
    def partial(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart('part of it')], finish_reason='content_filter')

    assert (await Agent(FunctionModel(partial)).run('go')).output == 'part of it'
