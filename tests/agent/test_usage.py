"""Usage accounting and limits."""

from __future__ import annotations

import pytest

from edgewise.agent import RequestUsage, RunUsage, UsageLimitExceeded, UsageLimits
from edgewise.agent.settings import merge_model_settings


def test_request_usage_adds_up() -> None:
    a = RequestUsage(input_tokens=1, output_tokens=2, details={'x': 1})
    b = RequestUsage(input_tokens=3, cache_read_tokens=1, details={'x': 2, 'y': 1})
    assert a + b == RequestUsage(input_tokens=4, output_tokens=2, cache_read_tokens=1, details={'x': 3, 'y': 1})
    assert a.details == {'x': 1}
    a.incr(b)
    assert (a.total_tokens, a.requests) == (6, 1)


def test_a_detail_reported_as_none_is_not_counted() -> None:
    run = RunUsage(requests=1, details={'reasoning_tokens': 5})
    added = RunUsage(requests=1)
    added.details = {'reasoning_tokens': None, 'other_tokens': 10}  # type: ignore[dict-item]  # as some APIs report
    assert (run + added).details == {'reasoning_tokens': 5, 'other_tokens': 10}


def test_run_usage_counts_requests_and_tool_calls() -> None:
    run = RunUsage(requests=1, tool_calls=2, input_tokens=5)
    assert run + RequestUsage(output_tokens=1) == RunUsage(requests=2, tool_calls=2, input_tokens=5, output_tokens=1)
    assert run + RunUsage(requests=2, tool_calls=1) == RunUsage(requests=3, tool_calls=3, input_tokens=5)
    assert repr(run) == 'RunUsage(input_tokens=5, requests=1, tool_calls=2)'


def test_limits_have_pydantic_ai_defaults() -> None:
    limits = UsageLimits()
    assert (limits.request_limit, limits.tool_calls_limit, limits.total_tokens_limit) == (50, None, None)
    assert limits.has_token_limits() is False
    assert repr(limits) == 'UsageLimits()'
    assert (
        repr(UsageLimits(request_limit=3, output_tokens_limit=9))
        == 'UsageLimits(request_limit=3, output_tokens_limit=9)'
    )


def test_limit_checks_pass_below_and_fail_past_the_limit() -> None:
    limits = UsageLimits(request_limit=2, tool_calls_limit=2, total_tokens_limit=10)
    limits.check_before_request(RunUsage(requests=1))
    limits.check_before_tool_call(RunUsage(tool_calls=1))
    limits.check_tokens(RunUsage(input_tokens=10))
    with pytest.raises(UsageLimitExceeded, match='request_limit of 2'):
        limits.check_before_request(RunUsage(requests=2))
    with pytest.raises(UsageLimitExceeded, match=r'tool_calls_limit of 2 \(tool_calls=3\)'):
        limits.check_before_tool_call(RunUsage(tool_calls=1), 2)
    with pytest.raises(UsageLimitExceeded, match=r'Exceeded the total_tokens_limit of 10 \(total_tokens=11\)') as exc:
        limits.check_tokens(RunUsage(input_tokens=11))
    assert exc.value.messages == []


def test_model_settings_merge_later_wins() -> None:
    assert merge_model_settings({'temperature': 1, 'seed': 1}, {'temperature': 0}) == {'temperature': 0, 'seed': 1}
    assert merge_model_settings(None, {'seed': 2}) == {'seed': 2}
    assert merge_model_settings({'seed': 2}, None) == {'seed': 2}
    assert merge_model_settings(None, None) is None


def test_the_deprecated_token_limit_names_fill_in_and_read_the_new_ones() -> None:
    limits = UsageLimits(request_tokens_limit=5, response_tokens_limit=6)
    explicit = UsageLimits(input_tokens_limit=0, request_tokens_limit=5)

    with pytest.warns(DeprecationWarning, match='`request_tokens_limit` is deprecated'):
        assert limits.request_tokens_limit == 5
    with pytest.warns(DeprecationWarning, match='`response_tokens_limit` is deprecated'):
        assert limits.response_tokens_limit == 6
    assert (limits.input_tokens_limit, limits.output_tokens_limit, explicit.input_tokens_limit) == (5, 6, 0)
    assert repr(limits) == 'UsageLimits(input_tokens_limit=5, output_tokens_limit=6)'


def test_opentelemetry_attributes_name_the_counters_that_are_set() -> None:
    usage = RunUsage(input_tokens=3, output_tokens=0, cache_read_tokens=2, details={'custom': 4, 'zero': 0})
    assert usage.opentelemetry_attributes() == {
        'gen_ai.usage.input_tokens': 3,
        'gen_ai.usage.cache_read.input_tokens': 2,
        'gen_ai.usage.details.custom': 4,
        'gen_ai.usage.details.zero': 0,  # a zero is a measurement (pydantic-ai 2.x)
        'gen_ai.usage.details.cache_read_tokens': 2,
    }
    assert RequestUsage(output_audio_tokens=1).opentelemetry_attributes() == {
        'gen_ai.usage.details.output_audio_tokens': 1
    }


def test_opentelemetry_details_skip_none_and_the_names_of_first_class_counters() -> None:
    usage = RequestUsage(input_tokens=100, details={'input_tokens': 100, 'output_tokens': 42, 'reasoning_tokens': 0})
    usage.details['unreported'] = None  # type: ignore[assignment]  # as some APIs report
    assert usage.opentelemetry_attributes() == {
        'gen_ai.usage.input_tokens': 100,
        'gen_ai.usage.details.reasoning_tokens': 0,
    }
