"""Files in requests and responses of each API: wire format (validated by the SDKs' request types), files an API
cannot take, images the models make."""

from __future__ import annotations

import base64
from typing import Any, cast

import pytest

from edgewise.agent.exceptions import UserError
from edgewise.agent.messages import (
    AudioUrl,
    BinaryContent,
    BinaryImage,
    CachePoint,
    DocumentUrl,
    FilePart,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    NativeToolReturnPart,
    TextContent,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UploadedFile,
    UserContent,
    UserPromptPart,
    VideoUrl,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models import _openai_chat as chat
from edgewise.agent.models._anthropic_mapping import anthropic_request_body
from edgewise.agent.models._google_mapping import google_model_response, google_request_body
from edgewise.agent.models._openai_responses_mapping import responses_model_response, responses_request_body
from edgewise.agent.profiles import ModelProfile
from edgewise.agent.profiles.anthropic import anthropic_model_profile
from edgewise.agent.profiles.google import google_model_profile
from edgewise.agent.profiles.openai import OpenAIModelProfile, openai_model_profile

from ._helpers import validate_anthropic_body, validate_google_body, validate_responses_body
from .conftest import validate_chat_body

PNG = b'\x89PNG\r\n\x1a\n'
PNG64 = base64.b64encode(PNG).decode()
PDF = b'%PDF-1.4'
PDF64 = base64.b64encode(PDF).decode()
WAV = b'RIFF0000WAVE'
WAV64 = base64.b64encode(WAV).decode()
PARAMS = ModelRequestParameters()


def prompt(*items: UserContent) -> list[ModelMessage]:
    return [ModelRequest([UserPromptPart(list(items))])]


def with_tool_return(content: Any) -> list[ModelMessage]:
    return [
        ModelRequest([UserPromptPart('go')]),
        ModelResponse([ToolCallPart('chart', {}, 'c1')]),
        ModelRequest([ToolReturnPart('chart', content, 'c1')]),
    ]


def _profile(found: ModelProfile | None) -> ModelProfile:
    assert found is not None
    return found


def chat_messages(messages: list[ModelMessage], model: str = 'gpt-4o') -> list[dict[str, Any]]:
    profile = _profile(openai_model_profile(model))
    mapped = chat.map_messages(
        messages, cast(OpenAIModelProfile, profile), system='openai', model_name=model, instructions=None
    )
    body = chat.build_body(model_name=model, messages=mapped, settings={}, params=PARAMS, profile=profile, stream=False)
    validate_chat_body(body)
    return mapped


def responses_input(messages: list[ModelMessage], model: str = 'gpt-5') -> list[dict[str, Any]]:
    body = responses_request_body(model, messages, None, PARAMS, _profile(openai_model_profile(model)))
    validate_responses_body(body)
    return list(body['input'])


def anthropic_messages(messages: list[ModelMessage], model: str = 'claude-sonnet-4-5') -> list[dict[str, Any]]:
    body = anthropic_request_body(model, messages, None, PARAMS, _profile(anthropic_model_profile(model)))
    validate_anthropic_body(body)
    return list(body['messages'])


def google_contents(messages: list[ModelMessage], model: str = 'gemini-2.5-flash') -> list[dict[str, Any]]:
    body = google_request_body(messages, None, PARAMS, _profile(google_model_profile(model)))
    validate_google_body(body)
    return list(body['contents'])


# Chat Completions


def test_chat_maps_images_audio_and_documents() -> None:
    messages = prompt(
        'Look',
        TextContent('tagged', metadata={'not': 'sent'}),
        ImageUrl('https://e.com/a.png', vendor_metadata={'detail': 'high'}),
        BinaryContent(PNG, media_type='image/png'),
        BinaryContent(WAV, media_type='audio/wav'),
        BinaryContent(PDF, media_type='application/pdf'),
        CachePoint(),
    )
    assert chat_messages(messages) == [
        {
            'role': 'user',
            'content': [
                {'type': 'text', 'text': 'Look'},
                {'type': 'text', 'text': 'tagged'},
                {'type': 'image_url', 'image_url': {'url': 'https://e.com/a.png', 'detail': 'high'}},
                {'type': 'image_url', 'image_url': {'url': f'data:image/png;base64,{PNG64}'}},
                {'type': 'input_audio', 'input_audio': {'data': WAV64, 'format': 'wav'}},
                {
                    'type': 'file',
                    'file': {'file_data': f'data:application/pdf;base64,{PDF64}', 'filename': 'filename.pdf'},
                },
            ],
        }
    ]


@pytest.mark.parametrize(
    ('item', 'label'),
    [
        (VideoUrl('https://e.com/v.mp4'), 'VideoUrl'),
        (BinaryContent(b'', media_type='video/mp4'), r'BinaryContent \(video/mp4\)'),
        (BinaryContent(b'', media_type='audio/flac'), r'BinaryContent \(audio/flac\)'),
        (AudioUrl('https://e.com/a.mp3'), 'AudioUrl'),
    ],
)
def test_chat_refuses_files_it_cannot_take_naming_model_and_type(item: UserContent, label: str) -> None:
    with pytest.raises(UserError, match=rf"Model 'gpt-4o' cannot take {label} in user prompts\."):
        chat_messages(prompt('x', item))


def test_chat_sends_files_from_tools_in_a_user_message_after_the_tool_messages() -> None:
    image = BinaryContent(PNG, media_type='image/png', identifier='img1')
    mapped = chat_messages(with_tool_return(['Here it is', image]))
    assert mapped[-2:] == [
        {'role': 'tool', 'tool_call_id': 'c1', 'content': '["Here it is","See file img1."]'},
        {
            'role': 'user',
            'content': [
                {'type': 'text', 'text': '<pyai:tool_result tool_name="chart" tool_call_id="c1" file_id="img1">'},
                {'type': 'image_url', 'image_url': {'url': f'data:image/png;base64,{PNG64}'}},
                {'type': 'text', 'text': '</pyai:tool_result>'},
            ],
        },
    ]


@pytest.mark.parametrize('media_type', ['text/csv', 'application/json', 'application/ld+json', 'application/yaml'])
def test_chat_inlines_text_files_between_markers(media_type: str) -> None:
    item = BinaryContent(b'a,b', media_type=media_type, identifier='t1')
    assert chat_messages(prompt(item))[0]['content'] == [
        {'type': 'text', 'text': f'-----BEGIN FILE id="t1" type="{media_type}"-----\na,b\n-----END FILE id="t1"-----'}
    ]


def test_chat_takes_only_image_urls() -> None:
    assert chat.takes_url(ImageUrl('https://e.com/a.png'))
    assert not chat.takes_url(DocumentUrl('https://e.com/a.pdf'))
    assert not chat.takes_url(AudioUrl('https://e.com/a.mp3'))


# Responses


def test_responses_maps_images_and_files() -> None:
    messages = prompt(
        'Look',
        ImageUrl('https://e.com/a.png'),
        BinaryContent(PNG, media_type='image/png', vendor_metadata={'detail': 'low'}),
        BinaryContent(PDF, media_type='application/pdf'),
        DocumentUrl('https://e.com/doc.pdf'),
    )
    assert responses_input(messages) == [
        {
            'role': 'user',
            'content': [
                {'type': 'input_text', 'text': 'Look'},
                {'type': 'input_image', 'image_url': 'https://e.com/a.png', 'detail': 'auto'},
                {'type': 'input_image', 'image_url': f'data:image/png;base64,{PNG64}', 'detail': 'low'},
                {'type': 'input_file', 'file_data': f'data:application/pdf;base64,{PDF64}', 'filename': 'filename.pdf'},
                {'type': 'input_file', 'file_url': 'https://e.com/doc.pdf'},
            ],
        }
    ]


@pytest.mark.parametrize(
    ('item', 'label'),
    [
        (BinaryContent(WAV, media_type='audio/wav'), r'BinaryContent \(audio/wav\)'),
        (VideoUrl('https://e.com/v.mp4'), 'VideoUrl'),
    ],
)
def test_responses_refuses_audio_and_video(item: UserContent, label: str) -> None:
    with pytest.raises(UserError, match=rf"Model 'gpt-5' cannot take {label} in user prompts\."):
        responses_input(prompt(item))


def test_responses_sends_files_from_tools_in_the_call_output() -> None:
    image = ImageUrl('https://e.com/chart.png')
    items = responses_input(with_tool_return(['caption', image]))
    assert items[-1] == {
        'type': 'function_call_output',
        'call_id': 'c1',
        'output': [
            {'type': 'input_text', 'text': 'caption'},
            {'type': 'input_image', 'image_url': 'https://e.com/chart.png', 'detail': 'auto'},
        ],
    }
    only_file = responses_input(with_tool_return(image))
    assert only_file[-1]['output'] == [
        {'type': 'input_image', 'image_url': 'https://e.com/chart.png', 'detail': 'auto'}
    ]
    with pytest.raises(UserError, match=r'cannot take BinaryContent \(audio/wav\) in tool returns'):
        responses_input(with_tool_return(BinaryContent(WAV, media_type='audio/wav')))


def test_responses_image_generation_output_is_a_file_part_and_goes_back_by_reference() -> None:
    body = {
        'id': 'resp_1',
        'model': 'gpt-5',
        'created_at': 1,
        'status': 'completed',
        'output': [
            {
                'type': 'image_generation_call',
                'id': 'ig_1',
                'status': 'completed',
                'result': PNG64,
                'output_format': 'png',
            },
            {'type': 'image_generation_call', 'id': 'ig_2', 'status': 'failed', 'result': None},
        ],
    }
    response = responses_model_response(body)
    # Each call of the hosted tool is a native call and result; the image it made sits between them.
    assert [(type(p).__name__, getattr(p, 'tool_call_id', None) or getattr(p, 'id', None)) for p in response.parts] == [
        ('NativeToolCallPart', 'ig_1'),
        ('FilePart', 'ig_1'),
        ('NativeToolReturnPart', 'ig_1'),
        ('NativeToolCallPart', 'ig_2'),
        ('NativeToolReturnPart', 'ig_2'),
    ]
    assert response.parts[1] == FilePart(BinaryImage(PNG, media_type='image/png'), id='ig_1', provider_name='openai')
    assert [r.content for _, r in response.native_tool_calls] == [{'status': 'completed'}, {'status': 'failed'}]
    assert response.images == [BinaryImage(PNG, media_type='image/png')]
    history = [*prompt('draw'), response, *prompt('thanks')]
    # The calls go back as references to OpenAI's items (the image once, through its call).
    assert responses_input(history)[1:3] == [
        {'type': 'image_generation_call', 'id': 'ig_1', 'result': None, 'status': 'completed'},
        {'type': 'image_generation_call', 'id': 'ig_2', 'result': None, 'status': 'failed'},
    ]
    # Without the call part (a history made before native parts), the image itself refers back to its item.
    only_file = ModelResponse([response.parts[1]], provider_name='openai')
    assert responses_input([*prompt('draw'), only_file, *prompt('thanks')])[1] == {
        'type': 'image_generation_call',
        'id': 'ig_1',
        'result': None,
        'status': 'completed',
    }
    foreign = ModelResponse([FilePart(BinaryContent(PNG, media_type='image/png'), provider_name='google')])
    assert len(responses_input([*prompt('draw'), foreign, *prompt('thanks')])) == 2


# Anthropic


def test_anthropic_maps_images_documents_and_cache_points() -> None:
    messages = prompt(
        CachePoint(),
        'Look',
        ImageUrl('https://e.com/a.png'),
        BinaryContent(PNG, media_type='image/png'),
        CachePoint(ttl='1h'),
        DocumentUrl('https://e.com/doc.pdf'),
        BinaryContent(PDF, media_type='application/pdf'),
        BinaryContent(b'plain words', media_type='text/plain'),
    )
    assert anthropic_messages(messages) == [
        {
            'role': 'user',
            'content': [
                {'type': 'text', 'text': 'Look'},
                {'type': 'image', 'source': {'type': 'url', 'url': 'https://e.com/a.png'}},
                {
                    'type': 'image',
                    'source': {'type': 'base64', 'media_type': 'image/png', 'data': PNG64},
                    'cache_control': {'type': 'ephemeral', 'ttl': '1h'},
                },
                {'type': 'document', 'source': {'type': 'url', 'url': 'https://e.com/doc.pdf'}},
                {'type': 'document', 'source': {'type': 'base64', 'media_type': 'application/pdf', 'data': PDF64}},
                {'type': 'document', 'source': {'type': 'text', 'media_type': 'text/plain', 'data': 'plain words'}},
            ],
        }
    ]


@pytest.mark.parametrize(
    ('item', 'label'),
    [
        (AudioUrl('https://e.com/a.mp3'), 'AudioUrl'),
        (VideoUrl('https://e.com/v.mp4'), 'VideoUrl'),
        (BinaryContent(WAV, media_type='audio/wav'), r'BinaryContent \(audio/wav\)'),
        (DocumentUrl('https://e.com/a.csv'), 'DocumentUrl'),
    ],
)
def test_anthropic_refuses_audio_video_and_other_documents(item: UserContent, label: str) -> None:
    with pytest.raises(UserError, match=rf"Model 'claude-sonnet-4-5' cannot take {label} in user prompts\."):
        anthropic_messages(prompt(item))


def test_anthropic_puts_files_from_tools_in_the_tool_result() -> None:
    mapped = anthropic_messages(with_tool_return(['caption', BinaryContent(PNG, media_type='image/png')]))
    assert mapped[-1] == {
        'role': 'user',
        'content': [
            {
                'type': 'tool_result',
                'tool_use_id': 'c1',
                'content': [
                    {'type': 'text', 'text': 'caption'},
                    {'type': 'image', 'source': {'type': 'base64', 'media_type': 'image/png', 'data': PNG64}},
                ],
                'is_error': False,
            }
        ],
    }
    only_file = anthropic_messages(with_tool_return(ImageUrl('https://e.com/a.png')))
    assert only_file[-1]['content'][0]['content'] == [
        {'type': 'image', 'source': {'type': 'url', 'url': 'https://e.com/a.png'}}
    ]


def test_anthropic_leaves_out_empty_text_next_to_files() -> None:
    mapped = anthropic_messages(prompt('', TextContent(''), ImageUrl('https://e.com/a.png')))
    assert mapped[0]['content'] == [{'type': 'image', 'source': {'type': 'url', 'url': 'https://e.com/a.png'}}]


def test_anthropic_leaves_files_out_of_assistant_turns() -> None:
    history = [*prompt('draw'), ModelResponse([TextPart('here'), FilePart(BinaryContent(PNG, media_type='image/png'))])]
    assert anthropic_messages(history)[1] == {'role': 'assistant', 'content': [{'type': 'text', 'text': 'here'}]}


# Gemini


def test_google_maps_inline_data_and_file_uris() -> None:
    messages = prompt(
        'Watch',
        VideoUrl('https://youtu.be/abc', vendor_metadata={'start_offset': '10s'}),
        BinaryContent(WAV, media_type='audio/wav'),
        BinaryContent(PDF, media_type='application/pdf'),
    )
    assert google_contents(messages) == [
        {
            'role': 'user',
            'parts': [
                {'text': 'Watch'},
                {
                    'fileData': {'mimeType': 'video/mp4', 'fileUri': 'https://youtu.be/abc'},
                    'videoMetadata': {'start_offset': '10s'},
                },
                {'inlineData': {'mimeType': 'audio/wav', 'data': WAV64}},
                {'inlineData': {'mimeType': 'application/pdf', 'data': PDF64}},
            ],
        }
    ]


def test_google_sends_files_from_tools_after_the_function_response() -> None:
    image = BinaryContent(PNG, media_type='image/png', identifier='img1')
    contents = google_contents(with_tool_return(['ok', image]))
    assert contents[-1]['parts'] == [
        {'functionResponse': {'name': 'chart', 'response': {'return_value': 'ok'}, 'id': 'c1'}},
        {'text': '<pyai:tool_result tool_name="chart" tool_call_id="c1" file_id="img1">'},
        {'inlineData': {'mimeType': 'image/png', 'data': PNG64}},
        {'text': '</pyai:tool_result>'},
    ]


def test_google_inline_images_in_answers_are_file_parts_and_go_back_inline() -> None:
    body = {
        'candidates': [
            {
                'content': {
                    'role': 'model',
                    'parts': [{'text': 'Here'}, {'inlineData': {'mimeType': 'image/png', 'data': PNG64}}],
                },
                'finishReason': 'STOP',
            }
        ],
        'modelVersion': 'gemini-2.5-flash-image',
    }
    response = google_model_response(body, model_name='gemini-2.5-flash-image')
    assert response.parts == [
        TextPart('Here'),
        FilePart(BinaryImage(PNG, media_type='image/png'), provider_name='google-gla'),
    ]
    contents = google_contents([*prompt('draw'), response, *prompt('again')])
    assert contents[1]['parts'] == [{'text': 'Here'}, {'inlineData': {'mimeType': 'image/png', 'data': PNG64}}]


# Files in a provider's storage


def test_uploaded_files_are_sent_by_id_to_their_provider() -> None:
    pdf = UploadedFile('file-abc.pdf', 'openai')
    assert chat_messages(prompt(pdf))[0]['content'] == [{'type': 'file', 'file': {'file_id': 'file-abc.pdf'}}]
    image = UploadedFile('file-img', 'openai', media_type='image/png')
    assert responses_input(prompt(image, pdf))[0]['content'] == [
        {'type': 'input_image', 'file_id': 'file-img', 'detail': 'auto'},
        {'type': 'input_file', 'file_id': 'file-abc.pdf'},
    ]
    stored = [UploadedFile('file_1', 'anthropic', media_type='image/jpeg'), UploadedFile('file_2', 'anthropic')]
    assert anthropic_messages(prompt(*stored))[0]['content'] == [
        {'type': 'image', 'source': {'type': 'file', 'file_id': 'file_1'}},
        {'type': 'document', 'source': {'type': 'file', 'file_id': 'file_2'}},
    ]
    uri = 'https://generativelanguage.googleapis.com/v1beta/files/abc'
    video = UploadedFile(uri, 'google', media_type='video/mp4', vendor_metadata={'fps': 1})
    assert google_contents(prompt(video))[0]['parts'] == [
        {'fileData': {'mimeType': 'video/mp4', 'fileUri': uri}, 'videoMetadata': {'fps': 1}}
    ]


def test_uploaded_files_of_another_provider_are_refused() -> None:
    with pytest.raises(
        UserError,
        match=r"`provider_name='anthropic'` cannot be used with OpenAIChatModel\. Expected `provider_name` to be",
    ):
        chat_messages(prompt(UploadedFile('f', 'anthropic')))
    with pytest.raises(
        UserError,
        match=r"cannot be used with GoogleModel\. Expected `provider_name` to be one of \['google', 'google-gla'\]",
    ):
        google_contents(prompt(UploadedFile('f', 'openai')))
    with pytest.raises(UserError, match='must use a file URI from the Google Files API'):
        google_contents(prompt(UploadedFile('gs://bucket/a.pdf', 'google')))
    with pytest.raises(UserError, match=r"Model 'claude-sonnet-4-5' cannot take UploadedFile in user prompts"):
        anthropic_messages(prompt(UploadedFile('file_3', 'anthropic', media_type='audio/wav')))


# Images in streams


@pytest.mark.anyio
async def test_google_streamed_images_are_file_parts_between_text() -> None:
    from edgewise.agent.messages import PartEndEvent, PartStartEvent
    from edgewise.agent.models._google_mapping import GoogleStreamedResponse

    from ._helpers import aiter_events

    def chunk(*parts: dict[str, Any]) -> dict[str, Any]:
        return {'candidates': [{'content': {'role': 'model', 'parts': list(parts)}}]}

    image = {'inlineData': {'mimeType': 'image/png', 'data': PNG64}}
    chunks = [chunk({'text': 'Here '}), chunk({'text': 'it is'}, image), chunk({'text': 'Done'})]
    streamed = GoogleStreamedResponse(PARAMS, aiter_events(chunks), model_name='gemini', provider_name='google-gla')
    events = [event async for event in streamed]
    starts = [e.part for e in events if isinstance(e, PartStartEvent)]
    assert starts[1] == FilePart(BinaryImage(PNG, media_type='image/png'), provider_name='google-gla')
    assert [e.next_part_kind for e in events if isinstance(e, PartEndEvent)] == ['file', 'text', None]
    assert streamed.get().parts == [
        TextPart('Here it is'),
        FilePart(BinaryImage(PNG, media_type='image/png'), provider_name='google-gla'),
        TextPart('Done'),
    ]


@pytest.mark.anyio
async def test_responses_streamed_image_generation_is_a_file_part_between_its_call_and_result() -> None:
    from edgewise.agent.models._openai_responses_mapping import OpenAIResponsesStreamedResponse

    from ._helpers import aiter_events

    item = {'type': 'image_generation_call', 'id': 'ig_1', 'status': 'completed', 'result': PNG64}
    events: list[dict[str, Any]] = [
        {'type': 'response.output_item.done', 'output_index': 0, 'item': item},
        {'type': 'response.output_text.delta', 'item_id': 'msg_1', 'delta': 'A cat.'},
    ]
    streamed = OpenAIResponsesStreamedResponse(PARAMS, aiter_events(events), model_name='gpt-5', provider_name='openai')
    _ = [event async for event in streamed]
    parts = streamed.get().parts
    result = parts[2]
    assert isinstance(result, NativeToolReturnPart)
    assert [type(p).__name__ for p in parts] == [
        'NativeToolCallPart',
        'FilePart',
        'NativeToolReturnPart',
        'TextPart',
    ]
    assert parts[1:] == [
        FilePart(BinaryImage(PNG, media_type='image/png'), id='ig_1', provider_name='openai'),
        NativeToolReturnPart(
            'image_generation', {'status': 'completed'}, 'ig_1', timestamp=result.timestamp, provider_name='openai'
        ),
        TextPart('A cat.', id='msg_1', provider_name='openai'),
    ]
