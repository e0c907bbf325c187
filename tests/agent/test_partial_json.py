"""The incremental JSON parser: any split of any document gives `json.loads`'s value; prefixes stay consistent."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edgewise.agent._output.partial_json import IncrementalJsonParser, PartialJsonError, ValueBuilder

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**12), max_value=10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20,
)


def _split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts})
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds) if a < b]


def _parse(chunks: list[str]) -> tuple[Any, list[Any]]:
    builder = ValueBuilder()
    parser = IncrementalJsonParser(builder)
    partials = []
    for chunk in chunks:
        parser.feed(chunk)
        partials.append(json.loads(json.dumps(builder.partial_value(parser))) if builder.has_root else None)
    parser.finish()
    return builder.root, partials


def _consistent(partial: Any, final: Any) -> bool:
    """Whether `partial` could grow into `final`: a prefix of strings and lists, a subset of objects."""
    if partial is None and final is not None:
        return True  # nothing known yet (or a value not started)
    if isinstance(final, str):
        return isinstance(partial, str) and final.startswith(partial)
    if isinstance(final, list):
        return (
            isinstance(partial, list)
            and len(partial) <= len(final)
            and all(_consistent(p, f) for p, f in zip(partial, final, strict=False))
        )
    if isinstance(final, dict):
        return isinstance(partial, dict) and all(k in final and _consistent(v, final[k]) for k, v in partial.items())
    return bool(partial == final)


@settings(max_examples=300, deadline=None)
@given(value=json_values, cuts=st.lists(st.integers(min_value=0, max_value=10_000), max_size=12), indent=st.booleans())
def test_any_split_of_any_document_parses_to_the_value_json_loads_gives(
    value: Any, cuts: list[int], indent: bool
) -> None:
    text = json.dumps(value, indent=2 if indent else None, ensure_ascii=bool(cuts and cuts[0] % 2))
    root, partials = _parse(_split(text, cuts))
    assert root == json.loads(text)
    assert all(_consistent(p, json.loads(text)) for p in partials)


@settings(max_examples=200, deadline=None)
@given(value=json_values)
def test_every_prefix_fed_one_character_at_a_time_is_consistent_with_the_document(value: Any) -> None:
    text = json.dumps(value)
    root, partials = _parse(list(text))
    final = json.loads(text)
    assert root == final
    assert all(_consistent(p, final) for p in partials)


def test_partial_values_show_the_string_being_read_and_leave_cut_escapes_out() -> None:
    builder = ValueBuilder()
    parser = IncrementalJsonParser(builder)
    seen = []
    for chunk in ['{"a": [{"n": "Al', 'i\\', 'nce\\u00', 'e9"}], "b": "x', '"}']:
        parser.feed(chunk)
        seen.append(builder.partial_value(parser))
    assert seen == [
        {'a': [{'n': 'Al'}]},
        {'a': [{'n': 'Ali'}]},
        {'a': [{'n': 'Ali\nce'}]},
        {'a': [{'n': 'Ali\nceé'}], 'b': 'x'},
        {'a': [{'n': 'Ali\nceé'}], 'b': 'x'},
    ]
    assert parser.done


def test_a_top_level_string_and_a_top_level_number_complete() -> None:
    builder = ValueBuilder()
    parser = IncrementalJsonParser(builder)
    parser.feed('"ab')
    assert builder.partial_value(parser) == 'ab'
    parser.feed('c"')
    assert (builder.root, parser.done) == ('abc', True)
    number = ValueBuilder()
    number_parser = IncrementalJsonParser(number)
    number_parser.feed('-12')
    number_parser.feed('.5')
    assert not number.has_root
    number_parser.finish()
    assert number.root == -12.5


@pytest.mark.parametrize(
    ('text', 'message'),
    [
        ('{1', 'where an object key should start'),
        ('{"a" 1', 'Expected ":" after an object key'),
        ('[1 2', 'after a value'),
        ('?', 'where a JSON value should start'),
        ('[tru]', "Invalid JSON token 'tru'"),
        ('{} {', 'after the end of the JSON document'),
        ('"\\x"', 'Invalid escape'),
    ],
)
def test_text_that_cannot_begin_a_document_is_rejected(text: str, message: str) -> None:
    parser = IncrementalJsonParser(ValueBuilder())
    with pytest.raises(PartialJsonError, match=message):
        parser.feed(text)


def test_an_incomplete_document_cannot_be_finished() -> None:
    parser = IncrementalJsonParser(ValueBuilder())
    parser.feed('{"a": [1')
    with pytest.raises(PartialJsonError, match='incomplete'):
        parser.finish()
