"""The model error classes of pydantic-ai 2.68: their tree, what they carry, how they pickle and what they say."""

from __future__ import annotations

import email.utils
import pickle
import time

import httpx
import pytest

import edgewise.agent
from edgewise.agent import exceptions as exc
from edgewise.agent.models import _error_categories as categories

CATEGORY_BASES: dict[type[BaseException], tuple[type[BaseException], ...]] = {
    exc.ModelRateLimitError: (exc.ModelAPIError,),
    exc.ModelQuotaExceededError: (exc.ModelAPIError,),
    exc.ModelUnavailableError: (exc.ModelAPIError,),
    exc.ModelOverloadedError: (exc.ModelUnavailableError,),
    exc.ModelServerError: (exc.ModelAPIError,),
    exc.ModelConnectionError: (exc.ModelAPIError,),
    exc.ModelTimeoutError: (exc.ModelConnectionError,),
    exc.ModelRequestRejectedError: (exc.ModelAPIError,),
    exc.ModelContextWindowExceededError: (exc.ModelRequestRejectedError,),
    exc.ModelAuthenticationError: (exc.ModelRequestRejectedError,),
    exc.ModelNotFoundError: (exc.ModelRequestRejectedError,),
    exc.ModelRequestTimeout: (exc.ModelAPIError,),
    exc.ModelHTTPError: (exc.ModelAPIError,),
    exc.OutputTokenLimitExceeded: (exc.UnexpectedModelBehavior,),
    exc.IncompleteToolCall: (exc.OutputTokenLimitExceeded,),
    exc.RunTimedOut: (exc.RunCancelled, TimeoutError),
    exc.RetryModelRequest: (Exception,),
    exc.UnsupportedSettingWarning: (UserWarning,),
    exc.UsageExtractionFailedWarning: (Warning,),
    exc.UsageLimitUnavailableWarning: (Warning,),
}


@pytest.mark.parametrize(('cls', 'bases'), CATEGORY_BASES.items(), ids=lambda v: getattr(v, '__name__', ''))
def test_the_classes_have_the_bases_of_pydantic_ai_2_68(
    cls: type[BaseException], bases: tuple[type[BaseException], ...]
) -> None:
    assert cls.__bases__ == bases
    assert getattr(edgewise.agent, cls.__name__) is cls


def test_the_type_aliases_are_exported() -> None:
    assert edgewise.agent.TransportPhase is exc.TransportPhase
    assert edgewise.agent.RequestTimeoutSetting is exc.RequestTimeoutSetting


CATEGORIES = [
    exc.ModelRateLimitError,
    exc.ModelQuotaExceededError,
    exc.ModelUnavailableError,
    exc.ModelOverloadedError,
    exc.ModelServerError,
    exc.ModelRequestRejectedError,
    exc.ModelContextWindowExceededError,
    exc.ModelAuthenticationError,
    exc.ModelNotFoundError,
]


@pytest.mark.parametrize('category', CATEGORIES, ids=lambda c: c.__name__)
def test_for_category_makes_an_http_error_of_the_category_that_pickles(category: exc.HTTPErrorCategory) -> None:
    error = exc.ModelHTTPError.for_category(
        category,
        status_code=418,
        model_name='m',
        body={'error': 'x'},
        headers={'X-Should-Retry': 'false', 'Retry-After': '7'},
        suggested_model_id='openai:gpt-5',
        hint='Check the model name',
        provider_error_code='c',
        provider_error_type='t',
        in_stream=True,
    )
    assert isinstance(error, category)
    assert isinstance(error, exc.ModelHTTPError)
    assert type(error).__name__ == category.__name__
    assert repr(error).startswith(f'{category.__name__}(')
    assert str(error) == (
        "status_code: 418, model_name: m, body: {'error': 'x'}. Did you mean 'openai:gpt-5'?. Check the model name"
    )
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert (str(copy), copy.headers, copy.retry_after, copy.provider_retry_hint) == (
        str(error),
        {'x-should-retry': 'false', 'retry-after': '7'},
        7.0,
        False,
    )
    assert (copy.provider_error_code, copy.provider_error_type, copy.in_stream, copy.hint) == (
        'c',
        't',
        True,
        error.hint,
    )


def test_for_category_none_is_a_plain_http_error_and_other_classes_are_refused() -> None:
    assert type(exc.ModelHTTPError.for_category(None, status_code=418, model_name='m')) is exc.ModelHTTPError
    with pytest.raises(
        TypeError, match=r'^ModelConnectionError is not an error category an HTTP error can belong to\.$'
    ):
        exc.ModelHTTPError.for_category(exc.ModelConnectionError, status_code=500, model_name='m')  # type: ignore[arg-type]


def test_an_http_error_pickled_before_2_68_reads_its_retry_after_from_its_headers() -> None:
    error = exc.ModelHTTPError(429, 'm')
    error.__setstate__({'headers': {'retry-after': '5'}, 'suggested_model_id': None})
    assert (error.retry_after, error.hint, str(error)) == (5.0, None, 'status_code: 429, model_name: m, body: None')


@pytest.mark.parametrize(
    ('headers', 'expected'),
    [
        ({'retry-after-ms': '250'}, 0.25),
        ({'retry-after-ms': 'soon', 'retry-after': '2'}, 2.0),
        ({'retry-after-ms': '-1'}, None),
        ({'retry-after': '-3'}, None),
        ({'retry-after': '9' * 400}, None),
        ({'retry-after': 'not a date'}, None),
        ({'retry-after': 'Sun, 06 Nov 1994 08:49:37 GMT'}, 0.0),
        ({}, None),
    ],
)
def test_retry_after_reads_the_headers(headers: dict[str, str], expected: float | None) -> None:
    assert exc.ModelHTTPError(429, 'm', headers=headers).retry_after == expected


def test_retry_after_of_an_http_date_and_of_an_explicit_value() -> None:
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 < (exc.ModelHTTPError(429, 'm', headers={'retry-after': when}).retry_after or 0) <= 30
    asctime = time.strftime('%a %b %d %H:%M:%S %Y', time.gmtime(time.time() + 30))  # no zone: UTC
    assert 25 < (exc.ModelHTTPError(429, 'm', headers={'retry-after': asctime}).retry_after or 0) <= 30
    assert exc.ModelHTTPError(429, 'm', headers={'retry-after': '3'}, retry_after=1.0).retry_after == 1.0
    assert exc.ModelHTTPError(429, 'm').provider_retry_hint is None
    assert exc.ModelHTTPError(429, 'm', headers={'x-should-retry': 'maybe'}).provider_retry_hint is None


def test_model_api_errors_carry_what_the_provider_said_and_pickle() -> None:
    error = exc.ModelRateLimitError('m', 'slow down', body={'a': 1}, provider_error_code='c', retry_after=2.0)
    error._edgewise_attempts = ['first']  # type: ignore[attr-defined]  # attached on its way: kept
    copy = pickle.loads(pickle.dumps(error))
    assert (type(copy), str(copy), copy.body, copy.provider_error_code, copy.retry_after, copy.in_stream) == (
        exc.ModelRateLimitError,
        'slow down',
        {'a': 1},
        'c',
        2.0,
        False,
    )
    assert copy._edgewise_attempts == ['first']


def test_a_connection_error_names_its_phase_and_pickles() -> None:
    error = exc.ModelTimeoutError('m', 'Request timed out.', phase='connect')
    copy = pickle.loads(pickle.dumps(error))
    assert (type(copy), str(copy), copy.phase) == (exc.ModelTimeoutError, 'Request timed out.', 'connect')


def test_a_request_timeout_says_which_setting_ran_out_and_pickles() -> None:
    error = exc.ModelRequestTimeout('gpt-5', 2.5)
    assert (str(error), error.timeout, error.setting) == (
        "Request to model 'gpt-5' timed out after 2.5 seconds",
        2.5,
        'request_timeout',
    )
    first = pickle.loads(pickle.dumps(exc.ModelRequestTimeout('gpt-5', 1, setting='first_event_timeout')))
    assert (str(first), first.args, first.setting) == (
        "Request to model 'gpt-5' timed out after 1 seconds without producing any output",
        ("Request to model 'gpt-5' timed out after 1 seconds without producing any output",),
        'first_event_timeout',
    )


def test_retry_model_request_names_the_model_to_attempt() -> None:
    assert exc.RetryModelRequest().model is None
    assert exc.RetryModelRequest('openai:gpt-5').model == 'openai:gpt-5'


def test_run_timed_out_is_a_run_cancelled_and_a_timeout_error() -> None:
    error = exc.RunTimedOut('Run timed out after 1 seconds')
    assert isinstance(error, exc.RunCancelled)
    assert isinstance(error, TimeoutError)
    assert error.all_messages() == []


@pytest.mark.parametrize(
    ('status', 'message', 'category'),
    [
        (401, None, exc.ModelAuthenticationError),
        (403, None, exc.ModelAuthenticationError),
        (404, None, exc.ModelNotFoundError),
        (400, None, exc.ModelRequestRejectedError),
        (422, None, exc.ModelRequestRejectedError),
        (402, None, exc.ModelQuotaExceededError),
        (429, None, exc.ModelRateLimitError),
        (529, None, exc.ModelOverloadedError),
        (503, 'Server over capacity', exc.ModelOverloadedError),
        (503, None, exc.ModelUnavailableError),
        (504, None, exc.ModelServerError),
        (409, None, None),
    ],
)
def test_the_category_of_a_status(status: int, message: str | None, category: type[exc.ModelAPIError] | None) -> None:
    assert categories.http_status_category(status, message) is category


@pytest.mark.parametrize(
    ('body', 'expected'),
    [
        ({'code': '502', 'message': 'upstream'}, (exc.ModelServerError, 502)),  # a gateway's status as the code
        ({'code': 429, 'message': 'too many'}, (exc.ModelRateLimitError, 429)),
        ({'code': None, 'type': 'overloaded', 'message': 'busy'}, (exc.ModelOverloadedError, 503)),
        ({'code': 'model_not_found', 'message': 'no'}, (exc.ModelNotFoundError, None)),
        ({'message': 'Please reduce the length of the messages.'}, (exc.ModelContextWindowExceededError, None)),
        ({'code': 'invalid_api_key', 'message': 'bad key'}, (exc.ModelAuthenticationError, None)),
        ('a plain error', (exc.ModelAPIError, None)),
    ],
)
def test_openai_stream_errors(body: object, expected: tuple[type[exc.ModelAPIError], int | None]) -> None:
    message = str(body['message']) if isinstance(body, dict) else 'failed'
    error = categories.openai_stream_error('m', message, body)
    category, status = expected
    assert type(error).__name__ == category.__name__
    assert getattr(error, 'status_code', None) == status
    assert error.in_stream


def test_the_transport_phase_is_found_down_the_cause_chain() -> None:
    outer = RuntimeError('wrapped')
    outer.__cause__ = httpx.PoolTimeout('no free connection')
    assert categories.transport_phase(outer) == 'pool'
    assert categories.transport_phase(httpx.WriteError('broken pipe')) == 'write'
    looped = RuntimeError('a loop')
    looped.__cause__ = looped
    assert categories.transport_phase(looped) is None
    error = categories.connection_error('m', 'lost', ValueError('?'), timeout=False)
    assert (type(error), error.phase) == (exc.ModelConnectionError, None)


def test_credentials_are_found_in_the_headers_and_redacted_everywhere() -> None:
    headers = {'Authorization': 'Bearer sk-abcdef', 'x-goog-api-key': 'AIza-key', 'x-api-key': 'abc', 'accept': 'x'}
    secrets = categories.secret_values(headers)
    assert secrets == ('sk-abcdef', 'AIza-key')  # too short a value is not a credential to hunt for
    body = {'error': {'message': 'key sk-abcdef is wrong', 'keys': ['AIza-key', 3], 'sk-abcdef': None}}
    assert categories.redact(body, secrets) == {
        'error': {'message': 'key *** is wrong', 'keys': ['***', 3], '***': None}
    }
    assert categories.redact(body, ()) is body


def test_a_plain_http_error_pickles_as_itself() -> None:
    copy = pickle.loads(pickle.dumps(exc.ModelHTTPError(500, 'm', 'oops', headers={'retry-after-ms': '10'})))
    assert (type(copy), str(copy), copy.retry_after) == (
        exc.ModelHTTPError,
        'status_code: 500, model_name: m, body: oops',
        0.01,
    )


def test_an_api_of_unknown_error_bodies_is_categorized_by_its_status() -> None:
    error = categories.generic_http_error(503, 'm', 'we are overloaded', None)
    assert type(error).__name__ == 'ModelOverloadedError'
    assert (
        type(categories.generic_http_error(503, 'm', {'detail': 'overloaded'}, None)).__name__
        == 'ModelUnavailableError'
    )


@pytest.mark.parametrize(
    ('delays', 'expected'),
    [(['soon', '2.5s'], 2.5), (['xs', '-1s', 'infs'], None), ([3], None)],
)
def test_a_gemini_retry_delay_is_read_from_the_first_usable_retry_info(
    delays: list[object], expected: float | None
) -> None:
    details = [{'@type': 'type.googleapis.com/google.rpc.RetryInfo', 'retryDelay': delay} for delay in delays]
    body = {'error': {'code': 429, 'status': 'RESOURCE_EXHAUSTED', 'message': 'slow', 'details': details}}
    assert categories.google_http_error(429, 'm', body, None).retry_after == expected


# Pickled by Edgewise before the model API errors moved to `edgewise.agent._errors`: the payload names
# `edgewise.agent.exceptions._categorized_http_error` and `edgewise.agent.exceptions.ModelRateLimitError`.
_RATE_LIMIT_ERROR_PICKLED_BEFORE_THE_SPLIT = (
    b'\x80\x04\x95\x17\x01\x00\x00\x00\x00\x00\x00\x8c\x19edgewise.agent.exceptions\x94\x8c\x17_categorized_http_error'
    b'\x94\x93\x94(h\x00\x8c\x13ModelRateLimitError\x94\x93\x94M\xad\x01\x8c\x05gpt-x\x94}\x94\x8c\x05error\x94\x8c\t'
    b'slow down\x94st\x94R\x94}\x94(\x8c\x04body\x94h\x06\x8c\x13provider_error_code\x94N\x8c\x13provider_error_type'
    b'\x94N\x8c\x0bretry_after\x94G@\x08\x00\x00\x00\x00\x00\x00\x8c\tin_stream\x94\x89\x8c\x07headers\x94}\x94\x8c'
    b'\x0bretry-after\x94\x8c\x013\x94s\x8c\x12suggested_model_id\x94N\x8c\x04hint\x94Nub.'
)


def test_an_http_error_pickled_before_the_errors_moved_still_loads() -> None:
    error = pickle.loads(_RATE_LIMIT_ERROR_PICKLED_BEFORE_THE_SPLIT)
    assert isinstance(error, exc.ModelRateLimitError)
    assert isinstance(error, exc.ModelHTTPError)
    assert (error.status_code, error.model_name, error.body, error.retry_after) == (
        429,
        'gpt-x',
        {'error': 'slow down'},
        3.0,
    )


def test_the_errors_defined_apart_are_shown_and_pickled_as_members_of_exceptions() -> None:
    assert exc.ModelHTTPError.__module__ == exc.AgentRunError.__module__ == 'edgewise.agent.exceptions'
    error = exc.ModelHTTPError.for_category(exc.ModelNotFoundError, status_code=404, model_name='m')
    assert type(error).__name__ == 'ModelNotFoundError'
    pickled = pickle.dumps(error, protocol=4)
    assert b'edgewise.agent.exceptions' in pickled
    assert b'_errors' not in pickled
    assert type(pickle.loads(pickled)) is type(error)
