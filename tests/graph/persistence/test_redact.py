"""`_redact`: what stored errors and shown URLs never hold."""

from __future__ import annotations

import pytest

from edgewise.graph.persistence import NodeError
from edgewise.graph.persistence._redact import mask_dsn, redact


@pytest.mark.parametrize(
    ('text', 'redacted'),
    [
        ('postgresql://app:hunter2@db:5432/runs', 'postgresql://app:***@db:5432/runs'),
        ("host=db password='a b' user=app", 'host=db password=*** user=app'),
        ('{"api_key": "abc123", "x": 1}', '{"api_key": "***", "x": 1}'),
        ('Authorization: Bearer eyJhbGciOi', 'Authorization: ***'),
        ('sent Bearer eyJhbGciOi to the server', 'sent Bearer *** to the server'),
        ('key sk-ant-api03-abcdefghijklmn in the message', 'key sk-*** in the message'),
        ('token=t0k3n secret: s3cr3t', 'token=*** secret: ***'),
        ('nothing secret here: 42 nodes', 'nothing secret here: 42 nodes'),
    ],
)
def test_redact_replaces_secrets(text: str, redacted: str) -> None:
    assert redact(text) == redacted


def test_mask_dsn_masks_passwords_only() -> None:
    assert mask_dsn('postgresql://app:pw@db/runs?sslmode=require') == 'postgresql://app:***@db/runs?sslmode=require'
    assert mask_dsn('postgresql://app@db/runs') == 'postgresql://app@db/runs'


def _down(depth: int) -> None:
    if depth == 0:
        raise RecursionError('deep down')
    _up(depth - 1)


def _up(depth: int) -> None:
    _down(depth)


def test_a_long_traceback_keeps_its_last_frames() -> None:
    try:
        _down(50)
    except RecursionError as e:
        error = NodeError.from_exception(e)
    assert (error.type, error.message) == ('RecursionError', 'deep down')
    assert error.traceback.count('  File ') == 20
    assert error.traceback.endswith("    raise RecursionError('deep down')\nRecursionError: deep down\n")


def test_a_huge_traceback_keeps_its_start_and_end() -> None:
    error = NodeError.from_exception(ValueError('x' * 20_000))
    assert len(error.traceback) < 8100
    assert error.traceback.startswith('ValueError: xxx')
    assert '\n[... 12013 characters left out ...]\n' in error.traceback
    assert error.traceback.endswith('xxx\n')
    assert error.message == 'x' * 1997 + '...'


class _Custom(Exception):
    pass


def test_the_type_of_a_non_builtin_error_names_its_module() -> None:
    assert NodeError.from_exception(_Custom('x')).type == f'{__name__}._Custom'
