"""`narrow_type` of tool call and return parts (best effort, never raising) and `structured_content`."""

from __future__ import annotations

from dataclasses import replace

import pytest

from edgewise.agent.messages import (
    LoadCapabilityCallPart,
    LoadCapabilityReturnPart,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    NativeToolCallPart,
    NativeToolReturnPart,
    ToolCallPart,
    ToolReturnPart,
    ToolSearchReturnPart,
)


def test_call_with_arguments_of_another_shape_is_left_as_it_is_under_a_given_kind() -> None:
    call = ToolCallPart('load_capability', {'name': 'oops'}, 'c1')
    assert ToolCallPart.narrow_type(call, tool_kind='capability-load') is call


def test_call_claiming_a_kind_its_arguments_do_not_fit_loses_the_claim() -> None:
    call = ToolCallPart('load_capability', {'name': 'oops'}, 'c1', tool_kind='capability-load')
    assert ToolCallPart.narrow_type(call) == replace(call, tool_kind=None)


def test_call_with_fitting_arguments_becomes_its_typed_part() -> None:
    call = ToolCallPart('load_capability', '{"id": "weather"}', 'c1', tool_kind='capability-load')
    narrowed = ToolCallPart.narrow_type(call)
    assert (type(narrowed), narrowed.args, narrowed.tool_call_id) == (
        LoadCapabilityCallPart,
        '{"id": "weather"}',
        'c1',
    )


def test_return_with_content_of_another_shape_is_left_as_it_is_under_a_given_kind() -> None:
    returned = ToolReturnPart('load_capability', 'error text', 'c1')
    assert ToolReturnPart.narrow_type(returned, tool_kind='capability-load') is returned


def test_return_claiming_a_kind_its_content_does_not_fit_loses_the_claim() -> None:
    returned = ToolReturnPart('load_capability', 'not-a-dict', 'c1', tool_kind='capability-load')
    assert ToolReturnPart.narrow_type(returned) == replace(returned, tool_kind=None)


def test_return_with_json_text_content_becomes_its_typed_part_with_parsed_content() -> None:
    returned = ToolReturnPart('load_capability', '{"instructions": "hi"}', 'c1', tool_kind='capability-load')
    narrowed = ToolReturnPart.narrow_type(returned)
    assert type(narrowed) is LoadCapabilityReturnPart
    assert narrowed.content == {'instructions': 'hi'}


def test_search_return_with_json_text_content_becomes_its_typed_part() -> None:
    returned = ToolReturnPart('search_tools', '{"discovered_tools": [{"name": "a"}]}', 's1', tool_kind='tool-search')
    narrowed = ToolReturnPart.narrow_type(returned)
    assert type(narrowed) is ToolSearchReturnPart
    assert narrowed.content == {'discovered_tools': [{'name': 'a'}]}


def test_typed_part_is_returned_as_it_is() -> None:
    typed = LoadCapabilityReturnPart(content={}, tool_call_id='c1')
    assert ToolReturnPart.narrow_type(typed) is typed


def test_return_that_lost_its_claim_loads_back_as_a_plain_part() -> None:
    returned = ToolReturnPart('load_capability', 'not-a-dict', 'c1', tool_kind='capability-load')
    messages: list[ModelMessage] = [ModelRequest(parts=[ToolReturnPart.narrow_type(returned)])]
    [loaded] = ModelMessagesTypeAdapter.validate_python(ModelMessagesTypeAdapter.dump_python(messages))
    assert type(loaded.parts[0]) is ToolReturnPart
    assert loaded.parts[0] == replace(returned, tool_kind=None)


@pytest.mark.parametrize(
    ('content', 'expected'),
    [
        ('{"a": 1}', {'a': 1}),
        ('[1, 2]', [1, 2]),
        ({'a': 1}, {'a': 1}),
        ([1], [1]),
        ('not json', None),
        ('"just a string"', None),
        (42, None),
    ],
)
def test_structured_content(content: object, expected: object) -> None:
    assert ToolReturnPart('t', content, 'c1').structured_content() == expected


@pytest.mark.parametrize(
    ('args', 'expected'),
    [
        ('{"a": 1}', '{"a": 1}'),
        ('{"a": [1', '{"INVALID_JSON":"{\\"a\\": [1"}'),
        ('[1, 2]', '{"INVALID_JSON":"[1, 2]"}'),
    ],
)
def test_arguments_as_json_text_wrap_what_is_not_a_json_object(args: str, expected: str) -> None:
    assert ToolCallPart('t', args).args_as_json_str() == expected


def test_native_call_with_arguments_of_another_shape_is_left_as_it_is_under_a_given_kind() -> None:
    call = NativeToolCallPart('tool_search', {'bad': 1}, 'c1')
    assert NativeToolCallPart.narrow_type(call, tool_kind='tool-search') is call


def test_native_parts_claiming_a_kind_their_data_do_not_fit_lose_the_claim() -> None:
    call = NativeToolCallPart('tool_search', {'bad': 1}, 'c1', tool_kind='tool-search')
    returned = NativeToolReturnPart('tool_search', 'oops', 'c1', tool_kind='tool-search')
    assert NativeToolCallPart.narrow_type(call) == replace(call, tool_kind=None)
    assert NativeToolReturnPart.narrow_type(returned) == replace(returned, tool_kind=None)


def test_native_parts_whose_data_fit_their_kind_are_kept_as_they_are() -> None:
    call = NativeToolCallPart('tool_search', {'queries': ['weather']}, 'c1', tool_kind='tool-search')
    returned = NativeToolReturnPart('tool_search', {'discovered_tools': []}, 'c1', tool_kind='tool-search')
    other = NativeToolCallPart('web_search', {'q': 1}, 'c2', tool_kind='web-search')
    assert (NativeToolCallPart.narrow_type(call), NativeToolReturnPart.narrow_type(returned)) == (call, returned)
    assert NativeToolCallPart.narrow_type(other) is other
