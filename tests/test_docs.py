"""Every ```python block in docs/*.md and README.md runs, and prints what the page shows under it.

The blocks of one file run in order, in one module namespace (so later blocks use what earlier ones
defined), in a fresh temporary working directory. Async examples call `anyio.run(...)` themselves.

A ```text block that follows a ```python block with nothing but blank lines between them is that block's
printed output: what the block writes to `sys.stdout` must equal it. The comparison ignores whitespace at
the end of each line and blank lines at the start and end of the whole output; everything else (leading
indentation, blank lines inside, the order of lines) must match exactly, except that `...` in the shown
output stands for any text within one line (for what differs from run to run: process ids, host names).
A python block with no text block
right after it may print anything. A mismatch fails with a unified diff of shown against printed output.
Only ```python blocks run: ```py blocks are shown but not run (they need a network service or a tool that
the tests do not have).
"""

from __future__ import annotations
import __future__

import contextlib
import difflib
import io
import re
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
DOC_FILES = sorted([*ROOT.glob('docs/*.md'), ROOT / 'README.md'])
_FUTURE_FLAGS = __future__.annotations.compiler_flag
# A fenced block: its info string (language and options), its body, and the blank lines after it, so that a
# block directly following another can be recognised.
_FENCE = re.compile(r'^```([^\n]*)\n(.*?)^```[ \t]*\n?', re.DOTALL | re.MULTILINE)


@dataclass(frozen=True)
class PythonBlock:
    """A ```python block of a markdown page.

    Attributes:
        line: the line number (1-based) the code starts on.
        code: the code.
        output: the body of the ```text block right after it, or None when it has none.
    """

    line: int
    code: str
    output: str | None = None


def python_blocks(text: str) -> list[PythonBlock]:
    """Each ```python block of a markdown text, with its line number and the output shown under it."""
    fences = list(_FENCE.finditer(text))
    blocks = []
    for i, m in enumerate(fences):
        if m.group(1).split(maxsplit=1)[:1] != ['python']:
            continue
        output = None
        if i + 1 < len(fences):
            following = fences[i + 1]
            if following.group(1).strip() == 'text' and not text[m.end() : following.start()].strip():
                output = following.group(2)
        blocks.append(PythonBlock(text.count('\n', 0, m.start(2)) + 1, m.group(2), output))
    return blocks


def normalise_output(text: str) -> str:
    """The output with trailing whitespace of each line and surrounding blank lines removed."""
    return '\n'.join(line.rstrip() for line in text.splitlines()).strip('\n')


def output_mismatch(shown: str, printed: str) -> str | None:
    """A unified diff of the shown output against the printed one, or None when they match."""
    expected, actual = normalise_output(shown), normalise_output(printed)
    pattern = '[^\\n]*'.join(re.escape(part) for part in expected.split('...'))
    if re.fullmatch(pattern, actual):
        return None
    diff = difflib.unified_diff(expected.splitlines(), actual.splitlines(), 'shown in the docs', 'printed', lineterm='')
    return '\n'.join(diff)


def test_python_blocks_are_found_with_their_line_numbers() -> None:
    text = 'intro\n```python\nx = 1\n```\n\n```text\nnot code\n```\n```python title="b"\ny = x + 1\n```\n'
    assert python_blocks(text) == [PythonBlock(3, 'x = 1\n', 'not code\n'), PythonBlock(10, 'y = x + 1\n')]


def test_a_text_block_is_output_only_right_after_a_python_block() -> None:
    text = (
        '```python\na = 1\n```\nSome prose.\n```text\nnot output\n```\n'
        '```py\nshown only\n```\n```text\nnot output either\n```\n'
        '```python\nb = 2\n```\n\n\n```text\n  out\n```\n'
        '```python\nc = 3\n```\n```bash\nmake\n```\n```text\nnot output\n```\n'
    )
    assert python_blocks(text) == [
        PythonBlock(2, 'a = 1\n'),
        PythonBlock(15, 'b = 2\n', '  out\n'),
        PythonBlock(23, 'c = 3\n'),
    ]


def test_outputs_match_up_to_trailing_whitespace_and_surrounding_blank_lines() -> None:
    assert output_mismatch('\na  \n\n  b\n\n', 'a\n\n  b\t\n') is None
    assert output_mismatch('a\n  b\n', 'a\nb\n') == '--- shown in the docs\n+++ printed\n@@ -1,2 +1,2 @@\n a\n-  b\n+b'
    assert output_mismatch('a\nb\n', 'a\n\nb\n') is not None
    assert output_mismatch('a\n', '') is not None


def test_an_ellipsis_in_the_shown_output_stands_for_any_text_within_a_line() -> None:
    assert output_mismatch("process ... on host '...'\n", "process 10714 on host 'vm'\n") is None
    assert output_mismatch('a ... b\n', 'a  b\n') is None
    assert output_mismatch('a ... b\n', 'a x\ny b\n') is not None
    assert output_mismatch('a ...\n', 'b x\n') is not None


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
    mismatches = []
    for block in blocks:
        # Pad with blank lines so that tracebacks point at the right line of the markdown file.
        compiled = compile(
            '\n' * (block.line - 1) + block.code, str(path), 'exec', flags=future_flags, dont_inherit=True
        )
        # A `from __future__ import ...` in one block holds for the blocks after it, as in one file.
        future_flags |= compiled.co_flags & _FUTURE_FLAGS
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compiled, module.__dict__)
        if block.output is not None:
            diff = output_mismatch(block.output, printed.getvalue())
            if diff is not None:
                mismatches.append(f'{path.name}, the block at line {block.line}:\n{diff}')
    # Every block runs before failing, so one run reports every wrong output of the page.
    assert not mismatches, '\n\n'.join(mismatches)


def test_the_readme_runs_the_edgewise_command_from_the_venv() -> None:
    # `make install` puts the console script in .venv/bin, which is not on a newcomer's PATH.
    readme = (ROOT / 'README.md').read_text()
    commands = [
        line
        for block in re.findall(r'```bash\n(.*?)```', readme, re.DOTALL)
        for line in block.splitlines()
        if 'edgewise ' in line and not line.startswith('#')
    ]
    assert commands
    assert all(line.startswith('.venv/bin/edgewise ') for line in commands), commands
    assert Path(sys.executable).with_name('edgewise').exists()  # where `make install` put it
    local = readme.index('--renderer local` needs')
    assert 'mmdc' in readme[local : local + 400]
    assert 'Chromium' in readme[local : local + 400]
