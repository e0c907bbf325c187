"""Spans through logfire: one per graph run and one per node run, unless `auto_instrument=False`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from logfire.testing import CaptureLogfire

from edgewise.graph import BaseStatePersistence, Graph

from ._counting import Check, Counter, Deps, Increment

pytestmark = pytest.mark.anyio


def _span_names(capfire: CaptureLogfire) -> list[str]:
    spans = capfire.exporter.exported_spans_as_dict()
    return [span['name'] for span in sorted(spans, key=lambda s: s['start_time'])]


async def test_a_run_and_each_node_get_a_span(
    capfire: CaptureLogfire, persistence: BaseStatePersistence[Any, Any]
) -> None:
    traced = Graph(nodes=(Increment, Check), name='traced')
    await traced.run(Increment(), state=Counter(), deps=Deps(target=1), persistence=persistence)
    assert _span_names(capfire) == ['run graph traced', 'run node Increment', 'run node Check']
    spans = sorted(capfire.exporter.exported_spans_as_dict(), key=lambda s: s['start_time'])
    messages = [span['attributes']['logfire.msg'] for span in spans]
    assert messages == ['run graph traced', 'run node Increment', 'run node Check']
    run_span, *node_spans = spans
    assert all(span['parent']['span_id'] == run_span['context']['span_id'] for span in node_spans)
    assert [span['attributes']['node_id'] for span in node_spans] == ['Increment', 'Check']


async def test_iter_from_persistence_gets_a_run_span(
    capfire: CaptureLogfire, persistence: BaseStatePersistence[Any, Any]
) -> None:
    traced = Graph(nodes=(Increment, Check), name='resumed')
    await traced.initialize(Check(), persistence, state=Counter(count=1))
    async with traced.iter_from_persistence(persistence, deps=Deps(target=1)) as run:
        async for _ in run:
            pass
    spans = sorted(capfire.exporter.exported_spans_as_dict(), key=lambda s: s['start_time'])
    assert [span['attributes']['logfire.msg'] for span in spans] == ['run graph resumed', 'run node Check']


async def test_no_spans_when_auto_instrument_is_off(
    capfire: CaptureLogfire, persistence: BaseStatePersistence[Any, Any]
) -> None:
    quiet = Graph(nodes=(Increment, Check), auto_instrument=False)
    await quiet.run(Increment(), state=Counter(), deps=Deps(target=1), persistence=persistence)
    async with quiet.iter(Check(), state=Counter(count=1), deps=Deps(target=1), persistence=persistence) as run:
        async for _ in run:
            pass
    assert capfire.exporter.exported_spans_as_dict() == []


async def test_a_failing_node_span_records_the_exception(capfire: CaptureLogfire) -> None:
    traced = Graph(nodes=(Increment, Check), name='failing')
    with pytest.raises(AttributeError):
        await traced.run(Increment(), state=None, deps=Deps(target=1))  # type: ignore[arg-type]
    spans = sorted(capfire.exporter.exported_spans_as_dict(), key=lambda s: s['start_time'])
    assert [span['attributes']['logfire.msg'] for span in spans] == ['run graph failing', 'run node Increment']
    assert [span['attributes']['logfire.level_num'] for span in spans] == [17, 17]


def test_without_logfire_runs_work_and_trace_nothing() -> None:
    # A fresh interpreter in which `import logfire` fails, as when it is not installed.
    code = (
        'import sys; sys.modules["logfire"] = None\n'
        'from edgewise.graph import _instrument\n'
        'from tests.graph._counting import Counter, Deps, Increment, counting_graph\n'
        'print(_instrument.TRACING, counting_graph.run_sync(Increment(), state=Counter(), deps=Deps(2)).output)\n'
    )
    root = Path(__file__).parents[2]
    done = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True, cwd=root)
    assert (done.stdout, done.stderr) == ('False 2\n', '')


async def test_a_given_span_replaces_the_run_span(capfire: CaptureLogfire) -> None:
    import logfire

    traced = Graph(nodes=(Increment, Check), name='traced')
    with logfire.span('outer'):
        async with traced.iter(Check(), state=Counter(count=1), deps=Deps(1), span=logfire.span('mine')) as run:
            async for _ in run:
                pass
    spans = sorted(capfire.exporter.exported_spans_as_dict(), key=lambda s: s['start_time'])
    assert [span['name'] for span in spans] == ['outer', 'mine', 'run node Check']


async def test_a_given_span_replaces_the_run_span_when_resuming(
    capfire: CaptureLogfire, persistence: BaseStatePersistence[Any, Any]
) -> None:
    import logfire

    traced = Graph(nodes=(Increment, Check), name='traced')
    await traced.initialize(Check(), persistence, state=Counter(count=1))
    async with traced.iter_from_persistence(persistence, deps=Deps(1), span=logfire.span('resumed')) as run:
        async for _ in run:
            pass
    spans = sorted(capfire.exporter.exported_spans_as_dict(), key=lambda s: s['start_time'])
    assert [span['name'] for span in spans] == ['resumed', 'run node Check']


def test_an_unconfigured_logfire_does_not_warn() -> None:
    # logfire is installed but the application never called `logfire.configure()`.
    code = (
        'from tests.graph._counting import Counter, Deps, Increment, counting_graph\n'
        'print(counting_graph.run_sync(Increment(), state=Counter(), deps=Deps(2)).output)\n'
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith('LOGFIRE')}
    root = Path(__file__).parents[2]
    done = subprocess.run(
        [sys.executable, '-W', 'error', '-c', code], capture_output=True, text=True, cwd=root, env=env
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, '2\n', '')
