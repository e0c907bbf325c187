"""The envelope of native and prompted output of several types, as pydantic-ai 1.107 asks for it.

The model answers `{"result": {"kind": <kind>, "data": <value>}}`: `kind` names the output type chosen (its
schema title or `__name__`, numbered from the second one of a name: `Foo`, `Foo_2`), `data` holds the value in
that type's own schema (`{"response": ...}` for a type that is not an object). Here: the envelope's JSON
schema, reading an answer into its kind and data, and partial values of an answer still streaming.
"""

from __future__ import annotations as _annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

import pydantic
import pydantic_core

from .json_schema import merge_json_schema_defs
from .partial_output import INVALID, PartialOutputBuilder

__all__ = ('EnvelopeBuilder', 'EnvelopeMember', 'envelope_json_schema', 'read_envelope')


@dataclass(frozen=True)
class EnvelopeMember:
    """One output type of the envelope."""

    kind: str
    """The `kind` the model names it by (unique in the envelope)."""
    json_schema: dict[str, Any]
    """The schema of its `data`."""
    title: str | None
    """The title of its choice (its name, the same for all the types of one name)."""
    description: str | None
    """The description of its choice."""


def envelope_json_schema(members: list[EnvelopeMember]) -> dict[str, Any]:
    """The schema of an answer: an object whose `result` is one of the members' `{kind, data}` objects.

    The members' `$defs` are merged at the top (see `merge_json_schema_defs`); each member's title and
    description sit on its `{kind, data}` object, not on its `data`."""
    schemas: list[dict[str, Any]] = []
    for member in members:
        schema = dict(member.json_schema)
        if member.title:
            schema['title'] = member.title
        if member.description:
            schema['description'] = member.description
        schemas.append(schema)
    bodies, defs = merge_json_schema_defs(schemas)
    choices: list[dict[str, Any]] = []
    for member, body in zip(members, bodies, strict=True):
        title = body.pop('title', None)
        description = body.pop('description', None)
        choice: dict[str, Any] = {
            'type': 'object',
            'properties': {'kind': {'type': 'string', 'const': member.kind}, 'data': body},
            'required': ['kind', 'data'],
            'additionalProperties': False,
        }
        if title:
            choice['title'] = title
        if description:
            choice['description'] = description
        choices.append(choice)
    envelope: dict[str, Any] = {
        'type': 'object',
        'properties': {'result': {'anyOf': choices}},
        'required': ['result'],
        'additionalProperties': False,
    }
    if defs:
        envelope['$defs'] = defs
    return envelope


@dataclass
class _Result:
    kind: str
    data: dict[str, Any]


@dataclass
class _Envelope:
    result: _Result


@cache
def _envelope_adapter() -> pydantic.TypeAdapter[_Envelope]:
    """The envelope's validator, built on first use (most agents never read an envelope)."""
    return pydantic.TypeAdapter(_Envelope)


def read_envelope(
    args: str | dict[str, Any] | None, kinds: Any, *, allow_partial: bool = False, context: Any = None
) -> tuple[str, dict[str, Any]]:
    """The kind and the data of an answer (JSON text or a parsed object); `kinds`: the kinds there are.

    Raises:
        pydantic.ValidationError: the answer is no envelope (the errors' locations are in it: `('result',
            'data')`, ...), or names a kind there is not.
    """
    partial: Literal['off', 'trailing-strings'] = 'trailing-strings' if allow_partial else 'off'
    if isinstance(args, str):
        envelope = _envelope_adapter().validate_json(args or '{}', experimental_allow_partial=partial, context=context)
    else:
        envelope = _envelope_adapter().validate_python(args or {}, experimental_allow_partial=partial, context=context)
    kind = envelope.result.kind
    if kind not in kinds:
        # pydantic-ai 1.107 fails with a `KeyError` here; a retry prompt lets the model pick a kind there is.
        names = [repr(k) for k in kinds]
        expected = names[0] if len(names) == 1 else f'{", ".join(names[:-1])} or {names[-1]}'
        error = pydantic_core.InitErrorDetails(
            type='literal_error', loc=('result', 'kind'), input=kind, ctx={'expected': expected}
        )
        raise pydantic.ValidationError.from_exception_data('result', [error])
    return kind, envelope.result.data


MemberBuilder = Callable[[str], tuple[PartialOutputBuilder, Callable[[Any], Any]] | None]
"""Gives the partial builder of a kind's data and what turns its values into the output (`None`: the kind has
no partial values, or there is no such kind)."""


class EnvelopeBuilder:
    """Builds partial outputs of an envelope answer from an `IncrementalJsonParser`'s events: the events of
    `data` go to the builder of the kind named; those that come before the kind are kept and replayed to it
    once the kind is known. Partial values show once the kind is known (pydantic-ai fails on a `kind` that is
    still being read, or that comes after `data`)."""

    def __init__(self, member_builder: MemberBuilder) -> None:
        self._member_builder = member_builder
        self._keys: list[str | None] = []  # the current key of each open container outside `data`
        self._in_data = 0  # open containers inside `data`
        self._data_seen = False
        self._kind: str | None = None
        self._inner: PartialOutputBuilder | None = None
        self._unwrap: Callable[[Any], Any] = _identity
        self._kept: list[tuple[str, tuple[Any, ...]]] | None = []  # `data` events before the kind
        self._bad = False
        self._own_changes = 0
        self.signature: tuple[Any, ...] = ()
        """Two values of the same signature are equal (see `PartialOutputBuilder.signature`)."""

    @property
    def changes(self) -> int:
        """Counts the events that may change the value (see `PartialOutputBuilder.changes`)."""
        return self._own_changes + (self._inner.changes if self._inner is not None else 0)

    # -- JsonBuilder ----------------------------------------------------------------------------------------------

    def start_object(self) -> None:
        self._start('start_object')

    def start_array(self) -> None:
        self._start('start_array')

    def key(self, key: str) -> None:
        if self._in_data:
            self._forward('key', key)
        elif self._keys:
            self._keys[-1] = key

    def scalar(self, value: Any) -> None:
        if self._in_data:
            self._forward('scalar', value)
            return
        if self._at('data'):
            self._enter_data()
            self._forward('scalar', value)
        elif self._at('kind'):
            self._set_kind(value)
        if self._keys:
            self._keys[-1] = None

    def end(self) -> None:
        if self._in_data:
            self._forward('end')
            self._in_data -= 1
            if not self._in_data:
                self._keys[-1] = None
            return
        if self._keys:
            self._keys.pop()
        if self._keys:
            self._keys[-1] = None

    def _start(self, event: str) -> None:
        if self._in_data:
            self._in_data += 1
            self._forward(event)
        elif self._at('data'):
            self._enter_data()
            self._in_data = 1
            self._forward(event)
        else:
            self._keys.append(None)

    def _at(self, key: str) -> bool:
        return len(self._keys) == 2 and self._keys[0] == 'result' and self._keys[1] == key

    def _enter_data(self) -> None:
        if self._data_seen:  # `data` twice: only the final validation can tell what the answer is
            self._bad = True
        self._data_seen = True

    def _set_kind(self, kind: Any) -> None:
        self._own_changes += 1
        if self._kind is not None or not isinstance(kind, str):
            self._bad = True
            return
        self._kind = kind
        made = self._member_builder(kind)
        if made is None:
            self._bad = True
            return
        self._inner, self._unwrap = made
        kept, self._kept = self._kept or [], None
        for event, args in kept:
            getattr(self._inner, event)(*args)

    def _forward(self, event: str, *args: Any) -> None:
        if self._inner is not None:
            getattr(self._inner, event)(*args)
        elif self._kept is not None:
            self._kept.append((event, args))

    # -- partial values -------------------------------------------------------------------------------------------

    def value(self, parser: Any) -> Any:
        """The output so far (with the kind's conversion applied), or `INVALID`."""
        if self._bad or self._inner is None:
            self.signature = (self._own_changes, self._bad)
            return INVALID
        # The string being read is part of the data only inside `data` (or as `data` itself).
        partial = parser.partial_string if self._in_data or self._at('data') else None
        value = self._inner.value_with(partial)
        self.signature = (self._own_changes, self._inner.signature)
        return INVALID if value is INVALID else self._unwrap(value)


def _identity(value: Any) -> Any:
    return value
