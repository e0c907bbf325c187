"""A DBOS worker process for the tests: `python -m tests.graph.dbos._worker SYSTEM_DATABASE_URL`.

Runs until killed; prints `ready` once it takes runs. `EDGEWISE_TEST_EFFECTS` names the effects table's
database; `DBOS__VMID`, when set, is the executor id (a restarted worker then recovers its own runs).
"""

from __future__ import annotations

import sys

from edgewise.graph.dbos import DBOSWorker

from ._workload import QUEUE


def main(url: str) -> None:
    config = {'name': 'edgewise-tests', 'system_database_url': url, 'log_level': 'WARNING'}
    with DBOSWorker(config, queues=[QUEUE], recovery_interval=0.3) as worker:  # type: ignore[arg-type]
        print('ready', flush=True)
        worker.wait()


if __name__ == '__main__':
    main(sys.argv[1])
