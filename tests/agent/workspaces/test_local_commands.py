"""Commands of `LocalWorkspaceBackend`, as real subprocesses: results, environment, timeouts, cancellation and the
output limit. A timeout is exercised with a command that would sleep far longer than its small timeout; nothing
asserts how long anything took."""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

import anyio
import pytest

from edgewise.agent.workspaces import (
    CommandResult,
    LocalWorkspaceBackend,
    SupportsCommands,
    SupportsFilesystem,
    SupportsRealpath,
    Workspace,
    WorkspaceBackend,
    WorkspaceError,
    WorkspaceOutputLimitError,
    WorkspaceRef,
    WorkspaceTimeoutError,
    WorkspaceUnavailableError,
)
from edgewise.agent.workspaces.local import MAX_OUTPUT_BYTES

pytestmark = pytest.mark.anyio


def _gone(pid: int) -> bool:
    """Whether process `pid` no longer runs (a zombie nobody has reaped yet counts as gone)."""
    try:
        state = Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state == 'Z'


async def _wait_for_file(path: Path) -> str:
    """The contents of `path` once a command has written it (bounded: the command writes it first thing)."""
    file = anyio.Path(path)
    with anyio.fail_after(30):
        while not await file.exists() or not (await file.read_text()).strip():  # noqa: ASYNC110 (a file, no event)
            await anyio.sleep(0.01)
    return (await file.read_text()).strip()


async def test_the_backend_has_every_protocol(root: Path) -> None:
    backend = LocalWorkspaceBackend(root)
    for protocol in (WorkspaceBackend, SupportsCommands, SupportsFilesystem, SupportsRealpath):
        assert isinstance(backend, protocol)


async def test_a_result_reports_exit_code_stdout_and_stderr(root: Path) -> None:
    result = await LocalWorkspaceBackend(root).run('echo out; echo err >&2; exit 3', shell=True)
    assert result == CommandResult(exit_code=3, stdout='out\n', stderr='err\n')


async def test_a_missing_program_exits_127_and_a_non_executable_one_126(root: Path) -> None:
    backend = LocalWorkspaceBackend(root)
    assert await backend.run(['no-such-program-here']) == CommandResult(
        exit_code=127, stdout='', stderr='no-such-program-here: command not found\n'
    )
    (root / 'script').write_text('#!/bin/sh\necho hi\n')
    result = await backend.run([str(root / 'script')])
    assert result.exit_code == 126


async def test_a_signal_death_is_an_exit_code(root: Path) -> None:
    assert (await LocalWorkspaceBackend(root).run('kill -TERM $$', shell=True)).exit_code == 128 + 15


async def test_argv_items_are_passed_literally(root: Path) -> None:
    result = await LocalWorkspaceBackend(root).run(['printf', '%s|', '$HOME', '*', 'a b'])
    assert result.stdout == '$HOME|*|a b|'


async def test_the_command_form_must_match_shell(root: Path) -> None:
    backend = LocalWorkspaceBackend(root)
    with pytest.raises(TypeError, match='shell=True'):
        await backend.run('echo hi')
    with pytest.raises(TypeError, match='shell=False'):
        await backend.run(['echo', 'hi'], shell=True)


async def test_bad_timeouts_and_an_empty_argv_are_refused(root: Path) -> None:
    workspace = Workspace(LocalWorkspaceBackend(root))
    for timeout in (0, -1, float('nan'), float('inf'), True):
        with pytest.raises(ValueError, match='timeout'):
            await workspace.run(['true'], timeout=timeout)
    with pytest.raises(ValueError, match='must not be empty'):
        await workspace.run([])


async def test_stdin_is_at_end_of_file(root: Path) -> None:
    assert (await LocalWorkspaceBackend(root).run(['cat'])).stdout == ''


async def test_undecodable_output_bytes_become_replacement_characters(root: Path) -> None:
    result = await LocalWorkspaceBackend(root).run(r"printf 'a\377b'; printf '\376' >&2", shell=True)
    assert (result.stdout, result.stderr) == ('a\ufffdb', '\ufffd')


async def test_large_output_comes_back_whole(root: Path) -> None:
    result = await LocalWorkspaceBackend(root).run(
        'head -c 3000000 /dev/zero | tr "\\0" x; echo; echo e >&2', shell=True
    )
    assert result.stdout == 'x' * 3_000_000 + '\n'
    assert result.stderr == 'e\n'


async def test_output_past_the_limit_stops_the_command(root: Path) -> None:
    with pytest.raises(WorkspaceOutputLimitError, match='10 MiB') as caught:
        await LocalWorkspaceBackend(root).run(['sh', '-c', 'echo start >&2; exec yes'])
    assert caught.value.limit == MAX_OUTPUT_BYTES
    assert caught.value.stdout.startswith('y\ny\n')
    assert len(caught.value.stdout) <= 64 * 1024
    assert caught.value.stderr == 'start\n'
    assert isinstance(caught.value, WorkspaceError)


async def test_commands_start_in_the_working_dir_which_is_canonical(root: Path, tmp_path: Path) -> None:
    (tmp_path / 'alias').symlink_to(root)
    backend = LocalWorkspaceBackend(tmp_path / 'alias')
    assert await backend.working_dir() == str(root)
    assert (await backend.run(['pwd'])).stdout == f'{root}\n'
    assert backend.ref == WorkspaceRef(provider='local', id=str(tmp_path / 'alias'))


async def test_a_relative_or_home_working_dir_is_made_absolute_at_construction(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(root.parent)
    backend = LocalWorkspaceBackend('work')
    monkeypatch.chdir('/')
    assert backend.ref.id == str(root)
    assert await backend.working_dir() == str(root)
    monkeypatch.setenv('HOME', str(root.parent))
    assert LocalWorkspaceBackend('~/work').ref.id == str(root)


async def test_run_with_cwd_starts_there(root: Path) -> None:
    (root / 'sub dir').mkdir()
    (root / 'file').write_text('x')
    workspace = Workspace(LocalWorkspaceBackend(root))
    assert (await workspace.run(['pwd'], cwd='sub dir')).stdout == f'{root}/sub dir\n'
    assert (await workspace.run('pwd', shell=True, cwd='sub dir')).stdout == f'{root}/sub dir\n'
    with pytest.raises(FileNotFoundError):
        await workspace.run(['pwd'], cwd='missing')
    with pytest.raises(NotADirectoryError):
        await workspace.run(['pwd'], cwd='file')
    with pytest.raises(TypeError):
        await workspace.run('pwd', cwd='sub dir')


async def test_only_path_home_and_locale_are_inherited_and_env_goes_on_top(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv('EDGEWISE_TEST_SECRET', 'hunter2')
    backend = LocalWorkspaceBackend(root, env={'A': 'backend', 'B': 'backend'})
    result = await backend.run(['env'], env={'B': 'call'})
    variables = dict(line.split('=', 1) for line in result.stdout.splitlines())
    assert 'EDGEWISE_TEST_SECRET' not in variables
    assert (variables['A'], variables['B'], variables['PATH']) == ('backend', 'call', os.environ['PATH'])
    assert set(variables) <= {'A', 'B', 'PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'PWD', 'SHLVL', '_'}
    assert 'hunter2' not in repr(LocalWorkspaceBackend(root, env={'TOKEN': 'hunter2'}))


async def test_a_timeout_raises_and_kills_the_process_group(root: Path) -> None:
    backend = LocalWorkspaceBackend(root)
    with pytest.raises(WorkspaceTimeoutError, match=r'timeout of 0\.5s') as caught:
        await backend.run('sleep 600 & echo $! > child.pid; echo started; wait', shell=True, timeout=0.5)
    assert isinstance(caught.value, TimeoutError)
    assert caught.value.stdout == 'started\n'
    child = int((root / 'child.pid').read_text())
    with anyio.fail_after(30):  # killed by then; the kernel may take a moment to show it
        while not _gone(child):  # noqa: ASYNC110 (the kernel's process table, no event)
            await anyio.sleep(0.01)


async def test_cancellation_stops_the_command_and_its_children(root: Path) -> None:
    backend = LocalWorkspaceBackend(root)
    async with anyio.create_task_group() as group:
        group.start_soon(partial(backend.run, 'sleep 600 & echo $! > child.pid; wait', shell=True))
        child = int(await _wait_for_file(root / 'child.pid'))
        group.cancel_scope.cancel()
    with anyio.fail_after(30):
        while not _gone(child):  # noqa: ASYNC110 (the kernel's process table, no event)
            await anyio.sleep(0.01)


async def test_a_background_child_holding_the_output_does_not_hold_up_the_command(root: Path) -> None:
    # The child keeps stdout open for 600 s; the command returns after the short drain grace instead.
    result = await LocalWorkspaceBackend(root).run('sleep 600 & echo $! > child.pid; echo done', shell=True, timeout=60)
    assert result == CommandResult(exit_code=0, stdout='done\n', stderr='')
    os.kill(int((root / 'child.pid').read_text()), 9)  # a detached job outlives the command: ours to stop


async def test_a_missing_directory_is_an_unavailable_environment(root: Path) -> None:
    backend = LocalWorkspaceBackend(root / 'never-made')
    assert backend.ref == WorkspaceRef(provider='local', id=str(root / 'never-made'))  # no I/O to build it
    for operation in (backend.working_dir(), backend.run(['true']), backend.exists(str(root))):
        with pytest.raises(WorkspaceUnavailableError, match='does not exist'):
            await operation


async def test_a_command_that_deletes_the_directory_leaves_it_unavailable(root: Path) -> None:
    backend = LocalWorkspaceBackend(root)
    with pytest.raises(WorkspaceUnavailableError):
        await backend.run(['rm', '-rf', str(root)])


async def test_a_backend_attached_by_ref_reaches_the_same_directory(root: Path) -> None:
    first = LocalWorkspaceBackend(root)
    await first.write_bytes(str(root / 'shared'), b'hello')
    again = LocalWorkspaceBackend(first.ref.id)
    assert again.ref == first.ref
    assert await again.read_bytes(str(root / 'shared')) == b'hello'


async def test_the_backend_takes_only_absolute_paths(root: Path) -> None:
    with pytest.raises(ValueError, match='absolute'):
        await LocalWorkspaceBackend(root).read_bytes('relative')


async def test_concurrent_writes_of_one_file_never_interleave(root: Path) -> None:
    backend = LocalWorkspaceBackend(root)
    path = str(root / 'f')
    contents = [bytes([65 + n]) * 200_000 for n in range(8)]
    await backend.write_bytes(path, contents[0])
    seen: list[bytes] = []

    async def read() -> None:
        seen.append(await backend.read_bytes(path))

    async with anyio.create_task_group() as group:
        for data in contents:
            group.start_soon(backend.write_bytes, path, data)
            group.start_soon(read)
    assert all(data in contents for data in seen)
    assert await backend.read_bytes(path) in contents
