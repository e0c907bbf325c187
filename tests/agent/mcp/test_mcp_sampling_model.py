"""`MCPSamplingModel`: an agent inside an MCP server (the FastMCP test server) asks the client's model, over MCP
sampling; the client is Edgewise's own `MCPServerStdio`, whose sampling model answers."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, cast

import pytest

import edgewise.agent
import edgewise.graph
from edgewise.agent.exceptions import ModelRetry, UnexpectedModelBehavior
from edgewise.agent.messages import (
    AudioUrl,
    BinaryContent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.mcp_sampling import MCPSamplingModel

from .conftest import fastmcp_stdio
from .fastmcp_server import PIXEL

pytestmark = pytest.mark.anyio

# The server process gets only the variables it is given: it imports Edgewise from this checkout, and is measured
# by coverage when the tests are.
_SOURCES = [Path(edgewise.agent.__file__).parents[2], Path(edgewise.graph.__file__).parents[2]]
_ENV = {
    'PYTHONPATH': os.pathsep.join(str(path) for path in _SOURCES),
    **{name: value for name, value in os.environ.items() if name.startswith('COVERAGE')},
}


class Client:
    """The client's sampling model: answers `answer`, and keeps what it was asked."""

    def __init__(self, answer: str) -> None:
        self.asked: list[tuple[list[ModelMessage], dict[str, Any]]] = []
        self.answer = answer
        self.model = FunctionModel(self.respond, model_name='client-model')

    def respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.asked.append((messages, dict(info.model_settings or {})))
        return ModelResponse(parts=[TextPart(self.answer)])


async def test_an_agent_in_a_server_is_answered_by_the_clients_model() -> None:
    client = Client('forty-two')
    async with fastmcp_stdio(sampling_model=client.model, env=_ENV) as server:
        answer = await server.direct_call_tool('ask_agent', {'question': 'What is the answer?'})
    assert answer == 'forty-two (by client-model)'
    [(messages, settings)] = client.asked
    assert settings == {'max_tokens': 99, 'temperature': 0.25, 'stop_sequences': ['END']}
    # The history as the client rebuilt it from the sampling request: instructions as the system prompt, the
    # earlier exchange, then the question and its image (one sampling message each).
    assert [type(message).__name__ for message in messages] == ['ModelRequest', 'ModelResponse', 'ModelRequest']
    first, earlier, last = messages
    assert isinstance(first, ModelRequest)
    assert isinstance(last, ModelRequest)
    system, earlier_question = first.parts
    assert isinstance(system, SystemPromptPart)
    assert system.content == 'Answer briefly.'
    assert isinstance(earlier_question, UserPromptPart)
    assert earlier_question.content == 'earlier'
    assert earlier.parts == [TextPart('earlier answer')]
    question, image = last.parts
    assert isinstance(question, UserPromptPart)
    assert question.content == 'What is the answer?'
    assert isinstance(image, UserPromptPart)
    assert not isinstance(image.content, str)
    [picture] = image.content
    assert isinstance(picture, BinaryContent)
    assert (picture.data, picture.media_type) == (PIXEL, 'image/png')


async def test_a_streamed_run_fails_clearly() -> None:
    async with fastmcp_stdio(sampling_model=Client('unused').model, env=_ENV) as server:
        with pytest.raises(ModelRetry, match='ask_agent: MCP Sampling does not support streaming'):
            await server.direct_call_tool('ask_agent', {'question': 'Hi?', 'stream': True})


def _model() -> MCPSamplingModel:
    # For what fails before anything is sent: no session is needed.
    return MCPSamplingModel(cast(Any, None))


def test_the_model_names_itself_and_has_no_provider() -> None:
    model = _model()
    assert (model.model_name, model.system, model.provider, model.default_max_tokens) == (
        'mcp-sampling',
        'MCP',
        None,
        16_384,
    )


async def test_streaming_is_not_supported() -> None:
    with pytest.raises(NotImplementedError, match='MCP Sampling does not support streaming'):
        async with _model().request_stream([], None, ModelRequestParameters()):
            pass  # pragma: no cover


async def test_content_sampling_cannot_carry_is_refused() -> None:
    audio = ModelRequest(parts=[UserPromptPart(['listen', AudioUrl('https://example.com/a.mp3')])])
    with pytest.raises(NotImplementedError, match='MCP sampling takes text and images from the user, not AudioUrl'):
        await _model().request([audio], None, ModelRequestParameters())
    history: list[ModelMessage] = [
        ModelRequest(parts=[SystemPromptPart('s'), UserPromptPart('q'), ToolReturnPart('t', 1, tool_call_id='c')]),
        ModelResponse(parts=[ToolCallPart('t', {})]),
    ]
    with pytest.raises(UnexpectedModelBehavior, match='Unexpected part type: ToolCallPart, expected TextPart'):
        await _model().request(history, None, ModelRequestParameters())
