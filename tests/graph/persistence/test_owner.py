"""Owner records: who holds a run, and whether that process is still alive."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from dataclasses import replace

from edgewise.graph.persistence._owner import Owner, current_owner, owner_is_alive


def test_this_process_is_alive_and_its_records_round_trip() -> None:
    owner = current_owner()

    assert (owner.host, owner.pid) == (socket.gethostname(), os.getpid())
    assert owner_is_alive(owner)
    assert Owner.from_json(owner.to_json()) == owner
    assert owner.describe() == f'process {os.getpid()} on host {socket.gethostname()!r} (started {owner.started})'


def test_an_exited_process_is_gone() -> None:
    child = subprocess.run([sys.executable, '-c', 'import os; print(os.getpid())'], capture_output=True, text=True)
    owner = replace(current_owner(), pid=int(child.stdout))

    assert not owner_is_alive(owner)


def test_a_killed_process_not_yet_reaped_is_gone() -> None:
    child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])
    try:
        child.kill()
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # a zombie until reaped
        assert not owner_is_alive(replace(current_owner(), pid=child.pid))
    finally:
        child.wait()


def test_a_live_process_is_alive_unless_its_pid_was_reused() -> None:
    child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])
    try:
        with open(f'/proc/{child.pid}/stat') as f:
            ticks = f.read().rsplit(')', 1)[1].split()[19]
        owner = replace(current_owner(), pid=child.pid, started=f'ticks:{ticks}')
        assert owner_is_alive(owner)
        assert not owner_is_alive(replace(owner, started='ticks:1'))
    finally:
        child.kill()
        child.wait()


def test_this_pid_with_another_start_is_an_earlier_process() -> None:
    assert not owner_is_alive(replace(current_owner(), started='ticks:1'))


def test_a_process_on_another_host_counts_as_alive() -> None:
    assert owner_is_alive(replace(current_owner(), host='elsewhere', pid=1))


def test_unreadable_records_are_no_owner() -> None:
    assert Owner.from_json(None) is None
    assert Owner.from_json('') is None
    assert Owner.from_json('{"host": "h"}') is None
    assert Owner.from_json('not json') is None
