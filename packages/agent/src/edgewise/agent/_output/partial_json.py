"""An incremental JSON parser: feed it chunks, it keeps its state between them and never re-reads a byte.

The parser reports what it reads to a `JsonBuilder` (start and end of containers, keys, complete scalars) and
exposes the string being read, if any (`partial_string`), so that a builder can show partial values while the
document grows. `ValueBuilder` builds plain Python values (dicts, lists, ...); `partial_output` builds
validated outputs. Work per chunk is proportional to the chunk (plus the depth of nesting), not to the size of
the document received so far.
"""

from __future__ import annotations as _annotations

import re
from typing import Any, Protocol

__all__ = ('JsonBuilder', 'IncrementalJsonParser', 'ValueBuilder', 'PartialJsonError')

_WS = re.compile(r'[ \t\n\r]*')
_NUMBER = re.compile(r'-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?')
_NUMBER_CHARS = frozenset('0123456789+-.eE')
_STRING_STOP = re.compile(r'["\\]')
_LITERALS = {'true': True, 'false': False, 'null': None}

# Parser states.
_VALUE = 0  # expecting a value
_KEY_OR_END = 1  # after '{': a key or '}'
_KEY = 2  # after ',' in an object: a key
_COLON = 3  # after a key
_COMMA_OR_END = 4  # after a value inside a container
_DONE = 5  # the top-level value is complete
_VALUE_OR_END = 6  # after '[': a value or ']'


class PartialJsonError(ValueError):
    """The text is not the beginning of a valid JSON document."""


class JsonBuilder(Protocol):
    """Receives what the parser reads, in document order."""

    def start_object(self) -> None:
        """An object starts."""

    def start_array(self) -> None:
        """An array starts."""

    def key(self, key: str) -> None:
        """The key of the next member of the current object."""

    def scalar(self, value: Any) -> None:
        """A complete string, number, `true`, `false` or `null`."""

    def end(self) -> None:
        """The current object or array ends."""


class IncrementalJsonParser:
    """Parses one JSON document fed in chunks; the builder hears about every complete token."""

    def __init__(self, builder: JsonBuilder) -> None:
        self.builder = builder
        self._state = _VALUE
        self._stack: list[bool] = []  # True for an object, False for an array
        self._string: list[str] | None = None  # raw pieces of the string being read
        self._string_is_key = False
        self._token = ''  # a number or literal being read (it may continue in the next chunk)
        self._escape_pending = False
        self._partial: str | bool | None = False  # `partial_string` of the last chunk; False: not computed yet

    @property
    def done(self) -> bool:
        """Whether the top-level value is complete."""
        return self._state == _DONE

    @property
    def partial_string(self) -> str | None:
        """The decoded text of the string value being read, or `None` (keys are never partial)."""
        if self._string is None or self._string_is_key:
            return None
        if self._partial is not False:
            return self._partial  # type: ignore[return-value]
        raw = ''.join(self._string)
        try:
            text = _decode(raw)
        except PartialJsonError:
            # An escape cut by the chunk boundary is left out until it is complete.
            text = _decode(raw[: raw.rfind('\\')])
        if text and '\ud800' <= text[-1] <= '\udbff':
            text = text[:-1]  # half of a surrogate pair: the other half is still to come
        self._partial = text
        return text

    def feed(self, chunk: str) -> None:
        """Read `chunk`, the next piece of the document.

        Raises:
            PartialJsonError: the text so far cannot begin a JSON document.
        """
        pos, end = 0, len(chunk)
        builder = self.builder
        self._partial = False
        while pos < end:
            if self._string is not None:
                pos = self._read_string(chunk, pos)
                continue
            if self._token:
                pos = self._read_token(chunk, pos)
                continue
            pos = _WS.match(chunk, pos).end()  # type: ignore[union-attr]
            if pos >= end:
                break
            char = chunk[pos]
            state = self._state
            if state in (_VALUE, _VALUE_OR_END):
                if char == ']' and state == _VALUE_OR_END:
                    pos += 1
                    self._close(builder)
                elif char == '{':
                    pos += 1
                    self._stack.append(True)
                    self._state = _KEY_OR_END
                    builder.start_object()
                elif char == '[':
                    pos += 1
                    self._stack.append(False)
                    self._state = _VALUE_OR_END
                    builder.start_array()
                elif char == '"':
                    pos += 1
                    self._string = []
                    self._string_is_key = False
                elif char in _NUMBER_CHARS or char in 'tfn':
                    pos = self._read_token(chunk, pos)
                else:
                    raise PartialJsonError(f'Unexpected character {char!r} where a JSON value should start')
            elif state in (_KEY_OR_END, _KEY):
                if char == '"':
                    pos += 1
                    self._string = []
                    self._string_is_key = True
                elif char == '}' and state == _KEY_OR_END:
                    pos += 1
                    self._close(builder)
                else:
                    raise PartialJsonError(f'Unexpected character {char!r} where an object key should start')
            elif state == _COLON:
                if char != ':':
                    raise PartialJsonError(f'Expected ":" after an object key, got {char!r}')
                pos += 1
                self._state = _VALUE
            elif state == _COMMA_OR_END:
                in_object = self._stack[-1]
                if char == ',':
                    pos += 1
                    self._state = _KEY if in_object else _VALUE
                elif char == ('}' if in_object else ']'):
                    pos += 1
                    self._close(builder)
                else:
                    raise PartialJsonError(f'Unexpected character {char!r} after a value')
            else:
                raise PartialJsonError(f'Unexpected character {char!r} after the end of the JSON document')

    def finish(self) -> None:
        """Declare the end of the text: completes a trailing top-level number.

        Raises:
            PartialJsonError: the document is incomplete.
        """
        if self._token and not self._stack:
            self._end_token()
        if self._state != _DONE:
            raise PartialJsonError('The JSON document is incomplete')

    def _close(self, builder: JsonBuilder) -> None:
        self._stack.pop()
        builder.end()
        self._after_value()

    def _after_value(self) -> None:
        self._state = _COMMA_OR_END if self._stack else _DONE

    def _read_string(self, chunk: str, pos: int) -> int:
        pieces = self._string
        assert pieces is not None
        end = len(chunk)
        if self._escape_pending and pos < end:
            # The previous chunk ended with a backslash: this character is the escaped one.
            pieces.append(chunk[pos])
            pos += 1
            self._escape_pending = False
        while pos < end:
            match = _STRING_STOP.search(chunk, pos)
            if match is None:
                pieces.append(chunk[pos:])
                return end
            stop = match.start()
            if chunk[stop] == '\\':
                pieces.append(chunk[pos : stop + 2])  # the backslash and the escaped character, if here
                pos = stop + 2
                self._escape_pending = pos > end
                continue
            pieces.append(chunk[pos:stop])
            self._end_string(''.join(pieces))
            return stop + 1
        return pos

    def _end_string(self, raw: str) -> None:
        self._string = None
        value = _decode(raw)
        if self._string_is_key:
            self.builder.key(value)
            self._state = _COLON
        else:
            self.builder.scalar(value)
            self._after_value()

    def _read_token(self, chunk: str, pos: int) -> int:
        start = pos
        end = len(chunk)
        while pos < end and (chunk[pos] in _NUMBER_CHARS or chunk[pos].isalpha()):
            pos += 1
        self._token += chunk[start:pos]
        if pos < end:
            self._end_token()
        return pos

    def _end_token(self) -> None:
        token, self._token = self._token, ''
        value: Any
        if token in _LITERALS:
            value = _LITERALS[token]
        elif _NUMBER.fullmatch(token):
            value = float(token) if any(c in token for c in '.eE') else int(token)
        else:
            raise PartialJsonError(f'Invalid JSON token {token!r}')
        self.builder.scalar(value)
        self._after_value()


def _decode(raw: str) -> str:
    if '\\' not in raw:
        return raw
    import json  # (only a string with an escape needs it: not loaded with the agent)

    try:
        decoded: str = json.loads(f'"{raw}"')
    except ValueError as exc:
        raise PartialJsonError(f'Invalid escape in JSON string: {exc}') from exc
    return decoded


class ValueBuilder:
    """Builds the Python value of the document (as `json.loads` would), readable at any point while it grows."""

    def __init__(self) -> None:
        self._stack: list[Any] = []
        self._keys: list[str | None] = []
        self.root: Any = None
        self.has_root = False

    def start_object(self) -> None:
        self._add({})

    def start_array(self) -> None:
        self._add([])

    def key(self, key: str) -> None:
        self._keys[-1] = key

    def scalar(self, value: Any) -> None:
        if not self._stack:
            self.root, self.has_root = value, True
        else:
            self._put(value)

    def end(self) -> None:
        self._stack.pop()
        self._keys.pop()

    def _add(self, container: Any) -> None:
        if not self._stack:
            self.root, self.has_root = container, True
        else:
            self._put(container)
        self._stack.append(container)
        self._keys.append(None)

    def _put(self, value: Any) -> None:
        top = self._stack[-1]
        if isinstance(top, list):
            top.append(value)
        else:
            key = self._keys[-1]
            assert key is not None
            top[key] = value
            self._keys[-1] = None

    def partial_value(self, parser: IncrementalJsonParser) -> Any:
        """The value so far, with the string being read (if any) in its place; shares containers with `root`."""
        partial = parser.partial_string
        if partial is None:
            return self.root
        if not self._stack:
            return partial
        top = self._stack[-1]
        if isinstance(top, list):
            return _with_last(self.root, self._stack, partial, None)
        key = self._keys[-1]
        assert key is not None  # a string value in an object always follows its key
        return _with_last(self.root, self._stack, partial, key)


def _with_last(root: Any, stack: list[Any], partial: str, key: str | None) -> Any:
    # Copy only the containers on the open path (depth), adding the partial string to the innermost one.
    copies: list[Any] = [list(c) if isinstance(c, list) else dict(c) for c in stack]
    inner = copies[-1]
    if key is None:
        inner.append(partial)
    else:
        inner[key] = partial
    for depth in range(len(copies) - 1, 0, -1):
        parent = copies[depth - 1]
        if isinstance(parent, list):
            parent[-1] = copies[depth]
        else:
            parent[next(reversed(parent))] = copies[depth]
    return copies[0]
