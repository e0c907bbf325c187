"""`Agent` API of pydantic-ai 2.68: `@agent.system_prompt(name=..., on_change=...)` (appending system prompts)."""

from __future__ import annotations

import json

import pytest

from edgewise.agent import Agent
from edgewise.agent._messages.instructions import SUPERSESSION_SENTENCE
from edgewise.agent.exceptions import UserError
from edgewise.agent.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    UserPromptPart,
)
from edgewise.agent.models._system_prompt_contexts import render_system_prompt_contexts
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel

pytestmark = pytest.mark.anyio

RULE = f'\n{SUPERSESSION_SENTENCE}'
REF = 'budget_agent.<locals>.budget'
WITHDRAWN = 'This context has been withdrawn, and the withdrawal stays in effect until replaced again.'


def context(body: str, name: str = 'budget') -> str:
    return f'<pyai:context id="system_prompt:{name}">\n{body}\n</pyai:context>'


class Recorder:
    """A `FunctionModel` function keeping the request parts the model is sent, as `(kind, text)` pairs."""

    def __init__(self) -> None:
        self.sent: list[list[tuple[str, str]]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.sent.append(
            [
                (part.part_kind, str(getattr(part, 'content', '')))
                for message in messages
                if isinstance(message, ModelRequest)
                for part in message.parts
            ]
        )
        return ModelResponse([TextPart('ok')])


def budget_agent(recorder: Recorder, value: dict[str, str], name: str | None = None) -> Agent[None, str]:
    agent = Agent(FunctionModel(recorder))

    @agent.system_prompt(on_change='append', name=name)
    def budget() -> str:
        return value['text']

    @agent.system_prompt
    def rules() -> str:
        return 'be brief'

    return agent


async def test_an_appending_system_prompt_is_stated_once_then_replaced_and_withdrawn() -> None:
    recorder, value = Recorder(), {'text': '3 left'}
    agent = budget_agent(recorder, value)
    first = await agent.run('hi')
    opening = first.all_messages()[0].parts[0]
    assert isinstance(opening, SystemPromptPart)
    assert opening == SystemPromptPart(
        '3 left', timestamp=opening.timestamp, dynamic_ref=REF, context_id='system_prompt:budget'
    )
    value['text'] = '2 left'
    second = await agent.run('again', message_history=first.all_messages())
    value['text'] = ''
    third = await agent.run('third', message_history=second.all_messages())
    assert recorder.sent == [
        [('system-prompt', context('3 left') + RULE), ('system-prompt', 'be brief'), ('user-prompt', 'hi')],
        [
            ('system-prompt', context('3 left') + RULE),
            ('system-prompt', 'be brief'),
            ('user-prompt', 'hi'),
            ('system-prompt', context('2 left')),
            ('user-prompt', 'again'),
        ],
        [
            ('system-prompt', context('3 left') + RULE),
            ('system-prompt', 'be brief'),
            ('user-prompt', 'hi'),
            ('system-prompt', context('2 left')),
            ('user-prompt', 'again'),
            ('system-prompt', context(WITHDRAWN)),
            ('user-prompt', 'third'),
        ],
    ]
    # The history keeps the texts; the earlier statements are as they were.
    statements = [
        (part.content, part.context_id)
        for message in third.all_messages()
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, SystemPromptPart) and part.dynamic_ref == REF
    ]
    assert statements == [
        ('3 left', 'system_prompt:budget'),
        ('2 left', 'system_prompt:budget'),
        ('', 'system_prompt:budget'),
    ]


async def test_an_unchanged_appending_system_prompt_adds_nothing() -> None:
    recorder, value = Recorder(), {'text': 'steady'}
    agent = budget_agent(recorder, value, name='plan')
    first = await agent.run('hi')
    second = await agent.run('again', message_history=first.all_messages())
    assert recorder.sent[-1] == [
        ('system-prompt', context('steady', 'plan') + RULE),
        ('system-prompt', 'be brief'),
        ('user-prompt', 'hi'),
        ('user-prompt', 'again'),
    ]
    assert len(second.new_messages()[0].parts) == 1


async def test_a_rewriting_dynamic_system_prompt_still_rewrites_its_part() -> None:
    recorder, value = Recorder(), {'text': 'old'}
    agent = Agent(FunctionModel(recorder))

    @agent.system_prompt(dynamic=True, name='ignored')
    def mood() -> str:
        return value['text']

    first = await agent.run('hi')
    value['text'] = 'new'
    await agent.run('again', message_history=first.all_messages())
    assert recorder.sent[-1] == [('system-prompt', 'new'), ('user-prompt', 'hi'), ('user-prompt', 'again')]


async def test_an_appending_system_prompt_empty_at_first_is_stated_when_it_gets_a_text() -> None:
    recorder, value = Recorder(), {'text': ''}
    agent = budget_agent(recorder, value)
    first = await agent.run('hi')
    value['text'] = 'now set'
    await agent.run('again', message_history=first.all_messages())
    assert recorder.sent == [
        [('system-prompt', 'be brief'), ('user-prompt', 'hi')],
        [
            ('system-prompt', 'be brief'),
            ('user-prompt', 'hi'),
            ('system-prompt', context('now set') + RULE),
            ('user-prompt', 'again'),
        ],
    ]


async def test_a_resent_request_gets_the_new_statement_after_the_one_it_replaces() -> None:
    recorder, value = Recorder(), {'text': 'first'}
    agent = budget_agent(recorder, value)
    history: list[ModelMessage] = [
        ModelRequest(
            [
                SystemPromptPart('first', dynamic_ref=REF, context_id='system_prompt:budget'),
                UserPromptPart('hi'),
            ]
        )
    ]
    value['text'] = 'second'
    await agent.run(message_history=history)
    assert recorder.sent == [
        [
            ('system-prompt', context('first') + RULE),
            ('system-prompt', context('second')),
            ('user-prompt', 'hi'),
        ]
    ]


async def test_a_history_ending_with_a_response_sends_the_statement_with_the_instructions() -> None:
    recorder, value = Recorder(), {'text': 'a'}
    agent = budget_agent(recorder, value)
    agent.instructions(lambda: 'answer')
    first = await agent.run('hi')
    value['text'] = 'b'
    second = await agent.run(message_history=first.all_messages())
    assert recorder.sent[-1][-1] == ('system-prompt', context('b'))
    assert [type(m).__name__ for m in second.new_messages()] == ['ModelRequest', 'ModelResponse']


def test_the_context_id_is_stored_and_loaded() -> None:
    part = SystemPromptPart('x', dynamic_ref='budget', context_id='system_prompt:budget')
    data = json.loads(ModelMessagesTypeAdapter.dump_json([ModelRequest([part])]))
    assert data[0]['parts'][0]['context_id'] == 'system_prompt:budget'
    assert ModelMessagesTypeAdapter.validate_python(data)[0].parts[0] == part
    del data[0]['parts'][0]['context_id']  # as stored before the field existed
    assert ModelMessagesTypeAdapter.validate_python(data)[0].parts[0] == SystemPromptPart(
        'x', timestamp=part.timestamp, dynamic_ref='budget'
    )
    assert "context_id='system_prompt:budget'" in repr(part)
    assert 'context_id' not in repr(SystemPromptPart('x'))


def test_the_name_defaults_to_the_function_name_and_the_direct_call_takes_the_options() -> None:
    agent = Agent(TestModel())

    def limits() -> str:
        return 'x'

    assert agent.system_prompt(limits, on_change='append') is limits
    with pytest.raises(UserError, match="is named 'limits'; pass a different `name=`"):
        agent.system_prompt(on_change='append')(limits)
    agent.system_prompt(limits, on_change='append', name='other')
    # `name` only counts for appending prompts, so a rewriting one may reuse it.
    agent.system_prompt(dynamic=True, name='limits')(limits)


def test_a_system_prompt_name_cannot_hold_a_colon() -> None:
    agent = Agent(TestModel())
    with pytest.raises(UserError, match="System prompt name 'a:b' cannot hold `:`"):
        agent.system_prompt(on_change='append', name='a:b')(lambda: 'x')


async def test_a_resent_request_without_the_prompt_opens_with_the_new_statement() -> None:
    recorder, value = Recorder(), {'text': 'second'}
    agent = budget_agent(recorder, value)
    history: list[ModelMessage] = [
        ModelRequest(
            [SystemPromptPart('first', dynamic_ref=REF, context_id='system_prompt:budget'), UserPromptPart('hi')]
        ),
        ModelResponse([TextPart('ok')]),
        ModelRequest([UserPromptPart('again')]),
    ]
    await agent.run(message_history=history)
    assert recorder.sent[-1][2:] == [('system-prompt', context('second')), ('user-prompt', 'again')]


async def test_the_rule_is_not_repeated_after_an_instruction_prefix_that_states_it() -> None:
    recorder, value = Recorder(), {'text': '3 left'}
    agent = budget_agent(recorder, value)
    agent.instructions(name='style', on_change='append')(lambda: 'short answers')
    first = await agent.run('hi')
    value['text'] = '2 left'
    await agent.run('again', message_history=first.all_messages())
    assert recorder.sent[0][0] == ('system-prompt', context('3 left'))
    assert recorder.sent[1][3] == ('system-prompt', context('2 left'))


async def test_a_request_scoped_system_prompt_ends_the_standing_prompt() -> None:
    recorder = Recorder()
    agent = Agent(FunctionModel(recorder))
    history: list[ModelMessage] = [
        ModelRequest(
            [
                SystemPromptPart('turn 1', scope='request'),
                SystemPromptPart('3 left', dynamic_ref=REF, context_id='system_prompt:budget'),
                UserPromptPart('hi'),
            ]
        )
    ]
    await agent.run(message_history=history)
    assert recorder.sent == [
        [('system-prompt', context('3 left') + RULE), ('user-prompt', 'hi'), ('system-prompt', 'turn 1')]
    ]


def test_statements_as_a_model_with_inline_system_prompts_reads_them() -> None:
    plain: list[ModelMessage] = [ModelRequest([UserPromptPart('hi')])]
    assert render_system_prompt_contexts(plain, inline_system=True) is plain
    only = SystemPromptPart('3 left', context_id='system_prompt:budget')
    withdrawal = SystemPromptPart('', context_id='system_prompt:budget')
    rendered = render_system_prompt_contexts(
        [ModelRequest([only]), ModelResponse([TextPart('ok')]), ModelRequest([withdrawal, UserPromptPart('go')])],
        inline_system=True,
    )
    assert [[str(getattr(part, 'content', '')) for part in message.parts] for message in rendered] == [
        [context('3 left') + RULE],
        ['ok'],
        [context('This context has been withdrawn.'), 'go'],
    ]
