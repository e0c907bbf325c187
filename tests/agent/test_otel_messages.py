"""Messages in the OpenTelemetry GenAI form: the parts' `otel_message_parts` and
`InstrumentationSettings.messages_to_otel_messages` (format 6's `tool` role)."""

from __future__ import annotations

import pytest

from edgewise.agent.messages import (
    AudioUrl,
    BinaryContent,
    BinaryImage,
    CachePoint,
    CompactionPart,
    DocumentUrl,
    FilePart,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryPromptPart,
    SpeechPart,
    SystemPromptPart,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolAvailabilityDeltaPart,
    ToolCallPart,
    ToolReturn,
    ToolReturnPart,
    UploadedFile,
    UserPromptPart,
    VideoUrl,
)
from edgewise.agent.models.instrumented import InstrumentationSettings

PNG = BinaryContent(b'\x89PNG', media_type='image/png')
PNG_BASE64 = 'iVBORw=='
PNG_REDACTED = {'media_type': 'image/png', 'vendor_metadata': None, 'kind': 'binary', 'identifier': PNG.identifier}


def _history() -> list[ModelMessage]:
    return [
        ModelRequest([SystemPromptPart('Be brief.'), UserPromptPart('Weather?')], instructions='Answer in French.'),
        ModelResponse(
            [
                ThinkingPart('Look it up.'),
                TextPart('Checking.'),
                ToolCallPart('weather', {'city': 'Paris'}, tool_call_id='c1'),
                ToolCallPart('clock', '{"tz": "CET"}', tool_call_id='c2'),
            ],
            finish_reason='tool_call',
        ),
        ModelRequest(
            [
                ToolReturnPart('weather', {'sky': 'clear'}, tool_call_id='c1'),
                RetryPromptPart('Say a time zone.', tool_name='clock', tool_call_id='c2'),
                ToolAvailabilityDeltaPart(tools_added=['forecast', 'radar']),
                UserPromptPart('Thanks.'),
            ]
        ),
        ModelResponse([TextPart('Il fait beau.')]),
    ]


def test_format_5_keeps_tool_results_in_user_messages() -> None:
    settings = InstrumentationSettings()
    assert settings.messages_to_otel_messages(_history()) == [
        {'role': 'system', 'parts': [{'type': 'text', 'content': 'Be brief.'}]},
        {'role': 'user', 'parts': [{'type': 'text', 'content': 'Weather?'}]},
        {
            'role': 'assistant',
            'parts': [
                {'type': 'thinking', 'content': 'Look it up.'},
                {'type': 'text', 'content': 'Checking.'},
                {'type': 'tool_call', 'id': 'c1', 'name': 'weather', 'arguments': {'city': 'Paris'}},
                {'type': 'tool_call', 'id': 'c2', 'name': 'clock', 'arguments': '{"tz": "CET"}'},
            ],
            'finish_reason': 'tool_call',
        },
        {
            'role': 'user',
            'parts': [
                {'type': 'tool_call_response', 'id': 'c1', 'name': 'weather', 'result': {'sky': 'clear'}},
                {
                    'type': 'tool_call_response',
                    'id': 'c2',
                    'name': 'clock',
                    'result': 'Say a time zone.\n\nFix the errors and try again.',
                },
            ],
        },
        {'role': 'system', 'parts': [{'type': 'text', 'content': 'Tool availability changed: +forecast, +radar'}]},
        {'role': 'user', 'parts': [{'type': 'text', 'content': 'Thanks.'}]},
        {'role': 'assistant', 'parts': [{'type': 'text', 'content': 'Il fait beau.'}]},
    ]


def test_format_6_puts_tool_results_and_tool_retries_in_tool_messages() -> None:
    messages = InstrumentationSettings(version=6).messages_to_otel_messages(_history())
    assert [(m['role'], [p['type'] for p in m['parts']]) for m in messages] == [
        ('system', ['text']),
        ('user', ['text']),
        ('assistant', ['thinking', 'text', 'tool_call', 'tool_call']),
        ('tool', ['tool_call_response', 'tool_call_response']),
        ('system', ['text']),
        ('user', ['text']),
        ('assistant', ['text']),
    ]
    # A retry prompt about the output (no tool) stays a user's text.
    retry = ModelRequest([RetryPromptPart('Not a number.')])
    assert InstrumentationSettings(version=6).messages_to_otel_messages([retry]) == [
        {
            'role': 'user',
            'parts': [
                {'type': 'text', 'content': 'Validation feedback:\nNot a number.\n\nFix the errors and try again.'}
            ],
        }
    ]


def test_without_content_only_kinds_ids_and_names_are_written() -> None:
    settings = InstrumentationSettings(include_content=False, version=6)
    messages = settings.messages_to_otel_messages(_history())
    assert messages[2] == {
        'role': 'assistant',
        'parts': [
            {'type': 'thinking'},
            {'type': 'text'},
            {'type': 'tool_call', 'id': 'c1', 'name': 'weather'},
            {'type': 'tool_call', 'id': 'c2', 'name': 'clock'},
        ],
        'finish_reason': 'tool_call',
    }
    assert messages[3]['parts'] == [
        {'type': 'tool_call_response', 'id': 'c1', 'name': 'weather'},
        {'type': 'tool_call_response', 'id': 'c2', 'name': 'clock'},
    ]
    # Tool names are no user content: the availability note keeps them.
    assert messages[4]['parts'] == [{'type': 'text', 'content': 'Tool availability changed: +forecast, +radar'}]
    assert settings.system_instructions_attributes('Answer in French.') == {}


def test_user_prompt_files_as_uri_blob_and_file_parts() -> None:
    prompt = UserPromptPart(
        [
            TextContent('Look:'),
            ImageUrl('https://example.com/cat.png'),
            AudioUrl('https://example.com/meow.mp3'),
            VideoUrl('https://example.com/cat.mp4'),
            DocumentUrl('https://example.com/cat.pdf'),
            DocumentUrl('https://example.com/cat'),
            PNG,
            BinaryContent(b'%PDF', media_type='application/pdf'),
            CachePoint(),
            UploadedFile('file-1', 'openai', media_type='image/jpeg'),
            UploadedFile('file-2', 'anthropic', media_type='application/pdf'),
        ]
    )
    assert prompt.otel_message_parts(InstrumentationSettings()) == [
        {'type': 'text', 'content': 'Look:'},
        {'type': 'uri', 'modality': 'image', 'mime_type': 'image/png', 'uri': 'https://example.com/cat.png'},
        {'type': 'uri', 'modality': 'audio', 'mime_type': 'audio/mpeg', 'uri': 'https://example.com/meow.mp3'},
        {'type': 'uri', 'modality': 'video', 'mime_type': 'video/mp4', 'uri': 'https://example.com/cat.mp4'},
        {'type': 'uri', 'mime_type': 'application/pdf', 'uri': 'https://example.com/cat.pdf'},
        {'type': 'uri', 'uri': 'https://example.com/cat'},
        {'type': 'blob', 'mime_type': 'image/png', 'modality': 'image', 'content': PNG_BASE64},
        {'type': 'blob', 'mime_type': 'application/pdf', 'content': 'JVBERg=='},
        {'type': 'file', 'modality': 'image', 'mime_type': 'image/jpeg', 'file_id': 'file-1'},
        {'type': 'file', 'modality': 'document', 'mime_type': 'application/pdf', 'file_id': 'file-2'},
    ]
    without_binary = prompt.otel_message_parts(InstrumentationSettings(include_binary_content=False))
    assert without_binary[6] == {'type': 'blob', 'mime_type': 'image/png', 'modality': 'image'}
    without_content = prompt.otel_message_parts(InstrumentationSettings(include_content=False))
    assert without_content[1] == {'type': 'uri', 'modality': 'image', 'mime_type': 'image/png'}
    assert without_content[8] == {'type': 'file', 'modality': 'image', 'mime_type': 'image/jpeg'}


def test_formats_before_4_write_files_as_url_and_binary_parts() -> None:
    with pytest.warns(DeprecationWarning, match='version 3 is deprecated'):
        settings = InstrumentationSettings(version=3)
    prompt = UserPromptPart([ImageUrl('https://example.com/cat.png'), PNG])
    assert prompt.otel_message_parts(settings) == [
        {'type': 'image-url', 'url': 'https://example.com/cat.png'},
        {'type': 'binary', 'media_type': 'image/png', 'content': PNG_BASE64},
    ]
    with pytest.warns(DeprecationWarning, match='version 3 is deprecated'):
        hidden = InstrumentationSettings(version=3, include_content=False)
    assert prompt.otel_message_parts(hidden) == [
        {'type': 'image-url'},
        {'type': 'binary', 'media_type': 'image/png'},
    ]


def test_a_responses_files_native_tools_and_spoken_parts() -> None:
    response = ModelResponse(
        [
            FilePart(BinaryImage(b'\x89PNG', media_type='image/png')),
            NativeToolCallPart('web_search', {'query': 'cats'}, tool_call_id='n1'),
            NativeToolReturnPart('web_search', [{'title': 'Cats'}], tool_call_id='n1'),
            NativeToolCallPart('code_execution', None, tool_call_id='n2'),
            SpeechPart(speaker='assistant', transcript='Meow.'),
            CompactionPart('Earlier: cats.'),
        ]
    )
    assert response.otel_message_parts(InstrumentationSettings()) == [
        {'type': 'blob', 'mime_type': 'image/png', 'modality': 'image', 'content': PNG_BASE64},
        {'type': 'tool_call', 'id': 'n1', 'name': 'web_search', 'builtin': True, 'arguments': {'query': 'cats'}},
        {
            'type': 'tool_call_response',
            'id': 'n1',
            'name': 'web_search',
            'result': [{'title': 'Cats'}],
            'builtin': True,
        },
        {'type': 'tool_call', 'id': 'n2', 'name': 'code_execution', 'builtin': True},
        {'type': 'text', 'content': 'Meow.'},
    ]


def test_tool_results_without_binary_data_and_that_do_not_serialize() -> None:
    settings = InstrumentationSettings(include_binary_content=False)

    def result(content: object) -> object:
        (part,) = ToolReturnPart('t', content, tool_call_id='c').otel_message_parts(settings)
        return part.get('result')

    assert result(PNG) == PNG_REDACTED
    assert result({'files': (PNG,)}) == {'files': [PNG_REDACTED]}
    assert result(ToolReturn('done', content=[PNG], metadata={'n': 1})) == {
        'return_value': 'done',
        'content': [PNG_REDACTED],
        'metadata': {'n': 1},
        'tools': None,
        'kind': 'tool-return',
    }
    looped: list[object] = ['x']
    looped.append(looped)
    assert result(looped) == ['x', '<circular reference>']
    assert result(None) is None

    class Opaque:
        def __str__(self) -> str:
            return 'an opaque thing'

    assert result(Opaque()) == 'an opaque thing'
    # With binary content allowed, the data is written (base64).
    (part,) = ToolReturnPart('t', PNG, tool_call_id='c').otel_message_parts(InstrumentationSettings())
    assert part == {
        'type': 'tool_call_response',
        'id': 'c',
        'name': 't',
        'result': {'data': PNG_BASE64, **PNG_REDACTED},
    }


def test_system_instructions_attributes() -> None:
    settings = InstrumentationSettings()
    assert settings.system_instructions_attributes('Answer in French.') == {
        'gen_ai.system_instructions': [{'type': 'text', 'content': 'Answer in French.'}]
    }
    assert settings.system_instructions_attributes(None) == {}
    history = _history()
    response = history.pop()
    assert isinstance(response, ModelResponse)
    attributes = settings.model_request_attributes(history, response)
    assert 'gen_ai.system_instructions' not in attributes  # the last request has none
    assert attributes['gen_ai.output.messages'] == [
        {'role': 'assistant', 'parts': [{'type': 'text', 'content': 'Il fait beau.'}]}
    ]
    assert settings.model_request_attributes(history[:1], response)['gen_ai.system_instructions'] == [
        {'type': 'text', 'content': 'Answer in French.'}
    ]
    assert settings.model_request_attributes([], response)['gen_ai.input.messages'] == []
