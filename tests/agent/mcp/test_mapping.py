"""What MCP tool results and sampling requests become (pure mapping, on the protocol's JSON and the SDK's models)."""

from __future__ import annotations

import base64

import pytest
from mcp import types as mcp_types

from edgewise.agent import ModelRetry
from edgewise.agent.exceptions import UnexpectedModelBehavior
from edgewise.agent.mcp import EmbeddedResource, ResourceAnnotations, ResourceLink, ServerCapabilities
from edgewise.agent.mcp._mapping import (
    map_content_part,
    map_prompt_part,
    map_tool_result,
    sampling_messages,
    sampling_result,
)
from edgewise.agent.messages import (
    BinaryContent,
    BinaryImage,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    UserPromptPart,
)

PNG = base64.b64encode(b'\x89PNG....').decode()


def test_an_error_result_without_text_is_a_generic_retry() -> None:
    with pytest.raises(ModelRetry, match=r'^MCP tool call failed$'):
        map_tool_result({'content': [], 'isError': True})


def test_a_result_of_several_parts_is_a_list_and_of_one_part_that_part() -> None:
    assert map_tool_result({'content': [{'type': 'text', 'text': 'only'}]}) == 'only'
    assert map_tool_result({'content': [{'type': 'text', 'text': 'a'}, {'type': 'text', 'text': 'b'}]}) == ['a', 'b']


def test_structured_content_without_the_result_wrapper_is_returned_whole() -> None:
    result = {'content': [{'type': 'text', 'text': '{"a": 1, "b": 2}'}], 'structuredContent': {'a': 1, 'b': 2}}
    assert map_tool_result(result) == {'a': 1, 'b': 2}


def test_structured_content_is_ignored_next_to_an_image() -> None:
    result = {
        'content': [{'type': 'text', 'text': 'see'}, {'type': 'image', 'mimeType': 'image/png', 'data': PNG}],
        'structuredContent': {'result': 'x'},
    }
    assert map_tool_result(result) == ['see', BinaryImage(b'\x89PNG....', media_type='image/png')]


def test_empty_structured_content_falls_back_to_the_parts() -> None:
    assert map_tool_result({'content': [{'type': 'text', 'text': 'plain'}], 'structuredContent': {}}) == 'plain'


@pytest.mark.parametrize(
    ('part', 'expected'),
    [
        ({'type': 'text', 'text': '[1, 2'}, '[1, 2'),
        (
            {'type': 'audio', 'mimeType': 'audio/wav', 'data': PNG},
            BinaryContent(b'\x89PNG....', media_type='audio/wav'),
        ),
        ({'type': 'image', 'data': ''}, BinaryContent(b'', media_type='application/octet-stream')),
        ({'type': 'resource', 'resource': {'uri': 'file:///a.txt', 'text': 'hello'}}, 'hello'),
        (
            {'type': 'resource', 'resource': {'uri': 'file:///a.bin', 'mimeType': 'application/zip', 'blob': PNG}},
            BinaryContent(b'\x89PNG....', media_type='application/zip'),
        ),
        (
            {'type': 'resource', 'resource': {'uri': 'file:///a.png', 'mimeType': 'image/png', 'blob': PNG}},
            BinaryImage(b'\x89PNG....', media_type='image/png'),
        ),
        ({'type': 'resource_link', 'uri': 'file:///b.txt', 'name': 'b'}, 'file:///b.txt'),
        ({'type': 'future-kind', 'x': 1}, {'type': 'future-kind', 'x': 1}),
    ],
)
def test_content_parts(part: dict[str, object], expected: object) -> None:
    mapped = map_content_part(part)
    assert mapped == expected
    assert type(mapped) is type(expected)


def test_binary_data_that_is_not_base64_is_a_value_error() -> None:
    with pytest.raises(ValueError, match='padding'):
        map_content_part({'type': 'image', 'mimeType': 'image/gif', 'data': 'abc'})


def test_prompt_parts_keep_annotations_and_meta() -> None:
    annotations = mcp_types.Annotations(audience=['user'], priority=0.5)
    text = mcp_types.TextContent(type='text', text='hi', annotations=annotations, _meta={'k': 1})
    mapped = map_prompt_part(text)
    assert mapped == TextContent(
        'hi', metadata={'mcp_annotations': ResourceAnnotations(audience=['user'], priority=0.5), 'mcp_meta': {'k': 1}}
    )
    image = map_prompt_part(mcp_types.ImageContent(type='image', data=PNG, mimeType='image/png'))
    assert image == BinaryImage(b'\x89PNG....', media_type='image/png')
    link = map_prompt_part(mcp_types.ResourceLink(type='resource_link', uri='file:///c', name='c', size=3))
    assert link == ResourceLink(uri='file:///c', name='c', size=3)
    blob = mcp_types.BlobResourceContents(uri='file:///d', mimeType='application/pdf', blob=PNG, _meta={'r': 2})
    embedded = map_prompt_part(mcp_types.EmbeddedResource(type='resource', resource=blob))
    assert embedded == EmbeddedResource(
        uri='file:///d',
        content=BinaryContent(b'\x89PNG....', media_type='application/pdf'),
        mime_type='application/pdf',
        resource_metadata={'r': 2},
    )


def test_reprs_show_only_what_is_set() -> None:
    assert repr(ResourceLink(uri='file:///c', name='c')) == "ResourceLink(uri='file:///c', name='c')"
    assert repr(ServerCapabilities(tools=True)) == 'ServerCapabilities(tools=True)'


def shape(messages: list[ModelMessage]) -> list[tuple[type, list[tuple[type, object]]]]:
    """Each message's type and its parts' types and contents (timestamps left out)."""
    return [(type(m), [(type(p), p.content) for p in m.parts]) for m in messages]  # type: ignore[union-attr]


def _text(role: str, text: str) -> mcp_types.SamplingMessage:
    return mcp_types.SamplingMessage(role=role, content=mcp_types.TextContent(type='text', text=text))


def test_sampling_turns_become_requests_and_responses() -> None:
    params = mcp_types.CreateMessageRequestParams(
        messages=[_text('user', 'hi'), _text('assistant', 'hello'), _text('assistant', 'again'), _text('user', 'bye')],
        systemPrompt='Be nice.',
        maxTokens=10,
    )
    assert shape(sampling_messages(params)) == [
        (ModelRequest, [(SystemPromptPart, 'Be nice.'), (UserPromptPart, 'hi')]),
        (ModelResponse, [(TextPart, 'hello'), (TextPart, 'again')]),
        (ModelRequest, [(UserPromptPart, 'bye')]),
    ]


def test_sampling_ending_with_the_assistant() -> None:
    params = mcp_types.CreateMessageRequestParams(messages=[_text('assistant', 'hello')], maxTokens=10)
    assert shape(sampling_messages(params)) == [(ModelResponse, [(TextPart, 'hello')])]


def test_sampling_with_an_image_from_the_user_gives_the_model_the_file() -> None:
    image = mcp_types.ImageContent(type='image', data=PNG, mimeType='image/png')
    params = mcp_types.CreateMessageRequestParams(
        messages=[mcp_types.SamplingMessage(role='user', content=image)], maxTokens=10
    )
    assert shape(sampling_messages(params)) == [
        (ModelRequest, [(UserPromptPart, [BinaryImage(b'\x89PNG....', media_type='image/png')])])
    ]


def test_sampling_with_an_image_from_the_assistant_or_a_list_is_refused() -> None:
    image = mcp_types.ImageContent(type='image', data=PNG, mimeType='image/png')
    params = mcp_types.CreateMessageRequestParams(
        messages=[mcp_types.SamplingMessage(role='assistant', content=image)], maxTokens=10
    )
    with pytest.raises(ValueError, match='sampling content of type ImageContent is not supported from the assistant'):
        sampling_messages(params)
    text = mcp_types.TextContent(type='text', text='a')
    params = mcp_types.CreateMessageRequestParams(
        messages=[mcp_types.SamplingMessage(role='user', content=[text, text])], maxTokens=10
    )
    with pytest.raises(ValueError, match='sampling content of type list is not supported from the user'):
        sampling_messages(params)


def test_the_sampling_result_is_the_text_without_thinking() -> None:
    response = ModelResponse(parts=[ThinkingPart(content='hmm'), TextPart(content='a'), TextPart(content='b')])
    assert sampling_result(response, 'm') == {
        'role': 'assistant',
        'content': {'type': 'text', 'text': 'ab'},
        'model': 'm',
    }


def test_a_sampling_answer_with_a_tool_call_is_unexpected() -> None:
    response = ModelResponse(parts=[ToolCallPart('t', {})])
    with pytest.raises(UnexpectedModelBehavior, match='the sampling model answered with a ToolCallPart, expected text'):
        sampling_result(response, 'm')
