"""Timing helpers shared by the benchmark modules: interleaved repeats, medians, ratio tables."""

from __future__ import annotations

import gc
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import anyio

__all__ = ('Case', 'Result', 'import_times', 'measure', 'measure_async', 'report')


@dataclass
class Case:
    """One contender of a comparison: a name and a callable that does `units` units of work."""

    name: str
    fn: Callable[[], object] | Callable[[], Awaitable[object]]
    units: int = 1
    """How many units (transitions, round trips, chunks, ...) one call does; times are reported per unit."""
    is_async: bool = False


@dataclass
class Result:
    """The median time per unit of each case of one benchmark."""

    title: str
    unit: str
    per_unit: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def ratio(self, name: str, anchor: str) -> float:
        return self.per_unit[name] / self.per_unit[anchor]


def _time_once(case: Case) -> float:
    gc.collect()
    start = time.perf_counter()
    if case.is_async:
        anyio.run(case.fn)  # type: ignore[arg-type]
    else:
        case.fn()
    return (time.perf_counter() - start) / case.units


def measure(title: str, unit: str, cases: Sequence[Case], repeats: int = 5, warmup: int = 1) -> Result:
    """Run every case `repeats` times, interleaved (A B C A B C ...), and keep the median per unit."""
    for _ in range(warmup):
        for case in cases:
            _time_once(case)
    samples: dict[str, list[float]] = {case.name: [] for case in cases}
    for _ in range(repeats):
        for case in cases:
            samples[case.name].append(_time_once(case))
    return Result(title, unit, {name: statistics.median(times) for name, times in samples.items()})


def measure_async(title: str, unit: str, cases: Sequence[Case], repeats: int = 5, warmup: int = 1) -> Result:
    """`measure` for async callables: each call runs in its own event loop (asyncio)."""
    for case in cases:
        case.is_async = True
    return measure(title, unit, cases, repeats=repeats, warmup=warmup)


def import_times(statements: Sequence[str], repeats: int = 9) -> dict[str, float]:
    """Median wall time of `python -c "<statement>"` per statement, the statements interleaved in each repeat.

    Every side runs from compiled bytecode, as an installed wheel does: the anchors' site-packages come with `.pyc`
    files, but an editable checkout has none when `PYTHONDONTWRITEBYTECODE` is set, and compiling its sources in
    every process would be measured as import time. The processes share a bytecode cache in a temporary directory
    (`PYTHONPYCACHEPREFIX`, so no `__pycache__` lands in the checkout), filled by one unmeasured run of each statement.
    """
    times: dict[str, list[float]] = {statement: [] for statement in statements}
    with tempfile.TemporaryDirectory(prefix='edgewise-bench-pyc-') as cache:
        env = {key: value for key, value in os.environ.items() if key != 'PYTHONDONTWRITEBYTECODE'}
        env['PYTHONPYCACHEPREFIX'] = cache
        for statement in statements:
            subprocess.run([sys.executable, '-c', statement], check=True, env=env)
        for _ in range(repeats):
            for statement in statements:
                start = time.perf_counter()
                subprocess.run([sys.executable, '-c', statement], check=True, env=env)
                times[statement].append(time.perf_counter() - start)
    return {statement: statistics.median(samples) for statement, samples in times.items()}


def _fmt(seconds: float) -> str:
    if seconds >= 1e-3:
        return f'{seconds * 1e3:.3f} ms'
    return f'{seconds * 1e6:.2f} us'


def report(result: Result, anchor: str | None = None) -> str:
    """A small table: each case's time per unit and, when an anchor is named, its ratio to the anchor."""
    lines = [f'## {result.title}  (per {result.unit})']
    for name, value in result.per_unit.items():
        line = f'  {name:<44} {_fmt(value):>12}'
        if anchor is not None and name != anchor:
            line += f'   {result.ratio(name, anchor):6.3f}x {anchor}'
        lines.append(line)
    lines.extend(f'  note: {note}' for note in result.notes)
    return '\n'.join(lines)
