"""Run pydantic-ai's documentation examples on pydantic-ai and on Edgewise, and count what runs on each.

The second measure of issue 28 (the first is `../shared/peer/agent_suite.sh`): every `py` block of the chosen
docs pages of a pydantic-ai tag, run as a script with the imports renamed and the test model in place of real
model names, must run on Edgewise wherever it runs on pydantic-ai of the same tag.

Nothing of pydantic-ai's is kept: the pages are read from a fetched mirror at run time (`git show TAG:docs/...`)
into a temporary folder that is removed afterwards.

    python tools/peer_docs_examples.py --mirror PATH --reference-python VENV/bin/python \\
        --edgewise-python .venv/bin/python [--tag v2.33.0] [--jobs 2] [--json out.json] [PAGE ...]

pydantic-ai's released wheels carry no docs pages, but the skill references they ship
(`pydantic_ai/.agents/skills/*/references/*.md`) are markdown with `python` blocks too: `--docs-dir FOLDER` reads
the pages from an unpacked wheel's folder instead of the mirror (e.g. 2.68's, with `--reference-python` a Python
that has pydantic-ai 2.68, such as the bench's second venv).

A block runs when its script exits with status 0 within the timeout. Blocks marked `test="skip"` in their fence
are left out (pydantic-ai's own docs test skips them too); a block with `requires="a.py,b.py"` runs beside the
blocks it names (by their `title`), written as the modules it imports, as pydantic-ai's docs test does.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_PAGES = [
    'agent.md', 'tools.md', 'tools-advanced.md', 'output.md', 'dependencies.md', 'testing.md', 'message-history.md',
    'multi-agent-applications.md', 'deferred-tools.md', 'toolsets.md', 'hooks.md', 'capabilities/*.md',
]  # fmt: skip

FENCE = re.compile(r'^(?P<indent>[ \t]*)```(?:py|python)(?:[ \t]+\{(?P<info>[^}]*)\})?[ \t]*$')
ATTRIBUTE = re.compile(r'(\w+)="([^"]*)"')
PROVIDERS = (
    'openai', 'openai-chat', 'openai-responses', 'anthropic', 'google', 'google-gla', 'google-vertex', 'gemini',
    'groq', 'mistral', 'cohere', 'bedrock', 'deepseek', 'grok', 'xai', 'huggingface', 'ollama', 'openrouter',
    'gateway', 'azure', 'vertexai', 'cerebras', 'fireworks', 'together', 'heroku', 'moonshotai', 'github',
)  # fmt: skip
MODEL_NAME = re.compile(r"""(['"])(?:""" + '|'.join(re.escape(p) for p in PROVIDERS) + r"""):[\w./-]+\1""")
FAKE_KEYS = dict.fromkeys(
    ('OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GROQ_API_KEY', 'MISTRAL_API_KEY',
     'CO_API_KEY', 'DEEPSEEK_API_KEY', 'XAI_API_KEY', 'PYDANTIC_AI_GATEWAY_API_KEY'),
    'fake-key-for-docs-examples',
)  # fmt: skip


@dataclass
class Example:
    """One `py` block of a docs page."""

    page: str
    line: int
    code: str
    title: str | None = None
    requires: list[str] = field(default_factory=list)
    skip: bool = False

    @property
    def name(self) -> str:
        return f'{self.page}:{self.line}' + (f' ({self.title})' if self.title else '')


def examples_of(page: str, text: str) -> list[Example]:
    """The `py` blocks of a markdown page, dedented, with their fence attributes."""
    found: list[Example] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        match = FENCE.match(lines[index])
        if match is None:
            index += 1
            continue
        indent, attributes = match['indent'], dict(ATTRIBUTE.findall(match['info'] or ''))
        start, index = index, index + 1
        body: list[str] = []
        while index < len(lines) and lines[index].strip() != '```':
            body.append(lines[index][len(indent) :] if lines[index].startswith(indent) else lines[index])
            index += 1
        index += 1
        found.append(
            Example(
                page=page,
                line=start + 1,
                code=textwrap.dedent('\n'.join(body)) + '\n',
                title=attributes.get('title'),
                requires=[r.strip() for r in attributes.get('requires', '').split(',') if r.strip()],
                skip=attributes.get('test') == 'skip',
            )
        )
    return found


def renamed(code: str, edgewise: bool) -> str:
    """A block's code as it runs: the test model for real model names and, on Edgewise, the imports renamed."""
    code = MODEL_NAME.sub("'test'", code)
    if edgewise:
        code = code.replace('pydantic_ai', 'edgewise.agent').replace('pydantic_graph', 'edgewise.graph')
    return code


def run_example(
    python: str, example: Example, by_title: dict[str, Example], folder: Path, timeout: float, env: dict[str, str]
) -> str | None:
    """None if the example ran (status 0), or the last line of what it printed to stderr. It runs in a folder of
    its own, beside the blocks it requires, written as the modules their titles name."""
    folder.mkdir(parents=True)
    edgewise = folder.name.startswith('e')
    for name in example.requires:
        if name in by_title:
            (folder / name).write_text(renamed(by_title[name].code, edgewise))
    path = folder / (example.title or 'example.py')
    path.write_text(renamed(example.code, edgewise))
    try:
        done = subprocess.run(
            [python, str(path)], cwd=folder, capture_output=True, text=True, timeout=timeout, env=env, check=False
        )
    except subprocess.TimeoutExpired:
        return f'timed out after {timeout:g} s'
    if done.returncode == 0:
        return None
    tail = [line for line in done.stderr.splitlines() if line.strip()]
    return tail[-1] if tail else f'exit status {done.returncode}'


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('pages', nargs='*', default=DEFAULT_PAGES, help='docs pages (globs under docs/)')
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument('--mirror', help='the bare mirror of github:pydantic/pydantic-ai')
    source.add_argument('--docs-dir', help='read the pages (globs) from this folder instead of a mirror')
    parser.add_argument('--tag', default='v2.33.0')
    parser.add_argument('--reference-python', required=True, help='a Python with pydantic-ai of the tag installed')
    parser.add_argument('--edgewise-python', required=True, help='a Python with Edgewise installed')
    parser.add_argument('--edgewise-path', default='', help='PYTHONPATH for the Edgewise runs (its src folders)')
    parser.add_argument('--jobs', type=int, default=2)
    parser.add_argument('--timeout', type=float, default=60.0)
    parser.add_argument('--json', help='write every example and its outcomes here')
    args = parser.parse_args(argv)
    args.reference_python = os.path.abspath(args.reference_python)
    args.edgewise_python = os.path.abspath(args.edgewise_python)

    examples: list[Example] = []
    if args.docs_dir:
        root = Path(args.docs_dir)
        for path in sorted({p for g in args.pages for p in root.glob(g) if p.is_file()}):
            examples += examples_of(str(path.relative_to(root)), path.read_text())
        args.tag = str(root)
    else:
        listed = subprocess.run(
            ['git', '-C', args.mirror, 'ls-tree', '-r', '--name-only', args.tag, 'docs/'],
            capture_output=True, text=True, check=True,
        ).stdout.split()  # fmt: skip
        pages = sorted({p for p in listed for g in args.pages if Path(p).match(f'docs/{g}')})
        for page in pages:
            text = subprocess.run(
                ['git', '-C', args.mirror, 'show', f'{args.tag}:{page}'], capture_output=True, text=True, check=True
            ).stdout
            examples += examples_of(page.removeprefix('docs/'), text)
    by_title = {e.title: e for e in examples if e.title}
    chosen = [e for e in examples if not e.skip]

    folder = Path(tempfile.mkdtemp(prefix='peer-docs-'))
    base_env = {**os.environ, **FAKE_KEYS, 'PYTHONDONTWRITEBYTECODE': '1'}
    base_env.pop('PYTHONPATH', None)
    edgewise_env = {**base_env, **({'PYTHONPATH': args.edgewise_path} if args.edgewise_path else {})}

    def outcome(item: tuple[int, Example]) -> tuple[str | None, str | None]:
        number, example = item
        reference = run_example(args.reference_python, example, by_title, folder / f'r{number}', args.timeout, base_env)
        edgewise = run_example(
            args.edgewise_python, example, by_title, folder / f'e{number}', args.timeout, edgewise_env
        )
        return reference, edgewise

    try:
        with ThreadPoolExecutor(args.jobs) as pool:
            outcomes = list(pool.map(outcome, enumerate(chosen)))
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    per_page: dict[str, list[int]] = {}
    rows = []
    for example, (reference, edgewise) in zip(chosen, outcomes, strict=True):
        counts = per_page.setdefault(example.page.split(':')[0], [0, 0, 0])
        counts[0] += 1
        counts[1] += reference is None
        counts[2] += reference is None and edgewise is None
        rows.append({'example': example.name, 'reference': reference, 'edgewise': edgewise})
        if reference is None and edgewise is not None:
            print(f'FAILS ON EDGEWISE ONLY  {example.name}: {edgewise}')
    print(f'\n{"page":<45}{"blocks":>8}{"run on pydantic-ai":>20}{"of those on Edgewise":>22}')
    for page, (total, on_reference, on_both) in sorted(per_page.items()):
        print(f'{page:<45}{total:>8}{on_reference:>20}{on_both:>22}')
    total = len(chosen)
    on_reference = sum(r is None for r, _ in outcomes)
    on_both = sum(r is None and e is None for r, e in outcomes)
    only_edgewise = sum(r is not None and e is None for r, e in outcomes)
    print(
        f'\ndocs examples ({args.tag}): {total} blocks ({len(examples) - total} marked test="skip" left out); '
        f'{on_reference} run on pydantic-ai, {on_both} of them on Edgewise; {only_edgewise} run on Edgewise only'
    )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0 if on_both == on_reference else 1


if __name__ == '__main__':
    sys.exit(main())
