"""`Agent` API of pydantic-ai 2.68: `@agent.system_prompt(name=..., on_change=...)` (appending system prompts) and
the options of `Agent.to_web(...)`, through the app over HTTP."""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
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
from edgewise.agent.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.tools import RunContext

from .ui._server import serving

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


# -- `Agent.to_web(...)` --------------------------------------------------------------------------------------------


def test_to_web_takes_the_options_of_2_68_by_keyword() -> None:
    parameters = inspect.signature(Agent.to_web).parameters
    assert [(name, p.kind) for name, p in parameters.items()][1:7] == [
        (name, inspect.Parameter.KEYWORD_ONLY)
        for name in ('models', 'deps', 'model_settings', 'instructions', 'html_source', 'allowed_hosts')
    ]
    with pytest.raises(TypeError):
        Agent(TestModel()).to_web(['test'])  # type: ignore[call-arg]


def _web_client(app: Any, host: str = '127.0.0.1:8000') -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url=f'http://{host}')


def _chat(text: str, chat_id: str = 'c1', **extra: Any) -> dict[str, Any]:
    message = {'id': 'u1', 'role': 'user', 'parts': [{'type': 'text', 'text': text}]}
    return {'trigger': 'submit-message', 'id': chat_id, 'messages': [message], **extra}


def _streamed_text(body: str) -> str:
    chunks = [json.loads(e.removeprefix('data: ')) for e in body.split('\n\n') if e and e != 'data: [DONE]']
    return ''.join(chunk['delta'] for chunk in chunks if chunk['type'] == 'text-delta')


async def test_to_web_runs_each_chat_with_the_deps_settings_and_instructions_given() -> None:
    seen: list[tuple[str | None, Any, str]] = []

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        if len(messages) == 1:
            yield {0: DeltaToolCall('whose', '{}', tool_call_id='call-1')}
        else:
            seen.append((info.instructions, info.model_settings, 'done'))
            yield 'answered'

    agent = Agent(FunctionModel(stream_function=stream), deps_type=str)

    @agent.tool
    def whose(ctx: RunContext[str]) -> str:
        return ctx.deps

    app = agent.to_web(deps='alice', model_settings={'temperature': 0.25}, instructions='Answer in French.')
    async with _web_client(app) as http:
        response = await http.post('/api/chat', json=_chat('hi'))
    assert _streamed_text(response.text) == 'answered'
    assert '"output":"alice"' in response.text.replace(' ', '')
    assert seen == [('Answer in French.', {'temperature': 0.25}, 'done')]


async def test_to_web_offers_the_models_given_and_runs_the_one_chosen() -> None:
    async def default(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield 'from default'

    async def other(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield 'from other'

    agent = Agent(FunctionModel(stream_function=default))
    app = agent.to_web(models={'Other one': FunctionModel(stream_function=other, model_name='other')})
    async with _web_client(app) as http:
        config = (await http.get('/api/configure')).json()
        assert [m['name'] for m in config['models']][1:] == ['Other one']
        chosen = config['models'][1]['id']
        answer = await http.post('/api/chat', json=_chat('hi', model=chosen))
        assert _streamed_text(answer.text) == 'from other'


async def test_to_web_serves_the_page_given_under_the_hosts_allowed_over_a_real_server(tmp_path: Path) -> None:
    page = tmp_path / 'page.html'
    page.write_text('<p>my page</p>')
    app = Agent(TestModel()).to_web(html_source=page, allowed_hosts=['chat.example.com'])
    with serving(app) as base:
        async with httpx.AsyncClient(base_url=base) as http:
            assert (await http.get('/')).text == '<p>my page</p>'
            assert (await http.get('/', headers={'host': 'chat.example.com'})).status_code == 200
            refused = await http.get('/', headers={'host': 'other.example.com'})
            assert refused.status_code == 421
