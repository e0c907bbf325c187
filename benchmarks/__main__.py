"""`python -m benchmarks [NAME ...]`: run every benchmark module (or the named ones) and print ratios.

`bench_*` modules measure against the 1.x anchors of this venv (the `bench` dependency group). `bench2_*` modules
measure against the 2.x anchors (pydantic-graph 2.x, pydantic-ai 2.x), which cannot be installed beside the 1.x
ones: they run in the interpreter named by `BENCH2_PYTHON` (`make bench` sets it to the `bench2` group's venv), or
in this one when it already has the 2.x anchors (that is how the subprocess runs them).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import pkgutil
import subprocess
import sys
import time

import benchmarks

_PREFIXES = ('bench_', 'bench2_')


def _qualify(name: str, names: list[str]) -> str:
    if name.startswith(_PREFIXES):
        return name
    return next((prefix + name for prefix in _PREFIXES if prefix + name in names), f'bench_{name}')


def _run_here(name: str) -> None:
    module = importlib.import_module(f'benchmarks.{name}')
    module.main()


def _has_2x_anchors() -> bool:
    try:
        return int(importlib.metadata.version('pydantic-graph').split('.')[0]) >= 2
    except importlib.metadata.PackageNotFoundError:
        return False


def _run_in_bench2(name: str) -> int:
    python = os.environ.get('BENCH2_PYTHON')
    if not python:
        print(
            f'{name} needs the 2.x anchors: run it with `make bench` (which installs them in .venv-bench2), or set '
            'BENCH2_PYTHON to an interpreter that has them.',
            file=sys.stderr,
        )
        return 2
    return subprocess.call([python, '-c', f'from benchmarks.__main__ import _run_here; _run_here({name!r})'])


def main(argv: list[str]) -> int:
    names = sorted(m.name for m in pkgutil.iter_modules(benchmarks.__path__) if m.name.startswith(_PREFIXES))
    wanted = [_qualify(a, names) for a in argv]
    unknown = sorted(set(wanted) - set(names))
    if unknown:
        print(f'unknown benchmark(s): {", ".join(unknown)}; available: {", ".join(names)}', file=sys.stderr)
        return 2
    start = time.perf_counter()
    status = 0
    for name in wanted or names:
        print(f'# {name}', flush=True)
        if name.startswith('bench2_') and not _has_2x_anchors():
            status = _run_in_bench2(name) or status
        else:
            _run_here(name)
        print(flush=True)
    print(f'# all benchmarks ran in {time.perf_counter() - start:.1f} s')
    return status


if __name__ == '__main__':
    raise SystemExit(main(sys.argv[1:]))
