"""`CompactionPart` and the functions over a history (`post_compaction_window`, `narrow_message_parts`, the trim at a
provider's boundary), and the configuration of `AnthropicCompaction` and `OpenAICompaction` (their wire format is
tested over HTTP in `models/test_compaction_http.py`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, overload

import pytest

from edgewise.agent import Agent, CompactionPart
from edgewise.agent._messages.history import compaction_is_boundary_for, trim_before_compaction
from edgewise.agent.capabilities import AbstractCapability
from edgewise.agent.exceptions import UserError
from edgewise.agent.messages import (
    LoadCapabilityCallPart,
    LoadCapabilityReturnPart,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
    narrow_message_parts,
    post_compaction_window,
)
from edgewise.agent.models.anthropic import AnthropicCompaction
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.openai import OpenAICompaction
from edgewise.agent.models.test import TestModel
from edgewise.agent.models.wrapper import WrapperModel
from edgewise.agent.tools import RunContext
from edgewise.agent.usage import RunUsage

pytestmark = pytest.mark.anyio


def test_compaction_parts_survive_serialization() -> None:
    readable = CompactionPart('Summary of the conversation', provider_name='anthropic')
    encrypted = CompactionPart(None, id='cmp_1', provider_name='openai', provider_details={'encrypted_content': 'x'})
    messages: list[ModelMessage] = [ModelResponse(parts=[readable, encrypted, TextPart('go on')])]
    dumped = ModelMessagesTypeAdapter.dump_python(messages, mode='json')
    assert dumped[0]['parts'][0] == {
        'content': 'Summary of the conversation',
        'id': None,
        'provider_name': 'anthropic',
        'provider_details': None,
        'part_kind': 'compaction',
    }
    assert ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(messages)) == messages
    assert readable.has_content()
    assert not encrypted.has_content()
    assert repr(readable) == "CompactionPart(content='Summary of the conversation', provider_name='anthropic')"


def test_the_window_starts_at_the_latest_compaction_part() -> None:
    messages: list[ModelMessage] = [
        ModelRequest.user_text_prompt('old'),
        ModelResponse(parts=[CompactionPart('first', provider_name='anthropic')]),
        ModelRequest.user_text_prompt('middle'),
        ModelResponse(
            parts=[TextPart('before'), CompactionPart('latest', provider_name='anthropic'), TextPart('after')]
        ),
        ModelRequest.user_text_prompt('tail'),
    ]
    window = post_compaction_window(messages)
    boundary = window[0]
    assert isinstance(boundary, ModelResponse)
    assert boundary.parts == [CompactionPart('latest', provider_name='anthropic'), TextPart('after')]
    assert len(window) == 2
    assert window[1] is messages[4]
    plain: list[ModelMessage] = [ModelRequest.user_text_prompt('hi'), ModelResponse(parts=[TextPart('hello')])]
    assert post_compaction_window(plain) == plain
    assert post_compaction_window(plain) is not plain


def test_the_window_needs_only_integer_indexing() -> None:
    class IntOnly(Sequence[ModelMessage]):
        def __init__(self, items: list[ModelMessage]) -> None:
            self._items = items

        @overload
        def __getitem__(self, index: int) -> ModelMessage: ...
        @overload
        def __getitem__(self, index: slice) -> Sequence[ModelMessage]: ...
        def __getitem__(self, index: int | slice) -> ModelMessage | Sequence[ModelMessage]:
            if isinstance(index, slice):
                raise TypeError('no slices')
            return self._items[index]

        def __len__(self) -> int:
            return len(self._items)

    messages = IntOnly(
        [
            ModelRequest.user_text_prompt('a'),
            ModelResponse(parts=[CompactionPart('s')]),
            ModelRequest.user_text_prompt('b'),
        ]
    )
    assert [type(m).__name__ for m in post_compaction_window(messages)] == ['ModelResponse', 'ModelRequest']
    assert len(post_compaction_window(IntOnly([ModelRequest.user_text_prompt('a')]))) == 1


def test_narrowing_makes_typed_tool_parts_and_keeps_the_others() -> None:
    call = ToolCallPart('load_capability', {'id': 'foo'}, 'c1', tool_kind='capability-load')
    text = TextPart('hello')
    returned = ToolReturnPart('load_capability', {'instructions': 'hi'}, 'c1', tool_kind='capability-load')
    plain_request = ModelRequest(parts=[UserPromptPart('hi')])
    messages: list[ModelMessage] = [ModelResponse(parts=[call, text]), ModelRequest(parts=[returned]), plain_request]
    narrowed = narrow_message_parts(messages)
    assert type(narrowed[0].parts[0]) is LoadCapabilityCallPart
    assert narrowed[0].parts[1] is text
    assert type(narrowed[1].parts[0]) is LoadCapabilityReturnPart
    assert narrowed[2] is plain_request
    assert narrow_message_parts(narrowed)[0] is narrowed[0]  # idempotent


def test_a_provider_honours_only_its_own_compaction_with_what_it_reads() -> None:
    readable = CompactionPart('summary', provider_name='anthropic')
    encrypted = CompactionPart(None, provider_name='openai', provider_details={'encrypted_content': 'x'})
    failed = CompactionPart(None, provider_name='anthropic')
    assert compaction_is_boundary_for(readable, 'anthropic')
    assert not compaction_is_boundary_for(readable, 'openai')
    assert not compaction_is_boundary_for(readable, 'anthropic', needs_encrypted=True)
    assert compaction_is_boundary_for(encrypted, 'openai', needs_encrypted=True)
    assert not compaction_is_boundary_for(failed, 'anthropic')


def test_the_trim_keeps_the_standing_prompt_and_the_latest_instructions() -> None:
    boundary = ModelResponse(parts=[TextPart('x'), CompactionPart('summary', provider_name='anthropic')])
    tail = ModelRequest(parts=[UserPromptPart('new')])
    messages: list[ModelMessage] = [
        ModelResponse(parts=[TextPart('a history may open with a response')]),
        ModelRequest(
            parts=[SystemPromptPart('Be brief.'), UserPromptPart('q1'), SystemPromptPart('late note')],
            instructions='old',
        ),
        ModelResponse(parts=[TextPart('a1')]),
        ModelRequest(parts=[UserPromptPart('q2')], instructions='latest'),
        boundary,
        tail,
    ]
    trimmed = trim_before_compaction(messages, 'anthropic')
    standing = trimmed[0]
    assert isinstance(standing, ModelRequest)
    assert standing.instructions == 'latest'
    assert standing.parts == [messages[1].parts[0]]
    assert trimmed[1].parts == [CompactionPart('summary', provider_name='anthropic')]
    assert trimmed[2] is tail
    assert trim_before_compaction(trimmed, 'anthropic')[1:] == trimmed[1:]  # idempotent past the boundary
    # Another provider's compaction: nothing trimmed; no standing prompt to keep: nothing added.
    assert trim_before_compaction(messages, 'openai') is messages
    bare: list[ModelMessage] = [ModelRequest.user_text_prompt('q'), boundary, tail]
    assert trim_before_compaction(bare, 'anthropic')[0] is not bare[0]
    assert len(trim_before_compaction(bare, 'anthropic')) == 2


def test_openai_compaction_mode_follows_its_options() -> None:
    assert OpenAICompaction().stateless is False
    assert OpenAICompaction(token_threshold=1000).stateless is False
    assert OpenAICompaction(message_count_threshold=5).stateless is True
    assert OpenAICompaction(trigger=lambda messages: True).stateless is True
    with pytest.raises(UserError, match='`token_threshold` is only valid for stateful compaction'):
        OpenAICompaction(stateless=True, token_threshold=1000, message_count_threshold=5)
    with pytest.raises(UserError, match='only valid for stateless compaction'):
        OpenAICompaction(stateless=False, message_count_threshold=5)
    with pytest.raises(UserError, match='`stateless=True` requires `message_count_threshold` or `trigger`'):
        OpenAICompaction(stateless=True)
    assert OpenAICompaction.get_serialization_name() == 'OpenAICompaction'
    assert AnthropicCompaction.get_serialization_name() == 'AnthropicCompaction'
    assert isinstance(OpenAICompaction(), AbstractCapability)
    assert repr(OpenAICompaction(message_count_threshold=2)) == 'OpenAICompaction(stateless)'


def _context(settings: dict[str, Any] | None) -> RunContext[None]:
    return RunContext(deps=None, model=TestModel(), usage=RunUsage(), model_settings=settings)  # type: ignore[arg-type]


def test_compaction_settings_resolve_against_the_settings_below() -> None:
    resolve = OpenAICompaction().get_model_settings()
    assert resolve is not None
    assert resolve(_context(None)) == {'openai_context_management': [{'type': 'compaction'}]}
    threshold = OpenAICompaction(token_threshold=50_000).get_model_settings()
    assert threshold is not None
    assert threshold(_context({})) == {
        'openai_context_management': [{'type': 'compaction', 'compact_threshold': 50_000}]
    }
    # The user's own entry wins (OpenAI takes one).
    assert threshold(_context({'openai_context_management': [{'type': 'compaction'}]})) == {}
    assert OpenAICompaction(message_count_threshold=5).get_model_settings() is None

    anthropic = AnthropicCompaction().get_model_settings()
    edit = {'type': 'compact_20260112', 'trigger': {'type': 'input_tokens', 'value': 150_000}}
    assert anthropic(_context(None)) == {'anthropic_context_management': {'edits': [edit]}}
    given = {'anthropic_context_management': {'edits': [{'type': 'other'}], 'extra': 1}}
    assert anthropic(_context(given)) == {
        'anthropic_context_management': {'edits': [{'type': 'other'}, edit], 'extra': 1}
    }
    assert repr(AnthropicCompaction()) == 'AnthropicCompaction(token_threshold=150000)'


async def test_stateless_openai_compaction_needs_an_openai_responses_model() -> None:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart('never')])  # pragma: no cover

    for model in (FunctionModel(respond), WrapperModel(FunctionModel(respond))):
        agent = Agent(model, capabilities=[OpenAICompaction(message_count_threshold=0)])
        with pytest.raises(UserError, match='OpenAICompaction requires OpenAIResponsesModel, got FunctionModel'):
            await agent.run('hello')
    # Below its condition the capability does nothing (and a one-message history has nothing to compact).
    answer = FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart('ok')]))
    assert (await Agent(answer, capabilities=[OpenAICompaction(message_count_threshold=5)]).run('hi')).output == 'ok'
    stateful = Agent(answer, capabilities=[OpenAICompaction()])
    assert (await stateful.run('hi')).output == 'ok'


async def test_a_history_holding_compactions_runs_on_any_model() -> None:
    received: list[ModelMessage] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        received[:] = messages
        return ModelResponse(parts=[TextPart('fine')])

    history: list[ModelMessage] = [
        ModelRequest.user_text_prompt('hi'),
        ModelResponse(parts=[CompactionPart(None, id='cmp', provider_name='openai'), TextPart('hello')]),
    ]
    result = await Agent(FunctionModel(respond)).run('go on', message_history=history)
    assert result.output == 'fine'
    assert received[1].parts[0] == CompactionPart(None, id='cmp', provider_name='openai')
