"""`edgewise runs ...` driven as a subprocess against real SQLite stores (seeded by cli_project/seed.py)."""

from __future__ import annotations

import json
import re
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import pytest
from inline_snapshot import snapshot
from tests.graph.persistence.conftest import postgres_schema_url

from edgewise.graph import BaseNode, End, Graph, GraphRunContext
from edgewise.graph.cli import _message, main
from edgewise.graph.persistence.postgres import PostgresStatePersistence

if TYPE_CHECKING:
    from tests.graph.cli.conftest import Edgewise, RunningCommand

STORE = 'sqlite:///runs.db'


def _normal(text: str) -> str:
    """Times and durations replaced by placeholders, column padding collapsed."""
    text = re.sub(r'\d{4}-\d\d-\d\d \d\d:\d\d:\d\d', 'TIME', text)
    text = re.sub(r'\b\d+(\.\d+)? (us|ms|s)\b', 'DUR', text)
    return re.sub(r'(?<=\S) {2,}', '  ', text)


def test_list_shows_every_run_with_its_status(edgewise: Edgewise, seeded: Path) -> None:
    result = edgewise('runs', 'list', '--store', STORE, cwd=seeded)
    assert (result.code, _normal(result.out), result.err) == (
        0,
        snapshot("""\
RUN ID  GRAPH  STATUS  STARTED (UTC)  UPDATED (UTC)  STEPS
run-done  review_graph  finished  TIME  TIME  8
run-partial  review_graph  waiting  TIME  TIME  4
run-failed  failing_graph  failed  TIME  TIME  1
run-ticks  ticks_graph  waiting  TIME  TIME  1
"""),
        '',
    )


@pytest.mark.anyio
async def test_list_reads_the_last_snapshots_of_its_waiting_runs_at_once(
    seeded: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not a connection to the store per waiting run: a store of 10,000 such runs took seconds to list so."""
    from edgewise.graph.cli import _runs
    from edgewise.graph.cli._store import Store, open_store

    asked: list[list[str]] = []
    read_them = Store.last_snapshots

    async def last_snapshots(self: Store, run_ids: Any) -> Any:
        asked.append(list(run_ids))
        return await read_them(self, run_ids)

    def one_run_alone(self: Store, run_id: str) -> Any:
        raise AssertionError(f'run {run_id} was opened on its own')

    monkeypatch.setattr(Store, 'last_snapshots', last_snapshots)
    monkeypatch.setattr(Store, 'persistence', one_run_alone)
    assert await _runs.list_runs(open_store(f'sqlite:///{seeded / "runs.db"}')) == 0
    assert asked == [['run-partial', 'run-ticks']]
    assert 'run-ticks  ticks_graph  waiting' in _normal(capsys.readouterr().out)


def test_list_of_a_store_without_runs(edgewise: Edgewise, tmp_path: Path) -> None:
    (tmp_path / 'flows.py').write_text('')
    subprocess.run(
        [sys.executable, '-c', 'import sqlite3; sqlite3.connect("empty.db").execute("PRAGMA user_version = 0")'],
        cwd=tmp_path,
        check=True,
    )
    result = edgewise('runs', 'list', '--store', 'sqlite:///empty.db', cwd=tmp_path)
    assert result == (0, 'No runs in sqlite:///empty.db.\n', '')


def test_show_a_finished_run(edgewise: Edgewise, seeded: Path) -> None:
    result = edgewise('runs', 'show', 'run-done', '--store', STORE, cwd=seeded)
    assert (result.code, _normal(result.out), result.err) == (
        0,
        snapshot("""\
Run run-done in sqlite:///runs.db: finished, 8 snapshots

STEP  NODE  STATUS  STARTED (UTC)  DURATION  SNAPSHOT ID
1  Draft  success  TIME  DUR  Draft:0001
      state: title='Notes', revisions=0, comments=[]
2  Review  success  TIME  DUR  Review:0002
3  Revise(comment='round 1')  success  TIME  DUR  Revise:0003
4  Review  success  TIME  DUR  Review:0004
      state: title='Notes', revisions=1, comments=['round 1']
5  Revise(comment='round 2')  success  TIME  DUR  Revise:0005
6  Review  success  TIME  DUR  Review:0006
      state: title='Notes', revisions=2, comments=['round 1', 'round 2']
7  Publish  success  TIME  DUR  Publish:0007
end  End('Notes r2')  -  TIME  -  end:0008

Result: 'Notes r2'
"""),
        '',
    )


def test_show_a_failed_run_shows_its_error_and_how_to_retry(edgewise: Edgewise, seeded: Path) -> None:
    result = edgewise('runs', 'show', 'run-failed', '--store', STORE, cwd=seeded)
    lines = _normal(result.out).splitlines()
    retry = (
        'To run it again: `edgewise runs fork run-failed Explode:0013 --store sqlite:///runs.db` forks the run at the '
        'failed snapshot, which runs node Explode again (fork at an earlier snapshot to go back further); then resume '
        'the fork.'
    )
    assert (result.code, result.err) == (0, '')
    assert lines[:6] == [
        'Run run-failed in sqlite:///runs.db: failed, 1 snapshots',
        '',
        'STEP  NODE  STATUS  STARTED (UTC)  DURATION  SNAPSHOT ID',
        '1  Explode  error  TIME  DUR  Explode:0013',
        '      state: count=0',
        '',
    ]
    assert lines[6:8] == [
        'Failed: node Explode (step 1) raised RuntimeError: boom',
        '    Traceback (most recent call last):',
    ]
    assert lines[-3:] == ["        raise RuntimeError('boom')", '    RuntimeError: boom', retry]


def test_show_a_failed_run_of_an_older_store_without_its_error(edgewise: Edgewise, project: Path) -> None:
    with sqlite3.connect(project / 'runs.db') as conn:
        [(data,)] = conn.execute("SELECT data FROM edgewise_snapshots WHERE run_id = 'run-failed'").fetchall()
        stored = json.loads(data)
        del stored['error']
        conn.execute("UPDATE edgewise_snapshots SET data = ? WHERE run_id = 'run-failed'", (json.dumps(stored),))
    conn.close()
    result = edgewise('runs', 'show', 'run-failed', '--store', STORE, cwd=project)
    assert _normal(result.out).splitlines()[-1] == (
        'Failed: node Explode (step 1) raised; its error is in the logs of the process that ran it. To run it again: '
        '`edgewise runs fork run-failed Explode:0013 --store sqlite:///runs.db` forks the run at the failed snapshot, '
        'which runs node Explode again (fork at an earlier snapshot to go back further); then resume the fork.'
    )


def test_show_a_waiting_run_says_how_to_resume(edgewise: Edgewise, seeded: Path) -> None:
    result = edgewise('runs', 'show', 'run-partial', '--store', STORE, cwd=seeded)
    assert _normal(result.out).splitlines()[-1] == (
        'Waiting: node Review (step 4) runs next; continue with `edgewise runs resume run-partial MODULE:GRAPH '
        '--store sqlite:///runs.db`.'
    )


def test_show_an_unknown_run(edgewise: Edgewise, seeded: Path) -> None:
    result = edgewise('runs', 'show', 'run-nope', '--store', STORE, cwd=seeded)
    assert result == (
        1,
        '',
        "edgewise: error: No run 'run-nope' in sqlite:///runs.db (`edgewise runs list --store URL` lists them).\n",
    )


@pytest.mark.parametrize(
    ('url', 'message'),
    [
        (
            'runs.db',
            "Unsupported store URL 'runs.db': for the SQLite file 'runs.db', write sqlite:///runs.db (three slashes, "
            'then the path).',
        ),
        (
            'runs',
            "Unsupported store URL 'runs': use sqlite:///path.db, postgresql://..., or file:///path "
            '(a run.json, or a directory of them).',
        ),
        (
            'mysql://u:s3cret@db/runs',
            "Unsupported store URL 'mysql://u:***@db/runs': use sqlite:///path.db, postgresql://..., or "
            'file:///path (a run.json, or a directory of them).',
        ),
        (
            'sqlite://',
            "'sqlite://' names no database file: a SQLite store URL has three slashes before the path, as in "
            'sqlite:///runs.db (relative) or sqlite:////var/lib/runs.db (absolute).',
        ),
        ('file://host/x.json', "'file://host/x.json' names a file on host 'host'; only local files can be stores."),
        ('sqlite:///missing.db', "No store at sqlite:///missing.db: 'missing.db' does not exist."),
    ],
)
def test_bad_store_urls_are_one_line_errors(edgewise: Edgewise, seeded: Path, url: str, message: str) -> None:
    result = edgewise('runs', 'list', '--store', url, cwd=seeded)
    assert result == (1, '', f'edgewise: error: {message}\n')
    assert not (seeded / 'missing.db').exists()


def test_a_directory_given_as_a_sqlite_file(edgewise: Edgewise, tmp_path: Path) -> None:
    (tmp_path / 'runs.db').mkdir()
    result = edgewise('runs', 'list', '--store', 'sqlite:///runs.db', cwd=tmp_path)
    assert result == (
        1,
        '',
        "edgewise: error: SQLite file 'runs.db' is a directory, not a database file; give the path of a file (in it, "
        "say: 'runs.db/runs.db'). Nothing was changed.\n",
    )


def test_a_file_that_is_not_a_store(edgewise: Edgewise, tmp_path: Path) -> None:
    (tmp_path / 'notes.db').write_text('not a database')
    result = edgewise('runs', 'show', 'run-1', '--store', 'sqlite:///notes.db', cwd=tmp_path)
    assert (result.code, result.out, result.err.count('\n'), result.err.startswith('edgewise: error: ')) == (
        1,
        '',
        1,
        True,
    )
    assert "SQLite file 'notes.db'" in result.err


def test_resume_runs_to_the_end_showing_each_node(edgewise: Edgewise, project: Path) -> None:
    result = edgewise('runs', 'resume', 'run-partial', 'flows:review_graph', '--store', STORE, cwd=project)
    assert (result.code, _normal(result.out), result.err) == (
        0,
        snapshot("""\
[4] Review ... ok (DUR) -> Revise
[5] Revise ... ok (DUR) -> Review
[6] Review ... ok (DUR) -> Publish
[7] Publish ... ok (DUR) -> End
Finished: result 'Plan r2'
"""),
        '',
    )
    shown = edgewise('runs', 'show', 'run-partial', '--store', STORE, cwd=project)
    assert shown.out.splitlines()[0] == 'Run run-partial in sqlite:///runs.db: finished, 8 snapshots'


@pytest.mark.parametrize('end', ['\n', ''], ids=['line', 'no-line-break'])
def test_resume_progress_lines_survive_a_node_that_prints(edgewise: Edgewise, project: Path, end: str) -> None:
    env = {'TICK_SAYS': 'working on it', 'TICK_SAYS_END': end}
    result = edgewise('runs', 'resume', 'run-ticks', 'flows:ticks_graph', '--store', STORE, cwd=project, env=env)
    assert (result.code, result.err) == (0, '')
    assert _normal(result.out).splitlines() == [
        '[1] Tick ...',
        'working on it',
        '[1] Tick ... ok (DUR) -> Tick',
        '[2] Tick ...',
        'working on it',
        '[2] Tick ... ok (DUR) -> Tick',
        '[3] Tick ...',
        'working on it',
        '[3] Tick ... ok (DUR) -> End',
        'Finished: result 3',
    ]


def test_resume_stops_at_max_steps_and_resumes_later(edgewise: Edgewise, project: Path) -> None:
    first = edgewise(
        'runs', 'resume', 'run-ticks', 'flows:ticks_graph', '--store', STORE, '--max-steps', '1', cwd=project
    )
    second = edgewise('runs', 'resume', 'run-ticks', 'flows:ticks_graph', '--store', STORE, cwd=project)
    assert (_normal(first.out), first.code, _normal(second.out), second.code) == (
        '[1] Tick ... ok (DUR) -> Tick\n'
        'Stopped after 1 step (--max-steps): run run-ticks is resumable; Tick runs next.\n',
        0,
        '[2] Tick ... ok (DUR) -> Tick\n[3] Tick ... ok (DUR) -> End\nFinished: result 3\n',
        0,
    )


def test_resume_a_finished_run_is_an_error(edgewise: Edgewise, seeded: Path) -> None:
    result = edgewise('runs', 'resume', 'run-done', 'flows:review_graph', '--store', STORE, cwd=seeded)
    assert result == (1, '', "edgewise: error: Run run-done already finished, with result 'Notes r2'.\n")


def test_resume_a_failed_run_is_an_error(edgewise: Edgewise, seeded: Path) -> None:
    result = edgewise('runs', 'resume', 'run-failed', 'flows:failing_graph', '--store', STORE, cwd=seeded)
    assert result == (
        1,
        '',
        'edgewise: error: Run run-failed failed at node Explode; a failed run does not resume. Fork it at the failed '
        'snapshot, which runs node Explode again in a new run (edgewise runs fork run-failed Explode:0013 --store '
        'sqlite:///runs.db), or at an earlier one, and resume the fork.\n',
    )


def test_resume_with_a_node_that_raises(edgewise: Edgewise, project: Path) -> None:
    fork = edgewise(
        'runs', 'fork', 'run-failed', 'Explode:0013', '--store', STORE, '--new-id', 'run-retry', cwd=project
    )
    result = edgewise('runs', 'resume', 'run-retry', 'flows:failing_graph', '--store', STORE, cwd=project)
    assert (fork, result) == (
        (0, 'run-retry\n', ''),
        (
            1,
            '[1] Explode ... failed\n',
            'edgewise: error: Node Explode raised RuntimeError: boom; run run-retry is marked failed.\n',
        ),
    )


def test_resume_with_the_wrong_graph(edgewise: Edgewise, project: Path) -> None:
    result = edgewise('runs', 'resume', 'run-ticks', 'flows:review_graph', '--store', STORE, cwd=project)
    assert (result.code, result.out, result.err) == (
        1,
        '',
        "edgewise: error: Snapshot 'Tick:0014' of run 'run-ticks' in SQLite file 'runs.db' cannot be loaded: its "
        'node `Tick` is not a node of this graph (renamed or removed?). Nothing was changed; load it with the '
        'version of the graph that wrote it, or fork the run from an earlier snapshot.\n',
    )


def test_ctrl_c_stops_after_the_running_node(edgewise: Edgewise, project: Path) -> None:
    process = edgewise.start(
        'runs', 'resume', 'run-ticks', 'flows:ticks_graph', '--store', STORE, cwd=project, env={'TICK_SECONDS': '1'}
    )
    process.read_until('[1] Tick ...')
    process.send_signal(signal.SIGINT)
    result = process.finish()
    assert (result.code, _normal(result.out), result.err) == (
        130,
        '[1] Tick ... (stopping after this node; Ctrl-C again to interrupt it) ok (DUR) -> Tick\n'
        'Stopped: run run-ticks is resumable; Tick runs next.\n',
        '',
    )
    rest = edgewise('runs', 'resume', 'run-ticks', 'flows:ticks_graph', '--store', STORE, cwd=project)
    assert _normal(rest.out) == '[2] Tick ... ok (DUR) -> Tick\n[3] Tick ... ok (DUR) -> End\nFinished: result 3\n'


def test_second_ctrl_c_interrupts_the_node_which_runs_again_on_resume(edgewise: Edgewise, project: Path) -> None:
    process = edgewise.start(
        'runs', 'resume', 'run-ticks', 'flows:ticks_graph', '--store', STORE, cwd=project, env={'TICK_SECONDS': '30'}
    )
    process.read_until('[1] Tick ...')
    process.send_signal(signal.SIGINT)
    process.read_until('Ctrl-C again to interrupt it)')
    process.send_signal(signal.SIGINT)
    result = process.finish()
    assert (result.code, result.out, result.err) == (
        130,
        '[1] Tick ... (stopping after this node; Ctrl-C again to interrupt it) interrupted\n'
        'Interrupted: run run-ticks is resumable; the interrupted node runs again on the next '
        '`edgewise runs resume run-ticks flows:ticks_graph --store sqlite:///runs.db`.\n',
        '',
    )
    shown = edgewise('runs', 'show', 'run-ticks', '--store', STORE, cwd=project)
    assert 'Waiting: node Tick (step 1) runs next' in shown.out
    rest = edgewise('runs', 'resume', 'run-ticks', 'flows:ticks_graph', '--store', STORE, cwd=project)
    assert _normal(rest.out).splitlines() == [
        '[1] Tick ... ok (DUR) -> Tick',
        '[2] Tick ... ok (DUR) -> Tick',
        '[3] Tick ... ok (DUR) -> End',
        'Finished: result 3',
    ]


def _wait_for_file(path: Path, process: RunningCommand) -> None:
    """Wait until the command's node creates `path`; fail at once if the command ends first."""
    while not path.exists():
        assert process.process.poll() is None, f'the command ended before {path.name} appeared'
        time.sleep(0.01)


def test_ctrl_c_stops_after_a_node_that_blocks(edgewise: Edgewise, project: Path, tmp_path: Path) -> None:
    env = {'TICK_BLOCK_DIR': str(tmp_path)}
    process = edgewise.start('runs', 'resume', 'run-ticks', 'flows:ticks_graph', '--store', STORE, cwd=project, env=env)
    _wait_for_file(tmp_path / 'entered-0', process)  # the node blocks in `time.sleep`
    process.send_signal(signal.SIGINT)
    process.read_until('Ctrl-C again to interrupt it)')
    (tmp_path / 'release').touch()
    result = process.finish()
    assert (result.code, _normal(result.out), result.err) == (
        130,
        '[1] Tick ... (stopping after this node; Ctrl-C again to interrupt it) ok (DUR) -> Tick\n'
        'Stopped: run run-ticks is resumable; Tick runs next.\n',
        '',
    )


def test_second_ctrl_c_interrupts_a_node_that_blocks(edgewise: Edgewise, project: Path, tmp_path: Path) -> None:
    env = {'TICK_BLOCK_DIR': str(tmp_path)}
    process = edgewise.start('runs', 'resume', 'run-ticks', 'flows:ticks_graph', '--store', STORE, cwd=project, env=env)
    _wait_for_file(tmp_path / 'entered-0', process)  # the node blocks until `release` exists: never, here
    process.send_signal(signal.SIGINT)
    process.read_until('Ctrl-C again to interrupt it)')
    process.send_signal(signal.SIGINT)
    result = process.finish()
    assert (result.code, result.out, result.err) == (
        130,
        '[1] Tick ... (stopping after this node; Ctrl-C again to interrupt it) interrupted\n'
        'Interrupted: run run-ticks is resumable; the interrupted node runs again on the next '
        '`edgewise runs resume run-ticks flows:ticks_graph --store sqlite:///runs.db`.\n',
        '',
    )
    shown = edgewise('runs', 'show', 'run-ticks', '--store', STORE, cwd=project)
    assert 'Waiting: node Tick (step 1) runs next' in shown.out


def test_a_crashed_run_shows_interrupted_and_resume_runs_its_node_again(edgewise: Edgewise, project: Path) -> None:
    process = edgewise.start(
        'runs', 'resume', 'run-ticks', 'flows:ticks_graph', '--store', STORE, cwd=project, env={'TICK_SECONDS': '30'}
    )
    process.read_until('[1] Tick ...')
    while_running = edgewise('runs', 'show', 'run-ticks', '--store', STORE, cwd=project)
    listed_running = edgewise('runs', 'list', '--store', STORE, cwd=project)
    process.send_signal(signal.SIGKILL)
    assert process.finish().code == -signal.SIGKILL
    shown = edgewise('runs', 'show', 'run-ticks', '--store', STORE, cwd=project)
    listed = edgewise('runs', 'list', '--store', STORE, cwd=project)
    assert while_running.out.splitlines()[0] == 'Run run-ticks in sqlite:///runs.db: running, 1 snapshots'
    assert _normal(while_running.out).splitlines()[-1] == (
        'Running: node Tick (step 1) is running in a live process; when that process ends, the run can be resumed '
        'from where it stopped.'
    )
    assert 'run-ticks  ticks_graph  running' in _normal(listed_running.out)
    assert shown.out.splitlines()[0] == 'Run run-ticks in sqlite:///runs.db: waiting, 1 snapshots'
    assert _normal(shown.out).splitlines()[-1] == (
        'Interrupted: node Tick (step 1) was running in a process that has ended; `edgewise runs resume '
        'run-ticks MODULE:GRAPH --store sqlite:///runs.db` runs it again.'
    )
    assert 'run-ticks  ticks_graph  waiting' in _normal(listed.out)
    rest = edgewise('runs', 'resume', 'run-ticks', 'flows:ticks_graph', '--store', STORE, cwd=project)
    assert _normal(rest.out).splitlines() == [
        '[1] Tick ... ok (DUR) -> Tick',
        '[2] Tick ... ok (DUR) -> Tick',
        '[3] Tick ... ok (DUR) -> End',
        'Finished: result 3',
    ]


def test_resume_while_another_process_runs_it(edgewise: Edgewise, project: Path) -> None:
    process = edgewise.start(
        'runs', 'resume', 'run-ticks', 'flows:ticks_graph', '--store', STORE, cwd=project, env={'TICK_SECONDS': '30'}
    )
    process.read_until('[1] Tick ...')
    second = edgewise('runs', 'resume', 'run-ticks', 'flows:ticks_graph', '--store', STORE, cwd=project)
    process.send_signal(signal.SIGINT)
    process.read_until('Ctrl-C again to interrupt it)')
    process.send_signal(signal.SIGINT)
    assert process.finish().code == 130
    assert (second.code, second.out, second.err.count('\n')) == (1, '', 1)
    assert second.err.startswith("edgewise: error: Run 'run-ticks' is in progress elsewhere: process "), second.err


def test_unexpected_errors_come_with_their_type() -> None:
    error = ExceptionGroup('task group', [ValueError('bad   value')])
    assert (_message(error), _message(KeyError('k')), _message(RuntimeError())) == (
        'ValueError: bad value',
        "'k'",
        'RuntimeError:',
    )


def test_an_error_of_several_lines_keeps_its_line_breaks(edgewise: Edgewise, tmp_path: Path) -> None:
    # psycopg's errors say what failed on one line, and what to check on the next.
    result = edgewise('runs', 'list', '--store', 'postgresql://postgres@127.0.0.1:1/test', cwd=tmp_path)
    assert result.code == 1
    assert result.err.splitlines() == [
        "edgewise: error: PostgreSQL database 'postgresql://postgres@127.0.0.1:1/test' failed: connection failed: "
        'connection to server at "127.0.0.1", port 1 failed: Connection refused',
        '  Is the server running on that host and accepting TCP/IP connections?',
    ]


def test_fork_prints_the_new_run_id_and_leaves_the_original(edgewise: Edgewise, project: Path) -> None:
    fork = edgewise('runs', 'fork', 'run-done', 'Review:0004', '--store', STORE, cwd=project)
    new_id = fork.out.strip()
    shown = edgewise('runs', 'show', new_id, '--store', STORE, cwd=project)
    original = edgewise('runs', 'show', 'run-done', '--store', STORE, cwd=project)
    assert (fork.code, re.fullmatch(r'run-[0-9a-f]{20}', new_id) is not None, fork.err) == (0, True, '')
    assert _normal(shown.out).splitlines()[-1] == (
        f'Waiting: node Review (step 4) runs next; continue with `edgewise runs resume {new_id} MODULE:GRAPH '
        '--store sqlite:///runs.db`.'
    )
    assert original.out.splitlines()[0] == 'Run run-done in sqlite:///runs.db: finished, 8 snapshots'


def test_fork_at_an_unknown_snapshot(edgewise: Edgewise, seeded: Path) -> None:
    result = edgewise('runs', 'fork', 'run-done', 'Review:9999', '--store', STORE, cwd=seeded)
    assert result == (
        1,
        '',
        "edgewise: error: Run run-done has no snapshot 'Review:9999'; `edgewise runs show run-done --store "
        'sqlite:///runs.db` lists its snapshot ids.\n',
    )


def test_file_store_of_one_run_and_a_directory_of_runs(edgewise: Edgewise, tmp_path: Path) -> None:
    (tmp_path / 'runs').mkdir()
    snapshots: list[dict[str, Any]] = [
        {
            'state': {'count': 0, 'meta': {'tags': ['a']}},
            'node': {'node_id': 'Tick'},
            'start_ts': '2026-01-02T03:04:05Z',
            'duration': 0.25,
            'status': 'success',
            'kind': 'node',
            'id': 'Tick:1',
        },
        {'state': {'count': 1}, 'result': {'data': 1}, 'ts': '2026-01-02T03:04:06Z', 'kind': 'end', 'id': 'end:2'},
    ]
    (tmp_path / 'runs' / 'tick-run.json').write_text(json.dumps(snapshots))
    (tmp_path / 'runs' / 'empty.json').write_text('[]')
    listing = edgewise('runs', 'list', '--store', f'file://{tmp_path}/runs', cwd=tmp_path)
    shown = edgewise('runs', 'show', 'tick-run', '--store', f'file://{tmp_path}/runs/tick-run.json', cwd=tmp_path)
    wrong = edgewise('runs', 'show', 'other', '--store', f'file://{tmp_path}/runs/tick-run.json', cwd=tmp_path)
    assert (listing.code, _normal(listing.out)) == (
        0,
        'RUN ID  GRAPH  STATUS  STARTED (UTC)  UPDATED (UTC)  STEPS\ntick-run  -  finished  TIME  TIME  2\n',
    )
    assert _normal(shown.out) == snapshot(f"""\
Run tick-run in file://{tmp_path}/runs/tick-run.json: finished, 2 snapshots

STEP  NODE  STATUS  STARTED (UTC)  DURATION  SNAPSHOT ID
1  Tick  success  TIME  DUR  Tick:1
      state: count=0, meta={{'tags': ['a']}}
end  End(1)  -  TIME  -  end:2
      state: count=1

Result: 1
""")
    bad = tmp_path / 'bad.json'
    bad.write_text(json.dumps([{**snapshots[0], 'node': {'no_id': 1}}]))
    unreadable = edgewise('runs', 'show', 'bad', '--store', f'file://{bad}', cwd=tmp_path)
    assert (unreadable.code, unreadable.err.startswith("edgewise: error: Snapshot 'Tick:1' of run 'bad'")) == (1, True)
    assert wrong.err == (
        f"edgewise: error: No run 'other' in 'file://{tmp_path}/runs/tick-run.json': that file holds run "
        "'tick-run' only (a file holds one run, named after the file). Use the directory as the store URL to reach "
        'other runs.\n'
    )


@pytest.fixture
def postgres_dsn() -> Iterator[str]:
    """A store URL on the PostgreSQL server whose tables live in a schema of this test's own."""
    with postgres_schema_url() as url:
        yield url


@dataclass
class Ping(BaseNode[None, None, str]):
    async def run(self, ctx: GraphRunContext) -> End[str]:
        return End('pong')


ping_graph = Graph(nodes=[Ping], name='ping_graph', auto_instrument=False)


def test_postgres_store_lists_and_shows_runs(edgewise: Edgewise, postgres_dsn: str, tmp_path: Path) -> None:
    run_id = f'cli-{uuid.uuid4().hex}'

    async def store_run() -> None:
        async with PostgresStatePersistence[None, str](postgres_dsn, run_id) as persistence:
            await ping_graph.run(Ping(), persistence=persistence)

    anyio.run(store_run)
    listing = edgewise('runs', 'list', '--store', postgres_dsn, cwd=tmp_path)
    shown = edgewise('runs', 'show', run_id, '--store', postgres_dsn, cwd=tmp_path)
    assert (listing.code, listing.err, shown.code, shown.err) == (0, '', 0, '')
    assert re.search(rf'^{run_id}  ping_graph  finished  ', _normal(listing.out), re.MULTILINE)
    assert _normal(shown.out).splitlines()[-1] == "Result: 'pong'"


def test_edgewise_alone_prints_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    out, err = capsys.readouterr()
    assert (out.startswith('usage: edgewise'), 'runs' in out, err) == (True, True, '')


def test_version(edgewise: Edgewise, tmp_path: Path) -> None:
    from importlib.metadata import version

    assert edgewise('--version', cwd=tmp_path) == (0, f'edgewise {version("edgewise-graph")}\n', '')


@pytest.mark.parametrize(
    'command',
    [(), ('mermaid',), ('runs',), ('runs', 'list'), ('runs', 'show'), ('runs', 'resume'), ('runs', 'fork')],
)
def test_help_everywhere(capsys: pytest.CaptureFixture[str], command: tuple[str, ...]) -> None:
    # Argument parsing ends before anything is imported or opened: tested in this process, for speed.
    with pytest.raises(SystemExit) as exc_info:
        main([*command, '--help'])
    out, err = capsys.readouterr()
    assert (exc_info.value.code, out.startswith(f'usage: edgewise {" ".join(command)}'.rstrip()), err) == (0, True, '')


@pytest.mark.parametrize(
    ('args', 'message'),
    [
        (('runs',), 'edgewise runs: error: the following arguments are required: COMMAND (see `edgewise runs --help`)'),
        (
            ('runs', 'show', 'x'),
            'edgewise runs show: error: the following arguments are required: --store '
            '(see `edgewise runs show --help`)',
        ),
        (
            ('runs', 'resume', 'x', 'm:g', '--store', STORE, '--max-steps', '-1'),
            'edgewise runs resume: error: argument --max-steps: -1 is negative (see `edgewise runs resume --help`)',
        ),
        (
            ('runs', 'resume', 'x', 'm:g', '--store', STORE, '--max-steps', 'many'),
            "edgewise runs resume: error: argument --max-steps: 'many' is not a whole number "
            '(see `edgewise runs resume --help`)',
        ),
    ],
)
def test_malformed_arguments_are_one_line_errors(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    with pytest.raises(SystemExit) as exc_info:
        main(list(args))
    assert (exc_info.value.code, *capsys.readouterr()) == (2, '', message + '\n')


def test_malformed_arguments_in_a_subprocess(edgewise: Edgewise, tmp_path: Path) -> None:
    assert edgewise('runs', 'list', cwd=tmp_path) == (
        2,
        '',
        'edgewise runs list: error: the following arguments are required: --store (see `edgewise runs list --help`)\n',
    )
