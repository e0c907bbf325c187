"""The OpenAI-compatible example against the aimock simulator, as a script and in process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from examples.agent import openai_compatible

from .._aimock import Aimock

ROOT = Path(__file__).parents[2]


def _script(aimock: Aimock) -> str:
    """Fixtures of one conversation: a call of `convert`, then an answer once its result came back."""
    marker = aimock.marker()
    aimock.add(
        {
            'match': {'userMessage': marker, 'hasToolResult': False},
            'response': {
                'toolCalls': [{'name': 'convert', 'arguments': {'value': 26.2, 'from_unit': 'mi', 'to_unit': 'km'}}]
            },
        },
        {
            'match': {'userMessage': marker, 'hasToolResult': True, 'toolResultContains': '42.16 km'},
            'response': {'content': 'A marathon is 42.16 km.'},
        },
    )
    return f'{marker}: how long is a marathon in km?'


def test_the_example_runs_against_a_server_given_by_its_base_url(aimock: Aimock) -> None:
    prompt = _script(aimock)
    env = {**os.environ, 'OPENAI_COMPATIBLE_BASE_URL': f'{aimock.url}/v1', 'OPENAI_COMPATIBLE_MODEL': 'any-model'}
    env.pop('OPENAI_API_KEY', None)  # a local server needs no key
    completed = subprocess.run(
        [sys.executable, '-m', 'examples.agent.openai_compatible', prompt],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert completed.stderr == ''
    lines = completed.stdout.splitlines()
    assert lines[:2] == [
        'A marathon is 42.16 km.',
        "  tool call: convert({'value': 26.2, 'from_unit': 'mi', 'to_unit': 'km'})",
    ]
    assert lines[2].startswith('  requests: 2, input tokens: ')
    [first, _] = aimock.requests_for(prompt.split(':')[0])
    assert first['body']['model'] == 'any-model'
    assert 'convert' in repr(first['body']['tools'])


def test_the_example_in_process_with_arguments(aimock: Aimock, capsys: pytest.CaptureFixture[str]) -> None:
    prompt = _script(aimock)
    openai_compatible.main(['--base-url', f'{aimock.url}/v1', '--model', 'local', '--api-key', 'sk-local', prompt])
    assert capsys.readouterr().out.startswith('A marathon is 42.16 km.\n  tool call: convert(')


def test_the_example_needs_a_base_url(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv('OPENAI_COMPATIBLE_BASE_URL', raising=False)
    with pytest.raises(SystemExit) as exc_info:
        openai_compatible.main([])
    assert exc_info.value.code == 2
    assert 'give the server with --base-url or OPENAI_COMPATIBLE_BASE_URL' in capsys.readouterr().err


def test_the_converter_tool() -> None:
    assert openai_compatible.convert(26.2, 'mi', 'km') == '26.2 mi = 42.16 km'
    assert openai_compatible.convert(1, 'kg', 'km').startswith('cannot convert kg to km; known pairs: ')
