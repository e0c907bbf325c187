"""Instruction, capability-load and settings records in a history (pydantic-ai 2.68): their ids, their wire format
through `ModelMessagesTypeAdapter`, histories stored before them, how `Model.prepare_messages` sends them, and the
settings change a run records."""

from __future__ import annotations

import json
import warnings
from collections.abc import AsyncIterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter
from tools.make_store_fixtures import history

from edgewise.agent import (
    AgentInstructionSource,
    CapabilityInstructionSource,
    CapabilityLoadDeltaEvent,
    CapabilityLoadDeltaPart,
    InstructionBaselinePart,
    InstructionDeltaPart,
    InstructionDigest,
    InstructionId,
    InstructionPart,
    ModelSettingsDeltaEvent,
    ModelSettingsDeltaPart,
    RunInstructionSource,
    ToolsetInstructionSource,
)
from edgewise.agent._messages.capability_loading import parse_loaded_capabilities
from edgewise.agent._messages.instructions import (
    SUPERSESSION_SENTENCE,
    instruction_text_hash,
    render_append_parts,
)
from edgewise.agent.agent import Agent
from edgewise.agent.exceptions import UserError
from edgewise.agent.messages import (
    AgentStreamEvent,
    CompactionPart,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolAvailabilityDeltaPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.models._usage_estimate import estimate_usage
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.profiles import ModelProfile
from edgewise.agent.settings import ModelSettings, RecordedModelSettings
from edgewise.agent.tools import RunContext

pytestmark = pytest.mark.anyio

WHEN = datetime(2026, 12, 1, tzinfo=timezone.utc)
STORED = Path(__file__).parent / 'stored' / 'before_instruction_parts.json'
WEATHER = InstructionId(ToolsetInstructionSource('weather'), name='limits')


def _id_of(text: Any) -> InstructionId | None:
    return TypeAdapter(InstructionDeltaPart).validate_python({'id': text, 'content': None}).id


# -- ids --------------------------------------------------------------------------------------------------------------


def test_an_id_renders_as_its_segments_joined_by_colons() -> None:
    assert str(InstructionId(AgentInstructionSource())) == 'agent'
    assert str(InstructionId(AgentInstructionSource(), name='tone')) == 'agent:tone'
    assert str(InstructionId(RunInstructionSource(), name='persona')) == 'run:persona'
    assert str(InstructionId(ToolsetInstructionSource('weather'))) == 'toolset:weather'
    assert str(InstructionId(CapabilityInstructionSource('budget'), name='remaining')) == 'capability:budget:remaining'
    assert repr(WEATHER) == "InstructionId(source=ToolsetInstructionSource(id='weather'), name='limits')"
    assert repr(InstructionId(AgentInstructionSource())) == 'InstructionId(source=AgentInstructionSource())'
    assert repr(RunInstructionSource()) == 'RunInstructionSource()'
    assert repr(CapabilityInstructionSource('b')) == "CapabilityInstructionSource(id='b')"


@pytest.mark.parametrize(
    ('text', 'expected'),
    [
        ('agent', InstructionId(AgentInstructionSource())),
        ('agent:tone', InstructionId(AgentInstructionSource(), name='tone')),
        ('run:persona', InstructionId(RunInstructionSource(), name='persona')),
        ('toolset:weather', InstructionId(ToolsetInstructionSource('weather'))),
        ('toolset:weather:limits', WEATHER),
        ('toolset:', InstructionId(ToolsetInstructionSource(''))),
        ('capability:budget:remaining', InstructionId(CapabilityInstructionSource('budget'), name='remaining')),
        # a key of a namespace this version does not know (or a run's without a name) cannot be addressed
        ('run', None),
        ('workspace:notes', None),
        (None, None),
    ],
)
def test_an_id_loads_from_the_string_it_renders_to(text: str | None, expected: InstructionId | None) -> None:
    assert _id_of(text) == expected


def test_an_id_object_is_taken_as_it_is() -> None:
    assert _id_of(WEATHER) is WEATHER


# -- parts ------------------------------------------------------------------------------------------------------------


def test_an_instruction_part_stored_before_names_and_policies_loads_with_their_defaults() -> None:
    stored = json.loads(STORED.read_text())['instruction_parts']
    parts = TypeAdapter(list[InstructionPart]).validate_python(stored)
    assert parts == [InstructionPart('Be brief.'), InstructionPart('Today is Monday.', dynamic=True)]
    assert (parts[0].on_change, parts[0].name, parts[0].id) == ('rewrite', None, None)
    assert repr(parts[1]) == "InstructionPart(content='Today is Monday.', dynamic=True)"


def test_an_instruction_part_keeps_its_name_id_and_policy_through_json() -> None:
    part = InstructionPart('Use metric units.', dynamic=True, on_change='append', name='limits', id=WEATHER)
    dumped = TypeAdapter(InstructionPart).dump_json(part)
    assert json.loads(dumped) == {
        'content': 'Use metric units.',
        'dynamic': True,
        'on_change': 'append',
        'name': 'limits',
        'id': 'toolset:weather:limits',
        'part_kind': 'instruction',
    }
    assert TypeAdapter(InstructionPart).validate_json(dumped) == part
    assert repr(part) == (
        "InstructionPart(content='Use metric units.', name='limits', id=InstructionId(source="
        "ToolsetInstructionSource(id='weather'), name='limits'), dynamic=True, on_change='append')"
    )


def test_blocks_sort_literal_then_appending_then_rewriting() -> None:
    literal = InstructionPart('literal')
    rewriting = InstructionPart('rewriting', dynamic=True)
    appending = InstructionPart('appending', dynamic=True, on_change='append', id=WEATHER)
    unaddressed = InstructionPart('unaddressed', dynamic=True, on_change='append')
    ordered = InstructionPart.sorted([rewriting, unaddressed, appending, literal])
    assert ordered == [literal, appending, rewriting, unaddressed]
    assert InstructionPart.join(ordered) == 'literal\n\nappending\n\nrewriting\n\nunaddressed'
    assert InstructionPart.join([InstructionPart('  ')]) is None


def test_a_change_renders_as_a_context_element_with_its_id() -> None:
    change = InstructionDeltaPart(id=WEATHER, content='Use imperial units.')
    assert change.render() == '<pyai:context id="toolset:weather:limits">\nUse imperial units.\n</pyai:context>'
    assert repr(change) == (
        "InstructionDeltaPart(id=InstructionId(source=ToolsetInstructionSource(id='weather'), name='limits'), "
        "content='Use imperial units.')"
    )


def test_a_withdrawal_says_so_and_on_a_model_without_inline_system_prompts_that_it_stays() -> None:
    withdrawal = InstructionDeltaPart(id=InstructionId(AgentInstructionSource(), name='a&b'), content=None)
    assert withdrawal.render() == (
        '<pyai:context id="agent:a&amp;b">\nThis context has been withdrawn.\n</pyai:context>'
    )
    assert withdrawal.render(inline_system=False) == (
        '<pyai:context id="agent:a&amp;b">\nThis context has been withdrawn, and the withdrawal stays in effect until '
        'replaced again.\n</pyai:context>'
    )
    assert InstructionDeltaPart(id=None, content='x').render() == '<pyai:context>\nx\n</pyai:context>'


def test_a_change_goes_as_a_diff_only_against_the_text_it_was_computed_from_and_when_shorter() -> None:
    before = '\n'.join(f'Rule {n}: be careful with item number {n}.' for n in range(10))
    after = before.replace('Rule 5: be careful', 'Rule 5: be very careful')
    change = InstructionDeltaPart(id=WEATHER, content=after, base_hash=instruction_text_hash(before))
    assert change.render(previous=before) == (
        '<pyai:context_diff id="toolset:weather:limits">\n--- before\n+++ after\n@@ -4,5 +4,5 @@\n'
        ' Rule 3: be careful with item number 3.\n Rule 4: be careful with item number 4.\n'
        '-Rule 5: be careful with item number 5.\n+Rule 5: be very careful with item number 5.\n'
        ' Rule 6: be careful with item number 6.\n Rule 7: be careful with item number 7.\n</pyai:context_diff>'
    )
    full = f'<pyai:context id="toolset:weather:limits">\n{after}\n</pyai:context>'
    assert change.render(previous='something else') == full  # a dropped earlier change: the hash differs
    assert change.render() == full
    short = InstructionDeltaPart(id=WEATHER, content='b', base_hash=instruction_text_hash('a'))
    assert short.render(previous='a') == '<pyai:context id="toolset:weather:limits">\nb\n</pyai:context>'


def test_a_digest_records_a_rewrite_block_and_matches_only_it_unchanged() -> None:
    block = InstructionPart('Today is Monday.', dynamic=True, id=InstructionId(AgentInstructionSource()))
    digest = InstructionDigest.of(block)
    assert digest == InstructionDigest(
        id=InstructionId(AgentInstructionSource()), dynamic=True, content_hash=instruction_text_hash('Today is Monday.')
    )
    assert digest.matches(block)
    assert not digest.matches(InstructionPart('Today is Tuesday.', dynamic=True, id=block.id))
    assert not digest.matches(InstructionPart('Today is Monday.', dynamic=True, id=block.id, on_change='append'))
    assert repr(InstructionDigest(content_hash='h')) == "InstructionDigest(content_hash='h')"
    assert repr(digest).endswith(', dynamic=True)')


def test_the_prefix_tags_append_blocks_and_states_the_rule_once_after_the_last() -> None:
    first = InstructionPart('A', dynamic=True, on_change='append', id=InstructionId(AgentInstructionSource(), name='a'))
    second = InstructionPart('B', dynamic=True, on_change='append', id=WEATHER)
    literal = InstructionPart('L')
    rendered = render_append_parts([literal, first, second])
    assert [part.content for part in rendered] == [
        'L',
        '<pyai:context id="agent:a">\nA\n</pyai:context>',
        f'<pyai:context id="toolset:weather:limits">\nB\n</pyai:context>\n{SUPERSESSION_SENTENCE}',
    ]
    assert render_append_parts([literal]) == [literal]


def test_capability_loads_and_settings_changes_have_short_reprs() -> None:
    assert repr(CapabilityLoadDeltaPart(loaded=['weather'])) == "CapabilityLoadDeltaPart(loaded=['weather'])"
    settings: RecordedModelSettings = {'thinking': 'high'}
    assert repr(ModelSettingsDeltaPart(settings=settings)) == "ModelSettingsDeltaPart(settings={'thinking': 'high'})"
    assert repr(ModelSettingsDeltaPart(settings={'thinking': None}, top_level=True)) == (
        "ModelSettingsDeltaPart(settings={'thinking': None}, top_level=True)"
    )
    baseline = InstructionBaselinePart(instructions=[])
    assert repr(baseline) == 'InstructionBaselinePart(instructions=[])'


def test_a_capability_load_delta_counts_as_a_load() -> None:
    messages: list[ModelMessage] = [ModelRequest([CapabilityLoadDeltaPart(loaded=['weather', 'maps'])])]
    assert parse_loaded_capabilities(messages) == {'weather', 'maps'}


# -- wire format ------------------------------------------------------------------------------------------------------


def _records() -> ModelRequest:
    return ModelRequest(
        parts=[
            InstructionBaselinePart(
                instructions=[
                    InstructionPart('Use metric units.', dynamic=True, on_change='append', name='limits', id=WEATHER),
                    InstructionDigest.of(InstructionPart('Be brief.')),
                ]
            ),
            InstructionDeltaPart(id=WEATHER, content='Use imperial units.', base_hash='abc'),
            CapabilityLoadDeltaPart(loaded=['weather'], tool_call_id='c1'),
            ModelSettingsDeltaPart(settings={'thinking': 'max'}, top_level=True),
        ],
        timestamp=WHEN,
    )


def test_the_records_round_trip_with_pydantic_ais_part_kinds() -> None:
    dumped = ModelMessagesTypeAdapter.dump_json([_records()])
    assert json.loads(dumped)[0]['parts'] == [
        {
            'instructions': [
                {
                    'content': 'Use metric units.',
                    'dynamic': True,
                    'on_change': 'append',
                    'name': 'limits',
                    'id': 'toolset:weather:limits',
                    'part_kind': 'instruction',
                },
                {
                    'id': None,
                    'dynamic': False,
                    'content_hash': instruction_text_hash('Be brief.'),
                    'part_kind': 'instruction-digest',
                },
            ],
            'part_kind': 'instruction-baseline',
        },
        {
            'id': 'toolset:weather:limits',
            'content': 'Use imperial units.',
            'base_hash': 'abc',
            'part_kind': 'instruction-delta',
        },
        {'loaded': ['weather'], 'tool_call_id': 'c1', 'part_kind': 'capability-load-delta'},
        {'settings': {'thinking': 'max'}, 'top_level': True, 'part_kind': 'model-settings-delta'},
    ]
    assert ModelMessagesTypeAdapter.validate_json(dumped) == [_records()]


def test_a_baseline_block_stored_without_its_part_kind_loads_as_an_instruction_part() -> None:
    loaded = TypeAdapter(InstructionBaselinePart).validate_python(
        {'instructions': [{'content': 'Be brief.'}, {'content_hash': 'h', 'part_kind': 'instruction-digest'}]}
    )
    assert loaded.instructions == [InstructionPart('Be brief.'), InstructionDigest(content_hash='h')]


def test_the_delta_events_round_trip_as_stream_events() -> None:
    events: list[AgentStreamEvent] = [
        CapabilityLoadDeltaEvent(part=CapabilityLoadDeltaPart(loaded=['weather'])),
        ModelSettingsDeltaEvent(part=ModelSettingsDeltaPart(settings={'thinking': 'low'})),
    ]
    adapter = TypeAdapter(list[AgentStreamEvent])
    dumped = adapter.dump_json(events)
    assert [event['event_kind'] for event in json.loads(dumped)] == ['capability_load_delta', 'model_settings_delta']
    assert adapter.validate_json(dumped) == events
    assert repr(events[0]) == "CapabilityLoadDeltaEvent(part=CapabilityLoadDeltaPart(loaded=['weather']))"


def _without_new_defaults(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for message in messages:
        # a response's, since pydantic-ai 2.68
        for field in ('model_id', 'failed_attempts', 'canonical_system', 'workspace_ref', 'history_digest'):
            if message.get('kind') == 'response' and message.get(field) is None:
                message.pop(field, None)
        for part in message['parts']:
            if part.get('part_kind') == 'text' and part.get('citations') is None:
                part.pop('citations', None)
            if part.get('part_kind') == 'system-prompt' and part.get('scope') == 'conversation':
                part.pop('scope')  # since pydantic-ai 2.68
            if part.get('part_kind') == 'system-prompt' and part.get('context_id', '') is None:
                part.pop('context_id')  # since pydantic-ai 2.68
    return messages


def test_a_history_and_events_stored_before_these_parts_still_load() -> None:
    stored = json.loads(STORED.read_text())
    messages = ModelMessagesTypeAdapter.validate_python(stored['messages'])
    assert messages[:4] == history()
    assert messages[6].parts[1] == ToolAvailabilityDeltaPart(tools_added=['refund'], tool_call_id='search-1')
    # The same data written again, but for fields added since that are written with their defaults (a text part's
    # `citations`, a system prompt's `scope` and `context_id`, a response's `model_id`, `failed_attempts` and the
    # other 2.68 fields).
    assert _without_new_defaults(json.loads(ModelMessagesTypeAdapter.dump_json(messages))) == stored['messages']
    events = TypeAdapter(list[AgentStreamEvent]).validate_python(stored['events'])
    assert [event.event_kind for event in events] == [
        'function_tool_call',
        'function_tool_result',
        'tool_availability_delta',
        'part_start',
        'part_delta',
        'final_result',
    ]


# -- what a model is sent ---------------------------------------------------------------------------------------------


def _prepare(messages: list[ModelMessage], *, inline_system: bool = True) -> list[ModelMessage]:
    model = TestModel(profile=ModelProfile(supports_inline_system_prompts=inline_system))
    return model.prepare_messages(messages)


def _system_texts(messages: list[ModelMessage]) -> list[str]:
    return [part.content for m in messages for part in m.parts if isinstance(part, SystemPromptPart)]


def test_a_history_without_records_is_sent_as_it_is() -> None:
    messages: list[ModelMessage] = [ModelRequest([UserPromptPart('hi')])]
    assert _prepare(messages) is messages


def test_the_changes_of_the_current_window_are_sent_as_context_elements_and_records_dropped() -> None:
    limits = InstructionPart('metric', dynamic=True, on_change='append', id=WEATHER)
    messages: list[ModelMessage] = [
        ModelRequest([UserPromptPart('one'), InstructionDeltaPart(id=WEATHER, content='stale')]),
        ModelResponse([TextPart('a')]),
        ModelRequest(
            [UserPromptPart('two'), InstructionBaselinePart(instructions=[limits, InstructionDigest.of(limits)])]
        ),
        ModelResponse([TextPart('b')]),
        ModelRequest(
            [
                ToolReturnPart('t', 'ok', 'c1'),
                InstructionDeltaPart(id=WEATHER, content='imperial', base_hash=instruction_text_hash('metric')),
                CapabilityLoadDeltaPart(loaded=['weather']),
                ModelSettingsDeltaPart(settings={'thinking': 'high'}),
                InstructionDeltaPart(id=None, content='from a newer version'),
            ],
            timestamp=WHEN,
        ),
        ModelResponse([TextPart('c')]),
        ModelRequest([InstructionDeltaPart(id=WEATHER, content=None)]),
    ]
    prepared = _prepare(messages, inline_system=False)
    assert prepared[1] is messages[1]
    assert [type(part) for part in prepared[0].parts] == [UserPromptPart]  # before the window: superseded
    assert [type(part) for part in prepared[2].parts] == [UserPromptPart]
    assert prepared[4].parts == [
        ToolReturnPart('t', 'ok', 'c1', timestamp=prepared[4].parts[0].timestamp),  # type: ignore[union-attr]
        SystemPromptPart('<pyai:context id="toolset:weather:limits">\nimperial\n</pyai:context>', timestamp=WHEN),
    ]
    withdrawal = prepared[6].parts[0]
    assert isinstance(withdrawal, SystemPromptPart)
    assert 'withdrawal stays in effect' in withdrawal.content
    # the history itself is unchanged
    assert len(messages[4].parts) == 5


def test_a_request_left_with_no_part_is_not_sent() -> None:
    messages: list[ModelMessage] = [
        ModelRequest([UserPromptPart('one')]),
        ModelResponse([TextPart('a')]),
        ModelRequest([ModelSettingsDeltaPart(settings={'thinking': 'low'})]),
    ]
    assert _prepare(messages) == messages[:2]


def test_a_compaction_opens_a_new_window() -> None:
    messages: list[ModelMessage] = [
        ModelRequest([UserPromptPart('one'), InstructionDeltaPart(id=WEATHER, content='before')]),
        ModelResponse([CompactionPart('summary', provider_name='openai')]),
        ModelRequest(
            [
                UserPromptPart('two'),
                InstructionDeltaPart(id=WEATHER, content='after', base_hash=instruction_text_hash('before')),
            ]
        ),
    ]
    prepared = _prepare(messages)
    assert _system_texts(prepared) == ['<pyai:context id="toolset:weather:limits">\nafter\n</pyai:context>']


def test_a_change_is_diffed_against_the_text_in_effect() -> None:
    base = '\n'.join(f'line {n} of the rules' for n in range(12))
    first = base.replace('line 3 ', 'line three ')
    second = first.replace('line 9 ', 'line nine ')
    limits = InstructionPart(base, dynamic=True, on_change='append', id=WEATHER)
    messages: list[ModelMessage] = [
        ModelRequest([UserPromptPart('one'), InstructionBaselinePart(instructions=[limits])]),
        ModelResponse([TextPart('a')]),
        ModelRequest([InstructionDeltaPart(id=WEATHER, content=first, base_hash=instruction_text_hash(base))]),
        ModelResponse([TextPart('b')]),
        ModelRequest([InstructionDeltaPart(id=WEATHER, content=second, base_hash=instruction_text_hash(first))]),
    ]
    texts = _system_texts(_prepare(messages))
    assert [text.split('\n')[0] for text in texts] == [
        '<pyai:context_diff id="toolset:weather:limits">',
        '<pyai:context_diff id="toolset:weather:limits">',
    ]
    assert '+line nine of the rules' in texts[1]


def test_token_estimates_count_a_change_and_not_the_other_records() -> None:
    plain = estimate_usage([ModelRequest([UserPromptPart('hi')])])
    with_records = estimate_usage(
        [
            ModelRequest(
                [
                    UserPromptPart('hi'),
                    InstructionBaselinePart(instructions=[]),
                    CapabilityLoadDeltaPart(loaded=['weather']),
                    ModelSettingsDeltaPart(settings={'thinking': 'low'}),
                ]
            )
        ]
    )
    assert with_records == plain
    with_change = estimate_usage([ModelRequest([UserPromptPart('hi'), InstructionDeltaPart(id=WEATHER, content='x')])])
    assert with_change.input_tokens > plain.input_tokens


# -- the settings change a run records --------------------------------------------------------------------------------


class Recorder:
    """A model function answering 'ok' that keeps each history it was sent."""

    def __init__(self) -> None:
        self.sent: list[list[ModelMessage]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.sent.append(messages)
        return ModelResponse([TextPart('ok')])

    async def stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        self.sent.append(messages)
        yield 'ok'


HIGH_OPENS = ModelSettingsDeltaPart(settings={'thinking': 'high'}, top_level=True)


def _settings_parts(messages: list[ModelMessage]) -> list[ModelSettingsDeltaPart]:
    return [part for m in messages for part in m.parts if isinstance(part, ModelSettingsDeltaPart)]


async def test_a_run_records_the_effort_level_it_sends_and_the_model_never_sees_the_record() -> None:
    recorder = Recorder()
    agent = Agent(FunctionModel(recorder), model_settings={'thinking': 'high'})
    result = await agent.run('hi')
    assert _settings_parts(result.all_messages()) == [
        ModelSettingsDeltaPart(settings={'thinking': 'high'}, top_level=True)
    ]
    assert [type(part) for part in recorder.sent[0][0].parts] == [UserPromptPart]

    # the same level again records nothing; another level is a change within the window
    same = await agent.run('again', message_history=result.all_messages())
    assert len(_settings_parts(same.all_messages())) == 1
    low: ModelSettings = {'thinking': 'low'}
    changed = await agent.run('lower', message_history=same.all_messages(), model_settings=low)
    assert _settings_parts(changed.new_messages()) == [ModelSettingsDeltaPart(settings={'thinking': 'low'})]
    assert all(not isinstance(p, ModelSettingsDeltaPart) for m in recorder.sent[-1] for p in m.parts)

    # no level any more opens a new window
    off: ModelSettings = {'thinking': True}
    cleared = await agent.run('off', message_history=changed.all_messages(), model_settings=off)
    assert _settings_parts(cleared.new_messages()) == [
        ModelSettingsDeltaPart(settings={'thinking': None}, top_level=True)
    ]


async def test_a_run_that_names_no_level_records_nothing() -> None:
    result = await Agent(FunctionModel(Recorder())).run('hi')
    assert _settings_parts(result.all_messages()) == []


async def test_a_compaction_drops_the_level_in_effect() -> None:
    recorder = Recorder()
    agent = Agent(FunctionModel(recorder), model_settings={'thinking': 'high'})
    earlier: list[ModelMessage] = [
        ModelRequest([UserPromptPart('one'), ModelSettingsDeltaPart(settings={'thinking': 'high'}, top_level=True)]),
        ModelResponse([CompactionPart('summary', provider_name='openai')]),
    ]
    result = await agent.run('two', message_history=earlier)
    assert _settings_parts(result.new_messages()) == [
        ModelSettingsDeltaPart(settings={'thinking': 'high'}, top_level=True)
    ]


async def test_the_stream_gives_the_settings_change_before_the_response() -> None:
    recorder = Recorder()
    agent = Agent(FunctionModel(recorder, stream_function=recorder.stream), model_settings={'thinking': 'medium'})
    async with agent.run_stream_events('hi') as stream:
        events = [event async for event in stream]
    assert events[0] == ModelSettingsDeltaEvent(
        part=ModelSettingsDeltaPart(settings={'thinking': 'medium'}, top_level=True)
    )
    assert events[1].event_kind == 'part_start'


def test_a_warning_free_round_trip_of_the_records() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert ModelMessagesTypeAdapter.validate_python(ModelMessagesTypeAdapter.dump_python([_records()])) == [
            _records()
        ]


# -- instruction windows a run records --------------------------------------------------------------------------------

BUDGET = InstructionId(AgentInstructionSource(), name='budget')


def _records_of(message: ModelMessage) -> list[Any]:
    return [part for part in message.parts if isinstance(part, InstructionBaselinePart | InstructionDeltaPart)]


def _budget_agent(recorder: Recorder, state: dict[str, Any]) -> Agent[None, str]:
    agent = Agent(FunctionModel(recorder), instructions='Be brief.')

    @agent.instructions
    def budget() -> InstructionPart | str:
        if state.get('plain'):
            return str(state['budget'])
        return InstructionPart(state['budget'], name='budget', on_change='append')

    @agent.instructions
    def today() -> str:
        return str(state.get('today', 'Today is Monday.'))

    return agent


async def test_an_appending_block_opens_a_window_and_its_changes_keep_the_prefix() -> None:
    recorder, state = Recorder(), {'budget': 'Budget: 10'}
    agent = _budget_agent(recorder, state)
    first = await agent.run('one')
    opening = first.all_messages()[0]
    assert isinstance(opening, ModelRequest)
    assert _records_of(opening) == [
        InstructionBaselinePart(
            instructions=[
                InstructionDigest.of(InstructionPart('Be brief.')),
                InstructionPart('Budget: 10', dynamic=True, on_change='append', name='budget', id=BUDGET),
                InstructionDigest.of(InstructionPart('Today is Monday.', dynamic=True)),
            ]
        )
    ]
    assert opening.instructions == 'Be brief.\n\nBudget: 10\n\nToday is Monday.'
    sent = recorder.sent[0][-1]
    assert isinstance(sent, ModelRequest)
    assert sent.instructions == (
        f'Be brief.\n\n<pyai:context id="agent:budget">\nBudget: 10\n</pyai:context>\n{SUPERSESSION_SENTENCE}'
        '\n\nToday is Monday.'
    )
    assert [type(part) for part in sent.parts] == [UserPromptPart]

    state['budget'] = 'Budget: 7'
    second = await agent.run('two', message_history=first.all_messages())
    changed = second.new_messages()[0]
    assert isinstance(changed, ModelRequest)
    assert _records_of(changed) == [
        InstructionDeltaPart(id=BUDGET, content='Budget: 7', base_hash=instruction_text_hash('Budget: 10'))
    ]
    assert changed.instructions == opening.instructions  # the prefix stays
    assert _system_texts(recorder.sent[-1]) == ['<pyai:context id="agent:budget">\nBudget: 7\n</pyai:context>']

    unchanged = await agent.run('three', message_history=second.all_messages())
    assert _records_of(unchanged.new_messages()[0]) == []

    state['budget'] = ''
    withdrawn = await agent.run('four', message_history=unchanged.all_messages())
    assert _records_of(withdrawn.new_messages()[0]) == [InstructionDeltaPart(id=BUDGET, content=None)]


async def test_a_changed_rewrite_block_opens_a_new_window_and_a_block_that_stops_appending_ends_it() -> None:
    recorder, state = Recorder(), {'budget': 'Budget: 10'}
    agent = _budget_agent(recorder, state)
    first = await agent.run('one')
    state['today'] = 'Today is Tuesday.'
    state['budget'] = 'Budget: 9'
    second = await agent.run('two', message_history=first.all_messages())
    reopened = _records_of(second.new_messages()[0])
    assert len(reopened) == 1
    assert isinstance(reopened[0], InstructionBaselinePart)
    assert reopened[0].instructions[1] == InstructionPart(
        'Budget: 9', dynamic=True, on_change='append', name='budget', id=BUDGET
    )

    state['plain'] = 'yes'
    third = await agent.run('three', message_history=second.all_messages())
    assert _records_of(third.new_messages()[0]) == [InstructionBaselinePart(instructions=[])]
    assert third.new_messages()[0].instructions == 'Be brief.\n\nBudget: 9\n\nToday is Tuesday.'  # type: ignore[union-attr]
    fourth = await agent.run('four', message_history=third.all_messages())
    assert _records_of(fourth.new_messages()[0]) == []


async def test_a_compaction_or_an_unaddressable_block_in_the_baseline_opens_a_new_window() -> None:
    recorder, state = Recorder(), {'budget': 'Budget: 10'}
    agent = _budget_agent(recorder, state)
    first = await agent.run('one')
    compacted = [*first.all_messages(), ModelResponse([CompactionPart('summary', provider_name='openai')])]
    after = await agent.run('two', message_history=compacted)
    assert [type(part) for part in _records_of(after.new_messages()[0])] == [InstructionBaselinePart]

    newer = InstructionBaselinePart(instructions=[InstructionPart('x', dynamic=True, on_change='append')])
    history: list[ModelMessage] = [ModelRequest([UserPromptPart('zero'), newer]), ModelResponse([TextPart('a')])]
    continued = await agent.run('one', message_history=history)
    assert [type(part) for part in _records_of(continued.new_messages()[0])] == [InstructionBaselinePart]


async def test_an_appending_block_that_nothing_addresses_rewrites_the_prefix_with_a_warning() -> None:
    recorder = Recorder()
    agent = Agent(FunctionModel(recorder))

    @agent.instructions
    def unnamed() -> InstructionPart:
        return InstructionPart('No name.', on_change='append')

    @agent.instructions
    def blank() -> InstructionPart:
        return InstructionPart('  ', on_change='append')

    @agent.instructions
    def twice() -> list[InstructionPart]:
        return InstructionPart('Twice.', on_change='append', id=BUDGET)  # type: ignore[return-value]

    agent.instructions(lambda: InstructionPart('Again.', on_change='append', id=BUDGET))
    with pytest.warns(UserWarning, match='rewriting its prefix instead') as warned:
        result = await agent.run('one')
    messages = sorted({str(w.message).split(',')[0] for w in warned})
    assert messages == [
        "An instruction block without an id uses `on_change='append'`",
        "Instruction blocks share the id 'agent:budget' and use `on_change='append'`",
    ]
    assert _records_of(result.all_messages()[0]) == []
    assert result.all_messages()[0].instructions == 'No name.\n\nTwice.\n\nAgain.'  # type: ignore[union-attr]


async def test_a_toolsets_blocks_may_append_and_blank_ones_are_left_out() -> None:
    from edgewise.agent.toolsets import FunctionToolset

    class Notes(FunctionToolset[None]):
        async def get_instructions(self, ctx: RunContext[None]) -> list[str | InstructionPart]:
            return [
                InstructionPart('Notes: 3', on_change='append', id=WEATHER),
                InstructionPart('   '),
                '  ',
                'Plain toolset text.',
            ]

    recorder = Recorder()
    result = await Agent(FunctionModel(recorder), toolsets=[Notes()]).run('one')
    baseline = _records_of(result.all_messages()[0])[0]
    assert baseline.instructions[0] == InstructionPart('Notes: 3', on_change='append', id=WEATHER)
    assert result.all_messages()[0].instructions == 'Notes: 3\n\nPlain toolset text.'  # type: ignore[union-attr]


def test_every_appending_block_of_the_prefix_is_tagged_and_the_rule_stated_once() -> None:
    from edgewise.agent._messages.instructions import tag_window_prefix

    first = InstructionPart('A', on_change='append', id=BUDGET)
    second = InstructionPart('B', on_change='append', id=WEATHER)
    window = InstructionBaselinePart(instructions=[first, InstructionDigest.of(InstructionPart('L')), second])
    assert tag_window_prefix('A\n\nL\n\nB', window) == (
        '<pyai:context id="agent:budget">\nA\n</pyai:context>\n\nL\n\n'
        f'<pyai:context id="toolset:weather:limits">\nB\n</pyai:context>\n{SUPERSESSION_SENTENCE}'
    )


def test_a_prefix_that_does_not_hold_the_windows_blocks_is_sent_as_it_is() -> None:
    window = InstructionBaselinePart(instructions=[InstructionPart('gone', on_change='append', id=WEATHER)])
    messages: list[ModelMessage] = [ModelRequest([UserPromptPart('one'), window], instructions='Something else.')]
    prepared = _prepare(messages)
    assert prepared[0].instructions == 'Something else.'  # type: ignore[union-attr]
    assert prepared[0].parts == [messages[0].parts[0]]


async def test_a_named_block_of_a_toolset_with_an_id_is_keyed_under_it() -> None:
    from edgewise.agent.toolsets import CombinedToolset, FunctionToolset

    class Notes(FunctionToolset[None]):
        async def get_instructions(self, ctx: RunContext[None]) -> list[str | InstructionPart]:
            return [InstructionPart('Notes: 3', on_change='append', name='count'), 'Plain.']

    class Odd(FunctionToolset[None]):
        async def get_instructions(self, ctx: RunContext[None]) -> InstructionPart:
            return InstructionPart('Odd id.')

    nested = CombinedToolset([Odd(id='a:b')])
    result = await Agent(FunctionModel(Recorder()), toolsets=[Notes(id='notes'), nested]).run('one')
    baseline = _records_of(result.all_messages()[0])[0]
    count = InstructionId(ToolsetInstructionSource('notes'), name='count')
    assert baseline.instructions[0] == InstructionPart('Notes: 3', on_change='append', name='count', id=count)
    assert baseline.instructions[2] == InstructionDigest.of(InstructionPart('Odd id.'))


@pytest.mark.parametrize('name', ['a:b', 'agent'])
async def test_a_name_that_cannot_be_a_segment_of_an_id_is_refused(name: str) -> None:
    from edgewise.agent import UserError

    agent = Agent(FunctionModel(Recorder()))
    agent.instructions(lambda: InstructionPart('x', name=name))
    with pytest.raises(UserError, match=f'Instruction name {name!r} cannot be used'):
        await agent.run('one')


async def test_the_decorator_names_a_block_and_sets_its_policy() -> None:
    recorder, state = Recorder(), {'budget': 'Budget: 10'}
    agent = Agent(FunctionModel(recorder), instructions='Be brief.')

    @agent.instructions(name='budget', on_change='append')
    def budget() -> str:
        return state['budget']

    @agent.instructions(name='today')
    def today(ctx: RunContext[None]) -> InstructionPart | None:
        # A part the function makes itself keeps what it sets; `None` is no block.
        return None if state.get('quiet') else InstructionPart('Today is Monday.', name='weekday')

    first = await agent.run('one')
    opening = first.all_messages()[0]
    assert isinstance(opening, ModelRequest)
    assert _records_of(opening) == [
        InstructionBaselinePart(
            instructions=[
                InstructionDigest.of(InstructionPart('Be brief.')),
                InstructionPart('Budget: 10', dynamic=True, on_change='append', name='budget', id=BUDGET),
                InstructionDigest.of(
                    InstructionPart(
                        'Today is Monday.',
                        dynamic=True,
                        name='weekday',
                        id=InstructionId(AgentInstructionSource(), name='weekday'),
                    )
                ),
            ]
        )
    ]
    state['budget'] = 'Budget: 7'
    second = await agent.run('two', message_history=first.all_messages())
    assert _records_of(second.new_messages()[0]) == [
        InstructionDeltaPart(id=BUDGET, content='Budget: 7', base_hash=instruction_text_hash('Budget: 10'))
    ]
    # A rewrite block that goes away (the function gives `None`) changes the prefix: a new window opens.
    state['quiet'] = 'yes'
    third = await agent.run('three', message_history=second.all_messages())
    (baseline,) = _records_of(third.new_messages()[0])
    assert isinstance(baseline, InstructionBaselinePart)
    assert len(baseline.instructions) == 2
    for bad in ('a:b', 'agent'):
        with pytest.raises(UserError, match=f'Instruction name {bad!r} cannot be used'):
            agent.instructions(name=bad)
