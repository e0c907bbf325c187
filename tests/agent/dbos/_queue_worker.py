"""A DBOS worker process taking both graph and agent runs: `python -m tests.agent.dbos._queue_worker URL`.

Runs until killed; prints `ready` once it takes runs (see tests/graph/dbos/_worker.py).
"""

from __future__ import annotations

import sys

from edgewise.graph.dbos import DBOSWorker
from tests.agent.dbos import _queue_workload  # noqa: F401 - registers the agent's workflow before DBOS launches
from tests.graph.dbos._workload import QUEUE


def main(url: str) -> None:
    config = {'name': 'edgewise-tests', 'system_database_url': url, 'log_level': 'WARNING'}
    with DBOSWorker(config, queues=[QUEUE], recovery_interval=0.3) as worker:  # type: ignore[arg-type]
        print('ready', flush=True)
        worker.wait()


if __name__ == '__main__':
    main(sys.argv[1])
