"""Wire format of native (provider-run) tools for each API, without the recorded cassettes: the request tools
built from `edgewise.agent.native_tools`, the response blocks and items read into native parts, and what goes back
in a later request. Request bodies are checked against the official SDKs' request types."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import httpx
import pytest
from dirty_equals import IsStr
from inline_snapshot import snapshot

from edgewise.agent.exceptions import UserError
from edgewise.agent.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    TextPart,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models._anthropic_mapping import (
    AnthropicStreamedResponse,
    anthropic_model_response,
    anthropic_request_body,
)
from edgewise.agent.models._google_mapping import GoogleStreamedResponse, google_model_response, google_request_body
from edgewise.agent.models._openai_responses_mapping import (
    OpenAIResponsesStreamedResponse,
    responses_model_response,
    responses_request_body,
)
from edgewise.agent.models.anthropic import AnthropicModel
from edgewise.agent.models.openai import OpenAIChatModel
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
from edgewise.agent.profiles.anthropic import anthropic_model_profile
from edgewise.agent.profiles.google import google_model_profile
from edgewise.agent.profiles.openai import openai_model_profile
from edgewise.agent.providers.anthropic import AnthropicProvider
from edgewise.agent.providers.openai import OpenAIProvider
from edgewise.agent.tools import ToolDefinition

from ._chat import completion
from ._helpers import aiter_events, validate_anthropic_body, validate_google_body, validate_responses_body
from .conftest import validate_chat_body

pytestmark = pytest.mark.anyio

HI: list[ModelMessage] = [ModelRequest.user_text_prompt('hi')]


def _params(*tools: AbstractNativeTool, functions: list[ToolDefinition] | None = None) -> ModelRequestParameters:
    return ModelRequestParameters(native_tools=list(tools), function_tools=functions or [])


# --- Anthropic ---------------------------------------------------------------------------------------------------


def _anthropic(params: ModelRequestParameters, model: str = 'claude-sonnet-4-5', **settings: Any) -> dict[str, Any]:
    profile = anthropic_model_profile(model)
    assert profile is not None
    body = anthropic_request_body(model, HI, settings or None, params, profile)  # type: ignore[arg-type]
    validate_anthropic_body(body)
    return body


def test_anthropic_server_tools_in_a_request() -> None:
    body = _anthropic(
        _params(
            WebSearchTool(max_uses=3, blocked_domains=['x.com'], user_location={'city': 'Paris', 'country': 'FR'}),
            WebFetchTool(enable_citations=True, max_content_tokens=500),
            CodeExecutionTool(),
            MCPServerTool(id='wiki', url='https://mcp.example/mcp', allowed_tools=['ask'], authorization_token='t'),
        )
    )
    assert body['tools'] == snapshot(
        [
            {
                'name': 'web_search',
                'type': 'web_search_20250305',
                'max_uses': 3,
                'blocked_domains': ['x.com'],
                'user_location': {'type': 'approximate', 'city': 'Paris', 'country': 'FR'},
            },
            {
                'name': 'web_fetch',
                'type': 'web_fetch_20250910',
                'citations': {'enabled': True},
                'max_content_tokens': 500,
            },
            {'name': 'code_execution', 'type': 'code_execution_20260120'},
        ]
    )
    assert body['mcp_servers'] == snapshot(
        [
            {
                'type': 'url',
                'name': 'wiki',
                'url': 'https://mcp.example/mcp',
                'tool_configuration': {'enabled': True, 'allowed_tools': ['ask']},
                'authorization_token': 't',
            }
        ]
    )
    assert body['tool_choice'] == {'type': 'auto'}


def test_anthropic_code_execution_version_follows_the_model_and_the_setting() -> None:
    older = _anthropic(_params(CodeExecutionTool()), model='claude-3-7-sonnet-latest')
    assert older['tools'] == [{'name': 'code_execution', 'type': 'code_execution_20250825'}]
    pinned = _anthropic(_params(CodeExecutionTool()), anthropic_code_execution_tool_version='20250825')
    assert pinned['tools'] == [{'name': 'code_execution', 'type': 'code_execution_20250825'}]
    with pytest.raises(UserError, match=r"Supported versions are: '20250825'\."):
        _anthropic(
            _params(CodeExecutionTool()), model='claude-3-7-sonnet-latest',
            anthropic_code_execution_tool_version='20260120',
        )  # fmt: skip


def test_anthropic_memory_tool_takes_the_place_of_the_memory_function_tool() -> None:
    memory = ToolDefinition(name='memory', parameters_json_schema={'type': 'object', 'properties': {}})
    other = ToolDefinition(name='other', parameters_json_schema={'type': 'object', 'properties': {}})
    body = _anthropic(_params(MemoryTool(), functions=[memory, other]))
    assert [(t['name'], t.get('type')) for t in body['tools']] == [('other', None), ('memory', 'memory_20250818')]
    with pytest.raises(UserError, match=r"Native `MemoryTool` requires a 'memory' tool to be defined\."):
        _anthropic(_params(MemoryTool()))


async def test_anthropic_sends_the_beta_flags_the_tools_need() -> None:
    sent: list[httpx.Request] = []

    def respond(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        message = {'id': 'm', 'type': 'message', 'role': 'assistant', 'model': 'claude-sonnet-4-5', 'content': [],
                   'stop_reason': 'end_turn', 'usage': {'input_tokens': 1, 'output_tokens': 1}}  # fmt: skip
        return httpx.Response(200, json=message)

    client = httpx.AsyncClient(transport=httpx.MockTransport(respond))
    model = AnthropicModel('claude-sonnet-4-5', provider=AnthropicProvider(api_key='k', http_client=client))
    params = _params(WebFetchTool(), MCPServerTool(id='s', url='https://s'))
    await model.request(HI, {'extra_headers': {'anthropic-beta': 'other-beta'}}, params)
    await model.request(HI, None, _params(WebSearchTool()))
    assert sent[0].headers['anthropic-beta'] == 'mcp-client-2025-04-04,other-beta,web-fetch-2025-09-10'
    assert 'anthropic-beta' not in sent[1].headers


def test_anthropic_server_blocks_become_native_parts() -> None:
    response = anthropic_model_response(
        {
            'id': 'm',
            'model': 'claude-sonnet-4-5',
            'stop_reason': 'end_turn',
            'usage': {'input_tokens': 1, 'output_tokens': 1},
            'content': [
                {'type': 'server_tool_use', 'id': 's1', 'name': 'bash_code_execution', 'input': {'command': 'ls'}},
                {'type': 'bash_code_execution_tool_result', 'tool_use_id': 's1', 'content': {'stdout': 'a'}},
                {'type': 'mcp_tool_use', 'id': 'm1', 'name': 'ask', 'server_name': 'wiki', 'input': {'q': 1}},
                {'type': 'mcp_tool_result', 'tool_use_id': 'm1', 'is_error': False, 'content': [{'type': 'text'}]},
                {'type': 'text', 'text': 'Done.'},
            ],
        }
    )
    assert response.parts[:4] == snapshot(
        [
            NativeToolCallPart(
                tool_name='code_execution',
                args={'command': 'ls'},
                tool_call_id='s1',
                provider_name='anthropic',
                provider_details={'anthropic_tool_name': 'bash_code_execution'},
            ),
            NativeToolReturnPart(
                tool_name='code_execution',
                content={'stdout': 'a'},
                tool_call_id='s1',
                timestamp=response.parts[1].timestamp,  # type: ignore[union-attr]
                provider_name='anthropic',
                provider_details={'anthropic_tool_name': 'bash_code_execution'},
            ),
            NativeToolCallPart(
                tool_name='mcp_server:wiki',
                args={'action': 'call_tool', 'tool_name': 'ask', 'tool_args': {'q': 1}},
                tool_call_id='m1',
                provider_name='anthropic',
            ),
            NativeToolReturnPart(
                tool_name='mcp_server:wiki',
                content={'content': [{'type': 'text'}], 'is_error': False},
                tool_call_id='m1',
                timestamp=response.parts[3].timestamp,  # type: ignore[union-attr]
                provider_name='anthropic',
            ),
        ]
    )
    history: list[ModelMessage] = [*HI, response, ModelRequest.user_text_prompt('more')]
    profile = anthropic_model_profile('claude-sonnet-4-5')
    assert profile is not None
    assistant = anthropic_request_body('claude-sonnet-4-5', history, None, ModelRequestParameters(), profile)
    assert [b['type'] for b in assistant['messages'][1]['content']] == snapshot(
        ['server_tool_use', 'bash_code_execution_tool_result', 'mcp_tool_use', 'mcp_tool_result', 'text']
    )
    assert assistant['messages'][1]['content'][0]['name'] == 'bash_code_execution'


def test_other_providers_native_parts_are_not_sent_to_anthropic() -> None:
    foreign = ModelResponse(
        [NativeToolCallPart('web_search', {'q': 1}, 'x', provider_name='openai'), TextPart('Found.')],
        provider_name='openai',
    )
    body = _anthropic(ModelRequestParameters())
    profile = anthropic_model_profile('claude-sonnet-4-5')
    assert profile is not None
    body = anthropic_request_body('claude-sonnet-4-5', [*HI, foreign, *HI], None, ModelRequestParameters(), profile)
    assert body['messages'][1] == {'role': 'assistant', 'content': [{'type': 'text', 'text': 'Found.'}]}


async def test_anthropic_streamed_mcp_call_builds_its_arguments() -> None:
    events: list[dict[str, Any]] = [
        {'type': 'message_start', 'message': {'id': 'm', 'model': 'c', 'usage': {'input_tokens': 1}}},
        {'type': 'content_block_start', 'index': 0,
         'content_block': {'type': 'mcp_tool_use', 'id': 'm1', 'name': 'ask', 'server_name': 'wiki', 'input': {}}},
        {'type': 'content_block_delta', 'index': 0, 'delta': {'type': 'input_json_delta', 'partial_json': '{"q"'}},
        {'type': 'content_block_delta', 'index': 0, 'delta': {'type': 'input_json_delta', 'partial_json': ': 1}'}},
        {'type': 'content_block_stop', 'index': 0},
        {'type': 'content_block_start', 'index': 1,
         'content_block': {'type': 'mcp_tool_use', 'id': 'm2', 'name': 'list', 'server_name': 'wiki', 'input': {}}},
        {'type': 'content_block_stop', 'index': 1},
        {'type': 'content_block_start', 'index': 2,
         'content_block': {'type': 'server_tool_use', 'id': 's1', 'name': 'web_search', 'input': {}}},
        {'type': 'content_block_delta', 'index': 2,
         'delta': {'type': 'input_json_delta', 'partial_json': '{"query": "x"}'}},
        {'type': 'content_block_stop', 'index': 2},
    ]  # fmt: skip
    streamed = AnthropicStreamedResponse(
        ModelRequestParameters(), aiter_events(events), model_name='c', provider_name='anthropic'
    )
    async for _ in streamed:
        pass
    calls = [p for p in streamed.get().parts if isinstance(p, NativeToolCallPart)]
    assert [(c.tool_name, c.args_as_dict()) for c in calls] == snapshot(
        [
            ('mcp_server:wiki', {'action': 'call_tool', 'tool_name': 'ask', 'tool_args': {'q': 1}}),
            ('mcp_server:wiki', {'action': 'call_tool', 'tool_name': 'list', 'tool_args': {}}),
            ('web_search', {'query': 'x'}),
        ]
    )


# --- OpenAI Responses --------------------------------------------------------------------------------------------


def _responses(params: ModelRequestParameters, messages: list[ModelMessage] = HI, **settings: Any) -> dict[str, Any]:
    body = responses_request_body('gpt-5', messages, settings or None, params, openai_model_profile('gpt-5'))  # type: ignore[arg-type]
    validate_responses_body(body)
    return body


def test_responses_image_output_brings_the_image_generation_tool() -> None:
    image_output = ModelRequestParameters(allow_text_output=False, allow_image_output=True, output_mode='image')
    assert _responses(image_output)['tools'] == [{'type': 'image_generation'}]
    assert _responses(image_output)['tool_choice'] == 'auto'  # the image is an answer without a function call
    # An image generation tool given as a native tool is not doubled.
    given = dataclasses.replace(image_output, native_tools=[ImageGenerationTool(quality='low')])
    assert [tool['type'] for tool in _responses(given)['tools']] == ['image_generation']
    assert 'tools' not in _responses(ModelRequestParameters())


def test_responses_web_search_says_whether_it_may_fetch_live() -> None:
    cached = _responses(_params(WebSearchTool(external_web_access=False)))
    assert cached['tools'] == [{'type': 'web_search', 'search_context_size': 'medium', 'external_web_access': False}]
    live = _responses(_params(WebSearchTool(external_web_access=True)))
    assert live['tools'] == [{'type': 'web_search', 'search_context_size': 'medium', 'external_web_access': True}]


def test_responses_hosted_tools_in_a_request() -> None:
    body = _responses(
        _params(
            WebSearchTool(search_context_size='high', user_location={'country': 'NL'}, allowed_domains=['a.nl']),
            CodeExecutionTool(),
            FileSearchTool(file_store_ids=['vs_1']),
            ImageGenerationTool(aspect_ratio='3:2', model='gpt-image-1', input_fidelity='high'),
            MCPServerTool(id='wiki', url='https://mcp.example/mcp', description='Docs', headers={'X': '1'}),
            MCPServerTool(id='drive', url='x-openai-connector:connector_googledrive', authorization_token='tok'),
        ),
        openai_include_code_execution_outputs=True,
        openai_include_web_search_sources=True,
    )
    assert body['tools'] == snapshot(
        [
            {
                'type': 'web_search',
                'search_context_size': 'high',
                'user_location': {'type': 'approximate', 'country': 'NL'},
                'filters': {'allowed_domains': ['a.nl']},
            },
            {'type': 'code_interpreter', 'container': {'type': 'auto'}},
            {'type': 'file_search', 'vector_store_ids': ['vs_1']},
            {
                'type': 'image_generation',
                'action': 'auto',
                'background': 'auto',
                'moderation': 'auto',
                'output_compression': 100,
                'output_format': 'png',
                'partial_images': 0,
                'quality': 'auto',
                'size': '1536x1024',
                'model': 'gpt-image-1',
                'input_fidelity': 'high',
            },
            {
                'type': 'mcp',
                'server_label': 'wiki',
                'require_approval': 'never',
                'server_description': 'Docs',
                'headers': {'X': '1'},
                'server_url': 'https://mcp.example/mcp',
            },
            {
                'type': 'mcp',
                'server_label': 'drive',
                'require_approval': 'never',
                'authorization': 'tok',
                'connector_id': 'connector_googledrive',
            },
        ]
    )
    assert body['include'] == [
        'reasoning.encrypted_content',
        'code_interpreter_call.outputs',
        'web_search_call.action.sources',
    ]


def test_responses_image_sizes_are_checked() -> None:
    with pytest.raises(UserError, match="only supports `size` values: \\('auto', '1024x1024'"):
        _responses(_params(ImageGenerationTool(size='2K')))
    with pytest.raises(UserError, match='only supports `aspect_ratio` values: 1:1, 2:3, 3:2'):
        _responses(_params(ImageGenerationTool(aspect_ratio='16:9')))
    with pytest.raises(UserError, match='cannot combine `aspect_ratio` with a conflicting `size`'):
        _responses(_params(ImageGenerationTool(aspect_ratio='1:1', size='1024x1536')))
    assert _responses(_params(ImageGenerationTool(size='1024x1024')))['tools'][0]['size'] == '1024x1024'


def test_responses_hosted_items_become_native_parts_and_go_back() -> None:
    response = responses_model_response(
        {
            'id': 'r',
            'status': 'completed',
            'output': [
                {'type': 'web_search_call', 'id': 'ws_1', 'status': 'completed',
                 'action': {'type': 'search', 'query': 'q', 'sources': [{'url': 'u'}]}},
                {'type': 'code_interpreter_call', 'id': 'ci_1', 'status': 'completed', 'code': 'print(1)',
                 'container_id': 'cntr', 'outputs': [{'type': 'logs', 'logs': '1'}]},
                {'type': 'mcp_list_tools', 'id': 'ml_1', 'server_label': 'wiki', 'tools': [{'name': 'ask'}]},
                {'type': 'mcp_call', 'id': 'mc_1', 'server_label': 'wiki', 'name': 'ask', 'arguments': '{"q":1}',
                 'output': 'answer', 'error': None},
                {'type': 'file_search_call', 'id': 'fs_1', 'status': 'completed', 'queries': ['x'], 'results': None},
            ],
        }
    )  # fmt: skip
    pairs = [(c.tool_name, c.args, r.content) for c, r in response.native_tool_calls]
    assert pairs == snapshot(
        [
            ('web_search', {'type': 'search', 'query': 'q'}, {'status': 'completed', 'sources': [{'url': 'u'}]}),
            ('code_execution', {'container_id': 'cntr', 'code': 'print(1)'}, {'status': 'completed', 'logs': ['1']}),
            ('mcp_server:wiki', {'action': 'list_tools'}, {'tools': [{'name': 'ask'}], 'error': None}),
            (
                'mcp_server:wiki',
                {'action': 'call_tool', 'tool_name': 'ask', 'tool_args': {'q': 1}},
                {'output': 'answer', 'error': None},
            ),
            ('file_search', {'queries': ['x']}, {'status': 'completed'}),
        ]
    )
    body = _responses(ModelRequestParameters(), [*HI, response, ModelRequest.user_text_prompt('more')])
    assert body['input'][1:6] == snapshot(
        [
            {
                'type': 'web_search_call',
                'id': 'ws_1',
                'action': {'type': 'search', 'query': 'q'},
                'status': 'completed',
            },
            {
                'type': 'code_interpreter_call',
                'id': 'ci_1',
                'code': 'print(1)',
                'container_id': 'cntr',
                'outputs': None,
                'status': 'completed',
            },
            {'type': 'mcp_list_tools', 'id': 'ml_1', 'server_label': 'wiki', 'tools': []},
            {'type': 'mcp_call', 'id': 'mc_1', 'server_label': 'wiki', 'name': 'ask', 'arguments': '{"q":1}'},
            {'type': 'file_search_call', 'id': 'fs_1', 'queries': ['x'], 'status': 'completed'},
        ]
    )


async def test_responses_streamed_hosted_items_arrive_whole_when_done() -> None:
    item = {'type': 'web_search_call', 'id': 'ws_1', 'status': 'completed', 'action': {'type': 'search', 'query': 'q'}}
    events: list[dict[str, Any]] = [
        {'type': 'response.created', 'response': {'id': 'r', 'model': 'gpt-5'}},
        {'type': 'response.output_item.added', 'item': {**item, 'status': 'in_progress', 'action': None}},
        {'type': 'response.output_item.done', 'item': item},
        {'type': 'response.output_text.delta', 'item_id': 'msg_1', 'delta': 'Found.'},
    ]
    streamed = OpenAIResponsesStreamedResponse(
        ModelRequestParameters(), aiter_events(events), model_name='gpt-5', provider_name='openai'
    )
    async for _ in streamed:
        pass
    assert [p.part_kind for p in streamed.get().parts] == ['builtin-tool-call', 'builtin-tool-return', 'text']


# --- OpenAI Chat Completions -------------------------------------------------------------------------------------


async def test_chat_search_models_get_web_search_options_and_others_refuse() -> None:
    sent: list[dict[str, Any]] = []

    def respond(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        validate_chat_body(body)
        sent.append(body)
        return httpx.Response(200, json=completion(content='Sunny.'))

    provider = OpenAIProvider(api_key='k', http_client=httpx.AsyncClient(transport=httpx.MockTransport(respond)))
    search = WebSearchTool(search_context_size='low', user_location={'city': 'Utrecht', 'country': 'NL'})
    response = await OpenAIChatModel('gpt-4o-search-preview', provider=provider).request(HI, None, _params(search))
    assert response.text == 'Sunny.'
    assert sent[0]['web_search_options'] == {
        'search_context_size': 'low',
        'user_location': {'type': 'approximate', 'approximate': {'city': 'Utrecht', 'country': 'NL'}},
    }
    with pytest.raises(UserError, match=r"Native tool\(s\) \['WebSearchTool'\] not supported by this model"):
        await OpenAIChatModel('gpt-4o', provider=provider).request(HI, None, _params(WebSearchTool()))
    await OpenAIChatModel('gpt-4o', provider=provider).request(HI, None, _params(WebSearchTool(optional=True)))
    assert 'web_search_options' not in sent[1]


# --- Gemini ------------------------------------------------------------------------------------------------------


def _google(params: ModelRequestParameters, messages: list[ModelMessage] = HI) -> dict[str, Any]:
    profile = google_model_profile('gemini-2.5-flash')
    assert profile is not None
    body = google_request_body(messages, None, params, profile)
    validate_google_body(body)
    return body


def test_google_built_in_tools_in_a_request() -> None:
    weather = ToolDefinition(name='weather', parameters_json_schema={'type': 'object', 'properties': {}})
    body = _google(
        _params(
            WebSearchTool(), WebFetchTool(), CodeExecutionTool(), FileSearchTool(file_store_ids=['s']),
            functions=[weather],
        )
    )  # fmt: skip
    assert body['tools'] == snapshot(
        [
            {
                'functionDeclarations': [
                    {'name': 'weather', 'parametersJsonSchema': {'type': 'object', 'properties': {}}}
                ]
            },
            {'googleSearch': {}},
            {'urlContext': {}},
            {'codeExecution': {}},
            {'fileSearch': {'fileSearchStoreNames': ['s']}},
        ]
    )


def test_google_code_execution_and_grounding_become_native_parts() -> None:
    response = google_model_response(
        {
            'candidates': [
                {
                    'content': {
                        'role': 'model',
                        'parts': [
                            {'executableCode': {'language': 'PYTHON', 'code': 'print(2)'}},
                            {'codeExecutionResult': {'outcome': 'OUTCOME_OK', 'output': '2'}},
                            {'text': 'It is 2.'},
                        ],
                    },
                    'groundingMetadata': {
                        'webSearchQueries': ['two'],
                        'groundingChunks': [{'web': {'uri': 'https://a', 'title': 'A'}}],
                    },
                    'urlContextMetadata': {
                        'urlMetadata': [
                            {'retrievedUrl': 'https://b', 'urlRetrievalStatus': 'URL_RETRIEVAL_STATUS_SUCCESS'}
                        ]
                    },
                    'finishReason': 'STOP',
                }
            ]
        },
        model_name='gemini-2.5-flash',
    )
    pairs = [(c.tool_name, c.args, r.content) for c, r in response.native_tool_calls]
    assert pairs == snapshot(
        [
            ('web_search', {'queries': ['two']}, [{'uri': 'https://a', 'title': 'A'}]),
            (
                'web_fetch',
                {'urls': ['https://b']},
                [{'retrieved_url': 'https://b', 'url_retrieval_status': 'URL_RETRIEVAL_STATUS_SUCCESS'}],
            ),
            ('code_execution', {'language': 'PYTHON', 'code': 'print(2)'}, {'outcome': 'OUTCOME_OK', 'output': '2'}),
        ]
    )
    assert all(p.tool_call_id == IsStr(regex='pyd_ai_[0-9a-f]{32}') for p, _ in response.native_tool_calls)
    body = _google(ModelRequestParameters(), [*HI, response, ModelRequest.user_text_prompt('more')])
    # Only the code execution goes back: Gemini takes no search or fetch parts.
    assert body['contents'][1]['parts'] == snapshot(
        [
            {'executableCode': {'language': 'PYTHON', 'code': 'print(2)'}},
            {'codeExecutionResult': {'outcome': 'OUTCOME_OK', 'output': '2'}},
            {'text': 'It is 2.'},
        ]
    )


async def test_google_streamed_code_execution_pairs_call_and_result() -> None:
    chunks: list[dict[str, Any]] = [
        {'candidates': [{'content': {'parts': [{'executableCode': {'language': 'PYTHON', 'code': 'x'}}]}}]},
        {'candidates': [{'content': {'parts': [{'codeExecutionResult': {'outcome': 'OUTCOME_OK'}}]}}]},
        {'candidates': [{'content': {'parts': [{'text': 'Done.'}]}, 'finishReason': 'STOP',
                         'urlContextMetadata': {'urlMetadata': [{'retrievedUrl': 'https://b'}]}}]},
    ]  # fmt: skip
    streamed = GoogleStreamedResponse(
        ModelRequestParameters(), aiter_events(chunks), model_name='gemini-2.5-flash', provider_name='google-gla'
    )
    async for _ in streamed:
        pass
    response = streamed.get()
    assert [(c.tool_name, c.tool_call_id == r.tool_call_id) for c, r in response.native_tool_calls] == [
        ('code_execution', True),
        ('web_fetch', True),
    ]
    assert response.text == 'Done.'


def test_anthropic_reuses_the_code_execution_container_of_the_history() -> None:
    earlier = anthropic_model_response(
        {'id': 'm', 'model': 'c', 'content': [], 'stop_reason': 'end_turn', 'container': {'id': 'cntr_1'},
         'usage': {'input_tokens': 1, 'output_tokens': 1}}
    )  # fmt: skip
    assert earlier.provider_details == {'finish_reason': 'end_turn', 'container_id': 'cntr_1'}
    history: list[ModelMessage] = [*HI, earlier, ModelRequest.user_text_prompt('again')]
    profile = anthropic_model_profile('claude-sonnet-4-5')
    assert profile is not None

    def container(settings: Any) -> Any:
        body = anthropic_request_body('claude-sonnet-4-5', history, settings, _params(CodeExecutionTool()), profile)
        validate_anthropic_body(body)
        return body.get('container')

    assert container(None) == 'cntr_1'
    assert container({'anthropic_container': False}) is None
    assert container({'anthropic_container': {'id': 'other'}}) == 'other'
    foreign = ModelResponse([TextPart('x')], provider_name='openai', provider_details={'container_id': 'no'})
    body = anthropic_request_body('claude-sonnet-4-5', [*HI, foreign, *HI], None, ModelRequestParameters(), profile)
    assert 'container' not in body
