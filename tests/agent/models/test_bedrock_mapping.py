"""The Converse mapping on its own: request bodies for settings, tools, caching, thinking and files, and responses
and stream events to parts (no HTTP)."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

import pytest

from edgewise.agent._tools.definition import ToolDefinition
from edgewise.agent.exceptions import (
    ModelAPIError,
    ModelAuthenticationError,
    ModelHTTPError,
    ModelNotFoundError,
    ModelOverloadedError,
    ModelQuotaExceededError,
    ModelRateLimitError,
    ModelServerError,
    ModelUnavailableError,
    UserError,
)
from edgewise.agent.messages import (
    BinaryContent,
    CachePoint,
    DocumentUrl,
    ImageUrl,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
    VideoUrl,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models._bedrock_errors import bedrock_code_category, bedrock_error_code, bedrock_stream_error
from edgewise.agent.models._bedrock_mapping import (
    BedrockStreamedResponse,
    bedrock_model_response,
    bedrock_request_body,
    file_block,
    takes_url,
)
from edgewise.agent.output import OutputObjectDefinition
from edgewise.agent.profiles import ModelProfile
from edgewise.agent.providers.bedrock import BedrockModelProfile, BedrockProvider

CLAUDE = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0'
NOVA = 'amazon.nova-pro-v1:0'
TOOL = ToolDefinition(name='lookup', parameters_json_schema={'type': 'object', 'properties': {}}, description='Find.')
OTHER = ToolDefinition(name='other', parameters_json_schema={'type': 'object', 'properties': {}})


def body_for(
    model_id: str,
    messages: list[Any] | None = None,
    settings: dict[str, Any] | None = None,
    params: ModelRequestParameters | None = None,
    profile: ModelProfile | None = None,
) -> dict[str, Any]:
    found = profile if profile is not None else (BedrockProvider.model_profile(model_id) or {})
    messages = messages if messages is not None else [ModelRequest(parts=[UserPromptPart('Hi')])]
    return bedrock_request_body(
        model_id, messages, settings or {}, params or ModelRequestParameters(), found, provider_name='bedrock'
    )


def test_bedrock_settings_become_their_request_fields() -> None:
    settings = {
        'bedrock_guardrail_config': {'guardrailIdentifier': 'g', 'guardrailVersion': '1'},
        'bedrock_performance_configuration': {'latency': 'optimized'},
        'bedrock_request_metadata': {'team': 'a'},
        'bedrock_additional_model_response_fields_paths': ['/stop_sequence'],
        'bedrock_prompt_variables': {'topic': {'text': 'x'}},
        'bedrock_additional_model_requests_fields': {'anthropic_beta': ['b']},
        'stop_sequences': ['END'],
        'top_p': 0.9,
        'top_k': 5,
        'service_tier': 'flex',
    }
    body = body_for(CLAUDE, settings=settings)
    assert body['guardrailConfig'] == {'guardrailIdentifier': 'g', 'guardrailVersion': '1'}
    assert body['performanceConfig'] == {'latency': 'optimized'}
    assert body['requestMetadata'] == {'team': 'a'}
    assert body['additionalModelResponseFieldPaths'] == ['/stop_sequence']
    assert body['promptVariables'] == {'topic': {'text': 'x'}}
    assert body['serviceTier'] == {'type': 'flex'}
    assert body['inferenceConfig'] == {'topP': 0.9, 'stopSequences': ['END']}
    assert body['additionalModelRequestFields'] == {'anthropic_beta': ['b'], 'top_k': 5}
    explicit = body_for(CLAUDE, settings={'bedrock_service_tier': {'type': 'priority'}, 'service_tier': 'flex'})
    assert explicit['serviceTier'] == {'type': 'priority'}
    assert 'serviceTier' not in body_for(CLAUDE, settings={'service_tier': 'auto'})


def test_top_k_goes_where_each_family_takes_it_and_sampling_is_dropped_where_refused() -> None:
    nova = body_for(
        NOVA, settings={'top_k': 3, 'bedrock_additional_model_requests_fields': {'inferenceConfig': {'a': 1}}}
    )
    assert nova['additionalModelRequestFields'] == {'inferenceConfig': {'a': 1, 'topK': 3}}
    assert 'additionalModelRequestFields' not in body_for('meta.llama3-70b-instruct-v1:0', settings={'top_k': 3})
    gpt = body_for('openai.gpt-5.6-sol', settings={'temperature': 0.2, 'top_p': 0.5, 'top_k': 3})
    assert 'inferenceConfig' not in gpt
    assert 'additionalModelRequestFields' not in gpt


@pytest.mark.parametrize(
    ('model_id', 'thinking', 'fields'),
    [
        (CLAUDE, False, {'thinking': {'type': 'disabled'}}),
        (CLAUDE, True, {'thinking': {'type': 'enabled', 'budget_tokens': 10000}}),
        (
            'anthropic.claude-opus-4-6-v1',
            'high',
            {'thinking': {'type': 'adaptive'}, 'output_config': {'effort': 'high'}},
        ),
        ('anthropic.claude-opus-4-6-v1', False, {}),
        ('openai.gpt-oss-120b-1:0', 'high', {'reasoning_effort': 'high'}),
        ('deepseek.v3.2', True, {'reasoning_effort': 'high'}),
        ('zai.glm-4.7', False, {'reasoning_effort': 'none'}),
        ('openai.gpt-5.6-sol', False, {'reasoning': {'effort': 'none'}}),
        ('openai.gpt-5.6-sol', 'medium', {'reasoning': {'effort': 'medium'}}),
        ('qwen.qwen3-32b-v1:0', 'low', {'reasoning_config': 'low'}),
        (NOVA, True, {}),
    ],
)
def test_unified_thinking_becomes_each_variants_model_fields(model_id: str, thinking: Any, fields: Any) -> None:
    body = body_for(model_id, params=ModelRequestParameters(thinking=thinking))
    assert body.get('additionalModelRequestFields', {}) == fields


def test_thinking_fields_given_by_the_user_win() -> None:
    given = {'bedrock_additional_model_requests_fields': {'thinking': {'type': 'enabled', 'budget_tokens': 1}}}
    body = body_for(CLAUDE, settings=given, params=ModelRequestParameters(thinking='high'))
    assert body['additionalModelRequestFields'] == {'thinking': {'type': 'enabled', 'budget_tokens': 1}}


def test_tool_choice_settings_become_tool_config() -> None:
    params = ModelRequestParameters(function_tools=[TOOL, OTHER], allow_text_output=True)
    assert body_for(CLAUDE, params=params)['toolConfig']['toolChoice'] == {'auto': {}}
    required = body_for(CLAUDE, settings={'tool_choice': 'required'}, params=params)['toolConfig']
    assert required['toolChoice'] == {'any': {}}
    one = body_for(CLAUDE, settings={'tool_choice': ['lookup']}, params=params)['toolConfig']
    assert (one['toolChoice'], [t['toolSpec']['name'] for t in one['tools']]) == (
        {'tool': {'name': 'lookup'}},
        ['lookup'],
    )
    two = body_for(CLAUDE, settings={'tool_choice': ['lookup', 'other']}, params=params)['toolConfig']
    assert two['toolChoice'] == {'any': {}}
    output = ModelRequestParameters(function_tools=[TOOL], output_tools=[OTHER], allow_text_output=True)
    assert body_for(CLAUDE, settings={'tool_choice': 'none'}, params=output)['toolConfig']['toolChoice'] == {'auto': {}}
    # No `none` tool choice: the tools stay out, unless the history holds tool blocks.
    assert 'toolConfig' not in body_for(CLAUDE, settings={'tool_choice': 'none'}, params=params)
    history = [
        ModelRequest(parts=[UserPromptPart('Hi')]),
        ModelResponse(parts=[ToolCallPart('lookup', {}, 'c1')]),
        ModelRequest(parts=[ToolReturnPart('lookup', 'found', 'c1')]),
    ]
    kept = body_for(CLAUDE, history, settings={'tool_choice': 'none'}, params=params)
    assert 'toolChoice' not in kept['toolConfig']
    assert kept['additionalModelRequestFields'] == {'tool_choice': {'type': 'none'}}
    llama = body_for('meta.llama3-70b-instruct-v1:0', history, settings={'tool_choice': 'none'}, params=params)
    assert 'toolChoice' not in llama['toolConfig']
    assert 'additionalModelRequestFields' not in llama
    # Families without tool choice get the tools alone.
    assert 'toolChoice' not in body_for('meta.llama3-70b-instruct-v1:0', params=params)['toolConfig']
    assert 'toolConfig' not in body_for(CLAUDE)


def test_strict_tools_are_marked_only_for_families_that_take_it() -> None:
    strict = ToolDefinition(name='s', parameters_json_schema={'type': 'object'}, strict=True)
    params = ModelRequestParameters(function_tools=[strict], allow_text_output=True)
    assert body_for('zai.glm-4.7', params=params)['toolConfig']['tools'][0]['toolSpec']['strict'] is True
    assert (
        'strict' not in body_for('meta.llama3-70b-instruct-v1:0', params=params)['toolConfig']['tools'][0]['toolSpec']
    )


def test_native_output_goes_in_output_config() -> None:
    output = OutputObjectDefinition(json_schema={'type': 'object'}, name='Answer', description='The answer.')
    params = ModelRequestParameters(output_mode='native', output_object=output)
    assert body_for(CLAUDE, params=params)['outputConfig'] == {
        'textFormat': {
            'type': 'json_schema',
            'structure': {
                'jsonSchema': {'name': 'Answer', 'schema': '{"type":"object"}', 'description': 'The answer.'}
            },
        }
    }
    unnamed = ModelRequestParameters(output_mode='native', output_object=OutputObjectDefinition(json_schema={}))
    assert body_for(CLAUDE, params=unnamed)['outputConfig']['textFormat']['structure']['jsonSchema'] == {
        'name': 'final_result',
        'schema': '{}',
    }


def test_cache_settings_and_cache_points_on_families_that_cache() -> None:
    params = ModelRequestParameters(function_tools=[TOOL], allow_text_output=True)
    messages = [
        ModelRequest(parts=[SystemPromptPart('Sys'), UserPromptPart(['Long context', CachePoint(ttl='1h'), 'Q'])])
    ]
    settings = {
        'bedrock_cache_instructions': True,
        'bedrock_cache_tool_definitions': '1h',
        'bedrock_cache_messages': True,
    }
    body = body_for(CLAUDE, messages, settings=settings, params=params)
    assert body['system'] == [{'text': 'Sys'}, {'cachePoint': {'type': 'default'}}]
    assert body['toolConfig']['tools'][-1] == {'cachePoint': {'type': 'default', 'ttl': '1h'}}
    assert body['messages'][0]['content'] == [
        {'text': 'Long context'},
        {'cachePoint': {'type': 'default', 'ttl': '1h'}},
        {'text': 'Q'},
        {'cachePoint': {'type': 'default'}},
    ]
    llama = body_for('meta.llama3-70b-instruct-v1:0', messages, settings=settings, params=params)
    assert llama['system'] == [{'text': 'Sys'}]
    assert llama['messages'][0]['content'] == [{'text': 'Long context'}, {'text': 'Q'}]
    assert len(llama['toolConfig']['tools']) == 1
    ends_cached = [ModelRequest(parts=[UserPromptPart(['Q', CachePoint()])])]
    assert body_for(CLAUDE, ends_cached, settings=settings)['messages'][0]['content'] == [
        {'text': 'Q'},
        {'cachePoint': {'type': 'default', 'ttl': '5m'}},
    ]


def test_tool_returns_errors_and_retries_map_to_tool_results() -> None:
    image = BinaryContent(b'img', media_type='image/png')
    history = [
        ModelRequest(parts=[UserPromptPart('Hi')]),
        ModelResponse(parts=[ToolCallPart('a', {}, 'c1'), ToolCallPart('b', {}, 'c2')]),
        ModelRequest(
            parts=[
                ToolReturnPart('a', ['see', image], 'c1'),
                RetryPromptPart('bad arguments', tool_name='b', tool_call_id='c2'),
                RetryPromptPart('Answer in English.'),
            ]
        ),
    ]
    content = body_for(CLAUDE, history)['messages'][2]['content']
    assert content[0]['toolResult']['toolUseId'] == 'c1'
    assert content[0]['toolResult']['status'] == 'success'
    assert content[0]['toolResult']['content'][-1] == {
        'image': {'format': 'png', 'source': {'bytes': base64.b64encode(b'img').decode()}}
    }
    assert content[1]['toolResult']['status'] == 'error'
    assert content[1]['toolResult']['toolUseId'] == 'c2'
    assert 'bad arguments' in content[1]['toolResult']['content'][0]['text']
    assert 'Answer in English.' in content[2]['text']
    mistral = body_for(
        'mistral.mistral-large-2407-v1:0', [*history[:2], ModelRequest(parts=[ToolReturnPart('a', {'x': 1}, 'c1')])]
    )
    assert mistral['messages'][2]['content'][0]['toolResult']['content'] == [{'json': {'x': 1}}]
    writer = body_for('writer.palmyra-x5-v1:0', history)
    assert 'status' not in writer['messages'][2]['content'][0]['toolResult']
    with pytest.raises(UserError, match='cannot take BinaryContent \\(image/png\\) in tool returns'):
        body_for('qwen.qwen3-32b-v1:0', history)


def test_files_map_to_image_document_and_video_blocks() -> None:
    assert file_block(ImageUrl('s3://bucket/a.jpg'), 'm', 'user prompts', 1) == {
        'image': {'format': 'jpeg', 'source': {'s3Location': {'uri': 's3://bucket/a.jpg'}}}
    }
    assert file_block(DocumentUrl('s3://bucket/notes.md', media_type='text/markdown'), 'm', 'user prompts', 2) == {
        'document': {'format': 'md', 'name': 'Document 2', 'source': {'s3Location': {'uri': 's3://bucket/notes.md'}}}
    }
    assert file_block(VideoUrl('s3://bucket/v.mp4'), 'm', 'user prompts', 1)['video']['format'] == 'mp4'
    assert (takes_url('s3://bucket/a.jpg'), takes_url('https://example.com/a.jpg')) == (True, False)
    with pytest.raises(UserError, match="Model 'm' cannot take ImageUrl in user prompts"):
        file_block(ImageUrl('https://example.com/a.png'), 'm', 'user prompts', 1)
    with pytest.raises(UserError, match='unsupported media type'):
        file_block(BinaryContent(b'x', media_type='audio/wav'), 'm', 'user prompts', 1)
    two_docs = [
        ModelRequest(
            parts=[
                UserPromptPart(
                    [BinaryContent(b'a', media_type='text/plain'), BinaryContent(b'b', media_type='text/csv')]
                )
            ]
        )
    ]
    names = [b['document']['name'] for b in body_for(CLAUDE, two_docs)['messages'][0]['content']]
    assert names == ['Document 1', 'Document 2']


def test_assistant_turns_keep_text_and_tool_calls_and_other_reasoning_as_text() -> None:
    history = [
        ModelRequest(parts=[UserPromptPart('Hi')]),
        ModelResponse(
            parts=[
                ThinkingPart('mine', signature='s', provider_name='anthropic'),
                ThinkingPart('unsigned'),
                TextPart(''),
                TextPart('Hello'),
            ]
        ),
        ModelRequest(parts=[UserPromptPart('More')]),
        ModelRequest(parts=[UserPromptPart('And more')]),
    ]
    claude = BedrockProvider.model_profile(CLAUDE) or {}
    body = body_for(CLAUDE, history, profile={**claude, 'mimics_assistant_message_formatting': False})
    # Reasoning signed by another provider (and unsigned reasoning) goes back as text in the family's tags.
    assert body['messages'][1]['content'] == [
        {'text': '<thinking>\nmine\n</thinking>'},
        {'text': '<thinking>\nunsigned\n</thinking>'},
        {'text': 'Hello'},
    ]
    # Claude copies such tags into its answers, so by default the reasoning goes in the user turn before the reply.
    body = body_for(CLAUDE, history)
    assert body['messages'][0]['content'] == [
        {'text': 'Hi'},
        {'text': '<assistant_thinking>\nmine\n</assistant_thinking>'},
        {'text': '<assistant_thinking>\nunsigned\n</assistant_thinking>'},
    ]
    assert body['messages'][1] == {'role': 'assistant', 'content': [{'text': 'Hello'}]}
    # Consecutive user turns are merged into one message.
    assert body['messages'][2] == {'role': 'user', 'content': [{'text': 'More'}, {'text': 'And more'}]}
    assert body_for(CLAUDE, [])['messages'] == [{'role': 'user', 'content': [{'text': '.'}]}]


def test_a_response_maps_citations_reasoning_and_extra_details() -> None:
    response = bedrock_model_response(
        {
            'output': {
                'message': {
                    'content': [
                        {
                            'citationsContent': {
                                'content': [{'text': 'Cited '}, {'text': 'text'}],
                                'citations': [{'x': 1}],
                            }
                        },
                        {'citationsContent': {'content': [], 'citations': []}},
                        {'reasoningContent': {'reasoningText': {'text': 'plain'}}},
                        {'reasoningContent': {}},
                        {'toolUse': {'toolUseId': 't', 'name': 'f', 'input': {'a': 1}}},
                    ]
                }
            },
            'stopReason': 'guardrail_intervened',
            'trace': {'guardrail': {}},
            'additionalModelResponseFields': {'stop_sequence': 'END'},
            'usage': {'inputTokens': 1, 'outputTokens': 2, 'cacheWriteInputTokens': 3},
        },
        model_name='m',
        provider_name='bedrock',
    )
    assert response.parts == [
        TextPart('Cited text', provider_name='bedrock', provider_details={'citations': [{'x': 1}]}),
        ThinkingPart('plain'),
        ToolCallPart('f', {'a': 1}, 't'),
    ]
    assert response.finish_reason == 'content_filter'
    assert response.provider_details == {
        'finish_reason': 'guardrail_intervened',
        'trace': {'guardrail': {}},
        'additional_model_response_fields': {'stop_sequence': 'END'},
    }
    assert (response.usage.input_tokens, response.usage.cache_write_tokens) == (4, 3)
    empty = bedrock_model_response({'output': {}, 'stopReason': 'something_new'}, model_name='m', provider_name='b')
    assert (empty.parts, empty.finish_reason, empty.usage.input_tokens) == ([], None, 0)


async def _events(*items: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
    for item in items:
        yield item


@pytest.mark.anyio
async def test_streamed_reasoning_signatures_and_traces_are_kept() -> None:
    redacted = base64.b64encode(b'opaque').decode()
    stream = BedrockStreamedResponse(
        ModelRequestParameters(),
        _events(
            {'messageStart': {'role': 'assistant'}},
            {'contentBlockDelta': {'contentBlockIndex': 0, 'delta': {'reasoningContent': {'text': 'Hmm'}}}},
            {'contentBlockDelta': {'contentBlockIndex': 0, 'delta': {'reasoningContent': {'signature': 'sig'}}}},
            {
                'contentBlockDelta': {
                    'contentBlockIndex': 1,
                    'delta': {'reasoningContent': {'redactedContent': redacted}},
                }
            },
            {'contentBlockStart': {'contentBlockIndex': 2, 'start': {}}},
            {'contentBlockDelta': {'contentBlockIndex': 2, 'delta': {}}},
            {'metadata': {'trace': {'t': 1}}},
            {'somethingNew': {}},
        ),
        model_name='m',
        provider_name='bedrock',
    )
    async for _ in stream:
        pass
    response = stream.get()
    assert response.parts == [
        ThinkingPart('Hmm', signature='sig', provider_name='bedrock'),
        ThinkingPart('', id='redacted_content', signature='opaque', provider_name='bedrock'),
    ]
    assert response.provider_details == {'trace': {'t': 1}}


def test_error_codes_come_from_the_header_or_the_body() -> None:
    assert bedrock_error_code({}, {'x-amzn-errortype': 'ThrottlingException:http://x'}) == 'ThrottlingException'
    assert bedrock_error_code({'__type': 'com.amazon#ValidationException'}, None) == 'ValidationException'
    assert bedrock_error_code({'code': 'ExpiredToken'}, {}) == 'ExpiredToken'
    assert bedrock_error_code('text', {}) is None


def test_stream_exceptions_get_their_documented_status_or_none() -> None:
    failed = bedrock_stream_error('m', 'modelStreamErrorException', {'message': 'boom'})
    assert isinstance(failed, ModelServerError)
    assert isinstance(failed, ModelHTTPError)
    assert (failed.status_code, failed.in_stream) == (424, True)
    unknown = bedrock_stream_error('m', 'somethingElseException', {'message': 'what'})
    assert type(unknown) is ModelAPIError
    assert not isinstance(unknown, ModelHTTPError)
    assert str(unknown) == "Model 'm' stream failed: somethingElseException: what"
    quota = bedrock_stream_error('m', 'serviceUnavailableException', 'Service is overloaded')
    assert isinstance(quota, ModelHTTPError)
    assert quota.status_code == 503
    assert isinstance(bedrock_stream_error('m', 'throttlingException', {}), ModelRateLimitError)


def test_a_profile_without_bedrock_keys_takes_the_defaults() -> None:
    body = body_for('custom.model', profile=BedrockModelProfile())
    assert body == {'messages': [{'role': 'user', 'content': [{'text': 'Hi'}]}]}


@pytest.mark.parametrize(
    ('code', 'message', 'category'),
    [
        ('ServiceQuotaExceededException', 'Too many tokens per day', ModelQuotaExceededError),
        ('ModelStreamErrorException', 'boom', ModelServerError),
        ('ModelNotReadyException', 'The model is not ready', ModelUnavailableError),
        ('ServiceUnavailableException', 'The service is overloaded', ModelOverloadedError),
        ('ExpiredTokenException', 'The security token included in the request is expired', ModelAuthenticationError),
        ('ResourceNotFoundException', 'No such model', ModelNotFoundError),
        ('ValidationException', 'Malformed input', None),
        ('ValidationException', None, None),
        (None, 'anything', None),
    ],
)
def test_aws_exception_names_give_their_category(code: str | None, message: str | None, category: Any) -> None:
    assert bedrock_code_category(code, message) is category


def test_empty_system_prompts_empty_unsigned_reasoning_and_files_of_responses_are_left_out() -> None:
    from edgewise.agent.messages import FilePart

    history = [
        ModelRequest(parts=[SystemPromptPart(''), UserPromptPart('Hi')]),
        ModelResponse(
            parts=[
                ThinkingPart(''),
                ThinkingPart('', signature='theirs', provider_name='openai'),
                FilePart(BinaryContent(b'x', media_type='image/png')),
                TextPart('Hello'),
            ]
        ),
        ModelResponse(parts=[ThinkingPart('')]),  # nothing to send: no empty assistant turn
        ModelRequest(parts=[UserPromptPart(['Look', CachePoint()])]),
    ]
    body = body_for('meta.llama3-70b-instruct-v1:0', history)
    assert 'system' not in body
    assert body['messages'][1] == {'role': 'assistant', 'content': [{'text': 'Hello'}]}
    assert body['messages'][2] == {'role': 'user', 'content': [{'text': 'Look'}]}
