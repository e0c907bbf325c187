"""`ModelHTTPError.headers` and `.retry_after` (pydantic-ai 2.x): the failed response's headers and the wait the
server asks for."""

from __future__ import annotations

import pickle
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import pytest

from edgewise.agent.exceptions import ModelHTTPError


def test_headers_are_kept_with_lower_case_names() -> None:
    error = ModelHTTPError(429, 'gpt', {'error': 'slow down'}, headers={'Retry-After': '7', 'X-Request-Id': 'r1'})
    assert error.headers == {'retry-after': '7', 'x-request-id': 'r1'}
    assert str(error) == "status_code: 429, model_name: gpt, body: {'error': 'slow down'}"
    assert ModelHTTPError(500, 'gpt').headers is None


def test_headers_survive_pickling() -> None:
    error = ModelHTTPError(503, 'gpt', 'busy', headers={'Retry-After': '3'})
    restored = pickle.loads(pickle.dumps(error))
    assert (restored.status_code, restored.model_name, restored.body, restored.headers) == (
        503,
        'gpt',
        'busy',
        {'retry-after': '3'},
    )
    assert str(restored) == str(error)


@pytest.mark.parametrize(
    ('value', 'expected'),
    [('7', 7.0), ('0', 0.0), ('-1', None), ('soon', None), (None, None), ('1' + '0' * 309, None)],
)
def test_retry_after_in_seconds(value: str | None, expected: float | None) -> None:
    headers = {} if value is None else {'retry-after': value}
    assert ModelHTTPError(429, 'gpt', headers=headers).retry_after == expected
    assert ModelHTTPError(429, 'gpt').retry_after is None


def test_retry_after_as_an_http_date() -> None:
    later = datetime.now(tz=timezone.utc) + timedelta(hours=1)
    wait = ModelHTTPError(429, 'gpt', headers={'Retry-After': format_datetime(later, usegmt=True)}).retry_after
    assert wait is not None
    assert 3000 < wait <= 3600
    past = format_datetime(datetime(2020, 1, 1, tzinfo=timezone.utc), usegmt=True)
    assert ModelHTTPError(429, 'gpt', headers={'Retry-After': past}).retry_after == 0.0
    # The asctime form carries no zone: read as UTC.
    assert ModelHTTPError(429, 'gpt', headers={'Retry-After': 'Sun Nov  6 08:49:37 1994'}).retry_after == 0.0


def test_suggested_model_id_is_named_in_the_message() -> None:
    error = ModelHTTPError(404, 'gpt-5x', suggested_model_id='openai:gpt-5')
    assert error.suggested_model_id == 'openai:gpt-5'
    assert str(error) == "status_code: 404, model_name: gpt-5x, body: None. Did you mean 'openai:gpt-5'?"
    assert error.args == (str(error),)
    assert ModelHTTPError(404, 'gpt-5x').suggested_model_id is None


def test_suggested_model_id_survives_pickling() -> None:
    error = ModelHTTPError(404, 'gpt-5x', suggested_model_id='openai:gpt-5')
    restored = pickle.loads(pickle.dumps(error))
    assert (restored.suggested_model_id, str(restored), restored.args) == ('openai:gpt-5', str(error), error.args)


def test_pickled_error_without_state_has_no_suggestion() -> None:
    error = ModelHTTPError(404, 'gpt-5x')
    error.__setstate__(None)
    assert (error.headers, error.suggested_model_id, str(error)) == (
        None,
        None,
        'status_code: 404, model_name: gpt-5x, body: None',
    )
