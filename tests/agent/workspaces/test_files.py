"""File operations of a `Workspace`, on the local backend's native file access and through the shell of a backend
that only runs commands: the same behaviour either way."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from edgewise.agent.workspaces import FileEntry, Workspace

pytestmark = pytest.mark.anyio


async def test_bytes_round_trip_and_a_write_makes_missing_parents(workspace: Workspace, root: Path) -> None:
    data = bytes(range(256)) * 4 + b'\n\n'
    await workspace.write_bytes('deep/er/file.bin', data)
    assert (root / 'deep/er/file.bin').read_bytes() == data
    assert await workspace.read_bytes('deep/er/file.bin') == data


async def test_a_large_file_round_trips_whole(workspace: Workspace) -> None:
    # Past the shell's 64 KiB write chunk, so the transfer takes several commands.
    data = os.urandom(300 * 1024)
    await workspace.write_bytes('big.bin', data)
    assert await workspace.read_bytes('big.bin') == data


async def test_an_empty_file_round_trips(workspace: Workspace) -> None:
    await workspace.write_bytes('empty', b'')
    assert await workspace.read_bytes('empty') == b''
    assert await workspace.stat('empty') == FileEntry(
        name='empty', path=await workspace.resolve('empty'), is_dir=False, size=0
    )


async def test_text_helpers_encode_and_decode(workspace: Workspace, root: Path) -> None:
    await workspace.write_text('note.txt', 'héllo\n')
    assert (root / 'note.txt').read_bytes() == 'héllo\n'.encode()
    assert await workspace.read_text('note.txt') == 'héllo\n'
    (root / 'latin.txt').write_bytes(b'\xff')
    with pytest.raises(UnicodeDecodeError):
        await workspace.read_text('latin.txt')


async def test_a_write_replaces_the_contents(workspace: Workspace, root: Path) -> None:
    (root / 'f').write_text('a long first version')
    await workspace.write_text('f', 'short')
    assert (root / 'f').read_text() == 'short'


async def test_exists_stat_and_list_dir(workspace: Workspace, root: Path) -> None:
    (root / 'd').mkdir()
    (root / 'd/b.txt').write_text('12345')
    (root / 'd/a').mkdir()
    assert await workspace.exists('d/b.txt')
    assert not await workspace.exists('d/missing')
    assert await workspace.stat('d') == FileEntry(name='d', path=str(root / 'd'), is_dir=True, size=None)
    assert await workspace.stat('d/b.txt') == FileEntry(name='b.txt', path=str(root / 'd/b.txt'), is_dir=False, size=5)
    entries = await workspace.list_dir('d')
    assert [(e.name, e.path, e.is_dir) for e in entries] == [
        ('a', str(root / 'd/a'), True),
        ('b.txt', str(root / 'd/b.txt'), False),
    ]


async def test_make_dir_makes_parents_and_is_idempotent(workspace: Workspace, root: Path) -> None:
    await workspace.make_dir('x/y/z')
    await workspace.make_dir('x/y/z')
    assert (root / 'x/y/z').is_dir()


async def test_commands_and_files_share_one_filesystem(workspace: Workspace) -> None:
    await workspace.run('printf from-shell > made.txt', shell=True)
    assert await workspace.read_text('made.txt') == 'from-shell'
    await workspace.write_text('written.txt', 'from-api')
    assert (await workspace.run(['cat', 'written.txt'])).stdout == 'from-api'


async def test_missing_paths_raise_file_not_found(workspace: Workspace) -> None:
    for operation in (workspace.read_bytes, workspace.stat, workspace.list_dir, workspace.remove):
        with pytest.raises(FileNotFoundError):
            await operation('missing')


async def test_directories_and_files_in_the_wrong_place_raise_the_builtin_errors(
    workspace: Workspace, root: Path
) -> None:
    (root / 'd').mkdir()
    (root / 'f').write_text('x')
    with pytest.raises(IsADirectoryError):
        await workspace.read_bytes('d')
    with pytest.raises(NotADirectoryError):
        await workspace.list_dir('f')
    with pytest.raises(IsADirectoryError):
        await workspace.write_bytes('d', b'x')
    with pytest.raises(NotADirectoryError):
        await workspace.write_bytes('f/child', b'x')
    with pytest.raises(FileExistsError):
        await workspace.make_dir('f')
    with pytest.raises(NotADirectoryError):
        await workspace.make_dir('f/sub')
    assert (root / 'f').read_text() == 'x'


async def test_remove_deletes_a_file_a_tree_and_a_link_but_not_its_target(workspace: Workspace, root: Path) -> None:
    (root / 'tree/sub').mkdir(parents=True)
    (root / 'tree/sub/f').write_text('x')
    (root / 'file').write_text('x')
    (root / 'target').mkdir()
    (root / 'link').symlink_to(root / 'target')
    for name in ('tree', 'file', 'link'):
        await workspace.remove(name)
    assert os.listdir(root) == ['target']


async def test_remove_refuses_the_working_dir_and_its_ancestors(workspace: Workspace, root: Path) -> None:
    (root / 'keep').write_text('x')
    for path in ('.', '..', str(root), str(root.parent), '/', 'sub/../'):
        with pytest.raises(ValueError, match='working directory'):
            await workspace.remove(path)
    assert (root / 'keep').exists()


async def test_realpath_sees_where_dot_dot_and_symlinks_lead(workspace: Workspace, root: Path, tmp_path: Path) -> None:
    outside = tmp_path / 'outside'
    outside.mkdir()
    (root / 'escape').symlink_to(outside)
    (root / 'inner').mkdir()
    (root / 'relative').symlink_to('inner')
    assert await workspace.realpath('escape/secret') == str(outside.resolve() / 'secret')
    assert await workspace.realpath('../work/inner') == str(root / 'inner')
    assert await workspace.realpath('relative/new/name') == str(root / 'inner/new/name')
    # `..` after a link climbs from the link's target, as the kernel does: out of the working directory here.
    assert await workspace.realpath('escape/..') == str(outside.resolve().parent)
    # `resolve` only joins and normalizes text: it confines nothing, which is what `realpath` is for.
    assert await workspace.resolve('escape/../inner') == str(root / 'inner')
    assert await workspace.resolve('../../x') == str(root.parent.parent / 'x')


async def test_a_realpath_check_keeps_a_path_inside_the_working_dir(workspace: Workspace, root: Path) -> None:
    (root / 'escape').symlink_to('/')
    (root / 'ok').mkdir()

    async def inside(path: str) -> bool:
        real, base = await workspace.realpath(path), await workspace.working_dir()
        return real == base or real.startswith(base + '/')

    assert await inside('ok/file')
    assert await inside('ok/../ok')
    assert not await inside('../work-sibling')
    assert not await inside('escape/etc/passwd')
    assert not await inside('/etc')


async def test_a_symlink_loop_does_not_break_a_listing(workspace: Workspace, root: Path) -> None:
    (root / 'loop').symlink_to(root / 'loop')
    (root / 'file').write_text('x')
    names = [(entry.name, entry.is_dir) for entry in await workspace.list_dir('.')]
    assert names == [('file', False), ('loop', False)]


async def test_entries_and_writes_follow_symlinks(workspace: Workspace, root: Path) -> None:
    (root / 'real').mkdir()
    (root / 'real/f').write_text('abc')
    (root / 'dirlink').symlink_to('real')
    (root / 'filelink').symlink_to('real/f')
    assert (await workspace.stat('dirlink')).is_dir
    assert (await workspace.stat('filelink')).size == 3
    await workspace.write_text('filelink', 'through the link')
    assert (root / 'filelink').is_symlink()
    assert (root / 'real/f').read_text() == 'through the link'


async def test_a_fifo_is_refused_without_waiting_for_a_writer(workspace: Workspace, root: Path) -> None:
    os.mkfifo(root / 'pipe')
    with pytest.raises(OSError, match='not a regular file'):
        await workspace.read_bytes('pipe')
    with pytest.raises(OSError, match='not a regular file'):
        await workspace.write_bytes('pipe', b'x')
