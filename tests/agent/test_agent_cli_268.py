"""`Agent.to_cli()` and `to_cli_sync()` (pydantic-ai 2.x): a chat in the terminal, driven through the standard input
and output of a real process (tests/agent/_chat_worker.py)."""

from __future__ import annotations

import inspect
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from edgewise.agent import Agent

from . import _chat_worker as worker


def chat(*args: str, lines: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the worker with `lines` as its standard input (then the end of input)."""
    return subprocess.run(
        [sys.executable, '-m', worker.__name__, *args],
        input=''.join(f'{line}\n' for line in lines),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, 'COLUMNS': '200', 'NO_COLOR': '1', 'TERM': 'dumb', **(env or {})},
    )


def answers(stdout: str, prompt: str) -> list[str]:
    """What follows each prompt shown, stripped of the padding of rich's Markdown."""
    return [' '.join(piece.split()) for piece in stdout.split(prompt)[1:]]


def test_to_cli_has_the_signature_of_pydantic_ai() -> None:
    for method in (Agent.to_cli, Agent.to_cli_sync):
        assert list(inspect.signature(method).parameters) == [
            'self', 'deps', 'prog_name', 'message_history', 'model_settings', 'usage_limits', 'model',
        ]  # fmt: skip
    assert inspect.iscoroutinefunction(Agent.to_cli)


@pytest.mark.parametrize('backend', ['asyncio', 'trio'])
def test_each_prompt_continues_the_chat_and_streams_its_answer(backend: str) -> None:
    done = chat('async', backend, lines=['hello', 'use the tool', '/markdown', '', 'bye', '/exit', 'never read'])
    assert done.returncode == 0, done.stderr
    shown = answers(done.stdout, 'chat ➤ ')
    instructions = "instructions='Talking to ann.' settings=None"
    assert shown == [
        f"main prompt='hello' {instructions} requests=1",
        f'▌ Called tool lookup. main prompt=None {instructions} requests=3',
        f'Markdown output of last question: # main prompt=None {instructions} requests=3',
        '',
        f"main prompt='bye' {instructions} requests=4",
        'Exiting…',
    ]


def test_the_sync_chat_takes_the_history_deps_settings_limits_and_model() -> None:
    done = chat('sync', lines=['hello', 'use the tool', 'again'])
    assert done.returncode == 0, done.stderr
    assert answers(done.stdout, 'mine ➤ ') == [
        "other prompt='hello' instructions='Talking to bob.' settings={'temperature': 0.5} requests=2",
        '▌ Called tool lookup. UsageLimitExceeded: The next request would exceed the request_limit of 1',
        # the failed turn left the history as it was
        "other prompt='again' instructions='Talking to bob.' settings={'temperature': 0.5} requests=3",
        '',
    ]


def test_a_failed_turn_prints_its_error_and_the_chat_goes_on() -> None:
    done = chat('async', 'asyncio', lines=['please fail', 'then this'])
    assert done.returncode == 0
    shown = answers(done.stdout, 'chat ➤ ')
    assert shown[0] == 'RuntimeError: the model is down Caused by: no route to the model'
    assert shown[1].startswith("main prompt='then this'")


def test_commands() -> None:
    lines = [
        '/markdown',
        '/cp',
        '/usage',
        'hi',
        '/usage --json',
        '/usage --yaml',
        '/nothing',
        '/multiline',
        'one',
        'two',
        '',
        '/multiline',
        '',
        'three',
    ]
    done = chat('async', 'asyncio', lines=lines)
    assert done.returncode == 0
    shown = answers(done.stdout, 'chat ➤ ')
    assert shown[:3] == [
        'No markdown output available.',
        'No output available to copy.',
        'chat usage (session total) Turns: 0 Tokens: 0 Input: 0 Output: 0 Requests: 0 Tool calls: 0',
    ]
    assert json.loads(shown[4]) == {
        'turns': 1, 'input_tokens': 50, 'output_tokens': 9, 'total_tokens': 59, 'requests': 1, 'tool_calls': 0,
    }  # fmt: skip
    assert shown[5:8] == [
        'Unknown `/usage` option `/usage---yaml`',
        'Unknown command `/nothing`',
        'Multiline mode on: a prompt ends at an empty line.',
    ]
    assert shown[8].startswith("main prompt='one\\ntwo'")
    assert shown[9] == 'Multiline mode off.'
    assert shown[10].startswith("main prompt='three'")
    assert shown[11:] == ['']  # the end of input ends the chat


def _clipboard(tmp_path: Path, body: str) -> dict[str, str]:
    """A `PATH` whose only clipboard command is a script with `body`."""
    tool = tmp_path / 'bin' / 'wl-copy'
    tool.parent.mkdir()
    tool.write_text(f'#!/bin/sh\n{body}\n')
    tool.chmod(0o755)
    return {'PATH': str(tool.parent)}


def test_cp_gives_the_last_answer_to_the_clipboard_command(tmp_path: Path) -> None:
    copied = tmp_path / 'copied.txt'
    done = chat('async', 'asyncio', lines=['hi', '/cp'], env=_clipboard(tmp_path, f'{shutil.which("cat")} > {copied}'))
    assert answers(done.stdout, 'chat ➤ ')[1] == 'Copied last output to clipboard.'
    assert copied.read_text().startswith("# main\n\nprompt='hi'")


def test_cp_says_when_it_cannot_copy(tmp_path: Path) -> None:
    failing = chat('async', 'asyncio', lines=['hi', '/cp'], env=_clipboard(tmp_path, 'exit 1'))
    assert answers(failing.stdout, 'chat ➤ ')[1].startswith('Could not copy:')
    empty = tmp_path / 'empty'
    empty.mkdir()
    missing = chat('async', 'asyncio', lines=['hi', '/cp'], env={'PATH': str(empty)})
    assert answers(missing.stdout, 'chat ➤ ')[1] == (
        'No clipboard command found on PATH (one of: pbcopy, wl-copy, xclip, xsel, clip).'
    )


def test_without_rich_the_error_names_the_extra() -> None:
    done = chat('no-rich', lines=['hi'])
    assert done.returncode == 1
    assert (
        'ModuleNotFoundError: `Agent.to_cli()` needs rich to show the answers: install the `cli` extra' in done.stderr
    )


def test_text_before_a_tool_call_stays_above_it() -> None:
    done = chat('async', 'asyncio', lines=['first use the tool'])
    shown = answers(done.stdout, 'chat ➤ ')
    assert shown[0].startswith('Looking it up. ▌ Called tool lookup. main prompt=None')


def test_the_end_of_input_ends_a_multiline_prompt_and_the_chat() -> None:
    done = chat('async', 'asyncio', lines=['/multiline', 'last', 'words'])
    assert done.returncode == 0
    assert answers(done.stdout, 'chat ➤ ')[1].startswith("main prompt='last\\nwords'")


def test_the_chat_starts_with_a_banner_unless_it_is_turned_off() -> None:
    from edgewise.agent import __version__

    done = chat('async', 'asyncio', lines=['/exit'], env={'EDGEWISE_NO_BANNER': '', 'PYDANTIC_AI_NO_BANNER': ''})
    assert done.returncode == 0, done.stderr
    # (set but empty still turns it off, as pydantic-ai's variable does)
    assert done.stdout.startswith('chat ➤ ')
    clean = {k: v for k, v in os.environ.items() if k not in ('EDGEWISE_NO_BANNER', 'PYDANTIC_AI_NO_BANNER')}
    done = subprocess.run(
        [sys.executable, '-m', worker.__name__, 'async', 'asyncio'],
        input='/exit\n', capture_output=True, text=True, timeout=120, check=False,
        env={**clean, 'COLUMNS': '200', 'NO_COLOR': '1', 'TERM': 'dumb'},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    banner, rest = done.stdout.split('\n', 1)
    assert banner == f'chat · edgewise-agent {__version__} · model function:main · /exit to quit'
    assert rest.startswith('chat ➤ ')
    done = subprocess.run(
        [sys.executable, '-m', worker.__name__, 'async', 'asyncio', 'no-banner'],
        input='/exit\n', capture_output=True, text=True, timeout=120, check=False,
        env={**clean, 'COLUMNS': '200', 'NO_COLOR': '1', 'TERM': 'dumb'},
    )  # fmt: skip
    assert done.stdout.startswith('chat ➤ '), done.stderr
