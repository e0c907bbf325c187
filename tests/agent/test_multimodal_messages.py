"""Files in messages: URL and binary content, media types, identifiers, serialization, `ToolReturn` in runs."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pydantic
import pytest

from edgewise.agent import Agent, UserError
from edgewise.agent.messages import (
    AudioUrl,
    BinaryContent,
    BinaryImage,
    CachePoint,
    DocumentUrl,
    FilePart,
    ImageUrl,
    InstructionPart,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextContent,
    TextPart,
    ToolCallPart,
    ToolReturn,
    ToolReturnPart,
    UploadedFile,
    UserContent,
    UserPromptPart,
    VideoUrl,
    is_multi_modal_content,
)

from ._helpers import NOW, scripted

PNG = b'\x89PNG\r\n\x1a\n'


@pytest.mark.parametrize(
    ('item', 'media_type', 'file_format'),
    [
        (ImageUrl('https://example.com/cat.png'), 'image/png', 'png'),
        (ImageUrl('https://example.com/cat.JPG'), 'image/jpeg', 'jpeg'),
        (AudioUrl('https://example.com/a.mp3'), 'audio/mpeg', 'mp3'),
        (AudioUrl('https://example.com/a.flac'), 'audio/flac', 'flac'),
        (VideoUrl('https://example.com/v.mkv'), 'video/x-matroska', 'mkv'),
        (VideoUrl('https://youtu.be/abc'), 'video/mp4', 'mp4'),
        (VideoUrl('https://example.com/v.webm?sig=abc#t=2'), 'video/webm', 'webm'),
        (DocumentUrl('https://example.com/doc.pdf'), 'application/pdf', 'pdf'),
        (DocumentUrl('https://example.com/notes.md'), 'text/markdown', 'md'),
        (
            DocumentUrl('https://example.com/t.xlsx'),
            'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
            'xlsx',
        ),
    ],
)
def test_url_media_type_and_format_come_from_the_extension(item: ImageUrl, media_type: str, file_format: str) -> None:
    assert (item.media_type, item.format) == (media_type, file_format)


def test_a_given_media_type_wins_and_an_unknown_one_is_a_clear_error() -> None:
    assert ImageUrl('https://example.com/img', media_type='image/webp').format == 'webp'
    with pytest.raises(ValueError, match=r'Could not infer media type from image URL: https://example\.com/img'):
        _ = ImageUrl('https://example.com/img').media_type
    with pytest.raises(ValueError, match='Unknown document media type: image/png'):
        _ = DocumentUrl('https://example.com/a.png').format


@pytest.mark.parametrize(
    ('item', 'what'),
    [
        (AudioUrl('https://e.com/a'), 'audio'),
        (VideoUrl('https://e.com/v'), 'video'),
        (DocumentUrl('https://e.com/d'), 'document'),
    ],
)
def test_the_media_type_error_names_the_kind_of_file(item: AudioUrl, what: str) -> None:
    with pytest.raises(ValueError, match=f'Could not infer media type from {what} URL'):
        _ = item.media_type


def test_usage_estimates_count_bytes_of_binary_content_and_text_content_words() -> None:
    from edgewise.agent.models._usage_estimate import estimate_tokens

    assert (
        estimate_tokens(['two words', TextContent('three more words'), BinaryContent(b'12345', media_type='audio/wav')])
        == 10
    )
    assert estimate_tokens([ImageUrl('https://e.com/a.png')]) == 0


@pytest.mark.anyio
async def test_a_file_part_in_a_response_counts_its_bytes_as_output() -> None:
    from edgewise.agent.models.function import FunctionModel

    async def draw(messages: list[ModelMessage], info: object) -> ModelResponse:
        return ModelResponse([TextPart('done'), FilePart(BinaryContent(PNG, media_type='image/png'))])

    result = await Agent(FunctionModel(draw)).run('draw')
    assert result.usage.output_tokens == 1 + len(PNG)
    assert result.all_messages()[-1].parts[1] == FilePart(BinaryContent(PNG, media_type='image/png'))


def test_uploaded_files_media_type_identifier_and_round_trip() -> None:
    from edgewise.agent.messages import UploadedFile

    stored = UploadedFile('https://files.example.com/v1/doc.pdf?alt=media', 'google')
    assert (stored.media_type, stored.format, len(stored.identifier)) == ('application/pdf', 'pdf', 6)
    assert UploadedFile('file-abc', 'openai').media_type == 'application/octet-stream'
    given = UploadedFile('file-abc', 'openai', media_type='image/png', identifier='mine')
    assert (given.media_type, given.identifier, given.format) == ('image/png', 'mine', 'png')
    assert (
        repr(given)
        == "UploadedFile(file_id='file-abc', provider_name='openai', media_type='image/png', identifier='mine')"
    )
    with pytest.raises(ValueError, match='Unknown media type: application/octet-stream'):
        _ = UploadedFile('file-abc', 'openai').format
    assert is_multi_modal_content(given)
    messages: list[ModelMessage] = [ModelRequest([UserPromptPart([given])])]
    loaded = ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(messages))
    part = loaded[0].parts[0]
    assert isinstance(part, UserPromptPart)
    assert part.content == [given]
    assert part.content[0].identifier == 'mine'


@pytest.mark.parametrize(
    ('url', 'expected'),
    [
        ('https://www.youtube.com/watch?v=x', True),
        ('https://youtube.com/watch?v=x', True),
        ('https://youtu.be/x', True),
        ('https://m.youtube.com/watch?v=x', True),
        ('https://music.youtube.com/watch?v=x', False),
        ('https://youtube.com.example.com/v.mp4', False),
        ('https://example.com/v.mp4', False),
    ],
)
def test_youtube_links_are_recognized(url: str, expected: bool) -> None:
    assert VideoUrl(url).is_youtube is expected


def test_identifiers_are_a_short_hash_unless_given() -> None:
    assert len(ImageUrl('https://example.com/cat.png').identifier) == 6
    assert ImageUrl('https://example.com/cat.png').identifier != ImageUrl('https://example.com/dog.png').identifier
    assert ImageUrl('https://example.com/cat.png', identifier='cat').identifier == 'cat'
    assert BinaryContent(b'abc', media_type='text/plain').identifier == 'a9993e'  # sha1('abc')
    assert BinaryContent(b'abc', media_type='text/plain', identifier='mine').identifier == 'mine'


def test_media_type_and_identifier_do_not_change_equality() -> None:
    assert ImageUrl('https://example.com/x', media_type='image/png') == ImageUrl('https://example.com/x')
    assert BinaryContent(b'a', media_type='image/png', identifier='i') == BinaryContent(b'a', media_type='image/png')


def test_binary_content_kinds_and_formats() -> None:
    image = BinaryContent(PNG, media_type='image/png')
    assert (image.is_image, image.is_audio, image.is_video, image.is_document) == (True, False, False, False)
    assert BinaryContent(b'', media_type='audio/wav').is_audio
    assert BinaryContent(b'', media_type='video/mp4').format == 'mp4'
    pdf = BinaryContent(b'%PDF', media_type='application/pdf')
    assert (pdf.is_document, pdf.format) == (True, 'pdf')
    with pytest.raises(ValueError, match='Unknown media type: application/x-thing'):
        _ = BinaryContent(b'', media_type='application/x-thing').format
    assert image.base64 == 'iVBORw0KGgo='
    assert image.data_uri == 'data:image/png;base64,iVBORw0KGgo='


def test_data_uris_and_paths_give_binary_images_when_they_hold_images(tmp_path: Path) -> None:
    image = BinaryContent.from_data_uri('data:image/png;base64,iVBORw0KGgo=')
    assert isinstance(image, BinaryImage)
    assert image.data == PNG
    audio = BinaryContent.from_data_uri('data:audio/wav;base64,AAAA')
    assert type(audio) is BinaryContent
    with pytest.raises(ValueError, match='must start with "data:"'):
        BinaryContent.from_data_uri('image/png;base64,AAAA')
    with pytest.raises(ValueError, match='must be base64-encoded'):
        BinaryContent.from_data_uri('data:text/plain,hello')
    (tmp_path / 'a.png').write_bytes(PNG)
    (tmp_path / 'blob.unknownext').write_bytes(b'x')
    assert isinstance(BinaryContent.from_path(tmp_path / 'a.png'), BinaryImage)
    assert BinaryContent.from_path(tmp_path / 'blob.unknownext').media_type == 'application/octet-stream'
    with pytest.raises(FileNotFoundError, match=r'missing\.png'):
        BinaryContent.from_path(tmp_path / 'missing.png')


def test_a_binary_image_must_be_an_image() -> None:
    with pytest.raises(ValueError, match='must have a media type that starts with "image/"'):
        BinaryImage(b'x', media_type='audio/wav')
    narrowed = BinaryContent.narrow_type(BinaryContent(PNG, media_type='image/png', vendor_metadata={'detail': 'low'}))
    assert isinstance(narrowed, BinaryImage)
    assert narrowed.vendor_metadata == {'detail': 'low'}
    audio = BinaryContent(b'x', media_type='audio/wav')
    assert BinaryContent.narrow_type(audio) is audio


def test_reprs_leave_out_defaults() -> None:
    assert repr(ImageUrl('https://e.com/a.png')) == "ImageUrl(url='https://e.com/a.png')"
    assert repr(ImageUrl('https://e.com/a', media_type='image/png', force_download=True)) == (
        "ImageUrl(url='https://e.com/a', force_download=True, media_type='image/png')"
    )
    assert repr(BinaryContent(b'a', media_type='text/plain')) == "BinaryContent(data=b'a', media_type='text/plain')"
    assert repr(TextContent('hi', metadata={'k': 1})) == "TextContent(content='hi', metadata={'k': 1})"
    assert repr(ToolReturn(1, metadata='m')) == "ToolReturn(return_value=1, metadata='m')"


def test_is_multi_modal_content() -> None:
    assert is_multi_modal_content(ImageUrl('https://e.com/a.png'))
    assert is_multi_modal_content(BinaryImage(PNG, media_type='image/png'))
    assert not is_multi_modal_content('text')
    assert not is_multi_modal_content(TextContent('x'))


def test_histories_with_files_round_trip_through_json_with_base64_data() -> None:
    prompt: list[UserContent] = [
        'Look:',
        ImageUrl('https://e.com/a', media_type='image/png', vendor_metadata={'detail': 'high'}),
        BinaryContent(b'abc', media_type='audio/wav'),
        TextContent('tagged', metadata={'k': 1}),
        CachePoint(ttl='1h'),
        DocumentUrl('https://e.com/a.pdf', force_download=True),
    ]
    tool_content = [
        'ok',
        {'chart': BinaryImage(PNG, media_type='image/png')},
        VideoUrl('https://e.com/v.mp4'),
        b'\x00',
    ]
    messages: list[ModelMessage] = [
        ModelRequest([UserPromptPart(prompt), ToolReturnPart('t', tool_content, 'c1')]),
        ModelResponse([TextPart('drawn'), FilePart(BinaryContent(PNG, media_type='image/png'), provider_name='p')]),
    ]
    dumped = ModelMessagesTypeAdapter.dump_json(messages)
    data = json.loads(dumped)
    assert data[0]['parts'][0]['content'][1] == {
        'url': 'https://e.com/a',
        'force_download': False,
        'vendor_metadata': {'detail': 'high'},
        'kind': 'image-url',
        'media_type': 'image/png',
        'identifier': ImageUrl('https://e.com/a').identifier,
    }
    assert data[0]['parts'][0]['content'][2] == {
        'data': 'YWJj',
        'media_type': 'audio/wav',
        'vendor_metadata': None,
        'kind': 'binary',
        'identifier': 'a9993e',
    }
    assert data[0]['parts'][1]['content'][3] == 'AA=='
    assert data[1]['parts'][1]['content']['data'] == 'iVBORw0KGgo='
    loaded = ModelMessagesTypeAdapter.validate_json(dumped)
    request_parts = loaded[0].parts
    assert request_parts[0] == UserPromptPart(prompt, timestamp=NOW)
    assert isinstance(request_parts[1], ToolReturnPart)
    # files nested in a tool's return value load back as files; other bytes stay base64 text
    assert request_parts[1].content == [*tool_content[:3], 'AA==']
    response = loaded[1]
    assert isinstance(response, ModelResponse)
    assert response.images == [BinaryImage(PNG, media_type='image/png')]
    assert response.files == response.images
    assert response.text == 'drawn'


@pytest.mark.parametrize(
    'file',
    [
        ImageUrl('https://e.com/a.png', vendor_metadata={'detail': 'low'}),
        AudioUrl('https://e.com/a.mp3'),
        VideoUrl('https://e.com/v.mp4'),
        DocumentUrl('https://e.com/d.pdf', force_download=True),
        BinaryContent(PNG, media_type='image/png', vendor_metadata={'k': 1}),
        BinaryImage(PNG, media_type='image/png'),
        UploadedFile(file_id='file-1', provider_name='openai', media_type='application/pdf'),
    ],
)
def test_files_anywhere_in_a_tool_return_serialize_as_their_class_does(file: UserContent) -> None:
    # A tool's return value is serialized by its runtime type (see `_SerializedByType`): each file as its own class
    # serializes it, at any depth of lists, tuples and dicts, with nothing else changed.
    as_itself = pydantic.TypeAdapter(type(file)).dump_python(file, mode='json')
    content = [1, 'two', None, {'file': file, 'n': [2.5, True]}, (file,), file]
    request = ModelRequest([ToolReturnPart('t', content, 'c1', timestamp=datetime(2026, 1, 2, tzinfo=timezone.utc))])
    dumped = ModelMessagesTypeAdapter.dump_json([request], warnings='error')
    data = json.loads(dumped)
    assert data[0]['parts'][0]['content'] == [
        1,
        'two',
        None,
        {'file': as_itself, 'n': [2.5, True]},
        [as_itself],
        as_itself,
    ]
    loaded = ModelMessagesTypeAdapter.validate_json(dumped)
    part = loaded[0].parts[0]
    assert isinstance(part, ToolReturnPart)
    back: Any = part.content
    assert all(is_multi_modal_content(item) for item in (back[3]['file'], back[4][0], back[5]))
    assert ModelMessagesTypeAdapter.dump_json(loaded) == dumped


def test_file_part_repr_leaves_out_unset_fields() -> None:
    part = FilePart(BinaryContent(b'a', media_type='image/png'), provider_name='google-gla')
    assert (
        repr(part) == "FilePart(content=BinaryContent(data=b'a', media_type='image/png'), provider_name='google-gla')"
    )


def test_file_parts_hold_binary_images_when_validated_and_report_content() -> None:
    part = pydantic.TypeAdapter(FilePart).validate_python({'content': {'data': PNG, 'media_type': 'image/png'}})
    assert isinstance(part.content, BinaryImage)
    assert part.has_content()
    assert not FilePart(BinaryContent(b'', media_type='application/pdf')).has_content()
    assert ModelResponse([FilePart(BinaryContent(b'%PDF', media_type='application/pdf'))]).images == []


def test_tool_return_parts_keep_files_out_of_the_text() -> None:
    image = ImageUrl('https://e.com/a.png', identifier='img1')
    single = ToolReturnPart('t', image, 'c1')
    assert single.files == [image]
    assert single.model_response_str() == ''
    assert single.model_response_object() == {}
    frame = ['<pyai:tool_result tool_name="t" tool_call_id="c1" file_id="img1">', image, '</pyai:tool_result>']
    assert single.model_response_str_and_user_content() == ('See file img1.', frame)
    mixed = ToolReturnPart('t', ['caption', image, 3], 'c1')
    assert mixed.files == [image]
    assert mixed.model_response_str() == '["caption",3]'
    assert mixed.model_response_str_and_user_content() == (
        '["caption","See file img1.","3"]',
        frame,
    )
    one_left = ToolReturnPart('t', [{'a': 1}, image])
    assert one_left.model_response_object() == {'a': 1}
    plain = ToolReturnPart('t', [1, 2])
    assert plain.model_response_str_and_user_content() == ('[1,2]', [])
    assert plain.model_response_object() == {'return_value': [1, 2]}
    assert ToolReturnPart('t', None).model_response_str() == ''


def test_instruction_parts_join_and_sort() -> None:
    parts = [InstructionPart('dyn', dynamic=True), InstructionPart('static'), InstructionPart('')]
    assert InstructionPart.join(parts) == 'dyn\n\nstatic'
    assert InstructionPart.join([InstructionPart('  ')]) is None
    assert InstructionPart.sorted(parts) == [InstructionPart('static'), InstructionPart(''), parts[0]]
    assert repr(parts[0]) == "InstructionPart(content='dyn', dynamic=True)"
    assert repr(parts[1]) == "InstructionPart(content='static')"


@pytest.mark.anyio
async def test_a_tool_return_sends_its_content_after_the_results_and_keeps_its_metadata() -> None:
    chart = BinaryContent(PNG, media_type='image/png')
    agent = Agent(scripted([ToolCallPart('plot', {}, 'c1'), ToolCallPart('plain', {}, 'c2')], [TextPart('seen')]))

    @agent.tool_plain
    def plot() -> ToolReturn:
        return ToolReturn('plotted', content=['The chart:', chart], metadata={'rows': 3})

    @agent.tool_plain
    def plain() -> int:
        return 1

    result = await agent.run('draw')
    assert result.all_messages()[2].parts == [
        ToolReturnPart('plot', 'plotted', 'c1', metadata={'rows': 3}, timestamp=NOW),
        ToolReturnPart('plain', 1, 'c2', timestamp=NOW),
        UserPromptPart(['The chart:', chart], timestamp=NOW),
    ]


@pytest.mark.anyio
async def test_a_tool_return_without_content_adds_no_prompt() -> None:
    agent = Agent(scripted([ToolCallPart('t', {}, 'c1')], [TextPart('ok')]))

    @agent.tool_plain
    def t() -> ToolReturn:
        return ToolReturn([ImageUrl('https://e.com/a.png')])

    result = await agent.run('x')
    assert result.all_messages()[2].parts == [
        ToolReturnPart('t', [ImageUrl('https://e.com/a.png')], 'c1', timestamp=NOW)
    ]


@pytest.mark.anyio
async def test_a_tool_return_nested_in_a_list_is_a_user_error() -> None:
    agent = Agent(scripted([ToolCallPart('t', {}, 'c1')], [TextPart('ok')]))

    @agent.tool_plain
    def t() -> list[ToolReturn]:
        return [ToolReturn(1)]

    with pytest.raises(UserError, match="tool 't' contains invalid nested `ToolReturn` objects"):
        await agent.run('x')


@pytest.mark.anyio
async def test_prompts_with_files_reach_the_model() -> None:
    seen: list[object] = []
    image = ImageUrl('https://e.com/a.png')

    async def model(messages, info):
        seen.append(messages[0].parts[0].content)
        return ModelResponse([TextPart('ok')])

    from edgewise.agent.models.function import FunctionModel

    await Agent(FunctionModel(model)).run(['What is this?', image])
    assert seen == [['What is this?', image]]


class Result(pydantic.BaseModel):
    value: int


def test_a_tool_returning_tool_return_of_a_model_shows_that_models_schema() -> None:
    from edgewise.agent import Tool

    def typed(x: int) -> ToolReturn[Result]:
        return ToolReturn(Result(value=x))

    def bare(x: int) -> ToolReturn:
        return ToolReturn(x)

    schema = Tool(typed).tool_def.return_schema
    assert schema is not None
    assert (schema['type'], list(schema['properties'])) == ('object', ['value'])
    assert Tool(bare).tool_def.return_schema == {}


@pytest.mark.parametrize('mode', ['json', 'python'])
def test_binary_image_data_in_a_prompt_loads_as_a_binary_image(mode: str) -> None:
    image = BinaryContent(b'\x89PNG', media_type='image/png')
    audio = BinaryContent(b'\x00\x01', media_type='audio/mpeg')
    messages: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart([image, audio])])]
    if mode == 'json':
        loaded = ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(messages))
    else:
        loaded = ModelMessagesTypeAdapter.validate_python(ModelMessagesTypeAdapter.dump_python(messages, mode='json'))
    part = loaded[0].parts[0]
    assert isinstance(part, UserPromptPart)
    assert [type(item) for item in part.content] == [BinaryImage, BinaryContent]
    assert part.content == [BinaryImage(b'\x89PNG', media_type='image/png'), audio]


@pytest.mark.parametrize(
    'file',
    [
        ImageUrl('https://example.com/a.png'),
        AudioUrl('https://example.com/a.mp3'),
        VideoUrl('https://example.com/a.mp4'),
        DocumentUrl('https://example.com/a.pdf'),
        BinaryContent(b'x', media_type='application/pdf'),
        UploadedFile('f1', 'openai', media_type='image/png'),
    ],
)
def test_a_file_returned_by_a_tool_loads_back_from_python_data(file: Any) -> None:
    messages: list[ModelMessage] = [ModelRequest(parts=[ToolReturnPart('t', {'files': [file]}, 'c')])]
    loaded = ModelMessagesTypeAdapter.validate_python(ModelMessagesTypeAdapter.dump_python(messages, mode='json'))
    part = loaded[0].parts[0]
    assert isinstance(part, ToolReturnPart)
    content: Any = part.content
    assert type(content['files'][0]) is type(file)
    assert content == {'files': [file]}


@pytest.mark.parametrize('kind', ['binary', ['binary'], 'not-a-file'])
def test_a_returned_dict_that_is_not_a_file_stays_a_dict(kind: Any) -> None:
    content = {'kind': kind, 'data': 1}
    messages: list[ModelMessage] = [ModelRequest(parts=[ToolReturnPart('t', [content], 'c')])]
    loaded = ModelMessagesTypeAdapter.validate_python(ModelMessagesTypeAdapter.dump_python(messages, mode='json'))
    part = loaded[0].parts[0]
    assert isinstance(part, ToolReturnPart)
    assert part.content == [content]
