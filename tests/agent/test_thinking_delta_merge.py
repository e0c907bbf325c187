"""A `ThinkingPartDelta` applied to an earlier delta merges the two (as pydantic-ai 1.107), including provider
details given as functions."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.agent.messages import ThinkingPart, ThinkingPartDelta


def test_a_delta_applied_to_a_delta_appends_content_and_replaces_signature_and_provider() -> None:
    earlier = ThinkingPartDelta(
        content_delta='one', signature_delta='s1', provider_name='p1', provider_details={'a': 1}
    )
    merged = ThinkingPartDelta(content_delta=' two', signature_delta='s2', provider_name='p2').apply(earlier)
    assert isinstance(merged, ThinkingPartDelta)
    assert (merged.content_delta, merged.signature_delta, merged.provider_name, merged.provider_details) == (
        'one two', 's2', 'p2', {'a': 1},
    )  # fmt: skip
    merged = ThinkingPartDelta(content_delta='', provider_details={'a': 2, 'b': 3}).apply(earlier)
    assert (merged.content_delta, merged.signature_delta, merged.provider_details) == ('one', 's1', {'a': 2, 'b': 3})


def test_an_empty_delta_cannot_be_applied_to_a_delta() -> None:
    with pytest.raises(ValueError, match='Cannot apply ThinkingPartDelta with no content or signature'):
        ThinkingPartDelta().apply(ThinkingPartDelta(content_delta='x'))


def test_function_details_run_in_order_once_applied_to_a_part() -> None:
    def add(key: str) -> Any:
        return lambda details: {**(details or {}), key: len(details or {})}

    first = ThinkingPartDelta(content_delta='a', provider_details=add('first'))
    chained = ThinkingPartDelta(content_delta='b', provider_details=add('second')).apply(first)
    assert callable(chained.provider_details)
    part = chained.apply(ThinkingPart('', provider_details={'start': 0}))
    assert part == ThinkingPart('ab', provider_details={'start': 0, 'first': 1, 'second': 2})
    mixed = ThinkingPartDelta(content_delta='', provider_details={'plain': True}).apply(first)
    assert mixed.apply(ThinkingPart('')).provider_details == {'first': 0, 'plain': True}


def test_a_delta_still_refuses_other_parts() -> None:
    from edgewise.agent.messages import TextPart

    with pytest.raises(ValueError, match='Cannot apply a ThinkingPartDelta to TextPart'):
        ThinkingPartDelta(content_delta='x').apply(TextPart('y'))
