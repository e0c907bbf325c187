"""Regenerate tests/compat/expected/ by running every scenario under the reference install.

Usage: `.venv/bin/python -m tests.compat.regenerate [scenario ...]` (env `ANCHOR_PYTHON` picks the interpreter)

Each scenario in tests/compat/scenarios/ is written against Edgewise. This script rewrites its imports
(`edgewise.graph` -> `pydantic_graph`, `edgewise.agent` -> `pydantic_ai`), runs it with the reference
interpreter (pydantic-graph and pydantic-ai-slim 1.107.10; default `/tmp/anchor/bin/python`), normalizes
its output and writes it to expected/<scenario>.txt. Not a test module: pytest does not collect it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from ._normalize import normalize

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
SCENARIOS = HERE / 'scenarios'
EXPECTED = HERE / 'expected'


def to_reference(source: str) -> str:
    """The scenario's source with the reference libraries' imports."""
    return source.replace('edgewise.graph', 'pydantic_graph').replace('edgewise.agent', 'pydantic_ai')


def run_reference(python: str, scenario: Path) -> str:
    """Run one scenario under the reference interpreter and return its normalized output."""
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / scenario.name
        script.write_text(to_reference(scenario.read_text()))
        env = {**os.environ, 'PYTHONPATH': str(ROOT)}
        done = subprocess.run(
            [python, str(script)], cwd=tmp, env=env, capture_output=True, text=True, timeout=120, check=False
        )
    if done.returncode != 0:
        raise SystemExit(f'{scenario.name} failed under the reference:\n{done.stderr}')
    return normalize(done.stdout)


def main(argv: list[str]) -> None:
    """Regenerate the expected outputs of the scenarios named in `argv` (all by default)."""
    python = os.environ.get('ANCHOR_PYTHON', '/tmp/anchor/bin/python')
    names = argv
    scenarios = sorted(p for p in SCENARIOS.glob('*.py') if not p.name.startswith('_'))
    for scenario in scenarios:
        if names and scenario.stem not in names:
            continue
        (EXPECTED / f'{scenario.stem}.txt').write_text(run_reference(python, scenario))
        print(f'wrote expected/{scenario.stem}.txt')


if __name__ == '__main__':
    main(sys.argv[1:])
