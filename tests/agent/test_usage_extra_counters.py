"""Counters `RequestUsage` and `RunUsage` do not know yet (`RequestUsage(future_tokens=1)`): kept, summed, compared
and serialized, so that a history holding them loads back whole; and `RequestUsage.extract`."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from datetime import datetime

import pydantic
import pytest
from pydantic_core import to_json, to_jsonable_python

from edgewise.agent import RequestUsage, RunUsage
from edgewise.agent.messages import ModelMessage, ModelMessagesTypeAdapter, ModelResponse

_ZEROS = {
    'input_tokens': 0,
    'cache_write_tokens': 0,
    'cache_read_tokens': 0,
    'output_tokens': 0,
    'input_audio_tokens': 0,
    'cache_audio_read_tokens': 0,
    'output_audio_tokens': 0,
    'details': {},
    'cost': None,
}


def test_extra_counters_are_kept_and_compared() -> None:
    usage = RequestUsage(future_tokens=1, label='a')
    assert (usage.__dict__['future_tokens'], usage.__dict__['label']) == (1, 'a')
    assert usage == RequestUsage(future_tokens=1, label='a')
    assert usage != RequestUsage(future_tokens=2, label='a')
    assert usage != RequestUsage(label='a')
    assert usage != RunUsage(future_tokens=1, label='a')
    assert RunUsage(requests=0, future_tokens=1) == RunUsage(future_tokens=1)


def test_numeric_extra_counters_add_up_and_labels_are_kept() -> None:
    total = RequestUsage(input_tokens=1, future_tokens=1, label='first') + RequestUsage(future_tokens=2, label='x')
    assert total == RequestUsage(input_tokens=1, future_tokens=3, label='first')
    run = RunUsage(requests=1)
    run.incr(RequestUsage(only_here=2.5))
    assert run == RunUsage(requests=2, only_here=2.5)


def test_extra_counters_show_in_the_repr_and_count_as_values() -> None:
    usage = RequestUsage(input_tokens=1, zeta=0, future_tokens=2)
    assert repr(usage) == 'RequestUsage(input_tokens=1, future_tokens=2)'
    assert RequestUsage(future_tokens=2).has_values()
    assert not RequestUsage(future_tokens=0).has_values()


def test_a_copy_has_its_own_details() -> None:
    usage = RequestUsage(details={'a': 1}, future_tokens=1)
    copied = copy.copy(usage)
    copied.details['a'] = 2
    assert (usage.details, copied == RequestUsage(details={'a': 2}, future_tokens=1)) == ({'a': 1}, True)


@pytest.mark.parametrize('usage_type', [RequestUsage, RunUsage])
def test_extra_counters_survive_a_json_round_trip(usage_type: type[RequestUsage] | type[RunUsage]) -> None:
    usage = usage_type(input_tokens=5, details={'r': 3}, future_tokens=42, label='a', zero_tokens=0)
    adapter = pydantic.TypeAdapter(usage_type)
    loaded = adapter.validate_json(adapter.dump_json(usage))
    assert loaded == usage
    assert adapter.validate_python(usage) is usage


@pytest.mark.parametrize('usage_type', [RequestUsage, RunUsage])
def test_legacy_and_computed_names_are_not_loaded_as_extra_counters(
    usage_type: type[RequestUsage] | type[RunUsage],
) -> None:
    loaded = pydantic.TypeAdapter(usage_type).validate_python(
        {'input_tokens': 5, 'total_tokens': 5, 'request_tokens': 5, 'cache_hit_ratio': 0.5}
    )
    assert loaded == usage_type(input_tokens=5)


def test_extra_counters_are_serialized_in_a_history() -> None:
    usage = RequestUsage(input_tokens=5, future_tokens=42, label='a')
    messages: list[ModelMessage] = [ModelResponse(parts=[], usage=usage)]
    expected = {**_ZEROS, 'input_tokens': 5, 'future_tokens': 42, 'label': 'a'}
    assert to_jsonable_python(messages)[0]['usage'] == expected
    assert json.loads(to_json(messages))[0]['usage'] == expected
    serialized = ModelMessagesTypeAdapter.dump_json(messages)
    assert json.loads(serialized)[0]['usage'] == expected
    [loaded] = ModelMessagesTypeAdapter.validate_json(serialized)
    assert isinstance(loaded, ModelResponse)
    assert loaded.usage == usage


def test_include_exclude_and_exclude_none_apply_to_extra_counters() -> None:
    adapter = pydantic.TypeAdapter(RequestUsage)
    usage = RequestUsage(input_tokens=5, future_tokens=42, label=None, breakdown={'a': 1, 'b': 2})
    assert adapter.dump_python(usage, include={'input_tokens'}) == {'input_tokens': 5}
    assert adapter.dump_python(usage, include={'future_tokens', 'label'}, exclude_none=True) == {'future_tokens': 42}
    assert 'future_tokens' not in adapter.dump_python(usage, exclude={'future_tokens'})
    assert adapter.dump_python(usage, include={'breakdown': {'a'}}) == {'breakdown': {'a': 1}}


def test_json_dump_of_extra_counters_uses_the_callers_fallback() -> None:
    usage = RequestUsage(when=datetime(2020, 1, 2), unknown=object())
    dumped = pydantic.TypeAdapter(RequestUsage).dump_python(
        usage, mode='json', include={'when': True, 'unknown': True}, fallback=lambda _: 'fallback'
    )
    assert dumped == {'when': '2020-01-02T00:00:00', 'unknown': 'fallback'}


def test_a_subclass_serializes_its_own_fields_and_extra_counters() -> None:
    @dataclass(repr=False, init=False, eq=False)
    class CustomUsage(RequestUsage):
        custom_tokens: int = 7

    assert to_jsonable_python(CustomUsage(future_tokens=42)) == {**_ZEROS, 'custom_tokens': 7, 'future_tokens': 42}


def test_extract_without_a_known_provider_gives_only_the_details() -> None:
    found = RequestUsage.extract({}, provider='unknown', provider_url='', provider_fallback='', details={'a': 1})
    assert found == RequestUsage(details={'a': 1})


def test_extract_reads_a_known_providers_usage() -> None:
    pytest.importorskip('genai_prices')
    data = {'usage': {'prompt_tokens': 3, 'completion_tokens': 4}}
    found = RequestUsage.extract(data, provider='openai', provider_url='', provider_fallback='', api_flavor='chat')
    assert found == RequestUsage(input_tokens=3, output_tokens=4)


def test_extract_without_genai_prices_gives_only_the_details(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, 'genai_prices.data_snapshot', None)
    found = RequestUsage.extract({'usage': {'prompt_tokens': 3}}, provider='openai', provider_url='',
                                 provider_fallback='', details={'a': 1})  # fmt: skip
    assert found == RequestUsage(details={'a': 1})


def test_usage_stored_before_the_counters_were_renamed_loads_its_counts() -> None:
    stored = {'requests': 1, 'request_tokens': 13, 'response_tokens': 76, 'total_tokens': 89, 'details': None}
    assert pydantic.TypeAdapter(RequestUsage).validate_python(stored) == RequestUsage(input_tokens=13, output_tokens=76)


def test_usage_stored_with_unknown_legacy_counts_loads_as_zero() -> None:
    stored = {'requests': 0, 'request_tokens': None, 'response_tokens': None, 'total_tokens': None, 'details': None}
    assert pydantic.TypeAdapter(RunUsage).validate_python(stored) == RunUsage()


def test_the_current_counter_name_wins_over_the_legacy_one() -> None:
    stored = {'input_tokens': 5, 'request_tokens': 13}
    assert pydantic.TypeAdapter(RequestUsage).validate_python(stored) == RequestUsage(input_tokens=5)
