"""`StructuredContent` (pydantic-ai 2.68): a structured value in a user prompt, kept as a value in the history and
sent to models as the text it was rendered to when made, which is stored with it."""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Any

import pytest
from pydantic import BaseModel

from edgewise.agent import Agent, StructuredContent, TextContent
from edgewise.agent.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    UserPromptPart,
)
from edgewise.agent.models.function import AgentInfo, FunctionModel

pytestmark = pytest.mark.anyio


class Screen(BaseModel):
    title: str
    items: list[int]


def test_a_value_is_rendered_as_compact_json_with_markup_escaped() -> None:
    item = StructuredContent({'html': '<b>&</b>', 'n': 1})
    assert item.content == r'{"html":"\u003cb\u003e\u0026\u003c/b\u003e","n":1}'
    assert isinstance(item, TextContent)
    assert item.kind == 'structured-content'


def test_a_tag_and_description_frame_the_json() -> None:
    item = StructuredContent(Screen(title='Inbox', items=[1, 2]), tag='ui_state', description='What the user sees:')
    assert item.content == 'What the user sees:\n<ui_state>{"title":"Inbox","items":[1,2]}</ui_state>'


def test_xml_and_function_formats() -> None:
    assert StructuredContent({'a': 1}, format='xml', tag='data').content == '<data>\n  <a>1</a>\n</data>'
    assert StructuredContent([1, 2], format=lambda value: f'{len(value)} items').content == '2 items'
    assert StructuredContent({'a': 1}, format='json').content == '{"a":1}'


def test_a_subclass_renders_its_own_way() -> None:
    class Total(StructuredContent):
        def render(self) -> str:
            return f'Total: {self.value}'

    assert Total(42).content == 'Total: 42'


def test_given_content_is_kept_and_not_rendered_again() -> None:
    assert StructuredContent({'a': 1}, content='fixed', tag='Not Checked').content == 'fixed'  # as when loading
    item = StructuredContent({'a': 1}, tag='v')
    assert replace(item, value={'a': 2}).content == '<v>{"a":1}</v>'
    assert replace(item, value={'a': 2}, content='').content == '<v>{"a":2}</v>'


@pytest.mark.parametrize('tag', ['UI', 'ui__state', '_x', 'pyai:context', '1a'])
def test_a_tag_that_is_not_lowercase_snake_case_is_refused(tag: str) -> None:
    with pytest.raises(ValueError, match='must be lowercase snake_case'):
        StructuredContent({}, tag=tag)


@pytest.mark.parametrize('tag', ['system', 'tool_result', 'context'])
def test_a_framing_tag_is_refused(tag: str) -> None:
    with pytest.raises(ValueError, match='a built-in framing tag'):
        StructuredContent({}, tag=tag)


def test_empty_text_is_refused() -> None:
    with pytest.raises(ValueError, match='rendered to empty text'):
        StructuredContent('x', format=lambda value: '')


def test_a_history_with_structured_content_round_trips_through_json() -> None:
    item = StructuredContent(Screen(title='Inbox', items=[1]), tag='ui_state')
    history: list[ModelMessage] = [ModelRequest([UserPromptPart(['Look', item])])]
    data = ModelMessagesTypeAdapter.dump_json(history)
    loaded = ModelMessagesTypeAdapter.validate_json(data)
    part = loaded[0].parts[0]
    assert isinstance(part, UserPromptPart)
    assert not isinstance(part.content, str)
    back = part.content[1]
    assert isinstance(back, StructuredContent)
    assert back.value == {'title': 'Inbox', 'items': [1]}
    assert back.content == item.content
    assert back.tag == 'ui_state'
    assert ModelMessagesTypeAdapter.dump_json(loaded) == data


def test_a_stored_history_with_plain_text_content_still_loads_as_text_content() -> None:
    stored = (
        b'[{"parts":[{"content":["a",{"content":"b","metadata":null,"kind":"text-content"}],'
        b'"part_kind":"user-prompt"}],"kind":"request"}]'
    )
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        loaded = ModelMessagesTypeAdapter.validate_json(stored)
    part = loaded[0].parts[0]
    assert isinstance(part, UserPromptPart)
    assert not isinstance(part.content, str)
    assert type(part.content[1]) is TextContent


async def test_a_model_is_sent_the_rendered_text() -> None:
    seen: list[Any] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(messages[0].parts[0].content)  # type: ignore[union-attr]
        return ModelResponse([TextPart('ok')])

    agent = Agent(FunctionModel(answer))
    await agent.run(['Look', StructuredContent({'a': 1}, tag='state')])
    assert seen[0][1].content == '<state>{"a":1}</state>'
