"""How the `edgewise runs` commands name and order child runs (`cli._tree`), for shapes the stores' tests do not
produce."""

from __future__ import annotations

from datetime import datetime, timezone

from edgewise.graph.cli._tree import child_kind, fork_summary, nest
from edgewise.graph.persistence import RunInfo


def _run(run_id: str, second: int) -> RunInfo:
    moment = datetime(2026, 1, 1, 0, 0, second, tzinfo=timezone.utc)
    return RunInfo(run_id=run_id, graph_name=None, status='finished', created=moment, updated=moment, snapshot_count=1)


def test_a_branch_of_a_fan_out_below_a_child_run_is_named_without_its_step() -> None:
    assert child_kind('Fork:9/2', None) == 'branch 2'
    assert child_kind('Fork:9/2', {'Fork:3': 4}) == 'branch 2'
    assert child_kind('Fork:3/2', {'Fork:3': 4}) == 'branch 2 of step 4'
    assert child_kind('payment', {'Fork:3': 4}) == 'subgraph run'


def test_a_fork_of_one_branch() -> None:
    assert fork_summary({'branches': [{'node_id': 'Work'}], 'join': 'Collect'}) == 'Fork(1 branch -> Collect)'


def test_child_runs_in_the_order_they_started_branches_in_branch_order() -> None:
    runs = [_run('r', 0), _run('r/Fork:1/10', 3), _run('r/late', 5), _run('r/Fork:1/9', 2), _run('r/early', 1)]
    assert [(run.run_id, depth) for run, depth in nest(runs)] == [
        ('r', 0),
        ('r/early', 1),
        ('r/Fork:1/9', 1),
        ('r/Fork:1/10', 1),
        ('r/late', 1),
    ]
