"""Partial structured output, validated as the JSON grows, in time linear in the size of the output.

`PartialOutputBuilder` listens to an `IncrementalJsonParser`. It follows the output type down the document:
each value that completes (an item of a list, a field of a model) is validated once, with the adapter of its
own type, and kept; the partial output of a chunk is assembled from those kept values along the path that is
still open, so a chunk costs the same whether it is the tenth or the ten-thousandth. A partial value obeys
pydantic's `experimental_allow_partial` rules: a model needs all its required fields, an incomplete last item
of a list is left out until it validates, a string being read counts as it is so far.
"""

from __future__ import annotations as _annotations

import contextlib
import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Literal, Union

import pydantic
from typing_extensions import is_typeddict

from .partial_json import IncrementalJsonParser

__all__ = ('PartialOutputBuilder', 'INVALID')


class _Invalid:
    def __repr__(self) -> str:
        return 'INVALID'


INVALID: Any = _Invalid()
"""Marks a partial value that does not validate (yet)."""

_Kind = Literal['model', 'dataclass', 'typeddict', 'list', 'leaf']


@dataclass(eq=False)
class _Spec:
    """How values of one type are validated and assembled."""

    tp: Any
    kind: _Kind
    adapter: pydantic.TypeAdapter[Any]
    fields: dict[str, tuple[str, Any]] = field(default_factory=dict)  # JSON key -> (attribute name, annotation)
    required: frozenset[str] = frozenset()  # JSON keys
    item: Any = None
    _children: dict[Any, _Spec] = field(default_factory=dict)

    def child(self, key: str | None) -> _Spec:
        annotation = self.item if key is None else self.fields.get(key, (key, Any))[1]
        spec = self._children.get(annotation)
        if spec is None:
            spec = self._children[annotation] = spec_for(annotation)
        return spec


_SPECS: dict[Any, _Spec] = {}


def spec_for(tp: Any) -> _Spec:
    """The spec of type `tp` (cached per type)."""
    try:
        return _SPECS[tp]
    except (KeyError, TypeError):
        pass
    spec = _build_spec(tp)
    with contextlib.suppress(TypeError):  # unhashable annotations are not cached
        _SPECS[tp] = spec
    return spec


def _build_spec(tp: Any) -> _Spec:
    inner = _strip_optional(tp)
    adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(tp)
    if isinstance(inner, type) and issubclass(inner, pydantic.BaseModel):
        fields = {(f.alias or name): (name, f.annotation) for name, f in inner.model_fields.items()}
        required = frozenset(f.alias or name for name, f in inner.model_fields.items() if f.is_required())
        return _Spec(tp, 'model', adapter, fields, required)
    if isinstance(inner, type) and dataclasses.is_dataclass(inner):
        hints = typing.get_type_hints(inner)
        dc_fields = [f for f in dataclasses.fields(inner) if f.init]
        fields = {f.name: (f.name, hints.get(f.name, Any)) for f in dc_fields}
        defaultless = [f.name for f in dc_fields if f.default is f.default_factory is dataclasses.MISSING]
        return _Spec(tp, 'dataclass', adapter, fields, _required(adapter, defaultless))
    if is_typeddict(inner):
        hints = typing.get_type_hints(inner)
        fields = {name: (name, hint) for name, hint in hints.items()}
        return _Spec(tp, 'typeddict', adapter, fields, _required(adapter, getattr(inner, '__required_keys__', ())))
    origin = typing.get_origin(inner)
    if origin in (list, typing.Sequence, _abc_sequence()) and typing.get_args(inner):
        return _Spec(tp, 'list', adapter, item=typing.get_args(inner)[0])
    return _Spec(tp, 'leaf', adapter)


def _required(adapter: pydantic.TypeAdapter[Any], fallback: Any) -> frozenset[str]:
    # pydantic knows best which keys are required (e.g. `NotRequired` under postponed annotations).
    try:
        return frozenset(adapter.json_schema().get('required', ()))
    except Exception:
        return frozenset(fallback)


def _abc_sequence() -> Any:
    import collections.abc

    return collections.abc.Sequence


def _strip_optional(tp: Any) -> Any:
    if typing.get_origin(tp) in (Union, types.UnionType):
        members = [m for m in typing.get_args(tp) if m is not type(None)]
        if len(members) == 1:
            return members[0]
    return tp


class _Frame:
    """An open object or array, with its children validated so far."""

    __slots__ = ('bad', 'key', 'leaf', 'raw', 'spec', 'values')

    def __init__(self, spec: _Spec, raw: Any, leaf: bool) -> None:
        self.spec = spec
        self.raw = raw  # the plain JSON value, for validating the whole container when it completes
        self.values: Any = [] if isinstance(raw, list) else {}  # validated children
        self.key: str | None = None
        self.bad = False  # a complete child failed validation: the container cannot validate either
        self.leaf = leaf  # inside a type validated only as a whole: children are kept raw


class PartialOutputBuilder:
    """Builds validated partial values of `tp` from the events of an `IncrementalJsonParser`."""

    def __init__(self, tp: Any) -> None:
        self._root_spec = spec_for(tp)
        self._stack: list[_Frame] = []
        self._root: Any = INVALID
        self.changes = 0
        """Counts the events that may change the validated value (a caller compares it between chunks)."""
        self.signature: tuple[Any, ...] = ()
        self._last_key: tuple[int, str | None] = (-1, None)
        self._last_value: Any = INVALID
        """What the last `value()` was made of: `changes`, and the string being read if it is part of the value.
        Two values with the same signature are equal, so a caller can skip a repeat without comparing them
        (comparing would cost time in proportion to the value)."""

    # -- JsonBuilder ----------------------------------------------------------------------------------------------

    def start_object(self) -> None:
        self._open({})

    def start_array(self) -> None:
        self._open([])

    def key(self, key: str) -> None:
        self._stack[-1].key = key

    def scalar(self, value: Any) -> None:
        if not self._stack:
            self.changes += 1
            self._root = self._validate(self._root_spec, value)
            return
        frame = self._stack[-1]
        _put_raw(frame, value)
        if not frame.leaf:
            spec = frame.spec.child(None if frame.spec.kind == 'list' else frame.key)
            self._put(frame, self._validate(spec, value))
        frame.key = None
        self._changed(frame)

    def end(self) -> None:
        frame = self._stack.pop()
        if not self._stack:
            self.changes += 1
            self._root = INVALID if frame.bad else self._validate(frame.spec, frame.raw)
            return
        parent = self._stack[-1]
        if not parent.leaf:
            self._put(parent, INVALID if frame.bad else self._validate(frame.spec, frame.raw))
        parent.key = None
        self._changed(parent)

    def _changed(self, frame: _Frame) -> None:
        # A value added to an object that still lacks required fields changes nothing visible (the object
        # cannot show yet): callers then skip building a partial value.
        if frame.leaf or frame.spec.kind == 'list' or frame.spec.required <= frame.values.keys():
            self.changes += 1

    # -- partial values -------------------------------------------------------------------------------------------

    def value(self, parser: IncrementalJsonParser) -> Any:
        """The validated value so far (the complete value once the document is done), or `INVALID`."""
        return self.value_with(parser.partial_string)

    def value_with(self, partial_string: str | None) -> Any:
        """`value()`, given the string value being read (`None`: no string is being read)."""
        if self._stack and partial_string is not None:
            top = self._stack[-1]
            if not top.leaf and top.spec.kind != 'list' and not top.spec.required <= {*top.values, top.key}:
                # the open object lacks required fields even with this string: the string cannot show yet
                partial_string = None
        key = (self.changes, partial_string)
        if key == self._last_key:
            return self._last_value
        value = self._value(partial_string)
        self._last_key, self._last_value = key, value
        return value

    def _value(self, partial_string: str | None) -> Any:
        if not self._stack:
            self.signature = (self.changes, partial_string)
            if self._root is not INVALID or not partial_string:
                return self._root
            return self._validate(self._root_spec, partial_string)
        used = partial_string  # the string being read, as long as it is part of the value
        shown = len(self._stack)  # the frames whose content is part of the value
        child: Any = INVALID
        child_raw: Any = partial_string
        for depth in range(len(self._stack) - 1, -1, -1):
            frame = self._stack[depth]
            if frame.leaf and depth > 0 and self._stack[depth - 1].leaf:
                child_raw = _raw_with(frame, child_raw)
                continue
            if frame.leaf:
                raw = _raw_with(frame, child_raw)
                child = self._validate(frame.spec, raw, partial=True)
            else:
                if depth == len(self._stack) - 1 and partial_string is not None:
                    spec = frame.spec.child(None if frame.spec.kind == 'list' else frame.key)
                    child = self._validate(spec, partial_string)
                if child is INVALID:
                    used = None  # the open child is left out: the string being read does not show
                    shown = depth + 1
                child = self._assemble(frame, child)
            child_raw = None
        frames = self._stack[:shown]
        self.signature = (tuple((len(f.raw) if f.leaf else len(f.values), f.bad) for f in frames), used)
        return child

    def _open(self, raw: Any) -> None:
        if not self._stack:
            spec = self._root_spec
            leaf = False
        else:
            parent = self._stack[-1]
            _put_raw(parent, raw)
            leaf = parent.leaf
            spec = parent.spec if leaf else parent.spec.child(None if parent.spec.kind == 'list' else parent.key)
        # A container of the wrong kind (an array where an object is expected, ...) is validated as a whole.
        leaf = leaf or spec.kind == 'leaf' or (spec.kind == 'list') != isinstance(raw, list)
        if leaf or isinstance(raw, list) or not spec.required:
            # An empty list (or an object needing no field) shows at once; other objects wait for their fields.
            self.changes += 1
        self._stack.append(_Frame(spec, raw, leaf))

    def _put(self, frame: _Frame, value: Any) -> None:
        if value is INVALID:
            frame.bad = True
        elif isinstance(frame.values, list):
            frame.values.append(value)
        else:
            assert frame.key is not None
            frame.values[frame.key] = value

    def _assemble(self, frame: _Frame, last: Any) -> Any:
        """The partial value of an open container: its validated children, plus `last` (the open child) if valid."""
        if frame.bad:
            return INVALID
        spec = frame.spec
        values = frame.values
        if isinstance(values, list):
            items = list(values)
            if last is not INVALID:
                items.append(last)
            return items if spec.kind == 'list' else INVALID
        fields = dict(values)
        if last is not INVALID and frame.key is not None:
            fields[frame.key] = last
        if not spec.required.issubset(fields):
            return INVALID
        if spec.kind == 'model':
            return _construct_model(spec, fields)
        if spec.kind == 'dataclass':
            try:
                return _strip_optional(spec.tp)(**{k: v for k, v in fields.items() if k in spec.fields})
            except Exception:
                return INVALID
        return fields

    def _validate(self, spec: _Spec, value: Any, partial: bool = False) -> Any:
        try:
            if partial:
                return spec.adapter.validate_python(value, experimental_allow_partial=True)
            return spec.adapter.validate_python(value)
        except pydantic.ValidationError:
            return INVALID


def _construct_model(spec: _Spec, fields: dict[str, Any]) -> Any:
    """A model instance of validated field values (by JSON key), with defaults for the missing ones."""
    names = spec.fields
    # `model_construct` takes attribute names; keys that are no field stay as they are (extras, for models
    # that allow them).
    return _strip_optional(spec.tp).model_construct(**{names[k][0] if k in names else k: v for k, v in fields.items()})


def _put_raw(frame: _Frame, value: Any) -> None:
    if isinstance(frame.raw, list):
        frame.raw.append(value)
    elif frame.key is not None:
        frame.raw[frame.key] = value


def _raw_with(frame: _Frame, child_raw: Any) -> Any:
    """A shallow copy of the frame's raw value with the open child (a partial string or container) in place."""
    raw = frame.raw
    if isinstance(raw, list):
        copy = list(raw)
        if child_raw is not None:
            if frame.key is None and copy and isinstance(copy[-1], dict | list) and not isinstance(child_raw, str):
                copy[-1] = child_raw
            else:
                copy.append(child_raw)
        return copy
    copy_d = dict(raw)
    if child_raw is not None and frame.key is not None:
        copy_d[frame.key] = child_raw
    return copy_d
