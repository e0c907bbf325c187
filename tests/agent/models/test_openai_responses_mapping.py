"""The OpenAI Responses API mapping: request bodies (validated by the `openai` SDK's types), responses, streams."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest
from dirty_equals import IsDatetime
from inline_snapshot import snapshot

from edgewise.agent import RequestUsage
from edgewise.agent.exceptions import UnexpectedModelBehavior
from edgewise.agent.messages import (
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models._mapping import customize_request_parameters
from edgewise.agent.models._openai_responses_mapping import (
    OpenAIResponsesModelSettings,
    OpenAIResponsesStreamedResponse,
    responses_model_response,
    responses_request_body,
)
from edgewise.agent.output import OutputObjectDefinition
from edgewise.agent.profiles import ModelProfile
from edgewise.agent.profiles.openai import OpenAIModelProfile, openai_model_profile

from ._helpers import aiter_events, conversation, validate_responses_body, weather_tool


def body(
    messages: list[Any] | None = None,
    settings: OpenAIResponsesModelSettings | None = None,
    params: ModelRequestParameters | None = None,
    model: str = 'gpt-5',
    profile: ModelProfile | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    profile = profile or openai_model_profile(model)
    params = customize_request_parameters(params or ModelRequestParameters(), profile)
    built = responses_request_body(
        model, messages or [ModelRequest.user_text_prompt('hi')], settings, params, profile, **kwargs
    )
    validate_responses_body(built)
    return built


def test_conversation_maps_every_part_kind() -> None:
    assert body(conversation('openai')) == snapshot(
        {
            'model': 'gpt-5',
            'input': [
                {'role': 'system', 'content': 'Be brief.'},
                {'role': 'user', 'content': 'Weather in Paris?'},
                {
                    'type': 'reasoning',
                    'id': 'rs_1',
                    'summary': [{'type': 'summary_text', 'text': 'Need the tool.'}],
                    'encrypted_content': 'c2lnLTE=',
                },
                {
                    'role': 'assistant',
                    'content': """\
<think>
Foreign thought.
</think>\
""",
                },
                {
                    'type': 'message',
                    'role': 'assistant',
                    'id': 'msg_1',
                    'content': [{'type': 'output_text', 'text': 'Checking.', 'annotations': []}],
                    'status': 'completed',
                },
                {
                    'type': 'function_call',
                    'name': 'weather',
                    'arguments': '{"city":"Paris"}',
                    'call_id': 'call_1',
                    'id': 'fc_1',
                },
                {'type': 'function_call_output', 'call_id': 'call_1', 'output': '{"temp":21}'},
                {'type': 'function_call', 'name': 'weather', 'arguments': '{"town": 1}', 'call_id': 'call_2'},
                {
                    'type': 'function_call_output',
                    'call_id': 'call_2',
                    'output': """\
Unknown argument town

Fix the errors and try again.\
""",
                },
                {'role': 'assistant', 'content': 'Sunny'},
                {
                    'role': 'user',
                    'content': [
                        {
                            'type': 'input_text',
                            'text': """\
Validation feedback:
Answer in French

Fix the errors and try again.\
""",
                        }
                    ],
                },
                {
                    'role': 'user',
                    'content': [{'type': 'input_text', 'text': 'Merci'}, {'type': 'input_text', 'text': 'Vite'}],
                },
            ],
            'instructions': 'Answer kindly.',
            'include': ['reasoning.encrypted_content'],
        }
    )


def test_without_encrypted_reasoning_no_ids_are_sent() -> None:
    built = body(conversation('openai'), model='gpt-4o')
    assert [item.get('type', item.get('role')) for item in built['input']] == snapshot(
        [
            'system',
            'user',
            'assistant',
            'assistant',
            'assistant',
            'function_call',
            'function_call_output',
            'function_call',
            'function_call_output',
            'assistant',
            'user',
            'user',
        ]
    )
    assert 'include' not in built


def test_tools_strict_schema_and_tool_choice() -> None:
    loose = {'type': 'object', 'properties': {'a': {'type': 'string', 'default': 'x'}}}
    params = ModelRequestParameters(
        function_tools=[weather_tool(), weather_tool(name='loose', parameters_json_schema=loose, description=None)],
        allow_text_output=False,
    )
    built = body(params=params, settings={'parallel_tool_calls': False})
    assert (built['tools'], built['tool_choice'], built['parallel_tool_calls']) == snapshot(
        (
            [
                {
                    'type': 'function',
                    'name': 'weather',
                    'parameters': {
                        'type': 'object',
                        'properties': {'city': {'type': 'string'}},
                        'required': ['city'],
                        'additionalProperties': False,
                    },
                    'strict': True,
                    'description': 'The weather in a city.',
                },
                {
                    'type': 'function',
                    'name': 'loose',
                    'parameters': {
                        'type': 'object',
                        'properties': {'a': {'type': 'string', 'default': 'x'}},
                        'additionalProperties': False,
                    },
                    'strict': False,
                },
            ],
            'required',
            False,
        )
    )
    no_required = OpenAIModelProfile(supports_forced_tool_choice=False, json_schema_transformer=None)
    assert body(params=params, profile=no_required)['tool_choice'] == 'auto'


def test_native_output_is_a_text_format() -> None:
    schema = {'type': 'object', 'properties': {'n': {'type': 'integer'}}, 'required': ['n']}
    output = OutputObjectDefinition(json_schema=schema, name='Answer', description='The answer.')
    assert body(params=ModelRequestParameters(output_mode='native', output_object=output))['text'] == snapshot(
        {
            'format': {
                'type': 'json_schema',
                'name': 'Answer',
                'schema': {
                    'type': 'object',
                    'properties': {'n': {'type': 'integer'}},
                    'required': ['n'],
                    'additionalProperties': False,
                },
                'strict': True,
                'description': 'The answer.',
            }
        }
    )


def test_prompted_output_uses_json_mode_and_moves_instructions_into_the_input() -> None:
    output = OutputObjectDefinition(json_schema={'type': 'object'})
    params = ModelRequestParameters(output_mode='prompted', output_object=output)
    messages = [ModelRequest.user_text_prompt('hi', instructions='Reply in JSON.')]
    built = body(messages, params=params, model='gpt-4o')
    assert (built['input'], built['text'], 'instructions' in built) == snapshot(
        (
            [{'role': 'system', 'content': 'Reply in JSON.'}, {'role': 'user', 'content': 'hi'}],
            {'format': {'type': 'json_object'}},
            False,
        )
    )


def test_settings_and_reasoning() -> None:
    settings: OpenAIResponsesModelSettings = {
        'max_tokens': 64,
        'temperature': 0.3,
        'top_p': 0.8,
        'openai_reasoning_effort': 'low',
        'openai_reasoning_summary': 'auto',
        'openai_text_verbosity': 'low',
        'openai_truncation': 'auto',
        'openai_store': False,
        'openai_user': 'u',
        'openai_service_tier': 'flex',
        'openai_prompt_cache_key': 'k',
        'openai_previous_response_id': 'resp_0',
        'extra_body': {'metadata': {'a': 'b'}},
    }
    built = body([ModelRequest([], instructions='Hi')], settings, stream=True)
    # A reasoning model drops sampling settings while it reasons.
    assert built == snapshot(
        {
            'model': 'gpt-5',
            'input': [],
            'instructions': 'Hi',
            'stream': True,
            'max_output_tokens': 64,
            'truncation': 'auto',
            'store': False,
            'user': 'u',
            'service_tier': 'flex',
            'prompt_cache_key': 'k',
            'previous_response_id': 'resp_0',
            'reasoning': {'effort': 'low', 'summary': 'auto'},
            'text': {'verbosity': 'low'},
            'include': ['reasoning.encrypted_content'],
            'metadata': {'a': 'b'},
        }
    )
    kept = body(settings={'temperature': 0.3, 'openai_reasoning_effort': 'none'}, model='gpt-5.1')
    assert kept['temperature'] == 0.3
    unsupported = OpenAIModelProfile(openai_unsupported_model_settings=('temperature',))
    assert 'temperature' not in body(settings={'temperature': 0.3}, model='x', profile=unsupported)


def test_empty_input_gets_an_empty_user_message() -> None:
    assert body([ModelRequest([], instructions='Hi')], model='gpt-4o')['input'] == [{'role': 'user', 'content': ''}]


def test_response_body_maps_to_a_model_response() -> None:
    response = responses_model_response(
        {
            'id': 'resp_1',
            'created_at': 1700000000,
            'model': 'gpt-5-2025-08-07',
            'status': 'completed',
            'output': [
                {
                    'type': 'reasoning',
                    'id': 'rs_1',
                    'encrypted_content': 'enc',
                    'summary': [{'type': 'summary_text', 'text': 'First.'}, {'type': 'summary_text', 'text': 'Then.'}],
                },
                {'type': 'reasoning', 'id': 'rs_2', 'encrypted_content': 'enc2', 'summary': []},
                {
                    'type': 'message',
                    'id': 'msg_1',
                    'role': 'assistant',
                    'phase': 'final_answer',
                    'content': [{'type': 'output_text', 'text': 'Hi', 'annotations': []}],
                },
                {
                    'type': 'function_call',
                    'id': 'fc_1',
                    'call_id': 'call_1',
                    'name': 'weather',
                    'arguments': '{"city":"Oslo"}',
                },
                {'type': 'web_search_call', 'id': 'ws_1', 'status': 'completed'},
            ],
            'usage': {
                'input_tokens': 20,
                'input_tokens_details': {'cached_tokens': 8},
                'output_tokens': 30,
                'output_tokens_details': {'reasoning_tokens': 12},
                'total_tokens': 50,
            },
        }
    )
    assert response.parts == snapshot(
        [
            ThinkingPart(content='First.', id='rs_1', signature='enc', provider_name='openai'),
            ThinkingPart(content='Then.', id='rs_1', provider_name='openai'),
            ThinkingPart(content='', id='rs_2', signature='enc2', provider_name='openai'),
            TextPart(content='Hi', id='msg_1', provider_name='openai', provider_details={'phase': 'final_answer'}),
            ToolCallPart(
                tool_name='weather', args='{"city":"Oslo"}', tool_call_id='call_1', id='fc_1', provider_name='openai'
            ),
            NativeToolCallPart(tool_name='web_search', tool_call_id='ws_1', id='ws_1', provider_name='openai'),
            NativeToolReturnPart(
                tool_name='web_search',
                content={'status': 'completed'},
                tool_call_id='ws_1',
                timestamp=IsDatetime(),  # type: ignore[arg-type]
                provider_name='openai',
            ),
        ]
    )
    assert (response.usage, response.finish_reason, response.provider_details, response.model_name) == snapshot(
        (
            RequestUsage(input_tokens=20, cache_read_tokens=8, output_tokens=30, details={'reasoning_tokens': 12}),
            'stop',
            {
                'finish_reason': 'completed',
                'timestamp': datetime(2023, 11, 14, hour=22, minute=13, second=20, tzinfo=timezone.utc),
            },
            'gpt-5-2025-08-07',
        )
    )


def test_incomplete_and_refused_responses() -> None:
    incomplete = responses_model_response(
        {'id': 'r', 'status': 'incomplete', 'incomplete_details': {'reason': 'max_output_tokens'}, 'output': []}
    )
    assert (incomplete.finish_reason, incomplete.provider_details) == ('length', {'finish_reason': 'max_output_tokens'})
    refused = responses_model_response(
        {
            'id': 'r',
            'status': 'completed',
            'output': [{'type': 'message', 'id': 'm', 'content': [{'type': 'refusal', 'refusal': 'No.'}]}],
        }
    )
    assert (refused.parts, refused.finish_reason, refused.provider_details) == (
        [],
        'content_filter',
        {'refusal': 'No.'},
    )


STREAM: list[dict[str, Any]] = [
    {'type': 'response.created', 'response': {'id': 'resp_s', 'model': 'gpt-5', 'status': 'in_progress'}},
    {'type': 'response.output_item.added', 'output_index': 0, 'item': {'type': 'reasoning', 'id': 'rs_1'}},
    {'type': 'response.reasoning_summary_text.delta', 'item_id': 'rs_1', 'summary_index': 0, 'delta': 'Think'},
    {
        'type': 'response.output_item.done',
        'output_index': 0,
        'item': {'type': 'reasoning', 'id': 'rs_1', 'encrypted_content': 'enc'},
    },
    {
        'type': 'response.output_item.added',
        'output_index': 1,
        'item': {'type': 'function_call', 'id': 'fc_1', 'call_id': 'call_1', 'name': 'weather', 'arguments': ''},
    },
    {'type': 'response.function_call_arguments.delta', 'item_id': 'fc_1', 'output_index': 1, 'delta': '{"city":'},
    {'type': 'response.function_call_arguments.delta', 'item_id': 'fc_1', 'output_index': 1, 'delta': '"Oslo"}'},
    {'type': 'response.output_item.added', 'output_index': 2, 'item': {'type': 'message', 'id': 'msg_1'}},
    {'type': 'response.output_text.delta', 'item_id': 'msg_1', 'delta': 'Hi'},
    {'type': 'response.output_text.delta', 'item_id': 'msg_1', 'delta': '!'},
    {
        'type': 'response.completed',
        'response': {'id': 'resp_s', 'status': 'completed', 'usage': {'input_tokens': 5, 'output_tokens': 6}},
    },
]


@pytest.mark.anyio
async def test_stream_maps_events_and_ends_with_the_whole_response() -> None:
    streamed = OpenAIResponsesStreamedResponse(
        ModelRequestParameters(), aiter_events(STREAM), model_name='gpt', provider_name='openai'
    )
    events = [event async for event in streamed]
    assert len(events) == snapshot(11)
    response = streamed.get()
    assert response.parts == snapshot(
        [
            ThinkingPart(content='Think', id='rs_1', signature='enc', provider_name='openai'),
            ToolCallPart(
                tool_name='weather', args='{"city":"Oslo"}', tool_call_id='call_1', id='fc_1', provider_name='openai'
            ),
            TextPart(content='Hi!', id='msg_1', provider_name='openai'),
        ]
    )
    assert (response.usage, response.finish_reason, response.provider_details, response.model_name) == snapshot(
        (RequestUsage(input_tokens=5, output_tokens=6), 'stop', {'finish_reason': 'completed'}, 'gpt-5')
    )
    assert response.provider_response_id == 'resp_s'


@pytest.mark.anyio
async def test_stream_error_event_raises() -> None:
    events = [STREAM[0], {'type': 'error', 'code': 'server_error', 'message': 'boom'}]
    streamed = OpenAIResponsesStreamedResponse(
        ModelRequestParameters(), aiter_events(events), model_name='gpt', provider_name='openai'
    )
    with pytest.raises(UnexpectedModelBehavior, match="Model 'gpt-5' stream failed: server_error: boom"):
        async for _ in streamed:
            pass


def test_thinking_parts_of_one_item_go_back_as_one_reasoning_item() -> None:
    messages = [
        ModelRequest.user_text_prompt('hi'),
        ModelResponse(
            [
                ThinkingPart('A', id='rs_1', signature='enc', provider_name='openai'),
                ThinkingPart('B', id='rs_1', provider_name='openai'),
                ThinkingPart('', id='rs_2', provider_name='openai'),
                TextPart('x', id='msg_1', provider_name='openai'),
                TextPart('y', id='msg_1', provider_name='openai'),
            ],
            provider_name='openai',
        ),
    ]
    assert body(messages)['input'][1:] == snapshot(
        [
            {
                'type': 'reasoning',
                'id': 'rs_1',
                'summary': [{'type': 'summary_text', 'text': 'A'}, {'type': 'summary_text', 'text': 'B'}],
                'encrypted_content': 'enc',
            },
            {
                'type': 'message',
                'role': 'assistant',
                'id': 'msg_1',
                'content': [
                    {'type': 'output_text', 'text': 'x', 'annotations': []},
                    {'type': 'output_text', 'text': 'y', 'annotations': []},
                ],
                'status': 'completed',
            },
        ]
    )
