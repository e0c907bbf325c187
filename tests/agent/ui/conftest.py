"""Fixtures of the UI tests: the Vercel AI SDK (npm `ai`) to check the wire format against."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

AI_SDK_VERSION = '6.0.326'
"""The `ai` npm package the Vercel AI tests check chunks and messages with (AI SDK 6: tool approvals)."""

HERE = Path(__file__).parent

AISDKCheck = Callable[[list[dict[str, Any]], list[dict[str, Any]]], dict[str, Any]]


@pytest.fixture(scope='session')
def ai_sdk(tmp_path_factory: pytest.TempPathFactory) -> AISDKCheck:
    """Checks chunks and messages with the AI SDK's own schemas and stream reader (in Node.js)."""
    node, npm = shutil.which('node'), shutil.which('npm')
    if node is None or npm is None:
        pytest.skip('Node.js and npm are needed to check the wire format with the Vercel AI SDK (npm `ai`)')
    folder = tmp_path_factory.mktemp('ai-sdk')
    (folder / 'package.json').write_text('{"name": "check", "private": true, "type": "module"}')
    done = subprocess.run(
        [npm, 'install', '--no-audit', '--no-fund', '--loglevel=error', f'ai@{AI_SDK_VERSION}'],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        pytest.skip(f'npm could not install ai@{AI_SDK_VERSION} (no registry?): {done.stderr.strip()[-300:]}')
    script = folder / 'check.mjs'
    script.write_text((HERE / '_ai_sdk_check.mjs').read_text())

    def check(chunks: list[dict[str, Any]], messages: list[dict[str, Any]]) -> dict[str, Any]:
        payload = json.dumps({'chunks': chunks, 'messages': messages})
        ran = subprocess.run(
            [node, str(script)], input=payload, capture_output=True, text=True, timeout=120, cwd=folder
        )
        assert ran.returncode == 0, ran.stderr
        result: dict[str, Any] = json.loads(ran.stdout)
        return result

    return check
