"""`python -m benchmarks [NAME ...]`: run every `bench_*` module (or the named ones) and print ratios."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time

import benchmarks


def main(argv: list[str]) -> int:
    names = sorted(m.name for m in pkgutil.iter_modules(benchmarks.__path__) if m.name.startswith('bench_'))
    wanted = [a if a.startswith('bench_') else f'bench_{a}' for a in argv]
    unknown = sorted(set(wanted) - set(names))
    if unknown:
        print(f'unknown benchmark(s): {", ".join(unknown)}; available: {", ".join(names)}', file=sys.stderr)
        return 2
    start = time.perf_counter()
    for name in wanted or names:
        module = importlib.import_module(f'benchmarks.{name}')
        print(f'# {name}', flush=True)
        module.main()
        print(flush=True)
    print(f'# all benchmarks ran in {time.perf_counter() - start:.1f} s')
    return 0


if __name__ == '__main__':
    raise SystemExit(main(sys.argv[1:]))
