"""`_copy.deep_copy`: the same result as `copy.deepcopy`, values and aliasing alike; and `_copy.copy_into`."""

from __future__ import annotations

import copy
import enum
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pydantic
from hypothesis import given, settings
from hypothesis import strategies as st

from edgewise.graph._copy import copy_into, deep_copy


@dataclass
class Box:
    value: Any
    tags: list[str] = field(default_factory=list)


class Slotted:
    __slots__ = ('value',)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Slotted) and other.value == self.value


class CustomCopy:
    """Copies itself its own way: `deep_copy` must defer to that."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __deepcopy__(self, memo: dict[int, Any]) -> CustomCopy:
        return CustomCopy(('custom', copy.deepcopy(self.value, memo)))


class Colour(enum.Enum):
    RED = 'red'


class Model(pydantic.BaseModel):
    items: list[int]


leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=5),
    st.binary(max_size=5),
    st.datetimes(),
    st.sampled_from([Colour.RED]),
)


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=3), children, max_size=4),
        st.tuples(children, children),
        st.builds(Box, children),
        st.builds(Slotted, children),
        st.frozensets(st.integers(), max_size=3),
        st.sets(st.text(max_size=2), max_size=3),
        st.builds(lambda xs: Model(items=xs), st.lists(st.integers(), max_size=3)),
    )


values = st.recursive(leaves, _containers, max_leaves=20)


@st.composite
def aliased(draw: st.DrawFn) -> Any:
    """A structure in which some objects appear more than once."""
    pool = draw(st.lists(values, min_size=1, max_size=4))
    picks = draw(st.lists(st.integers(0, len(pool) - 1), max_size=8))
    shape = draw(st.sampled_from(['list', 'dict', 'box', 'tuple']))
    members = [pool[i] for i in picks]
    if shape == 'list':
        return members
    if shape == 'dict':
        return {str(i): m for i, m in enumerate(members)}
    if shape == 'box':
        return Box(members, tags=['a'])
    return (*members, [])


_MUTABLE = (list, dict, set, Box, Slotted, Model)
_WALKED = (*_MUTABLE, tuple)


def _structure(root: Any) -> list[Any]:
    """Which objects are the same object: each mutable object is named by the order it is first met."""
    seen: dict[int, int] = {}
    out: list[Any] = []

    def walk(obj: Any) -> None:
        if isinstance(obj, _WALKED):
            if id(obj) in seen:
                out.append(('again', seen[id(obj)]))
                return
            seen[id(obj)] = len(seen)
            out.append(('new', type(obj).__name__))
        else:
            out.append(('leaf', type(obj).__name__))
            return
        if isinstance(obj, dict):
            for k, v in obj.items():
                walk(k)
                walk(v)
        elif isinstance(obj, list | tuple):
            for item in obj:
                walk(item)
        elif isinstance(obj, Box):
            walk(obj.value)
            walk(obj.tags)
        elif isinstance(obj, Slotted):
            walk(obj.value)
        elif isinstance(obj, Model):
            walk(obj.items)

    walk(root)
    return out


def _mutable_ids(root: Any) -> set[int]:
    ids: set[int] = set()

    def walk(obj: Any) -> None:
        if not isinstance(obj, _WALKED) or id(obj) in ids:
            return
        if not isinstance(obj, tuple):
            ids.add(id(obj))
        children: list[Any] = []
        if isinstance(obj, dict):
            children = [*obj.keys(), *obj.values()]
        elif isinstance(obj, list | tuple):
            children = list(obj)
        elif isinstance(obj, Box):
            children = [obj.value, obj.tags]
        elif isinstance(obj, Slotted):
            children = [obj.value]
        elif isinstance(obj, Model):
            children = [obj.items]
        for child in children:
            walk(child)

    walk(root)
    return ids


@settings(max_examples=300, deadline=None)
@given(st.one_of(values, aliased()))
def test_deep_copy_equals_copy_deepcopy_in_value_and_aliasing(obj: Any) -> None:
    ours = deep_copy(obj)
    theirs = copy.deepcopy(obj)
    assert ours == theirs == obj
    assert _structure(ours) == _structure(theirs)
    assert not _mutable_ids(ours) & _mutable_ids(obj)


def test_a_list_containing_itself() -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    copied = deep_copy(loop)
    assert copied is not loop
    assert copied[1] is copied
    assert copied[0] == 1


def test_a_dataclass_cycle() -> None:
    box = Box(None)
    box.value = {'self': box}
    copied = deep_copy(box)
    assert copied is not box
    assert copied.value['self'] is copied


def test_a_tuple_of_immutables_is_not_copied() -> None:
    value = (1, 'a', None, datetime(2025, 1, 1))
    assert deep_copy(value) is value


def test_a_tuple_holding_a_list_is_copied() -> None:
    value = (1, [2])
    copied = deep_copy(value)
    assert copied == value
    assert copied[1] is not value[1]


def test_custom_deepcopy_is_respected() -> None:
    copied = deep_copy([CustomCopy([1])])
    assert copied[0].value == ('custom', [1])


def test_copy_of_a_plain_class_does_not_call_init() -> None:
    class Counted:
        created = 0

        def __init__(self) -> None:
            Counted.created += 1
            self.items = [1]

    original = Counted()
    copied = deep_copy(original)
    assert (Counted.created, copied.items, type(copied)) == (1, [1], Counted)
    assert copied.items is not original.items


def test_enums_and_classes_are_kept_as_they_are() -> None:
    value = {'colour': Colour.RED, 'cls': Box}
    copied = deep_copy(value)
    assert copied['colour'] is Colour.RED
    assert copied['cls'] is Box


def test_a_class_with_getstate_goes_through_copy_deepcopy() -> None:
    class WithState:
        def __init__(self) -> None:
            self.items = [1]

        def __getstate__(self) -> dict[str, Any]:
            return {'items': [*self.items, 'via getstate']}

    copied = deep_copy(WithState())
    assert copied.items == [1, 'via getstate']


class _Private:
    __slots__ = ('__hidden', 'shown')

    def __init__(self, hidden: int, shown: int | None = None) -> None:
        self.__hidden = hidden
        if shown is not None:
            self.shown = shown

    def hidden(self) -> int:
        return self.__hidden


class _OneSlot:
    __slots__ = 'value'

    def __init__(self, value: int) -> None:
        self.value = value


class _Model(pydantic.BaseModel):
    items: list[int] = []
    name: str = ''


def test_copy_into_fills_the_target_in_place() -> None:
    box, items, mapping, tags = Box(1, ['a']), [1], {'a': 1}, {'x'}
    copy_into(box, Box(2, ['b']))
    copy_into(items, [2, 3])
    copy_into(mapping, {'b': 2})
    copy_into(tags, {'y'})
    assert (box, items, mapping, tags) == (Box(2, ['b']), [2, 3], {'b': 2}, {'y'})

    slotted, private = Slotted(1), _Private(1, shown=1)
    copy_into(slotted, Slotted(2))
    copy_into(private, _Private(2))  # `shown` unset in the source: unset in the target
    assert slotted == Slotted(2)
    assert private.hidden() == 2
    assert not hasattr(private, 'shown')
    copy_into(private, _Private(2))  # `shown` unset in both
    assert not hasattr(private, 'shown')
    copy_into(private, _Private(3, shown=3))
    assert (private.hidden(), private.shown) == (3, 3)

    one = _OneSlot(1)
    copy_into(one, _OneSlot(2))
    assert one.value == 2

    model = _Model()
    copy_into(model, _Model(items=[1], name='n'))
    assert model == _Model(items=[1], name='n')
    assert model.model_fields_set == {'items', 'name'}


def test_copy_into_leaves_immutables_and_other_types_alone() -> None:
    box = Box(1)
    copy_into(box, box)
    copy_into(box, Slotted(2))
    copy_into(1, 2)
    assert box == Box(1)
