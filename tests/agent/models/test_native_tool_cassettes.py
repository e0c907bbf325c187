"""Replay of the recorded traffic that used provider-hosted ("native") tools (`../shared/cassettes`), through
`AnthropicModel`, `OpenAIResponsesModel` and `GoogleModel`, in both directions:

- request: the recorded request's hosted tools, read back into `edgewise.agent.native_tools` classes, must come
  out of the model as the same tool specs (and MCP servers, beta flags and `include` entries);
- response: every hosted-tool block or item of the recorded response (JSON or streamed, re-chunked) must come
  back as a `NativeToolCallPart` / `NativeToolReturnPart` with the recorded id;
- history: a later request of the same cassette recorded the earlier response sent back; the response our model
  parsed must go back as the same hosted-tool blocks or items.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from typing import Any

import httpx
import pytest

from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, NativeToolCallPart, NativeToolReturnPart
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.native_tools import (
    AbstractNativeTool,
    CodeExecutionTool,
    FileSearchTool,
    ImageGenerationTool,
    MCPServerTool,
    MemoryTool,
    WebFetchTool,
    WebSearchTool,
)
from edgewise.agent.tools import ToolDefinition

from ._helpers import cassettes_root, load_interactions
from .test_cassette_replay import _api, _stream_events
from .test_provider_cassettes import _model

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(cassettes_root() is None, reason='the shared cassettes are not here'),
]

_ANTHROPIC_RESULTS = (
    'web_search_tool_result',
    'web_fetch_tool_result',
    'code_execution_tool_result',
    'bash_code_execution_tool_result',
    'text_editor_code_execution_tool_result',
    'mcp_tool_result',
)
_ANTHROPIC_CALLS = ('server_tool_use', 'mcp_tool_use')
_RESPONSES_ITEMS = (
    'web_search_call',
    'code_interpreter_call',
    'image_generation_call',
    'file_search_call',
    'mcp_list_tools',
    'mcp_call',
)
_GOOGLE_TOOLS = {'googleSearch': WebSearchTool, 'urlContext': WebFetchTool, 'codeExecution': CodeExecutionTool}
_GOOGLE_SNAKE = {'google_search': 'googleSearch', 'url_context': 'urlContext', 'code_execution': 'codeExecution'}
# Fields pydantic-ai 1.107 sends that the recorded requests (made by 1.96) did not have yet.
_NEWER_FIELDS = {'image_generation': {'action'}, 'web_search': {'search_context_size'}}


def _dropping_none(value: Any) -> Any:
    # The recorded bodies (made by the SDKs) spell out unset fields as null; ours leave them out.
    if isinstance(value, dict):
        return {k: _dropping_none(v) for k, v in value.items() if v is not None}
    return value


# --- recorded request -> our parameters ----------------------------------------------------------------------------


def _anthropic_params(body: dict[str, Any]) -> tuple[ModelRequestParameters, dict[str, Any]]:
    natives: list[AbstractNativeTool] = []
    functions: list[ToolDefinition] = []
    for tool in body.get('tools') or ():
        kind, spec = tool.get('type', 'custom'), _dropping_none(tool)
        if kind.startswith('web_search_'):
            location = {k: v for k, v in (spec.get('user_location') or {}).items() if k != 'type'} or None
            natives.append(
                WebSearchTool(
                    max_uses=spec.get('max_uses'),
                    allowed_domains=spec.get('allowed_domains'),
                    blocked_domains=spec.get('blocked_domains'),
                    user_location=location,  # type: ignore[arg-type]
                )
            )
        elif kind.startswith('code_execution_'):
            natives.append(CodeExecutionTool())
        elif kind.startswith('web_fetch_'):
            natives.append(
                WebFetchTool(
                    max_uses=spec.get('max_uses'),
                    allowed_domains=spec.get('allowed_domains'),
                    blocked_domains=spec.get('blocked_domains'),
                    enable_citations=bool((spec.get('citations') or {}).get('enabled')),
                    max_content_tokens=spec.get('max_content_tokens'),
                )
            )
        elif kind.startswith('memory_'):
            natives.append(MemoryTool())
            functions.append(ToolDefinition(name='memory', parameters_json_schema={'type': 'object'}))
        else:
            functions.append(ToolDefinition(name=tool['name'], parameters_json_schema=tool['input_schema']))
    for server in body.get('mcp_servers') or ():
        config = server.get('tool_configuration') or {}
        natives.append(
            MCPServerTool(
                id=server['name'],
                url=server['url'],
                allowed_tools=config.get('allowed_tools'),
                authorization_token=server.get('authorization_token'),
            )
        )
    settings = {'max_tokens': body['max_tokens']}
    return ModelRequestParameters(function_tools=functions, native_tools=natives), settings


def _responses_params(body: dict[str, Any]) -> tuple[ModelRequestParameters, dict[str, Any]]:
    natives: list[AbstractNativeTool] = []
    functions: list[ToolDefinition] = []
    for tool in body.get('tools') or ():
        kind = tool['type']
        if kind == 'web_search':
            location = {k: v for k, v in (tool.get('user_location') or {}).items() if k != 'type'} or None
            natives.append(
                WebSearchTool(
                    search_context_size=tool.get('search_context_size', 'medium'),
                    user_location=location,  # type: ignore[arg-type]
                    allowed_domains=(tool.get('filters') or {}).get('allowed_domains'),
                )
            )
        elif kind == 'code_interpreter':
            natives.append(CodeExecutionTool())
        elif kind == 'file_search':
            natives.append(FileSearchTool(file_store_ids=tool['vector_store_ids']))
        elif kind == 'image_generation':
            fields = ('action', 'background', 'moderation', 'output_compression', 'output_format', 'quality', 'size')
            natives.append(ImageGenerationTool(**{k: tool[k] for k in fields if k in tool}))
        elif kind == 'mcp':
            url = tool.get('server_url') or f'x-openai-connector:{tool["connector_id"]}'
            natives.append(
                MCPServerTool(
                    id=tool['server_label'],
                    url=url,
                    authorization_token=tool.get('authorization'),
                    description=tool.get('server_description'),
                    allowed_tools=tool.get('allowed_tools'),
                    headers=tool.get('headers'),
                )
            )
        else:
            functions.append(ToolDefinition(name=tool['name'], parameters_json_schema=tool['parameters']))
    include = body.get('include') or ()
    settings = {
        'openai_include_code_execution_outputs': 'code_interpreter_call.outputs' in include,
        'openai_include_web_search_sources': 'web_search_call.action.sources' in include,
    }
    return ModelRequestParameters(function_tools=functions, native_tools=natives), settings


def _google_params(body: dict[str, Any]) -> tuple[ModelRequestParameters, dict[str, Any]]:
    keys = [_GOOGLE_SNAKE.get(key, key) for tool in body.get('tools') or () for key in tool]
    natives = [_GOOGLE_TOOLS[key]() for key in keys if key in _GOOGLE_TOOLS]
    return ModelRequestParameters(native_tools=natives), {}


_PARAMS = {'anthropic': _anthropic_params, 'responses': _responses_params, 'google': _google_params}


def _hosted_tools(api: str, body: dict[str, Any]) -> list[Any]:
    """The hosted tools of a request body (what the request direction compares)."""
    tools = body.get('tools') or []
    if api == 'anthropic':
        hosted = [_dropping_none(t) for t in tools if 'type' in t and t['type'] != 'custom']
        return [*hosted, *(body.get('mcp_servers') or [])]
    if api == 'responses':
        return [_dropping_none(t) for t in tools if t['type'] != 'function']
    keys = [_GOOGLE_SNAKE.get(key, key) for tool in tools for key in tool]
    return [key for key in keys if key in _GOOGLE_TOOLS]


def _as_recorded(ours: list[Any], recorded: list[Any]) -> list[Any]:
    # Our tools without the fields 1.107 added since the recording, where the recorded tool lacks them.
    return [
        {k: v for k, v in mine.items() if k in theirs or k not in _NEWER_FIELDS.get(mine.get('type', ''), ())}
        if isinstance(mine, dict) and isinstance(theirs, dict)
        else mine
        for mine, theirs in zip(ours, recorded, strict=False)
    ] + ours[len(recorded) :]


# --- the interactions that use hosted tools ------------------------------------------------------------------------


def _response_body(interaction: dict[str, Any]) -> dict[str, Any]:
    events = _stream_events(interaction)
    if events is None:
        return dict(interaction['response']['parsed_body'])
    if _api(interaction['request']['uri']) == 'anthropic':
        start = next(e for e in events if e['type'] == 'message_start')['message']
        blocks = {e['index']: e['content_block'] for e in events if e['type'] == 'content_block_start'}
        return {**start, 'content': [blocks[i] for i in sorted(blocks)]}
    if _api(interaction['request']['uri']) == 'responses':
        return dict(next(e['response'] for e in events if e['type'] in ('response.completed', 'response.incomplete')))
    candidates = [c for e in events for c in e.get('candidates') or ()]
    parts = [p for c in candidates for p in (c.get('content') or {}).get('parts') or ()]
    # Streams report URL fetches (their metadata comes whole), not searches (as pydantic-ai).
    fetches = next((c['urlContextMetadata'] for c in candidates if c.get('urlContextMetadata')), None)
    return {'candidates': [{'content': {'parts': parts}, **({'urlContextMetadata': fetches} if fetches else {})}]}


def _recorded_native_ids(api: str, body: dict[str, Any]) -> list[tuple[str, str]]:
    """(call or return, id) of each hosted-tool block or item of a recorded response, in order."""
    found: list[tuple[str, str]] = []
    if api == 'anthropic':
        for block in body.get('content') or ():
            if block['type'] in _ANTHROPIC_CALLS:
                found.append(('call', block['id']))
            elif block['type'] in _ANTHROPIC_RESULTS:
                found.append(('return', block['tool_use_id']))
    elif api == 'responses':
        for item in body.get('output') or ():
            if item['type'] in _RESPONSES_ITEMS:
                found += [('call', item['id']), ('return', item['id'])]
    else:
        candidate = body['candidates'][0]
        if (candidate.get('groundingMetadata') or {}).get('webSearchQueries'):
            found += [('call', 'web_search'), ('return', 'web_search')]
        if (candidate.get('urlContextMetadata') or {}).get('urlMetadata'):
            found += [('call', 'web_fetch'), ('return', 'web_fetch')]
        for part in candidate['content']['parts']:
            if 'executableCode' in part:
                found.append(('call', 'code_execution'))
            elif 'codeExecutionResult' in part:
                found.append(('return', 'code_execution'))
    return found


def _our_native_ids(api: str, response: ModelResponse) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for part in response.parts:
        if isinstance(part, NativeToolCallPart | NativeToolReturnPart):
            kind = 'call' if isinstance(part, NativeToolCallPart) else 'return'
            if api == 'google':  # Gemini gives no ids
                found.append((kind, part.tool_name))
            else:
                found.append((kind, part.tool_call_id))
    return found


def _uses_hosted_tools(api: str, interaction: dict[str, Any]) -> bool:
    body = interaction['request'].get('parsed_body') or {}
    return bool(_hosted_tools(api, body))


HOSTED = [
    (name, position, interaction)
    for name, position, interaction in load_interactions()
    if (api := _api(interaction['request']['uri'])) is not None
    and interaction['response']['status']['code'] == 200
    and _uses_hosted_tools(api, interaction)
]


def _ids(items: list[tuple[str, int, dict[str, Any]]]) -> list[str]:
    return [f'{name}#{position}' for name, position, _ in items]


async def _replay(
    interaction: dict[str, Any], seed: int, messages: list[ModelMessage]
) -> tuple[ModelResponse, dict[str, Any], httpx.Request]:
    api = _api(interaction['request']['uri'])
    assert api is not None
    params, settings = _PARAMS[api](interaction['request']['parsed_body'])
    model, sent = _model(api, interaction, seed)
    if _stream_events(interaction) is None:
        response = await model.request(messages, settings, params)  # type: ignore[arg-type]
    else:
        async with model.request_stream(messages, settings, params) as stream:  # type: ignore[arg-type]
            async for _ in stream:
                pass
        response = stream.get()
    (request,) = sent
    return response, json.loads(request.content), request


def _user(text: str) -> ModelRequest:
    return ModelRequest.user_text_prompt(text)


@pytest.mark.parametrize(('seed', 'interaction'), list(enumerate(i for _, _, i in HOSTED)), ids=_ids(HOSTED))
async def test_hosted_tools_request_and_response(seed: int, interaction: dict[str, Any]) -> None:
    api = _api(interaction['request']['uri'])
    assert api is not None
    response, body, request = await _replay(interaction, seed, [_user('hi')])
    recorded_body = interaction['request']['parsed_body']
    recorded_tools = _hosted_tools(api, recorded_body)
    assert _as_recorded(_hosted_tools(api, body), recorded_tools) == recorded_tools
    if api == 'responses':
        assert set(recorded_body.get('include') or ()) == set(body.get('include') or ())
    if api == 'anthropic' and body.get('mcp_servers'):
        assert 'mcp-client-2025-04-04' in request.headers['anthropic-beta'].split(',')
    assert _our_native_ids(api, response) == _recorded_native_ids(api, _response_body(interaction))
    assert all(p.provider_name == response.provider_name for p in response.parts if p.part_kind.startswith('builtin'))


def _history_cases() -> list[tuple[str, int, dict[str, Any], dict[str, Any]]]:
    """(cassette, position, earlier interaction, later interaction) where the later request sends back hosted-tool
    blocks or items of the earlier response."""
    cases = []
    by_name: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for name, position, interaction in HOSTED:
        by_name.setdefault(name, []).append((position, interaction))
    for name, items in by_name.items():
        for (_, earlier), (position, later) in itertools.pairwise(items):
            api = _api(later['request']['uri'])
            if api is not None and _sent_back(api, later['request']['parsed_body']):
                cases.append((name, position, earlier, later))
    return cases


def _sent_back(api: str, body: dict[str, Any]) -> list[tuple[str, str]]:
    """(type, id) of the hosted-tool blocks or items a recorded request sends back."""
    if api == 'anthropic':
        blocks = [b for m in body['messages'] if m['role'] == 'assistant' for b in m['content']]
        return [
            (b['type'], b.get('id') or b['tool_use_id'])
            for b in blocks
            if b['type'] in (*_ANTHROPIC_CALLS, *_ANTHROPIC_RESULTS)
        ]
    if api == 'responses':
        return [(i['type'], i['id']) for i in body['input'] if i.get('type') in _RESPONSES_ITEMS]
    return [
        (key, 'code')
        for c in body['contents']
        if c.get('role') == 'model'
        for p in c['parts']
        for key in ('executableCode', 'codeExecutionResult')
        if key in p
    ]


HISTORY = _history_cases()


@pytest.mark.parametrize(
    ('earlier', 'later'), [(e, later) for _, _, e, later in HISTORY], ids=[f'{n}#{p}' for n, p, _, _ in HISTORY]
)
async def test_hosted_tool_parts_go_back_as_recorded(earlier: dict[str, Any], later: dict[str, Any]) -> None:
    api = _api(later['request']['uri'])
    assert api is not None
    previous, _, _ = await _replay(earlier, 0, [_user('hi')])
    _, body, _ = await _replay(later, 1, [_user('hi'), previous, _user('and then?')])
    assert _sent_back(api, body) == _sent_back(api, later['request']['parsed_body'])
    # A code execution container is reused from the response before (Anthropic).
    assert body.get('container') == later['request']['parsed_body'].get('container')


def test_how_many_recorded_hosted_tool_interactions_are_replayed() -> None:
    per_api = Counter(_api(i['request']['uri']) for _, _, i in HOSTED)
    print(f'\nhosted-tool interactions replayed: {dict(per_api)}; history cases: {len(HISTORY)}')
    assert (per_api['anthropic'], per_api['responses'], per_api['google'], len(HISTORY)) == (26, 21, 6, 8)
