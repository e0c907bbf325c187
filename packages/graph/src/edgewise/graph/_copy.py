"""A faster `copy.deepcopy` for the data snapshots hold: builtin containers and plain classes; and `copy_into`.

`copy.deepcopy` copies an instance of a plain class (a dataclass, say) through `__reduce_ex__` and
`copyreg`, which dominates the cost of keeping a history in memory. For classes that do not customise
copying or pickling, copying `__dict__` directly gives the same result. Everything else (classes with
`__deepcopy__`, `__reduce__`, `__slots__`, pydantic models, ...) goes to `copy.deepcopy`, sharing the memo,
so identity and cycles are preserved exactly as `copy.deepcopy` preserves them.
"""

from __future__ import annotations as _annotations

import copy
import datetime
import decimal
import enum
import uuid
from typing import Any, TypeVar

__all__ = ('deep_copy', 'copy_into')

_T = TypeVar('_T')

_IMMUTABLE: frozenset[type[Any]] = frozenset(
    {
        int,
        float,
        complex,
        str,
        bytes,
        bool,
        type(None),
        range,
        datetime.datetime,
        datetime.date,
        datetime.time,
        datetime.timedelta,
        decimal.Decimal,
        uuid.UUID,
    }
)

# class -> whether instances can be copied through their `__dict__`
_plain_classes: dict[type[Any], bool] = {}


def _is_plain(cls: type[Any]) -> bool:
    plain = _plain_classes.get(cls)
    if plain is None:
        plain = (
            getattr(cls, '__deepcopy__', None) is None
            and cls.__reduce_ex__ is object.__reduce_ex__  # type: ignore[comparison-overlap]
            and cls.__reduce__ is object.__reduce__  # type: ignore[comparison-overlap]
            and getattr(cls, '__getstate__', object.__getstate__) is object.__getstate__
            and getattr(cls, '__setstate__', None) is None
            and cls.__new__ is object.__new__  # type: ignore[comparison-overlap]
            and not issubclass(cls, enum.Enum | type)
            and not any(vars(c).get('__slots__') for c in cls.__mro__[:-1])
            and '__dict__' in dir(cls)
        )
        _plain_classes[cls] = plain
    return plain


def deep_copy(obj: _T) -> _T:
    """A deep copy of `obj`, equal in result to `copy.deepcopy(obj)`."""
    cls = type(obj)
    if cls in _IMMUTABLE:
        return obj
    plain = _plain_classes.get(cls)
    if plain is None:
        plain = _is_plain(cls)
    if plain:
        # The common case in snapshots: a node, or a small state, whose fields are all immutable.
        fields = obj.__dict__
        for value in fields.values():
            if type(value) not in _IMMUTABLE:
                break
        else:
            new: _T = object.__new__(cls)
            new.__dict__.update(fields)
            return new
    copied: _T = _copy(obj, {})
    return copied


# Immutable values are returned as they are without a call (`x if type(x) in _IMMUTABLE else _copy(x, memo)`).
# Originals need no keep-alive list (which `copy.deepcopy` keeps so that ids are not reused mid-copy): every
# object copied here stays reachable from the root being copied; temporaries made by `__reduce__` only occur
# inside `copy.deepcopy`, which keeps its own.
def _copy(obj: Any, memo: dict[int, Any]) -> Any:
    cls = type(obj)  # never an immutable type: callers return those without calling
    key = id(obj)
    if key in memo:
        return memo[key]
    new: Any
    if cls is list:
        new = memo[key] = []
        new.extend([item if type(item) in _IMMUTABLE else _copy(item, memo) for item in obj])
    elif cls is dict:
        new = memo[key] = {}
        for k, v in obj.items():
            new[k if type(k) in _IMMUTABLE else _copy(k, memo)] = v if type(v) in _IMMUTABLE else _copy(v, memo)
    elif cls is tuple and all(type(item) in _IMMUTABLE for item in obj):
        return obj
    elif cls is not tuple and _is_plain(cls):
        new = memo[key] = object.__new__(cls)
        new.__dict__.update({k: v if type(v) in _IMMUTABLE else _copy(v, memo) for k, v in obj.__dict__.items()})
    else:
        return copy.deepcopy(obj, memo)
    return new


def copy_into(target: Any, source: Any) -> None:
    """Make `target` hold what `source` (an object of the same type) holds, in place: its items, or its attributes.

    A subgraph run resumed from a store works on the state it loaded, not on the part of the parent's state it
    was given: copying the loaded state into that part is what makes its changes the parent's again. Values of
    immutable types (and objects of another type) are left as they are: nothing could have changed them in place.
    """
    cls = type(target)
    if target is source or type(source) is not cls:
        return
    if isinstance(target, dict):
        target.clear()
        target.update(source)
    elif isinstance(target, list | bytearray):
        target[:] = source
    elif isinstance(target, set):
        target.clear()
        target.update(source)
    else:
        attributes = getattr(target, '__dict__', None)
        if attributes is not None:
            attributes.clear()
            attributes.update(vars(source))
        for c in cls.__mro__:
            slots = vars(c).get('__slots__', ())
            for slot in (slots,) if isinstance(slots, str) else slots:
                if slot in ('__dict__', '__weakref__'):
                    continue
                if slot.startswith('__') and not slot.endswith('__'):
                    slot = f'_{c.__name__.lstrip("_")}{slot}'  # a private name, stored mangled
                if hasattr(source, slot):
                    object.__setattr__(target, slot, getattr(source, slot))
                elif hasattr(target, slot):
                    object.__delattr__(target, slot)
