"""Conversations stored as a log of messages, each stored once (pydantic-ai 2.68's `pydantic_ai.conversation_store`).

A `ConversationStore` keeps each conversation as a chain of `ConversationEntry`s (one message each, pointing at the
entry before it) and a `ConversationRecord` pointing at the newest entry, with what the messages cannot hold: the
usage, the deferred tool calls a paused run waits on, and the scope the conversation belongs to.

A save appends only the messages the store does not have. A history rewritten rather than extended (by compaction,
say) branches off the last message both histories share, and the old branch stays stored. A fork points at an
existing entry instead of copying the history before it.

```python
import anyio

from edgewise.agent import Agent, Conversation
from edgewise.agent.conversation_store import InMemoryConversationStore
from edgewise.agent.models.test import TestModel


async def main() -> None:
    store = InMemoryConversationStore()
    agent = Agent(TestModel())
    conversation = await store.load('chat-1') or Conversation(conversation_id='chat-1')
    result = await agent.run('Hello', conversation=conversation)
    await store.save(result)
    loaded = await store.load('chat-1')
    assert loaded is not None
    print(len(loaded.messages))
    #> 2


anyio.run(main)
```
"""

from __future__ import annotations as _annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Sequence
from copy import deepcopy
from dataclasses import KW_ONLY
from datetime import datetime, timezone
from typing import Any, Literal

from ._messages.ids import uuid7
from ._messages.model_messages import ModelMessage
from ._messages.usage_counts import RunUsage
from ._tools.deferred_calls import DeferredToolRequests
from .conversation import Conversation, mark_stored, stored_boundary
from .exceptions import UserError
from .result import AgentRunResult

__all__ = (
    'ConversationEntry',
    'ConversationRecord',
    'ConversationConflict',
    'ConversationStore',
    'InMemoryConversationStore',
)


def _now() -> datetime:
    return datetime.now(tz=timezone.utc)


@dataclasses.dataclass(frozen=True)
class ConversationEntry:
    """One message of a conversation's log, linked to the entry before it."""

    _: KW_ONLY
    id: str = dataclasses.field(default_factory=uuid7)
    """The entry's id, made when it is stored (not derived from the message: a message may appear twice, and the
    entry before it is part of what the entry is)."""
    parent_id: str | None
    """The entry before this one; `None` for a history's first."""
    message: ModelMessage
    """The message the entry holds."""
    kind: Literal['message'] = 'message'
    """What the entry holds (so that other kinds of entries can join the log without a migration)."""


@dataclasses.dataclass
class ConversationRecord:
    """What a store keeps of a conversation besides its log: where its history ends, and what it carries."""

    _: KW_ONLY
    conversation_id: str
    """The conversation the record is for."""
    head_id: str | None
    """The newest entry of the conversation's history; `None` while it has no messages."""
    usage: RunUsage = dataclasses.field(default_factory=RunUsage)
    """The usage of every run of the conversation."""
    deferred_tool_requests: DeferredToolRequests | None = None
    """The tool calls the conversation waits on, if its last run paused for them."""
    scope: str | None = None
    """Whose or where the conversation is (a user, a channel), to list conversations by; the id names the dialogue,
    not its owner."""
    forked_from: str | None = None
    """The id of the conversation a `fork` copied this one from."""
    forked_at: str | None = None
    """The last entry of the history the fork kept (`None`: it kept none, or this is no fork)."""
    branches: list[str] = dataclasses.field(default_factory=list[str])
    """The last entries of the histories the conversation has left (by `branch`, or a save of a rewritten history),
    oldest first: `branch(from_entry=...)` goes back to one."""
    revision: str = dataclasses.field(default_factory=uuid7)
    """Changes with every save, so that concurrent writers cannot overwrite each other unnoticed (a conversation
    deleted and made again gets a new one). Compare it for equality only."""
    updated_at: datetime = dataclasses.field(default_factory=_now)
    """When the conversation was last saved."""
    format_version: Literal[1] = 1
    """The storage format of the record and its entries."""


class ConversationConflict(UserError):
    """A conversation changed in the store since it was loaded (saved, deleted, or made by another writer), so
    saving it would lose that change: load it again and retry. A `UserError`, so `except UserError` catches it."""

    conversation_id: str
    """The conversation that changed."""

    def __init__(self, conversation_id: str) -> None:
        self.conversation_id = conversation_id
        super().__init__(
            f'Conversation {conversation_id!r} was saved or deleted since it was loaded, '
            'or already exists in the store. Load it again before saving.'
        )


def _in_scope(record: ConversationRecord | None, scope: str | None) -> bool:
    return record is None or scope is None or record.scope == scope


def _left(branches: list[str], tip: str) -> list[str]:
    """`branches` with `tip` (the last entry of a history left) as the newest."""
    return [*(entry for entry in branches if entry != tip), tip]


def _conversation(record: ConversationRecord, history: list[ConversationEntry]) -> Conversation:
    conversation = Conversation(
        messages=[entry.message for entry in history],
        usage=record.usage,
        conversation_id=record.conversation_id,
        deferred_tool_requests=record.deferred_tool_requests,
        revision=record.revision,
    )
    mark_stored(conversation, conversation.messages)
    return conversation


class ConversationStore(ABC):
    """A store of conversations, each a log in which every message is stored once.

    `load` and `save` a `Conversation` around each run; `branch` continues one from an earlier message (to
    regenerate or edit a turn; the history it leaves stays stored); `fork` starts a new one from a point of another.
    Give `scope=` to keep a conversation to its owner: one saved with another scope is as if the store had none.

    A backend implements five primitives (`read_record`, `read_records`, `write_record`, `delete_record`,
    `read_entry`); the store works out which messages are new, where a history branches and what a fork shares.
    """

    async def load(
        self, conversation_id: str, *, limit: int | None = None, scope: str | None = None
    ) -> Conversation | None:
        """The conversation, or `None` if the store does not have it (or has it under another `scope`).

        Args:
            conversation_id: The conversation to load.
            limit: Load its last `limit` messages only (a save still appends to the whole stored conversation).
            scope: Load it only if it was saved with this scope.

        Raises:
            UserError: `limit` is negative.
        """
        loaded = await self._read(conversation_id, limit=limit, scope=scope)
        return None if loaded is None else _conversation(*loaded)

    async def load_entries(
        self, conversation_id: str, *, limit: int | None = None, scope: str | None = None
    ) -> list[ConversationEntry] | None:
        """The conversation's history as entries (an entry's id is what to tie a rating or a billing row to), or
        `None` if the store does not have it; `limit` and `scope` as for `load`.

        Raises:
            UserError: `limit` is negative.
        """
        loaded = await self._read(conversation_id, limit=limit, scope=scope)
        return None if loaded is None else loaded[1]

    async def _read(
        self, conversation_id: str, *, limit: int | None = None, scope: str | None = None
    ) -> tuple[ConversationRecord, list[ConversationEntry]] | None:
        if limit is not None and limit < 0:
            raise UserError('`limit` must not be negative.')
        while True:
            record = await self._read_record(conversation_id, scope=scope)
            if record is None:
                return None
            history = await self._history_of(record, limit=limit)
            if history is not None:
                return record, history

    async def save(
        self, conversation: Conversation | AgentRunResult[Any], *, scope: str | None = None
    ) -> list[ConversationEntry]:
        """Store the messages of `conversation` the store does not have yet; the entries stored, in order.

        With a known `new_message_index` (a loaded conversation, or a run's result continuing one), the messages
        from it on are appended, whatever a capability did to the history before it. Otherwise the messages are
        compared (`==`) with the stored ones: those extending them are appended, and a rewritten history branches
        off the last message both share, the old branch staying stored. The save is checked against the
        conversation's `revision` (the stored one, or `None` for a conversation the store does not have), which it
        then advances, as it does `new_message_index`.

        Args:
            conversation: The conversation, or a run's result (its `conversation` is saved, and then carries the
                new revision).
            scope: Whose the conversation is: one the store has must have been saved with it; a new one is saved
                with it. By default, the scope it was saved with.

        Raises:
            ConversationConflict: the conversation was saved or deleted since it was loaded, one with its id
                exists though it was not loaded, or it was saved with another scope.
        """
        result: AgentRunResult[Any] | None = None
        if isinstance(conversation, AgentRunResult):
            result, conversation = conversation, conversation.conversation
        conversation_id = conversation.conversation_id
        # Read once: another save of the same object, or messages added to it, may happen while this one awaits.
        expected_revision = conversation.revision
        messages = list(conversation.messages)
        record = await self.read_record(conversation_id)
        if (record.revision if record is not None else None) != expected_revision or not _in_scope(record, scope):
            raise ConversationConflict(conversation_id)
        branches = list(record.branches) if record is not None else []
        boundary = stored_boundary(conversation)
        if record is not None and boundary is not None:
            parent_id, unsaved = record.head_id, messages[boundary:]
        else:
            parent_id, unsaved, branches = await self._unsaved(
                record, conversation_id, messages, branches, window=conversation.new_message_index
            )
        new_entries: list[ConversationEntry] = []
        for message in unsaved:
            entry = ConversationEntry(parent_id=parent_id, message=message)
            new_entries.append(entry)
            parent_id = entry.id
        updated = ConversationRecord(
            conversation_id=conversation_id,
            head_id=parent_id,
            usage=conversation.usage,
            deferred_tool_requests=conversation.deferred_tool_requests,
            scope=scope if scope is not None else record.scope if record is not None else None,
            forked_from=record.forked_from if record is not None else None,
            forked_at=record.forked_at if record is not None else None,
            branches=branches,
        )
        await self.write_record(updated, new_entries=new_entries, expected_revision=expected_revision)
        conversation.revision = updated.revision
        mark_stored(conversation, messages)
        if result is not None:
            result._conversation_saved(updated.revision)  # pyright: ignore[reportPrivateUsage]
        return new_entries

    async def _unsaved(
        self,
        record: ConversationRecord | None,
        conversation_id: str,
        messages: list[ModelMessage],
        branches: list[str],
        *,
        window: int | None,
    ) -> tuple[str | None, list[ModelMessage], list[str]]:
        """`messages` against the last `window` stored ones: the entry the new ones follow, the new ones, and the
        branches left (a window is compared as a window, not taken for a history rewritten from its start)."""
        history = await self._history_of(record, limit=window) if record is not None else []
        if history is None:
            raise ConversationConflict(conversation_id)
        shared = 0
        for entry, message in zip(history, messages, strict=False):
            if entry.message != message:
                break
            shared += 1
        parent_id = history[shared - 1].id if shared else history[0].parent_id if history else None
        if shared < len(history):
            branches = _left(branches, history[-1].id)
        return parent_id, messages[shared:], branches

    async def branch(
        self,
        conversation_id: str,
        *,
        at: int | None = None,
        from_entry: str | None = None,
        expected_revision: str | None,
        scope: str | None = None,
    ) -> Conversation:
        """Continue the conversation from an earlier point (to regenerate or edit what followed), or switch to a
        branch it left; the history it leaves stays stored, among the record's `branches`.

        Args:
            conversation_id: The conversation to branch.
            at: How many of its current messages to keep.
            from_entry: The entry to continue from instead: one of its history, or of a branch it left.
            expected_revision: The revision it was loaded with (a branch must not undo a turn saved since).
            scope: Branch it only if it was saved with this scope.

        Raises:
            UserError: the store does not have it, `at` is out of range, `from_entry` is in none of its histories,
                or not exactly one of `at` and `from_entry` is given.
            ConversationConflict: it was saved or deleted since it was loaded.
        """
        loaded = await self._read(conversation_id, scope=scope)
        if loaded is None:
            raise UserError(f'Conversation {conversation_id!r} is not in the store.')
        record, history = loaded
        if record.revision != expected_revision:
            raise ConversationConflict(conversation_id)
        kept = await self._kept(record, history, at=at, from_entry=from_entry)
        branches = list(record.branches)
        if history and history[-1].id not in {entry.id for entry in kept}:
            branches = _left(branches, history[-1].id)
        head_id = kept[-1].id if kept else None
        branched = dataclasses.replace(
            record,
            head_id=head_id,
            deferred_tool_requests=record.deferred_tool_requests if head_id == record.head_id else None,
            branches=[tip for tip in branches if tip != head_id],
            revision=uuid7(),
            updated_at=_now(),
        )
        await self.write_record(branched, expected_revision=expected_revision)
        return _conversation(branched, kept)

    async def _kept(
        self,
        record: ConversationRecord,
        history: list[ConversationEntry],
        *,
        at: int | None,
        from_entry: str | None,
        default_all: bool = False,
    ) -> list[ConversationEntry]:
        """The history to `at` messages, or to `from_entry` in it or in a branch the conversation left."""
        if (at is not None and from_entry is not None) or (at is None and from_entry is None and not default_all):
            raise UserError('Pass exactly one of `at` and `from_entry`.')
        if from_entry is None:
            keep = len(history) if at is None else at
            if not 0 <= keep <= len(history):
                raise UserError(
                    f'`at` must be between 0 and {len(history)}, the number of messages in the conversation.'
                )
            return history[:keep]
        for tip in [None, *reversed(record.branches)]:
            line = history if tip is None else await self.read_history(tip)
            for index, entry in enumerate(line):
                if entry.id == from_entry:
                    return line[: index + 1]
        raise UserError(
            f'Entry {from_entry!r} is not in the history of conversation {record.conversation_id!r} '
            'or a branch it left.'
        )

    async def fork(
        self,
        conversation_id: str,
        *,
        at: int | None = None,
        from_entry: str | None = None,
        new_conversation_id: str | None = None,
        scope: str | None = None,
        source_scope: str | None = None,
    ) -> Conversation:
        """A new conversation from a stored one's history, sharing its entries (fork one point several times to try
        alternatives side by side while the original goes on).

        Args:
            conversation_id: The conversation to fork.
            at: How many of its messages the fork keeps (all by default).
            from_entry: The entry to fork from instead: one of its history, or of a branch it left.
            new_conversation_id: The fork's id (a new one by default).
            scope: The fork's scope (the forked conversation's by default).
            source_scope: Fork the conversation only if it was saved with this scope.

        Raises:
            UserError: the store does not have it, `at` is out of range, `from_entry` is in none of its histories,
                or both `at` and `from_entry` are given.
            ConversationConflict: a conversation with `new_conversation_id` is stored already.
        """
        loaded = await self._read(conversation_id, scope=source_scope)
        if loaded is None:
            raise UserError(f'Conversation {conversation_id!r} is not in the store.')
        record, history = loaded
        kept = await self._kept(record, history, at=at, from_entry=from_entry, default_all=True)
        head_id = kept[-1].id if kept else None
        whole = head_id == record.head_id
        fork = ConversationRecord(
            conversation_id=new_conversation_id if new_conversation_id is not None else uuid7(),
            head_id=head_id,
            usage=dataclasses.replace(record.usage) if whole else RunUsage(),
            deferred_tool_requests=record.deferred_tool_requests if whole else None,
            scope=scope if scope is not None else record.scope,
            forked_from=record.conversation_id,
            forked_at=head_id,
        )
        await self.write_record(fork, expected_revision=None)
        return _conversation(fork, kept)

    async def list_conversations(
        self, *, scope: str | None = None, limit: int | None = None
    ) -> list[ConversationRecord]:
        """The stored conversations (those of `scope`), most recently saved first, at most `limit` of them.

        Raises:
            UserError: `limit` is negative.
        """
        if limit is not None and limit < 0:
            raise UserError('`limit` must not be negative.')
        return list(await self.read_records(scope=scope, limit=limit))

    async def delete(self, conversation_id: str, *, scope: str | None = None) -> None:
        """Delete the conversation (with `scope`: only if it was saved with it), so it no longer loads or lists.

        Whether entries no other history uses go too is the backend's to say: `InMemoryConversationStore`
        deletes them.
        """
        while (record := await self._read_record(conversation_id, scope=scope)) is not None:
            try:
                await self.delete_record(conversation_id, expected_revision=record.revision)
            except ConversationConflict:
                continue  # saved or replaced since it was read: its scope is checked again
            return

    async def _read_record(self, conversation_id: str, *, scope: str | None) -> ConversationRecord | None:
        record = await self.read_record(conversation_id)
        return record if _in_scope(record, scope) else None

    async def _history_of(
        self, record: ConversationRecord, *, limit: int | None = None
    ) -> list[ConversationEntry] | None:
        """`record`'s history, or `None` if another writer replaced or deleted the record while it was read (an entry
        gone is an error only when the record is unchanged)."""
        try:
            return await self.read_history(record.head_id, limit=limit)
        except LookupError:
            current = await self.read_record(record.conversation_id)
            if current is not None and current.revision == record.revision:
                raise
            return None

    async def read_history(self, head_id: str | None, *, limit: int | None = None) -> list[ConversationEntry]:
        """The entries from the first to `head_id`, in order (the last `limit` only); a backend that can read a
        history in one query overrides this."""
        entries: list[ConversationEntry] = []
        entry_id = head_id
        while entry_id is not None and (limit is None or len(entries) < limit):
            entry = await self.read_entry(entry_id)
            entries.append(entry)
            entry_id = entry.parent_id
        entries.reverse()
        return entries

    @abstractmethod
    async def read_record(self, conversation_id: str) -> ConversationRecord | None:
        """The conversation's record, or `None` if the store does not have it."""

    @abstractmethod
    async def read_records(self, *, scope: str | None = None, limit: int | None = None) -> Sequence[ConversationRecord]:
        """The stored records (those of `scope`), newest `updated_at` first, at most `limit` of them."""

    @abstractmethod
    async def write_record(
        self,
        record: ConversationRecord,
        *,
        new_entries: Sequence[ConversationEntry] = (),
        expected_revision: str | None,
    ) -> None:
        """Store `record` and the entries its history adds (in order, each after the one it points at), in place of
        the record of `expected_revision`; a backend that can stores both together.

        Raises:
            ConversationConflict: the stored revision is not `expected_revision` (a record exists though it is
                `None`), or `record.head_id` names an entry neither the store nor `new_entries` has.
        """

    @abstractmethod
    async def delete_record(self, conversation_id: str, *, expected_revision: str) -> None:
        """Delete the conversation's record (and, where the backend safely can, the entries no record reaches).

        Raises:
            ConversationConflict: no record of `expected_revision` is stored.
        """

    @abstractmethod
    async def read_entry(self, entry_id: str) -> ConversationEntry:
        """The entry with this id.

        Raises:
            LookupError: the store has no such entry.
        """


class InMemoryConversationStore(ConversationStore):
    """A `ConversationStore` in memory, for tests and examples. It keeps copies of what it is given and gives out
    copies, as a store that serializes would, so changing them changes nothing stored."""

    def __init__(self) -> None:
        self._records: dict[str, ConversationRecord] = {}
        self._entries: dict[str, ConversationEntry] = {}

    async def read_record(self, conversation_id: str) -> ConversationRecord | None:
        return deepcopy(self._records.get(conversation_id))

    async def read_records(self, *, scope: str | None = None, limit: int | None = None) -> Sequence[ConversationRecord]:
        records = [record for record in self._records.values() if scope is None or record.scope == scope]
        records.sort(key=lambda record: record.updated_at, reverse=True)
        return [deepcopy(record) for record in records[:limit]]

    async def write_record(
        self,
        record: ConversationRecord,
        *,
        new_entries: Sequence[ConversationEntry] = (),
        expected_revision: str | None,
    ) -> None:
        stored = self._records.get(record.conversation_id)
        if (stored.revision if stored is not None else None) != expected_revision:
            raise ConversationConflict(record.conversation_id)
        new_ids = {entry.id for entry in new_entries}
        if record.head_id is not None and record.head_id not in self._entries and record.head_id not in new_ids:
            raise ConversationConflict(record.conversation_id)
        for entry in new_entries:
            self._entries[entry.id] = deepcopy(entry)
        self._records[record.conversation_id] = deepcopy(record)

    async def delete_record(self, conversation_id: str, *, expected_revision: str) -> None:
        stored = self._records.get(conversation_id)
        if stored is None or stored.revision != expected_revision:
            raise ConversationConflict(conversation_id)
        del self._records[conversation_id]
        reachable: set[str] = set()
        for record in self._records.values():
            for tip in [record.head_id, *record.branches]:
                while tip is not None and tip not in reachable:
                    reachable.add(tip)
                    tip = self._entries[tip].parent_id
        self._entries = {entry_id: entry for entry_id, entry in self._entries.items() if entry_id in reachable}

    async def read_entry(self, entry_id: str) -> ConversationEntry:
        return deepcopy(self._entries[entry_id])
