"""Every ```python block in docs/*.md and README.md runs.

The blocks of one file run in order, in one module namespace (so later blocks use what earlier ones
defined), in a fresh temporary working directory. Async examples call `anyio.run(...)` themselves.
"""

from __future__ import annotations
import __future__

import re
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
DOC_FILES = sorted([*ROOT.glob('docs/*.md'), ROOT / 'README.md'])
_FUTURE_FLAGS = __future__.annotations.compiler_flag
_BLOCK = re.compile(r'^```python[^\n]*\n(.*?)^```[ \t]*$', re.DOTALL | re.MULTILINE)


def python_blocks(text: str) -> list[tuple[int, str]]:
    """Each ```python block of a markdown text, with the line number its code starts on."""
    return [(text.count('\n', 0, m.start(1)) + 1, m.group(1)) for m in _BLOCK.finditer(text)]


def test_python_blocks_are_found_with_their_line_numbers() -> None:
    text = 'intro\n```python\nx = 1\n```\n\n```text\nnot code\n```\n```python title="b"\ny = x + 1\n```\n'
    assert python_blocks(text) == [(3, 'x = 1\n'), (10, 'y = x + 1\n')]


@pytest.mark.parametrize(
    'path', [p for p in DOC_FILES if '```python' in p.read_text()], ids=lambda p: str(p.relative_to(ROOT))
)
def test_doc_python_blocks_run(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = python_blocks(path.read_text())
    monkeypatch.chdir(tmp_path)
    # A real module, so that dataclasses, pydantic and type hints resolve names in it as in a file.
    module = types.ModuleType('_doc_' + re.sub(r'\W', '_', path.stem))
    module.__file__ = str(path)
    monkeypatch.setitem(sys.modules, module.__name__, module)
    future_flags = 0
    for line, code in blocks:
        # Pad with blank lines so that tracebacks point at the right line of the markdown file.
        compiled = compile('\n' * (line - 1) + code, str(path), 'exec', flags=future_flags, dont_inherit=True)
        # A `from __future__ import ...` in one block holds for the blocks after it, as in one file.
        future_flags |= compiled.co_flags & _FUTURE_FLAGS
        exec(compiled, module.__dict__)
