"""Conversations (pydantic-ai 2.68): `Conversation` and its JSON form, runs continuing one (`conversation=`) and
their results' `conversation`, and `edgewise.agent.conversation_store` (saving only what is new, branches, forks,
scopes, conflicts between writers)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from edgewise.agent import Agent, Conversation, ConversationTypeAdapter, DeferredToolRequests, UserError
from edgewise.agent.conversation import mark_stored, stored_boundary
from edgewise.agent.conversation_store import (
    ConversationConflict,
    ConversationEntry,
    ConversationRecord,
    InMemoryConversationStore,
)
from edgewise.agent.messages import (
    BinaryContent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.result import AgentRunResult
from edgewise.agent.usage import RunUsage, UsageLimits

pytestmark = pytest.mark.anyio


def _turn(prompt: str, answer: str) -> list[ModelMessage]:
    return [ModelRequest([UserPromptPart(prompt)]), ModelResponse([TextPart(answer)])]


def _echo(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse([TextPart(f'answer {len(messages)}')])


# --- Conversation ---------------------------------------------------------------------------------------------------


def test_a_conversation_round_trips_through_json() -> None:
    raw = ToolReturnPart('read', BinaryContent(b'\x00\x01', media_type='application/octet-stream'), 'call-1')
    conversation = Conversation(
        messages=[*_turn('Hi', 'Hello'), ModelRequest([raw])],
        usage=RunUsage(requests=2, input_tokens=10, tool_calls=1),
        conversation_id='c-1',
        deferred_tool_requests=DeferredToolRequests(approvals=[ToolCallPart('pay', {'amount': 3}, 'call-2')]),
        revision='r-1',
        new_message_index=1,
    )
    data = ConversationTypeAdapter.dump_json(conversation)
    loaded = ConversationTypeAdapter.validate_json(data)
    assert loaded == conversation
    assert loaded.new_message_index == 1
    assert ConversationTypeAdapter.dump_json(loaded) == data
    dumped = ConversationTypeAdapter.dump_python(conversation, mode='json', exclude={'messages': {0: {'parts'}}})
    assert 'parts' not in dumped['messages'][0]


def test_a_new_conversation_gets_an_id_and_is_empty() -> None:
    first, second = Conversation(), Conversation()
    assert first.conversation_id != second.conversation_id
    assert first.messages == []
    assert first.usage == RunUsage()
    assert first == dataclasses.replace(first, new_message_index=3)


def test_the_stored_boundary_holds_while_the_messages_before_it_are_the_same() -> None:
    conversation = Conversation(messages=_turn('Hi', 'Hello'))
    assert stored_boundary(conversation) is None
    mark_stored(conversation, conversation.messages)
    assert stored_boundary(conversation) == 2
    conversation.messages.append(ModelRequest([UserPromptPart('More')]))
    assert stored_boundary(conversation) == 2
    conversation.messages[0] = ModelRequest([UserPromptPart('Hi')])  # equal, but another message
    assert stored_boundary(conversation) is None
    del conversation.messages[:]
    assert stored_boundary(conversation) is None
    conversation.new_message_index = 0
    assert stored_boundary(conversation) == 0
    assert stored_boundary(Conversation(new_message_index=1)) is None


# --- runs -----------------------------------------------------------------------------------------------------------


async def test_a_run_continues_a_conversation_and_gives_it_back() -> None:
    agent = Agent(FunctionModel(_echo))
    first = await agent.run('Hi')
    conversation = first.conversation
    assert conversation.messages == first.all_messages()
    assert conversation.conversation_id == first.conversation_id
    assert conversation.revision is None
    assert conversation.new_message_index is None
    second = await agent.run('Again', conversation=conversation)
    assert second.conversation_id == conversation.conversation_id
    assert second.all_messages()[:2] == conversation.messages
    assert second.usage.requests == 2  # the conversation's usage goes on
    assert conversation.usage.requests == 1  # and is not changed by the run


async def test_usage_limits_count_the_whole_conversation() -> None:
    agent = Agent(FunctionModel(_echo))
    conversation = (await agent.run('Hi')).conversation
    with pytest.raises(Exception, match='request_limit'):
        await agent.run('Again', conversation=conversation, usage_limits=UsageLimits(request_limit=1))


async def test_a_conversation_with_its_pieces_given_too_is_refused() -> None:
    agent = Agent(FunctionModel(_echo))
    conversation = Conversation()
    with pytest.raises(UserError, match='`conversation` already carries `message_history` and `usage`'):
        await agent.run('Hi', conversation=conversation, message_history=[], usage=RunUsage())
    with pytest.raises(UserError, match='`conversation_id`, so passing both'):
        await agent.run('Hi', conversation=conversation, conversation_id='x')


async def test_a_paused_run_carries_its_deferred_calls() -> None:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if isinstance(messages[-1].parts[0], ToolReturnPart):
            return ModelResponse([TextPart('Paid.')])
        return ModelResponse([ToolCallPart('pay', {'amount': 3}, 'call-1')])

    agent: Agent[None, str | DeferredToolRequests] = Agent(
        FunctionModel(answer), output_type=[str, DeferredToolRequests]
    )

    @agent.tool_plain(requires_approval=True)
    def pay(amount: int) -> str:
        return f'paid {amount}'

    paused = (await agent.run('Pay')).conversation
    assert paused.deferred_tool_requests is not None
    assert [call.tool_call_id for call in paused.deferred_tool_requests.approvals] == ['call-1']
    results = paused.deferred_tool_requests.build_results(approve_all=True)
    done = await agent.run(conversation=paused, deferred_tool_results=results)
    assert done.output == 'Paid.'
    assert done.conversation.deferred_tool_requests is None


def test_a_result_without_a_run_gives_an_empty_conversation() -> None:
    result = AgentRunResult('x')
    assert result.conversation.messages == []
    assert result.conversation.usage == RunUsage()
    result._conversation_saved('r')  # pyright: ignore[reportPrivateUsage]  # nothing to record it on
    assert result.conversation.revision is None


# --- stores ---------------------------------------------------------------------------------------------------------


async def test_saving_a_run_stores_its_messages_once_and_loading_goes_on() -> None:
    store = InMemoryConversationStore()
    agent = Agent(FunctionModel(_echo))
    conversation = await store.load('chat') or Conversation(conversation_id='chat')
    result = await agent.run('Hi', conversation=conversation)
    first = await store.save(result)
    assert [entry.parent_id for entry in first] == [None, first[0].id]
    assert await store.save(result) == []  # the result's conversation goes on from the new revision
    loaded = await store.load('chat')
    assert loaded is not None
    assert loaded.messages == result.all_messages()
    assert loaded.new_message_index == 2
    assert loaded.usage.requests == 1
    loaded.messages.append(ModelRequest([UserPromptPart('Before the run')]))
    second = await agent.run(conversation=loaded)
    continued = second.conversation
    assert continued.revision == loaded.revision
    assert continued.new_message_index == 2  # the message added before the run is unsaved too
    added = await store.save(continued)
    assert [entry.message for entry in added] == second.all_messages()[2:]
    assert added[0].parent_id == first[-1].id
    entries = await store.load_entries('chat')
    assert entries is not None
    assert [entry.id for entry in entries] == [*(e.id for e in first), *(e.id for e in added)]
    record = (await store.list_conversations())[0]
    assert record.head_id == added[-1].id
    assert record.usage.requests == 2


async def test_a_history_rewritten_by_the_run_is_compared_with_the_stored_one() -> None:
    store = InMemoryConversationStore()
    await store.save(Conversation(messages=_turn('Hi', 'Hello'), conversation_id='c'))
    loaded = await store.load('c')
    assert loaded is not None
    # The run's messages before its own are no longer the ones it was given: its store compares the whole history.
    rewritten = dataclasses.replace(loaded, messages=list(loaded.messages))  # equal, but not marked as stored
    rewritten.new_message_index = 2
    result = await Agent(FunctionModel(_echo)).run('Next', conversation=rewritten)
    conversation = result.conversation
    assert conversation.new_message_index == 2
    assert stored_boundary(conversation) is None
    added = await store.save(conversation)
    assert len(added) == 2


async def test_a_capability_that_rewrites_the_history_leaves_the_store_to_compare() -> None:
    store = InMemoryConversationStore()
    await store.save(Conversation(messages=_turn('Hi', 'Hello'), conversation_id='c'))
    loaded = await store.load('c')
    assert loaded is not None
    loaded.messages.extend(_turn('unsaved', 'turn'))
    agent = Agent(FunctionModel(_echo))
    result = await agent.run('Next', conversation=loaded, message_history=None)
    assert result.conversation.new_message_index == 2
    state = result._state  # pyright: ignore[reportPrivateUsage]
    assert state is not None
    state.message_history[2] = ModelRequest([UserPromptPart('rewritten')])
    assert result.conversation.new_message_index is None


async def test_saving_without_a_boundary_appends_what_extends_the_stored_history() -> None:
    store = InMemoryConversationStore()
    await store.save(Conversation(messages=_turn('Hi', 'Hello'), conversation_id='c'))
    loaded = await store.load('c')
    assert loaded is not None
    copy = ConversationTypeAdapter.validate_python(ConversationTypeAdapter.dump_python(loaded))
    copy.messages.extend(_turn('More', 'Sure'))
    added = await store.save(copy)
    assert [entry.message for entry in added] == copy.messages[2:]
    record = await store.read_record('c')
    assert record is not None
    assert record.branches == []


async def test_a_rewritten_history_branches_and_keeps_the_old_branch() -> None:
    store = InMemoryConversationStore()
    original = Conversation(messages=[*_turn('Hi', 'Hello'), *_turn('Long', 'Story')], conversation_id='c')
    await store.save(original)
    old = await store.load_entries('c')
    assert old is not None
    compacted = Conversation(messages=[*original.messages[:2], *_turn('Summary', 'Ok')], conversation_id='c')
    compacted.revision = original.revision
    added = await store.save(compacted)
    assert added[0].parent_id == old[1].id
    record = await store.read_record('c')
    assert record is not None
    assert record.branches == [old[-1].id]
    replaced = Conversation(messages=_turn('Other', 'Start'), conversation_id='c', revision=compacted.revision)
    assert (await store.save(replaced))[0].parent_id is None


async def test_saving_over_another_writer_is_a_conflict() -> None:
    store = InMemoryConversationStore()
    await store.save(Conversation(messages=_turn('Hi', 'Hello'), conversation_id='c'))
    first, second = await store.load('c'), await store.load('c')
    assert first is not None
    assert second is not None
    first.messages.extend(_turn('A', 'a'))
    second.messages.extend(_turn('B', 'b'))
    await store.save(first)
    with pytest.raises(ConversationConflict, match="Conversation 'c' was saved or deleted") as caught:
        await store.save(second)
    assert caught.value.conversation_id == 'c'
    assert isinstance(caught.value, UserError)
    with pytest.raises(ConversationConflict):
        await store.save(Conversation(conversation_id='c'))  # not loaded, but exists


async def test_scopes_keep_conversations_to_their_owner() -> None:
    store = InMemoryConversationStore()
    await store.save(Conversation(messages=_turn('Hi', 'Hello'), conversation_id='a'), scope='alice')
    await store.save(Conversation(messages=_turn('Yo', 'Hey'), conversation_id='b'), scope='bob')
    assert await store.load('a', scope='bob') is None
    assert await store.load_entries('a', scope='bob') is None
    loaded = await store.load('a', scope='alice')
    assert loaded is not None
    with pytest.raises(ConversationConflict):
        await store.save(loaded, scope='bob')
    await store.save(loaded)  # keeps its scope
    assert [r.conversation_id for r in await store.list_conversations(scope='alice')] == ['a']
    assert [r.conversation_id for r in await store.list_conversations(limit=1)] == ['a']  # saved last
    await store.delete('a', scope='bob')
    assert await store.load('a') is not None
    await store.delete('a', scope='alice')
    assert await store.load('a') is None
    await store.delete('missing')


async def test_a_limit_loads_the_last_messages_and_must_not_be_negative() -> None:
    store = InMemoryConversationStore()
    await store.save(Conversation(messages=[*_turn('1', 'a'), *_turn('2', 'b')], conversation_id='c'))
    loaded = await store.load('c', limit=2)
    assert loaded is not None
    assert [m.parts[0].content for m in loaded.messages] == ['2', 'b']  # type: ignore[union-attr]
    loaded.messages.extend(_turn('3', 'c'))
    added = await store.save(loaded)
    assert len(added) == 2
    entries = await store.load_entries('c')
    assert entries is not None
    assert len(entries) == 6
    window = await store.load('c', limit=2)
    assert window is not None
    window.new_message_index = None  # compared as the window it is, not as a history rewritten from its start
    serialized = ConversationTypeAdapter.validate_json(ConversationTypeAdapter.dump_json(window))
    serialized.new_message_index = 2
    assert await store.save(serialized) == []
    for call in (store.load('c', limit=-1), store.load_entries('c', limit=-1), store.list_conversations(limit=-1)):
        with pytest.raises(UserError, match='`limit` must not be negative'):
            await call


async def test_branching_goes_back_and_forth_between_histories() -> None:
    store = InMemoryConversationStore()
    await store.save(Conversation(messages=[*_turn('1', 'a'), *_turn('2', 'b')], conversation_id='c'))
    loaded = await store.load('c')
    assert loaded is not None
    old = await store.load_entries('c')
    assert old is not None
    branched = await store.branch('c', at=2, expected_revision=loaded.revision)
    assert branched.messages == loaded.messages[:2]
    assert branched.new_message_index == 2
    branched.messages.extend(_turn('2 again', 'other'))
    await store.save(branched)
    record = await store.read_record('c')
    assert record is not None
    assert record.branches == [old[-1].id]
    back = await store.branch('c', from_entry=old[-1].id, expected_revision=branched.revision)
    assert back.messages == loaded.messages
    record = await store.read_record('c')
    assert record is not None
    assert len(record.branches) == 1
    assert record.branches != [old[-1].id]  # the branch it left; the one it went back to is no longer left
    same = await store.branch('c', from_entry=old[-1].id, expected_revision=back.revision)
    assert same.messages == back.messages


async def test_branching_is_checked() -> None:
    store = InMemoryConversationStore()
    await store.save(Conversation(messages=_turn('1', 'a'), conversation_id='c'))
    loaded = await store.load('c')
    assert loaded is not None
    with pytest.raises(UserError, match="Conversation 'missing' is not in the store"):
        await store.branch('missing', at=0, expected_revision=None)
    with pytest.raises(ConversationConflict):
        await store.branch('c', at=0, expected_revision='stale')
    with pytest.raises(UserError, match='Pass exactly one of `at` and `from_entry`'):
        await store.branch('c', expected_revision=loaded.revision)
    with pytest.raises(UserError, match='Pass exactly one of `at` and `from_entry`'):
        await store.branch('c', at=0, from_entry='x', expected_revision=loaded.revision)
    with pytest.raises(UserError, match='`at` must be between 0 and 2'):
        await store.branch('c', at=3, expected_revision=loaded.revision)
    with pytest.raises(UserError, match="Entry 'x' is not in the history of conversation 'c'"):
        await store.branch('c', from_entry='x', expected_revision=loaded.revision)
    emptied = await store.branch('c', at=0, expected_revision=loaded.revision)
    assert emptied.messages == []
    assert emptied.deferred_tool_requests is None


async def test_a_fork_shares_the_history_it_keeps() -> None:
    store = InMemoryConversationStore()
    paused = DeferredToolRequests(calls=[ToolCallPart('x', {}, 'call-1')])
    original = Conversation(
        messages=[*_turn('1', 'a'), *_turn('2', 'b')],
        conversation_id='c',
        usage=RunUsage(requests=2),
        deferred_tool_requests=paused,
    )
    await store.save(original, scope='team')
    whole = await store.fork('c', new_conversation_id='f1')
    assert whole.messages == original.messages
    assert whole.usage.requests == 2
    assert whole.deferred_tool_requests == paused
    part = await store.fork('c', at=2, scope='me', source_scope='team')
    assert part.messages == original.messages[:2]
    assert part.usage == RunUsage()
    assert part.deferred_tool_requests is None
    record = await store.read_record(part.conversation_id)
    assert record is not None
    assert (record.forked_from, record.scope) == ('c', 'me')
    part.messages.extend(_turn('3', 'c'))
    await store.save(part)
    await store.delete('c')
    # The fork's entries outlive the conversation it came from; the others go.
    loaded = await store.load(part.conversation_id)
    assert loaded is not None
    assert loaded.messages == part.messages
    with pytest.raises(ConversationConflict):
        await store.fork('f1', new_conversation_id=part.conversation_id)
    with pytest.raises(UserError, match='is not in the store'):
        await store.fork('c')


async def test_the_store_keeps_copies() -> None:
    store = InMemoryConversationStore()
    conversation = Conversation(messages=_turn('Hi', 'Hello'), conversation_id='c')
    entries = await store.save(conversation)
    answer = conversation.messages[1].parts[0]
    assert isinstance(answer, TextPart)
    answer.content = 'changed'
    loaded = await store.load('c')
    assert loaded is not None
    assert loaded.messages[1].parts[0].content == 'Hello'  # type: ignore[union-attr]
    assert entries[0].kind == 'message'
    record = await store.read_record('c')
    assert isinstance(record, ConversationRecord)
    assert record.format_version == 1


async def test_a_record_whose_head_is_gone_is_a_conflict() -> None:
    store = InMemoryConversationStore()
    with pytest.raises(ConversationConflict):
        await store.write_record(ConversationRecord(conversation_id='c', head_id='nowhere'), expected_revision=None)
    with pytest.raises(ConversationConflict):
        await store.delete_record('c', expected_revision='r')


class _RacingStore(InMemoryConversationStore):
    """A store whose history reads fail once, as when another writer released the entries meanwhile."""

    def __init__(self) -> None:
        super().__init__()
        self.fail_reads = 0
        self.replace_on_failure = True
        self.replaced = 0
        self.conflicts_on_delete = 0

    async def read_entry(self, entry_id: str) -> ConversationEntry:
        if self.fail_reads:
            self.fail_reads -= 1
            if self.replace_on_failure:  # another writer saved meanwhile: the record changed
                self.replaced += 1
                self._records['c'] = dataclasses.replace(self._records['c'], revision=f'other-{self.replaced}')
            raise LookupError(entry_id)
        return await super().read_entry(entry_id)

    async def delete_record(self, conversation_id: str, *, expected_revision: str) -> None:
        if self.conflicts_on_delete:
            self.conflicts_on_delete -= 1
            raise ConversationConflict(conversation_id)
        await super().delete_record(conversation_id, expected_revision=expected_revision)


async def test_reads_that_race_a_writer_read_again() -> None:
    store = _RacingStore()
    conversation = Conversation(messages=_turn('Hi', 'Hello'), conversation_id='c')
    await store.save(conversation)
    store.fail_reads = 1
    loaded = await store.load('c')
    assert loaded is not None
    assert loaded.revision == 'other-1'
    store.fail_reads = 1
    stale = Conversation(messages=_turn('Hi', 'Hello'), conversation_id='c', revision='other-1')
    with pytest.raises(ConversationConflict):  # its history was released while the save compared it
        await store.save(stale)
    store.fail_reads, store.replace_on_failure = 1, False
    with pytest.raises(LookupError):  # an entry missing from an unchanged record is a broken store
        await store.load('c')
    store.conflicts_on_delete = 1
    await store.delete('c')
    assert await store.load('c') is None


async def test_a_store_example_with_an_agent(capsys: Any) -> None:
    store = InMemoryConversationStore()
    agent = Agent(TestModel())
    result = await agent.run('Hello', conversation=Conversation(conversation_id='chat-1'))
    await store.save(result)
    loaded = await store.load('chat-1')
    assert loaded is not None
    assert len(loaded.messages) == 2
