"""The Gemini API mapping: request bodies (validated by `google-genai`'s types), responses, streams."""

from __future__ import annotations

from typing import Any

import pytest
from dirty_equals import IsStr
from inline_snapshot import snapshot

from edgewise.agent import RequestUsage
from edgewise.agent.exceptions import UserError
from edgewise.agent.messages import (
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models._google_mapping import (
    GoogleModelSettings,
    GoogleStreamedResponse,
    google_model_response,
    google_request_body,
)
from edgewise.agent.models._mapping import customize_request_parameters
from edgewise.agent.output import OutputObjectDefinition
from edgewise.agent.profiles.google import google_model_profile

from ._helpers import aiter_events, conversation, validate_google_body, weather_tool

CALL_ID: Any = IsStr(regex=r'pyd_ai_[0-9a-f]{32}')


def body(
    messages: list[Any] | None = None,
    settings: GoogleModelSettings | None = None,
    params: ModelRequestParameters | None = None,
    model: str = 'gemini-2.5-flash',
) -> dict[str, Any]:
    profile = google_model_profile(model)
    assert profile is not None
    params = customize_request_parameters(params or ModelRequestParameters(), profile)
    built = google_request_body(messages or [ModelRequest.user_text_prompt('hi')], settings, params, profile)
    validate_google_body(built)
    return built


def test_conversation_maps_every_part_kind() -> None:
    messages = conversation('google-gla')
    # Gemini keeps thought signatures on the part after the thought, in provider_details.
    messages[1].parts[2].provider_details = {'thought_signature': 'c2lnLXRleHQ='}
    assert body(messages) == snapshot(
        {
            'contents': [
                {'role': 'user', 'parts': [{'text': 'Weather in Paris?'}]},
                {
                    'role': 'model',
                    'parts': [
                        {'text': 'Need the tool.', 'thought': True},
                        {'text': 'Foreign thought.', 'thought': True, 'thoughtSignature': 'c2lnLTE='},
                        {'text': 'Checking.', 'thoughtSignature': 'c2lnLXRleHQ='},
                        {
                            'functionCall': {'name': 'weather', 'args': {'city': 'Paris'}, 'id': 'call_1'},
                            'thoughtSignature': 'c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I=',
                        },
                    ],
                },
                {
                    'role': 'user',
                    'parts': [{'functionResponse': {'name': 'weather', 'response': {'temp': 21}, 'id': 'call_1'}}],
                },
                {
                    'role': 'model',
                    'parts': [
                        {
                            'functionCall': {'name': 'weather', 'args': {'town': 1}, 'id': 'call_2'},
                            'thoughtSignature': 'c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I=',
                        }
                    ],
                },
                {
                    'role': 'user',
                    'parts': [
                        {
                            'functionResponse': {
                                'name': 'weather',
                                'response': {
                                    'call_error': """\
Unknown argument town

Fix the errors and try again.\
"""
                                },
                                'id': 'call_2',
                            }
                        }
                    ],
                },
                {'role': 'model', 'parts': [{'text': 'Sunny'}]},
                {
                    'role': 'user',
                    'parts': [
                        {
                            'text': """\
Validation feedback:
Answer in French

Fix the errors and try again.\
"""
                        },
                        {'text': 'Merci'},
                        {'text': 'Vite'},
                    ],
                },
            ],
            'systemInstruction': {'role': 'user', 'parts': [{'text': 'Answer kindly.'}, {'text': 'Be brief.'}]},
        }
    )


def test_tools_and_forced_tool_use() -> None:
    schema = {'type': 'object', 'properties': {'when': {'type': 'string', 'format': 'date', 'title': 'When'}}}
    params = ModelRequestParameters(
        function_tools=[weather_tool()],
        output_tools=[weather_tool(name='final_result', parameters_json_schema=schema, description=None)],
        allow_text_output=False,
        output_mode='tool',
    )
    built = body(params=params)
    assert (built['tools'], built['toolConfig']) == snapshot(
        (
            [
                {
                    'functionDeclarations': [
                        {
                            'name': 'weather',
                            'parametersJsonSchema': {
                                'type': 'object',
                                'properties': {'city': {'type': 'string'}},
                                'required': ['city'],
                                'additionalProperties': False,
                            },
                            'description': 'The weather in a city.',
                        },
                        {
                            'name': 'final_result',
                            'parametersJsonSchema': {
                                'type': 'object',
                                'properties': {'when': {'type': 'string', 'description': 'Format: date'}},
                            },
                        },
                    ]
                }
            ],
            {'functionCallingConfig': {'mode': 'ANY'}},
        )
    )


def test_settings_map_to_the_generation_config() -> None:
    settings: GoogleModelSettings = {
        'max_tokens': 50,
        'temperature': 0.1,
        'top_p': 0.5,
        'seed': 7,
        'stop_sequences': ['STOP'],
        'presence_penalty': 0.1,
        'frequency_penalty': 0.2,
        'google_thinking_config': {'thinking_budget': 0, 'include_thoughts': True},
        'google_safety_settings': [{'category': 'HARM_CATEGORY_HARASSMENT', 'threshold': 'BLOCK_NONE'}],
        'google_labels': {'team': 'a'},
        'google_cached_content': 'cachedContents/1',
    }
    built = body(settings=settings)
    assert {k: v for k, v in built.items() if k != 'contents'} == snapshot(
        {
            'generationConfig': {
                'maxOutputTokens': 50,
                'temperature': 0.1,
                'topP': 0.5,
                'seed': 7,
                'stopSequences': ['STOP'],
                'presencePenalty': 0.1,
                'frequencyPenalty': 0.2,
                'thinkingConfig': {'thinkingBudget': 0, 'includeThoughts': True},
            },
            'safetySettings': [{'category': 'HARM_CATEGORY_HARASSMENT', 'threshold': 'BLOCK_NONE'}],
            'labels': {'team': 'a'},
            'cachedContent': 'cachedContents/1',
        }
    )


def test_native_and_prompted_output() -> None:
    schema = {'type': 'object', 'properties': {'kind': {'const': 'cat'}}, 'required': ['kind']}
    native = ModelRequestParameters(output_mode='native', output_object=OutputObjectDefinition(json_schema=schema))
    assert body(params=native)['generationConfig'] == snapshot(
        {
            'responseMimeType': 'application/json',
            'responseJsonSchema': {
                'type': 'object',
                'properties': {'kind': {'enum': ['cat'], 'type': 'string'}},
                'required': ['kind'],
            },
        }
    )
    prompted = ModelRequestParameters(output_mode='prompted', output_object=OutputObjectDefinition(json_schema=schema))
    assert body(params=prompted)['generationConfig'] == {'responseMimeType': 'application/json'}


def test_an_image_model_is_asked_for_images_and_text_when_text_is_an_output() -> None:
    assert body(model='gemini-2.5-flash-image')['generationConfig'] == {'responseModalities': ['TEXT', 'IMAGE']}
    image_only = ModelRequestParameters(output_mode='image', allow_text_output=False, allow_image_output=True)
    assert body(params=image_only, model='gemini-2.5-flash-image')['generationConfig'] == {
        'responseModalities': ['IMAGE']
    }
    assert 'generationConfig' not in body()  # a model that cannot draw is asked nothing of the kind


def test_what_the_model_cannot_take_is_a_user_error() -> None:
    schema = {'type': 'object', 'properties': {'a': {'type': 'integer'}}}
    native = ModelRequestParameters(
        function_tools=[weather_tool()], output_mode='native', output_object=OutputObjectDefinition(json_schema=schema)
    )
    with pytest.raises(UserError, match='does not support `NativeOutput` and function tools at the same time'):
        body(params=native)
    assert (
        body(params=native, model='gemini-3-pro-preview')['generationConfig']['responseMimeType'] == 'application/json'
    )
    with pytest.raises(UserError, match='Tools are not supported by this model'):
        body(params=ModelRequestParameters(function_tools=[weather_tool()]), model='gemini-2.5-flash-image')
    prompted = ModelRequestParameters(output_mode='prompted', output_object=OutputObjectDefinition(json_schema=schema))
    with pytest.raises(UserError, match='JSON output is not supported by this model'):
        body(params=prompted, model='gemini-2.5-flash-image')
    # With tools, prompted output is left to the instructions alone.
    with_tools = ModelRequestParameters(
        function_tools=[weather_tool()], output_mode='prompted', output_object=prompted.output_object
    )
    assert 'generationConfig' not in body(params=with_tools)


def test_first_call_without_signature_gets_the_skip_value() -> None:
    messages = [
        ModelRequest.user_text_prompt('hi'),
        ModelResponse([ToolCallPart('weather', {'city': 'Rome'}, 'c1'), ToolCallPart('weather', {}, 'c2')]),
        ModelRequest.user_text_prompt('go on'),
    ]
    assert body(messages)['contents'][1] == snapshot(
        {
            'role': 'model',
            'parts': [
                {
                    'functionCall': {'name': 'weather', 'args': {'city': 'Rome'}, 'id': 'c1'},
                    'thoughtSignature': 'c2tpcF90aG91Z2h0X3NpZ25hdHVyZV92YWxpZGF0b3I=',
                },
                {'functionCall': {'name': 'weather', 'args': {}, 'id': 'c2'}},
            ],
        }
    )


def test_signature_of_another_provider_is_not_sent() -> None:
    messages = [
        ModelRequest.user_text_prompt('hi'),
        ModelResponse(
            [TextPart('x', provider_name='google-vertex', provider_details={'thought_signature': 'b3RoZXI='})],
            provider_name='google-vertex',
        ),
    ]
    assert body(messages)['contents'][1] == {'role': 'model', 'parts': [{'text': 'x'}]}


def test_response_body_maps_to_a_model_response() -> None:
    response = google_model_response(
        {
            'candidates': [
                {
                    'content': {
                        'role': 'model',
                        'parts': [
                            {'text': 'Pondering', 'thought': True},
                            {'text': ''},
                            {'functionCall': {'name': 'weather', 'args': {'city': 'Oslo'}}, 'thoughtSignature': 'c2ln'},
                            {'functionCall': {'name': 'weather', 'args': {'city': 'Rome'}, 'id': 'given'}},
                            {'text': 'Done.'},
                            {'executableCode': {'language': 'PYTHON', 'code': 'print(1)'}},
                        ],
                    },
                    'finishReason': 'STOP',
                }
            ],
            'usageMetadata': {
                'promptTokenCount': 10,
                'candidatesTokenCount': 5,
                'thoughtsTokenCount': 3,
                'cachedContentTokenCount': 4,
                'totalTokenCount': 18,
                'promptTokensDetails': [{'modality': 'TEXT', 'tokenCount': 10}],
            },
            'modelVersion': 'gemini-2.5-flash-001',
            'responseId': 'resp-1',
        },
        model_name='gemini-2.5-flash',
    )
    assert response.parts == snapshot(
        [
            ThinkingPart(content='Pondering'),
            ToolCallPart(
                tool_name='weather',
                args={'city': 'Oslo'},
                tool_call_id=CALL_ID,
                provider_name='google-gla',
                provider_details={'thought_signature': 'c2ln'},
            ),
            ToolCallPart(tool_name='weather', args={'city': 'Rome'}, tool_call_id='given'),
            TextPart(content='Done.'),
            NativeToolCallPart(
                tool_name='code_execution',
                args={'language': 'PYTHON', 'code': 'print(1)'},
                tool_call_id=IsStr(regex='pyd_ai_[0-9a-f]{32}'),  # type: ignore[arg-type]
                provider_name='google-gla',
            ),
        ]
    )
    assert (response.usage, response.finish_reason, response.provider_details, response.model_name) == snapshot(
        (
            RequestUsage(
                input_tokens=10,
                cache_read_tokens=4,
                output_tokens=8,
                details={'cached_content_tokens': 4, 'thoughts_tokens': 3, 'text_prompt_tokens': 10},
            ),
            'stop',
            {'finish_reason': 'STOP'},
            'gemini-2.5-flash-001',
        )
    )
    assert response.provider_response_id == 'resp-1'


@pytest.mark.parametrize(
    ('raw', 'mapped'),
    [
        ('STOP', 'stop'),
        ('MAX_TOKENS', 'length'),
        ('SAFETY', 'content_filter'),
        ('MALFORMED_FUNCTION_CALL', 'error'),
        ('OTHER', None),
        ('NEW_REASON', None),
    ],
)
def test_finish_reasons(raw: str, mapped: str | None) -> None:
    response = google_model_response({'candidates': [{'finishReason': raw}]}, model_name='g')
    assert (response.finish_reason, response.provider_details) == (mapped, {'finish_reason': raw})


def test_blocked_prompt_is_a_content_filter() -> None:
    response = google_model_response(
        {'promptFeedback': {'blockReason': 'SAFETY', 'blockReasonMessage': 'no'}}, model_name='g'
    )
    assert (response.parts, response.finish_reason, response.provider_details) == snapshot(
        ([], 'content_filter', {'block_reason': 'SAFETY', 'block_reason_message': 'no'})
    )
    assert google_model_response({}, model_name='g').finish_reason is None


STREAM: list[dict[str, Any]] = [
    {
        'candidates': [{'content': {'role': 'model', 'parts': [{'text': 'Let me ', 'thought': True}]}}],
        'responseId': 'r1',
        'modelVersion': 'gemini-2.5-pro',
    },
    {'candidates': [{'content': {'role': 'model', 'parts': [{'text': 'think.', 'thought': True}]}}]},
    {'candidates': [{'content': {'role': 'model', 'parts': [{'text': 'Hello'}]}}]},
    {'candidates': [{'content': {'role': 'model', 'parts': [{'text': ' there', 'thoughtSignature': 'c2ln'}]}}]},
    {
        'candidates': [
            {
                'content': {
                    'role': 'model',
                    'parts': [
                        {'functionCall': {'name': 'weather', 'args': {'city': 'Oslo'}}},
                        {'functionCall': {'name': 'weather', 'args': {}, 'id': 'x'}},
                    ],
                }
            }
        ]
    },
    {
        'candidates': [
            {
                'content': {'role': 'model', 'parts': [{'text': 'After'}, {'text': '', 'thoughtSignature': 'ZW5k'}]},
                'finishReason': 'STOP',
            }
        ],
        'usageMetadata': {'promptTokenCount': 3, 'candidatesTokenCount': 9, 'thoughtsTokenCount': 2},
    },
]


@pytest.mark.anyio
async def test_stream_maps_chunks_and_ends_with_the_whole_response() -> None:
    streamed = GoogleStreamedResponse(
        ModelRequestParameters(), aiter_events(STREAM), model_name='gemini', provider_name='google-gla'
    )
    events = [event async for event in streamed]
    assert len(events) == snapshot(13)
    response = streamed.get()
    assert response.parts == snapshot(
        [
            ThinkingPart(content='Let me think.'),
            TextPart(content='Hello there', provider_name='google-gla', provider_details={'thought_signature': 'c2ln'}),
            ToolCallPart(tool_name='weather', args={'city': 'Oslo'}, tool_call_id=CALL_ID),
            ToolCallPart(tool_name='weather', args={}, tool_call_id='x'),
            TextPart(content='After', provider_name='google-gla', provider_details={'thought_signature': 'ZW5k'}),
        ]
    )
    assert (response.usage, response.finish_reason, response.provider_details, response.model_name) == snapshot(
        (
            RequestUsage(input_tokens=3, output_tokens=11, details={'thoughts_tokens': 2}),
            'stop',
            {'finish_reason': 'STOP'},
            'gemini-2.5-pro',
        )
    )
    assert response.provider_response_id == 'r1'
