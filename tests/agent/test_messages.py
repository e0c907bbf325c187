"""The message model: JSON round trips, pydantic-ai's JSON shape, helpers and retry texts."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from inline_snapshot import snapshot

from edgewise.agent.messages import (
    ImageUrl,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.usage import RequestUsage

TS = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def _conversation() -> list[ModelMessage]:
    return [
        ModelRequest(
            parts=[
                SystemPromptPart('sys', timestamp=TS, dynamic_ref='f'),
                UserPromptPart('hi', timestamp=TS),
                ToolReturnPart('t', {'a': [1]}, 'c0', timestamp=TS),
                RetryPromptPart([{'type': 'missing', 'loc': ('b',), 'msg': 'Field required', 'input': {}}],
                                tool_name='t', tool_call_id='c1', timestamp=TS),
            ],
            timestamp=TS,
            instructions='be nice',
            run_id='r',
        ),
        ModelResponse(
            parts=[TextPart('hello'), ThinkingPart('hmm', signature='s'), ToolCallPart('t', '{"a": 1}', 'c2')],
            usage=RequestUsage(input_tokens=5, output_tokens=2),
            model_name='m',
            timestamp=TS,
            finish_reason='tool_call',
        ),
    ]  # fmt: skip


def test_a_conversation_round_trips_through_json() -> None:
    messages = _conversation()
    data = ModelMessagesTypeAdapter.dump_json(messages)
    assert ModelMessagesTypeAdapter.validate_json(data) == messages
    assert ModelMessagesTypeAdapter.validate_python(json.loads(data)) == messages


def test_the_json_shape_uses_pydantic_ai_field_names_and_tags() -> None:
    data = json.loads(ModelMessagesTypeAdapter.dump_json(_conversation()))
    assert [m['kind'] for m in data] == ['request', 'response']
    assert [p['part_kind'] for p in data[0]['parts']] == ['system-prompt', 'user-prompt', 'tool-return', 'retry-prompt']
    assert data[1]['parts'][2] == snapshot(
        {
            'tool_name': 't',
            'args': '{"a": 1}',
            'tool_call_id': 'c2',
            'tool_kind': None,
            'id': None,
            'provider_name': None,
            'provider_details': None,
            'part_kind': 'tool-call',
        }
    )
    assert data[1]['usage']['input_tokens'] == 5


def test_pydantic_ai_json_loads_including_fields_edgewise_does_not_keep() -> None:
    pydantic_ai_json = (
        '[{"parts":[{"content":"hi","timestamp":"2026-11-22T18:56:13.668961Z","part_kind":"user-prompt"}],'
        '"timestamp":"2026-11-22T18:56:13.669327Z","instructions":"be nice","kind":"request",'
        '"run_id":"01a2049d","conversation_id":"01a2","metadata":null},'
        '{"parts":[{"content":"hello","id":null,"provider_name":null,"provider_details":null,"part_kind":"text"}],'
        '"usage":{"input_tokens":115,"output_tokens":12,"details":{}},"model_name":"function:model:",'
        '"timestamp":"2026-11-22T18:56:13.677495Z","kind":"response","provider_url":null,"state":"complete"}]'
    )
    request, response = ModelMessagesTypeAdapter.validate_json(pydantic_ai_json)
    assert isinstance(request, ModelRequest)
    assert request.instructions == 'be nice'
    assert isinstance(response, ModelResponse)
    assert (response.text, response.usage.total_tokens) == ('hello', 127)


@given(st.lists(st.text(), max_size=4), st.text())
def test_any_text_conversation_round_trips(texts: list[str], answer: str) -> None:
    messages: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart(t, timestamp=TS) for t in texts])]
    messages.append(ModelResponse(parts=[TextPart(answer)], timestamp=TS))
    assert ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(messages)) == messages


def test_response_helpers() -> None:
    response = _conversation()[1]
    assert isinstance(response, ModelResponse)
    assert response.text == 'hello'
    assert response.tool_calls == [ToolCallPart('t', '{"a": 1}', 'c2')]
    assert ModelResponse(parts=[]).text is None
    assert [TextPart('').has_content(), ThinkingPart('x').has_content(), ToolCallPart('t').has_content()] == [
        False,
        True,
        False,
    ]


def test_tool_call_arguments_as_dict_and_json() -> None:
    assert ToolCallPart('t', '{"a": 1}').args_as_dict() == {'a': 1}
    assert ToolCallPart('t', {'a': 1}).args_as_json_str() == '{"a":1}'
    assert ToolCallPart('t').args_as_dict() == {}
    assert ToolCallPart('t').args_as_json_str() == '{}'
    assert ToolCallPart('t', '{"a": 1}').args_as_json_str() == '{"a": 1}'
    assert ToolCallPart('t', {'a': 1}).args_as_dict() == {'a': 1}
    with pytest.raises(ValueError, match=r"Tool call 't' arguments are not a JSON object: '\[1\]'"):
        ToolCallPart('t', '[1]').args_as_dict(raise_if_invalid=True)
    with pytest.raises(AssertionError):  # as pydantic-ai signals JSON that is not an object
        ToolCallPart('t', '[1]').args_as_dict(raise_if_invalid=True)
    with pytest.raises(ValueError, match='EOF while parsing'):
        ToolCallPart('t', '{"a": ').args_as_dict(raise_if_invalid=True)
    # by default, arguments that are not an object come back wrapped, so they can still be resent
    assert ToolCallPart('t', '[1]').args_as_dict() == {'INVALID_JSON': '[1]'}
    assert ToolCallPart('t', '{"a": ').args_as_dict() == {'INVALID_JSON': '{"a": '}


def test_usage_details_stored_as_null_load_as_empty() -> None:
    data = [{'kind': 'response', 'parts': [], 'usage': {'details': None}, 'timestamp': '2024-01-01T00:00:00Z'}]
    (response,) = ModelMessagesTypeAdapter.validate_python(data)
    assert isinstance(response, ModelResponse)
    assert response.usage.details == {}


def test_response_text_joins_runs_and_thinking() -> None:
    response = ModelResponse(
        [ThinkingPart('a'), TextPart('x'), TextPart('y'), ToolCallPart('t'), TextPart('z'), ThinkingPart('b')]
    )
    assert response.text == 'xy\n\nz'
    assert response.thinking == 'a\n\nb'
    assert ModelResponse([]).thinking is None


def test_tool_return_content_items() -> None:
    image = ImageUrl('https://e.com/a.png')
    part = ToolReturnPart('t', ['s', {'a': b'x'}, image])
    assert part.content_items() == ['s', {'a': b'x'}, image]
    assert part.content_items(mode='str') == ['s', '{"a":"eA=="}', image]
    assert part.content_items(mode='jsonable') == ['s', {'a': 'eA=='}, image]
    assert ToolReturnPart('t', 3).content_items(mode='str') == ['3']


def test_tool_returns_as_model_text_and_objects() -> None:
    assert ToolReturnPart('t', 'plain').model_response_str() == 'plain'
    assert ToolReturnPart('t', {'a': 1}).model_response_str() == '{"a":1}'
    assert ToolReturnPart('t', {'a': 1}).model_response_object() == {'a': 1}
    assert ToolReturnPart('t', 3).model_response_object() == {'return_value': 3}


def test_retry_prompt_texts_match_pydantic_ai() -> None:
    assert RetryPromptPart('bad', tool_name='t').model_response() == 'bad\n\nFix the errors and try again.'
    assert RetryPromptPart('bad').model_response() == 'Validation feedback:\nbad\n\nFix the errors and try again.'
    errors: list[Any] = [{'type': 'missing', 'loc': ('b',), 'msg': 'Field required', 'input': {'a': 1}}]
    assert RetryPromptPart(errors, tool_name='t').model_response() == snapshot("""\
1 validation error:
```json
[
  {
    "type": "missing",
    "loc": [
      "b"
    ],
    "msg": "Field required",
    "input": {
      "a": 1
    }
  }
]
```

Fix the errors and try again.""")
    two: list[Any] = [{'type': 'json_invalid', 'loc': (), 'msg': 'Invalid JSON', 'input': 'x'}] * 2
    assert (
        RetryPromptPart(two)
        .model_response()
        .startswith('2 validation errors:\n```json\n[\n  {\n    "type": "json_invalid"')
    )
    assert '"input"' not in RetryPromptPart(two).model_response()


def test_a_system_prompt_is_conversation_scoped_unless_said_otherwise() -> None:
    assert SystemPromptPart('s').scope == 'conversation'
    scoped = SystemPromptPart('3 requests left', timestamp=TS, scope='request')
    data = json.loads(ModelMessagesTypeAdapter.dump_json([ModelRequest([scoped], timestamp=TS)]))
    assert data[0]['parts'][0] == {
        'content': '3 requests left',
        'timestamp': '2026-01-02T03:04:05Z',
        'dynamic_ref': None,
        'context_id': None,
        'scope': 'request',
        'part_kind': 'system-prompt',
    }
    assert ModelMessagesTypeAdapter.validate_python(data) == [ModelRequest([scoped], timestamp=TS)]
    # A history stored before the field existed loads with the default.
    del data[0]['parts'][0]['scope']
    loaded = ModelMessagesTypeAdapter.validate_python(data)[0].parts[0]
    assert loaded == SystemPromptPart('3 requests left', timestamp=TS)
    with pytest.raises(ValueError, match='scope'):
        ModelMessagesTypeAdapter.validate_python([{**data[0], 'parts': [{**data[0]['parts'][0], 'scope': 'run'}]}])
    assert repr(scoped) == (
        "SystemPromptPart(content='3 requests left', "
        "timestamp=datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc), scope='request')"
    )


def test_reprs_leave_out_unset_fields() -> None:
    assert repr(ModelRequest.user_text_prompt('hi', instructions='x')).startswith(
        "ModelRequest(parts=[UserPromptPart(content='hi', timestamp="
    )
    assert repr(TextPart('a')) == "TextPart(content='a')"
    assert repr(ThinkingPart('a')) == "ThinkingPart(content='a')"
    assert repr(ToolCallPart('t', None, 'c')) == "ToolCallPart(tool_name='t', tool_call_id='c')"
    assert repr(SystemPromptPart('s', timestamp=TS, dynamic_ref='f')) == (
        "SystemPromptPart(content='s', timestamp=datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc), "
        "dynamic_ref='f')"
    )
    assert repr(ToolReturnPart('t', 1, 'c', timestamp=TS)).startswith(
        "ToolReturnPart(tool_name='t', content=1, tool_call_id='c'"
    )
    assert repr(RetryPromptPart('r', tool_call_id='c', timestamp=TS)).startswith(
        "RetryPromptPart(content='r', tool_call_id='c'"
    )
    assert repr(ModelResponse(parts=[], timestamp=TS, model_name='m')) == (
        "ModelResponse(parts=[], usage=RequestUsage(), model_name='m', "
        'timestamp=datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc))'
    )


def test_a_response_stored_with_the_1x_vendor_names_loads_them_as_provider_fields() -> None:
    stored = [
        {
            'parts': [{'content': 'Hello!', 'part_kind': 'text'}],
            'kind': 'response',
            'vendor_details': {'finish_reason': 'stop'},
            'vendor_id': 'chatcmpl-1',
        }
    ]
    [response] = ModelMessagesTypeAdapter.validate_python(stored)
    assert isinstance(response, ModelResponse)
    assert (response.provider_details, response.provider_response_id) == ({'finish_reason': 'stop'}, 'chatcmpl-1')
