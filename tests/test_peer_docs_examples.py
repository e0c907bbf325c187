"""`tools/peer_docs_examples.py`: how it reads the `py` blocks of a docs page and makes them runnable."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from tools.peer_docs_examples import Example, examples_of, main, renamed, run_example

PAGE = """# A page

Some prose.

```python {title="first.py" test="skip"}
print('skipped')
```

!!! note
    ```py {title="second.py" requires="helper.py"}
    from helper import VALUE
    from pydantic_ai import Agent

    agent = Agent('openai:gpt-5.2')
    print(VALUE)
    ```

```py
x = "anthropic:claude-sonnet-4-5"
```

```bash
echo not python
```
"""


def test_blocks_are_read_with_their_attributes_and_dedented() -> None:
    found = examples_of('page.md', PAGE)
    assert [(e.title, e.skip, e.requires, e.line) for e in found] == [
        ('first.py', True, [], 5),
        ('second.py', False, ['helper.py'], 10),
        (None, False, [], 18),
    ]
    assert found[1].code.startswith('from helper import VALUE\n')
    assert found[1].name == 'page.md:10 (second.py)'


def test_real_model_names_become_the_test_model_and_imports_are_renamed_for_edgewise() -> None:
    code = examples_of('page.md', PAGE)[1].code
    assert "Agent('test')" in renamed(code, edgewise=False)
    assert 'from pydantic_ai import' in renamed(code, edgewise=False)
    assert 'from edgewise.agent import Agent' in renamed(code, edgewise=True)
    assert renamed('x = "anthropic:claude-sonnet-4-5"\n', edgewise=True) == "x = 'test'\n"


def test_an_example_runs_beside_the_blocks_it_requires(tmp_path: Path) -> None:
    helper = Example('page.md', 1, 'VALUE = 42\n', title='helper.py')
    user = Example('page.md', 5, 'from helper import VALUE\nassert VALUE == 42\n', requires=['helper.py'])
    failing = Example('page.md', 9, 'raise SystemExit("no")\n')
    by_title = {'helper.py': helper}
    assert run_example(sys.executable, user, by_title, tmp_path / 'r1', 60, {}) is None
    assert run_example(sys.executable, failing, by_title, tmp_path / 'r2', 60, {}) == 'no'


def test_pages_can_come_from_a_folder_such_as_an_unpacked_wheels_skill_references(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = tmp_path / 'references'
    docs.mkdir()
    (docs / 'A.md').write_text('```python\nprint("ok")\n```\n\n```python\nraise SystemExit(3)\n```\n')
    (docs / 'notes.txt').write_text('```python\nprint("not a page")\n```\n')
    report = tmp_path / 'out.json'
    python = sys.executable
    main(
        [
            '--docs-dir',
            str(docs),
            '--reference-python',
            python,
            '--edgewise-python',
            python,
            '--json',
            str(report),
            '*.md',
        ]
    )
    printed = capsys.readouterr().out
    assert f'docs examples ({docs}): 2 blocks' in printed
    assert '1 run on pydantic-ai, 1 of them on Edgewise' in printed
    rows = json.loads(report.read_text())
    assert [row['example'] for row in rows] == ['A.md:1', 'A.md:5']
