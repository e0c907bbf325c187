"""`XaiModel` against a real HTTP server on 127.0.0.1 speaking xAI's REST Responses API: the settings mapped to
request fields, unified thinking as Grok's reasoning effort, the server-side tools, and the parsed response."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any, cast

import httpx
import pytest

from edgewise.agent.messages import ModelRequest, TextPart
from edgewise.agent.models import ModelRequestParameters, infer_model
from edgewise.agent.models.xai import XaiModel, XaiModelSettings, reasoning_effort
from edgewise.agent.native_tools import CodeExecutionTool, ImageGenerationTool, WebSearchTool, XSearchTool
from edgewise.agent.profiles.grok import GrokModelProfile
from edgewise.agent.providers.xai import XaiProvider

from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

KEY = 'xai-secret-key-8642'
PARAMS = ModelRequestParameters()


def answer(text: str = 'Hello from Grok.') -> dict[str, Any]:
    return {
        'id': 'resp_x1',
        'object': 'response',
        'model': 'grok-4.3',
        'status': 'completed',
        'output': [
            {
                'type': 'message',
                'id': 'msg_x1',
                'role': 'assistant',
                'status': 'completed',
                'content': [{'type': 'output_text', 'text': text, 'annotations': []}],
            }
        ],
        'usage': {'input_tokens': 5, 'output_tokens': 3, 'total_tokens': 8},
    }


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def grok(server: LocalServer, client: httpx.AsyncClient, name: str = 'grok-4.3') -> XaiModel:
    return XaiModel(name, provider=XaiProvider(api_key=KEY, base_url=server.url, http_client=client, max_retries=0))


def user() -> list[Any]:
    return [ModelRequest.user_text_prompt('Hi')]


def body_of(server: LocalServer) -> dict[str, Any]:
    received = server.received[-1]
    assert received['path'] == '/v1/responses'
    assert received['headers']['authorization'] == f'Bearer {KEY}'
    return cast(dict[str, Any], received['body'])


def test_xai_names_resolve_to_the_xai_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('XAI_API_KEY', KEY)
    model = infer_model('xai:grok-4.3')
    assert type(model) is XaiModel
    assert (model.system, model.model_name, model.base_url) == ('xai', 'grok-4.3', 'https://api.x.ai/v1')
    assert KEY not in repr(model)
    assert XaiModel.supported_native_tools() == {
        WebSearchTool, CodeExecutionTool, XSearchTool,
        *(t for t in XaiModel.supported_native_tools() if t.__name__ in ('MCPServerTool', 'FileSearchTool')),
    }  # fmt: skip
    assert ImageGenerationTool not in XaiModel.supported_native_tools()


def test_unified_thinking_as_grok_reasoning_effort() -> None:
    full = GrokModelProfile(grok_reasoning_efforts=frozenset(('none', 'low', 'medium', 'high')))
    mini = GrokModelProfile(grok_reasoning_efforts=frozenset(('low', 'high')))
    assert [reasoning_effort(level, full) for level in (False, True, 'minimal', 'medium', 'xhigh')] == [
        'none', 'medium', 'low', 'medium', 'high'
    ]  # fmt: skip
    assert [reasoning_effort(level, mini) for level in (False, True, 'medium')] == ['low', 'high', 'high']
    assert reasoning_effort(True, GrokModelProfile()) is None


async def test_xai_settings_become_request_fields(local_server: LocalServer, client: httpx.AsyncClient) -> None:
    local_server.script(Reply(200, answer()))
    settings = XaiModelSettings(
        xai_logprobs=True, xai_top_logprobs=3, xai_user='u-1', xai_store_messages=False,
        xai_previous_response_id='resp_0', xai_include_encrypted_content=True, xai_include_inline_citations=True,
        xai_include_x_search_output=True, xai_max_turns=4, xai_agent_count=16, max_tokens=100, temperature=0.3,
    )  # fmt: skip
    response = await grok(local_server, client).request(user(), settings, PARAMS)
    body = body_of(local_server)
    assert {k: body[k] for k in ('logprobs', 'top_logprobs', 'user', 'store', 'previous_response_id')} == {
        'logprobs': True, 'top_logprobs': 3, 'user': 'u-1', 'store': False, 'previous_response_id': 'resp_0'
    }  # fmt: skip
    assert (body['max_turns'], body['agent_count'], body['max_output_tokens'], body['temperature']) == (4, 16, 100, 0.3)
    assert set(body['include']) == {'reasoning.encrypted_content', 'inline_citations', 'x_search_call.outputs'}
    assert not any(key.startswith('xai') for key in body)
    assert response.parts == [TextPart('Hello from Grok.', id='msg_x1', provider_name='xai')]
    assert (response.provider_name, response.provider_response_id) == ('xai', 'resp_x1')
    assert (response.usage.input_tokens, response.usage.output_tokens) == (5, 3)


@pytest.mark.parametrize(
    ('model_name', 'settings', 'effort'),
    [
        ('grok-4.3', {'thinking': False}, 'none'),
        ('grok-4.3', {'thinking': 'high'}, 'high'),
        ('grok-4.3', {'thinking': 'high', 'xai_reasoning_effort': 'low'}, 'low'),
        ('grok-3-mini', {'thinking': False}, 'low'),  # cannot stop reasoning: as little as it can
        ('grok-4', {'thinking': True}, None),  # no reasoning effort to send
        ('grok-4', {'thinking': False}, None),
    ],
)
async def test_thinking_is_sent_as_the_reasoning_effort(
    local_server: LocalServer, client: httpx.AsyncClient, model_name: str, settings: dict[str, Any], effort: Any
) -> None:
    local_server.script(Reply(200, answer()))
    await grok(local_server, client, model_name).request(user(), cast(XaiModelSettings, settings), PARAMS)
    assert body_of(local_server).get('reasoning', {}).get('effort') == effort


async def test_server_side_tools_and_x_search(local_server: LocalServer, client: httpx.AsyncClient) -> None:
    local_server.script(Reply(200, answer()))
    x_search = XSearchTool(
        allowed_x_handles=['xai'], from_date=datetime(2026, 1, 2, 3, 4), enable_image_understanding=True
    )
    params = ModelRequestParameters(native_tools=[WebSearchTool(), CodeExecutionTool(), x_search])
    await grok(local_server, client).request(user(), None, params)
    tools = body_of(local_server)['tools']
    assert [tool['type'] for tool in tools] == ['web_search', 'code_interpreter', 'x_search']
    assert tools[2] == {
        'type': 'x_search', 'allowed_x_handles': ['xai'], 'from_date': '2026-01-02', 'enable_image_understanding': True
    }  # fmt: skip
    assert body_of(local_server)['tool_choice'] == 'auto'


async def test_streamed_response(local_server: LocalServer, client: httpx.AsyncClient) -> None:
    events: list[dict[str, Any]] = [
        {'type': 'response.created', 'response': {'id': 'resp_x2', 'model': 'grok-4.3'}},
        {'type': 'response.output_item.added', 'output_index': 0,
         'item': {'type': 'message', 'id': 'msg_x2', 'role': 'assistant', 'content': []}},
        {'type': 'response.output_text.delta', 'output_index': 0, 'item_id': 'msg_x2', 'delta': 'Hel'},
        {'type': 'response.output_text.delta', 'output_index': 0, 'item_id': 'msg_x2', 'delta': 'lo'},
        {'type': 'response.completed', 'response': {**answer('Hello'), 'id': 'resp_x2'}},
    ]  # fmt: skip
    chunks = [f'event: {e["type"]}\ndata: {json.dumps(e)}\n\n'.encode() for e in events]
    local_server.script(Reply(200, headers={'content-type': 'text/event-stream'}, chunks=chunks))
    async with grok(local_server, client).request_stream(user(), None, PARAMS) as stream:
        async for _ in stream:
            pass
    assert body_of(local_server)['stream'] is True
    response = stream.get()
    assert [part.content for part in response.parts if isinstance(part, TextPart)] == ['Hello']
    assert response.provider_name == 'xai'


async def test_every_x_search_option(local_server: LocalServer, client: httpx.AsyncClient) -> None:
    local_server.script(Reply(200, answer()))
    x_search = XSearchTool(excluded_x_handles=['spam'], to_date=datetime(2026, 2, 3), enable_video_understanding=True)
    await grok(local_server, client).request(user(), None, ModelRequestParameters(native_tools=[x_search]))
    assert body_of(local_server)['tools'] == [
        {
            'type': 'x_search',
            'excluded_x_handles': ['spam'],
            'to_date': '2026-02-03',
            'enable_video_understanding': True,
        }
    ]
