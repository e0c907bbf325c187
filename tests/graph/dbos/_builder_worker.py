"""A DBOS worker process that runs the builder graph of tests/graph/builder/_crash_points.py:
`python -m tests.graph.dbos._builder_worker SYSTEM_DATABASE_URL`.

Runs until killed; prints `ready` once it takes runs. `EDGEWISE_CRASH_POINT` says where its steps stop for good
(see `_crash_points`), `EDGEWISE_CRASH_LOG` where they log, `DBOS__VMID` its executor id.
"""

from __future__ import annotations

import sys

from edgewise.graph.dbos import DBOSGraph, DBOSQueue, DBOSWorker

from ..builder._crash_points import graph

dbos_points = DBOSGraph(graph, name='crash-points')
QUEUE = DBOSQueue('edgewise-builder-test', polling_interval=0.1)


def main(url: str) -> None:
    config = {'name': 'edgewise-builder-tests', 'system_database_url': url, 'log_level': 'WARNING'}
    with DBOSWorker(config, queues=[QUEUE], recovery_interval=0.3) as worker:  # type: ignore[arg-type]
        print('ready', flush=True)
        worker.wait()


if __name__ == '__main__':
    main(sys.argv[1])
