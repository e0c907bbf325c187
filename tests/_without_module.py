"""Run Python code in a fresh interpreter in which a module cannot be imported, as when it is not installed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]


def run_without(module: str, code: str) -> subprocess.CompletedProcess[str]:
    """`python -c code` from the repository's root, with `import <module>` failing; its output captured."""
    blocked = f'import sys; sys.modules[{module!r}] = None\n'
    return subprocess.run([sys.executable, '-c', blocked + code], cwd=ROOT, capture_output=True, text=True, timeout=120)
