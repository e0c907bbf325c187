"""The file store's write path: a JSON file written whole, and an append-only journal of changes beside it.

A run's history is a list of items (snapshots as JSON data), each with a unique `"id"`. It is kept as:

- the base, `<name>.json`: the whole list, pydantic-graph 1.x's format. It is only ever replaced whole, and
  atomically (a temporary file beside it is written, fsynced and renamed over it), so it is always whole;
- the journal, `<name>.json.edgewise-journal`: the changes since the base was written, one record a line,
  `<crc32 of the JSON, 8 hex digits> <JSON list of changes>`, appended and fsynced. A change is
  `["put", item]` (add the item, or replace the one with its id) or `["set", id, fields]` (update some fields
  of an item). Each write appends one record, so it costs the same at any length of the history.

A record cut short by a crash (no newline yet, or a checksum that does not match) can only be the last one: a
reader ignores it, and the next writer truncates the journal back to the record before it. A bad record with
records after it means the journal was damaged: that is reported, never skipped. Replaying the journal is
idempotent (a put or a set gives the same item again), so a crash after a new base was renamed into place and
before the old journal was removed loses and doubles nothing. A journal without a base is left over (a base
is written first, and removed first): it is ignored, and the next base write removes it.
"""

from __future__ import annotations as _annotations

import contextlib
import json
import os
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ('Change', 'History', 'Journal')

Item = dict[str, Any]
Change = list[Any]
"""`['put', item]` or `['set', snapshot_id, fields]`."""

_StatKey = tuple[int, int, int]
_MAX_REREADS = 10


class BadJournal(Exception):
    """A journal record that is not the last one cannot be read (`reason` says how)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class History:
    """A run's items in order, with an index from snapshot id to position (a lookup costs the same at any length)."""

    __slots__ = ('index', 'items')

    def __init__(self, items: list[Item]) -> None:
        self.items = items
        """The items, in the order they were first stored."""
        self.index = {item['id']: position for position, item in enumerate(items)}
        """Each item's position in `items`, by snapshot id."""

    def get(self, snapshot_id: str) -> Item | None:
        """The item with this id, if any."""
        position = self.index.get(snapshot_id)
        return None if position is None else self.items[position]

    def copy(self) -> History:
        """A copy whose list can be changed without changing this one's (the items are shared, never mutated)."""
        return History(list(self.items))

    def apply(self, changes: Sequence[Change]) -> None:
        """Apply changes in order (items are replaced, never mutated in place).

        Raises:
            BadJournal: a `set` names an item that is not there.
        """
        for change in changes:
            if change[0] == 'put':
                item: Item = change[1]
                position = self.index.get(item['id'])
                if position is None:
                    self.index[item['id']] = len(self.items)
                    self.items.append(item)
                else:
                    self.items[position] = item
            else:
                _, snapshot_id, fields = change
                position = self.index.get(snapshot_id)
                if position is None:
                    raise BadJournal(f'a change to snapshot {snapshot_id!r}, which is not stored')
                self.items[position] = {**self.items[position], **fields}


def encode_record(changes: Sequence[Change]) -> bytes:
    """One journal line: the checksum of the changes' JSON, a space, the JSON, a newline."""
    payload = json.dumps(changes, ensure_ascii=False, separators=(',', ':')).encode()
    return b'%08x %s\n' % (zlib.crc32(payload), payload)


def decode_records(content: bytes) -> tuple[list[list[Change]], int]:
    """The records of a journal and the length of its whole records (a cut-short last record is left out).

    Raises:
        BadJournal: a record other than the last cannot be read.
    """
    records: list[list[Change]] = []
    position = 0
    while (end := content.find(b'\n', position)) != -1:
        line = content[position:end]
        record = _decode_line(line)
        if record is None:
            if end + 1 < len(content):
                raise BadJournal(f'the record at byte {position} is damaged, and more records follow it')
            break  # the last line, cut short by a crash (its newline written, not all of its bytes)
        records.append(record)
        position = end + 1
    return records, position


def _decode_line(line: bytes) -> list[Change] | None:
    checksum, _, payload = line.partition(b' ')
    try:
        if int(checksum, 16) != zlib.crc32(payload):
            return None
        record = json.loads(payload)
    except ValueError:
        return None
    return record if isinstance(record, list) else None


def _write_all(fd: int, data: bytes, offset: int = 0) -> None:
    """Write all of `data` at `offset`: a write cut short (a full disk) is resumed, so that it fails with the
    error that stopped it (`ENOSPC`, `EFBIG`) rather than leave a part written as if it were whole."""
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, offset)
        view, offset = view[written:], offset + written


def _stat_key(path: Path) -> _StatKey | None:
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return None
    return (stat.st_ino, stat.st_mtime_ns, stat.st_size)


class Journal:
    """Reads and writes one run's base file and journal (see the module docstring); not thread-safe.

    Writers hold the run's lock; readers need none. `parse` checks a base file's content and returns its items.
    """

    def __init__(self, base: Path, parse: Callable[[bytes], list[Item]]) -> None:
        self.base = base
        """The JSON file holding the whole list as of its last write."""
        self.path = base.with_name(f'{base.name}.edgewise-journal')
        """The journal of changes since then."""
        self._parse = parse
        self._cache: tuple[tuple[_StatKey | None, _StatKey | None], History, int] | None = None
        """(the stat keys of base and journal, the history they hold, the length of the journal's whole records)"""

    def read(self) -> History:
        """The history as stored (cached while neither file changes); empty when there is no base.

        Raises:
            BadJournal: the journal is damaged before its last record.
            PersistenceError: from `parse`, the base is not a list of snapshots.
        """
        return self._load()[0]

    def _load(self) -> tuple[History, int]:
        for _ in range(_MAX_REREADS):  # pragma: no branch - a base replaced ten times over while it is read
            base_key = _stat_key(self.base)
            journal_key = _stat_key(self.path) if base_key is not None else None
            key = (base_key, journal_key)
            if self._cache is not None and self._cache[0] == key:
                return self._cache[1], self._cache[2]
            if base_key is None:
                history, end = History([]), 0
            else:
                try:
                    content = self.base.read_bytes()
                    journal = self.path.read_bytes() if journal_key is not None else b''
                except FileNotFoundError:  # pragma: no cover - replaced or removed meanwhile: read again
                    continue
                if _stat_key(self.base) != base_key:  # pragma: no cover - a writer replaced it meanwhile
                    continue
                history = History(self._parse(content))
                records, end = decode_records(journal)
                for record in records:
                    history.apply(record)
            self._cache = (key, history, end)
            return history, end
        raise BadJournal('it kept changing while it was read')  # pragma: no cover

    def append(self, changes: Sequence[Change]) -> History:
        """Store `changes` as one journal record (fsynced), then apply them to the history; a base must exist.

        Raises:
            OSError: the journal could not be written (the history is unchanged).
        """
        history, end = self._load()
        base_key = self._cache[0][0] if self._cache is not None else None
        record = encode_record(changes)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            if os.fstat(fd).st_size != end:
                os.ftruncate(fd, end)  # a record cut short by a crash (or by a failed write) goes
            try:
                _write_all(fd, record, end)
            except OSError:
                os.ftruncate(fd, end)  # no part of a record is left (a reader would ignore it, but an append
                raise  # after it would not be at a record's start)
            os.fsync(fd)
            stat = os.fstat(fd)
        finally:
            os.close(fd)
        history.apply(changes)
        self._cache = ((base_key, (stat.st_ino, stat.st_mtime_ns, stat.st_size)), history, end + len(record))
        return history

    def write_base(self, history: History, tmp: Path) -> None:
        """Replace the base atomically with the whole history (through the temporary file `tmp`), then remove
        the journal it now holds.

        Raises:
            OSError: the base could not be written (it was left as it was, and the journal too).
        """
        content = json.dumps(history.items, indent=2, ensure_ascii=False).encode()
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                _write_all(fd, content)
                os.fsync(fd)
            finally:
                os.close(fd)
            # The data is on disk before the rename makes it the file, so the file is whole after any crash.
            # The directory is not fsynced: after a power loss the last rename may be undone (the previous
            # whole file stays), as SQLite's `synchronous=NORMAL` may undo the last commits.
            os.replace(tmp, self.base)
        except OSError:
            with contextlib.suppress(OSError):
                if tmp.is_file():
                    tmp.unlink()
            raise
        # A crash before this leaves a journal the base already holds: replaying it changes nothing.
        self.path.unlink(missing_ok=True)
        self._cache = ((_stat_key(self.base), None), history, 0)

    @property
    def pending(self) -> bool:
        """Whether there is a journal (as last read or written): records the base does not hold."""
        return self._cache is not None and self._cache[0][1] is not None

    def modified(self) -> float:
        """When the history last changed: the later modification time of the base and the journal (in seconds).

        Raises:
            FileNotFoundError: there is no base.
        """
        base = os.stat(self.base).st_mtime
        try:
            return max(base, os.stat(self.path).st_mtime)
        except FileNotFoundError:
            return base

    def remove(self) -> bool:
        """Remove the base and then the journal; whether there was a base."""
        try:
            self.base.unlink()
        except FileNotFoundError:
            existed = False
        else:
            existed = True
        self.path.unlink(missing_ok=True)
        self._cache = None
        return existed
