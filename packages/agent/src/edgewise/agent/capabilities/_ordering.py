"""The order of the capabilities of a `CombinedCapability` under their `get_ordering` constraints."""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from typing import Any

from ..exceptions import UserError
from .abstract import AbstractCapability, CapabilityOrdering, CapabilityRef

__all__ = ('sort_capabilities',)


def sort_capabilities(capabilities: Sequence[AbstractCapability[Any]]) -> list[AbstractCapability[Any]]:
    """The capabilities in an order that meets their constraints, the given order where the constraints leave a
    choice (the earliest given capability that may come next comes next).

    Raises:
        UserError: a required capability class is missing, the constraints contradict one another, or a
            capability made of several gives them conflicting positions.
    """
    caps = list(capabilities)
    orderings = [_effective_ordering(cap) for cap in caps]
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
    import heapq  # (only capabilities with an ordering need it: not loaded with the agent)

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


def _effective_ordering(capability: AbstractCapability[Any]) -> CapabilityOrdering | None:
    """`capability`'s ordering; for one made of several (its `apply` visits others), their orderings merged.

    Raises:
        UserError: two of the capabilities it is made of ask for different positions.
    """
    leaves: list[AbstractCapability[Any]] = []
    capability.apply(leaves.append)
    if len(leaves) == 1 and leaves[0] is capability:
        return capability.get_ordering()
    orderings = [ordering for leaf in leaves if (ordering := leaf.get_ordering()) is not None]
    if not orderings:
        return None
    positions = {ordering.position for ordering in orderings if ordering.position is not None}
    if len(positions) > 1:
        first, second = sorted(positions)
        raise UserError(
            f'Conflicting positions among nested leaves of `{type(capability).__name__}`: {first!r} and '
            f'{second!r}. Give each position its own capability, or list the capabilities side by side.'
        )
    return CapabilityOrdering(
        position=positions.pop() if positions else None,
        wraps=[ref for ordering in orderings for ref in ordering.wraps],
        wrapped_by=[ref for ordering in orderings for ref in ordering.wrapped_by],
        requires=[ref for ordering in orderings for ref in ordering.requires],
    )


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
