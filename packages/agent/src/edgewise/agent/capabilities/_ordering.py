"""The order of the capabilities of a `CombinedCapability` under their `get_ordering` constraints."""

from __future__ import annotations as _annotations

import heapq
from collections.abc import Sequence
from typing import Any

from ..exceptions import UserError
from .abstract import AbstractCapability, CapabilityOrdering, CapabilityRef

__all__ = ('sort_capabilities',)


def sort_capabilities(capabilities: Sequence[AbstractCapability[Any]]) -> list[AbstractCapability[Any]]:
    """The capabilities in an order that meets their constraints, the given order where the constraints leave a
    choice (the earliest given capability that may come next comes next).

    Raises:
        UserError: a required capability class is missing, or the constraints contradict one another.
    """
    caps = list(capabilities)
    orderings = [cap.get_ordering() for cap in caps]
    if all(o is None for o in orderings):
        return caps
    _check_requires(caps, orderings)
    count = len(caps)
    after: list[set[int]] = [set() for _ in caps]  # after[i]: the capabilities that go inside capability i
    for i, ordering in enumerate(orderings):
        if ordering is None:
            continue
        for j in range(count):
            if j == i:
                continue
            other = orderings[j]
            other_position = other.position if other is not None else None
            if ordering.position == 'outermost' and other_position != 'outermost':
                after[i].add(j)
            if ordering.position == 'innermost' and other_position != 'innermost':
                after[j].add(i)
            if any(_matches(ref, caps[j]) for ref in ordering.wraps):
                after[i].add(j)
            if any(_matches(ref, caps[j]) for ref in ordering.wrapped_by):
                after[j].add(i)
    waiting = [0] * count
    for inner in after:
        for j in inner:
            waiting[j] += 1
    ready = [i for i in range(count) if not waiting[i]]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for j in after[i]:
            waiting[j] -= 1
            if not waiting[j]:
                heapq.heappush(ready, j)
    if len(order) < count:
        stuck = ', '.join(sorted({type(caps[i]).__name__ for i in range(count) if i not in order}))
        raise UserError(f'Circular ordering constraints among capabilities: {stuck}.')
    return [caps[i] for i in order]


def _matches(ref: CapabilityRef, capability: AbstractCapability[Any]) -> bool:
    return isinstance(capability, ref) if isinstance(ref, type) else capability is ref


def _check_requires(caps: list[AbstractCapability[Any]], orderings: list[CapabilityOrdering | None]) -> None:
    for cap, ordering in zip(caps, orderings, strict=True):
        for required in ordering.requires if ordering is not None else ():
            if not any(isinstance(other, required) for other in caps):
                raise UserError(
                    f'`{type(cap).__name__}` requires `{required.__name__}` but it was not found among the '
                    'capabilities.'
                )
