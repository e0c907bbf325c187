"""The policy wrappers (`ReadOnlyWorkspace`, `AuthorityWorkspace`), `UnavailableWorkspace`, and what `Workspace`
says about backends that lack an operation."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from edgewise.agent.exceptions import AgentError, UserError
from edgewise.agent.workspaces import (
    AuthorityWorkspace,
    CommandResult,
    FileEntry,
    LocalWorkspaceBackend,
    ReadOnlyWorkspace,
    UnavailableWorkspace,
    Workspace,
    WorkspaceCommand,
    WorkspaceError,
    WorkspaceReadOnlyError,
    WorkspaceRef,
    WorkspaceUnavailableError,
    WrapperWorkspace,
)

from .conftest import CommandsOnly

pytestmark = pytest.mark.anyio


async def test_read_only_allows_reads_and_refuses_commands_and_changes(root: Path) -> None:
    (root / 'f').write_text('data')
    workspace = ReadOnlyWorkspace(Workspace(LocalWorkspaceBackend(root)))
    assert workspace.read_only
    assert not workspace.wrapped.read_only
    assert await workspace.read_text('f') == 'data'
    assert [entry.name for entry in await workspace.list_dir('.')] == ['f']
    assert await workspace.exists('f')
    assert (await workspace.stat('f')).size == 4
    refusals = [
        workspace.write_text('f', 'changed'),
        workspace.write_bytes('new', b''),
        workspace.make_dir('d'),
        workspace.remove('f'),
        workspace.run(['touch', 'new']),
        workspace.run('touch new', shell=True, cwd='.'),
    ]
    for refused in refusals:
        with pytest.raises(WorkspaceReadOnlyError, match='read-only') as caught:
            await refused
        assert isinstance(caught.value, PermissionError)
    assert os.listdir(root) == ['f']
    assert (root / 'f').read_text() == 'data'


async def test_read_only_holds_under_another_wrapper(root: Path) -> None:
    inner = ReadOnlyWorkspace(Workspace(LocalWorkspaceBackend(root)))
    outer = Workspace(AuthorityWorkspace(inner, authority='user'))
    assert outer.read_only
    with pytest.raises(WorkspaceReadOnlyError):
        await outer.write_text('f', 'x')
    with pytest.raises(WorkspaceReadOnlyError):
        await outer.run(['true'], cwd='.')
    assert not (root / 'f').exists()


async def test_wrappers_reach_the_backend_and_its_ref(root: Path) -> None:
    backend = LocalWorkspaceBackend(root)
    workspace = ReadOnlyWorkspace(Workspace(AuthorityWorkspace(Workspace(backend), authority='none')))
    assert workspace.backend is backend
    assert workspace.ref == WorkspaceRef(provider='local', id=str(root))
    assert workspace.attached
    assert isinstance(workspace, WrapperWorkspace)


async def test_authority_is_the_lowest_any_wrapper_gives(root: Path) -> None:
    base = Workspace(LocalWorkspaceBackend(root))
    assert base.authority == 'operator'
    user = AuthorityWorkspace(base, authority='user')
    assert user.authority == 'user'
    assert AuthorityWorkspace(user, authority='operator').authority == 'user'
    assert AuthorityWorkspace(user, authority='none').authority == 'none'
    assert AuthorityWorkspace(base, authority='none').durable_policy() == ('none', {})
    assert base.durable_policy() == ()


async def test_authority_of_takes_the_longest_path_and_the_lowest_wrapper(root: Path) -> None:
    (root / 'vendor/lib').mkdir(parents=True)
    (root / 'vendor/lib/own.md').write_text('x')
    workspace = AuthorityWorkspace(
        Workspace(LocalWorkspaceBackend(root)),
        authority='user',
        path_authority={'vendor': 'none', 'vendor/lib/own.md': 'operator'},
    )
    assert await workspace.authority_of('README.md') == 'user'
    assert await workspace.authority_of('vendor/x.py') == 'none'
    assert await workspace.authority_of('vendor/lib/own.md') == 'operator'
    assert await workspace.authority_of('/etc/passwd') == 'none'  # outside the workspace
    capped = AuthorityWorkspace(workspace, authority='none')
    assert await capped.authority_of('vendor/lib/own.md') == 'none'


async def test_a_symlink_neither_raises_nor_launders_a_level(root: Path) -> None:
    (root / 'untrusted').mkdir()
    (root / 'untrusted/evil.md').write_text('x')
    (root / 'looks_trusted.md').symlink_to(root / 'untrusted/evil.md')
    (root / 'trusted.md').write_text('x')
    (root / 'untrusted/alias.md').symlink_to(root / 'trusted.md')
    workspace = AuthorityWorkspace(
        Workspace(LocalWorkspaceBackend(root)), authority='operator', path_authority={'untrusted': 'none'}
    )
    assert await workspace.authority_of('looks_trusted.md') == 'none'
    assert await workspace.authority_of('untrusted/alias.md') == 'none'
    assert await workspace.authority_of('trusted.md') == 'operator'


async def test_a_path_outside_named_by_path_authority_is_part_of_the_workspace(root: Path, tmp_path: Path) -> None:
    notes = tmp_path / 'notes.md'
    notes.write_text('x')
    workspace = AuthorityWorkspace(
        Workspace(LocalWorkspaceBackend(root)), authority='operator', path_authority={str(notes): 'user'}
    )
    assert await workspace.authority_of(str(notes)) == 'user'


async def test_path_authority_refuses_a_home_path(root: Path) -> None:
    with pytest.raises(UserError, match='starts with `~`, which is not expanded'):
        AuthorityWorkspace(Workspace(LocalWorkspaceBackend(root)), authority='user', path_authority={'~/x': 'none'})


async def test_an_unavailable_workspace_raises_its_reason_everywhere() -> None:
    workspace = Workspace(UnavailableWorkspace('the sandbox expired'))
    assert not workspace.attached
    assert workspace.ref is None
    for operation in (
        workspace.run(['ls']),
        workspace.working_dir(),
        workspace.read_text('f'),
        workspace.realpath('x'),
    ):
        with pytest.raises(WorkspaceUnavailableError, match='the sandbox expired') as caught:
            await operation
        assert isinstance(caught.value, WorkspaceError)
        assert isinstance(caught.value, AgentError)


class _RefOnly:
    @property
    def ref(self) -> None:
        return None

    async def working_dir(self) -> str:
        return '/'


class _HalfFilesystem(_RefOnly):
    async def read_bytes(self, path: str) -> bytes:
        return b''


async def test_a_backend_without_commands_or_files_says_what_it_lacks() -> None:
    workspace = Workspace(_RefOnly())
    with pytest.raises(UserError, match='does not run commands'):
        await workspace.run(['ls'])
    with pytest.raises(UserError, match='does not support file operations'):
        await workspace.read_bytes('f')
    with pytest.raises(UserError, match='lacks `write_bytes`, `stat`'):
        await Workspace(_HalfFilesystem()).read_bytes('f')
    # Without a way to see symlinks, `realpath` can only normalize the text.
    assert await workspace.realpath('a/../b') == '/b'


async def test_resolve_joins_onto_a_base(root: Path) -> None:
    workspace = Workspace(CommandsOnly(LocalWorkspaceBackend(root)))
    assert await workspace.resolve('x/../y', base='/base') == '/base/y'
    assert await workspace.resolve('/abs/./p') == '/abs/p'
    with pytest.raises(ValueError, match='absolute'):
        await workspace.resolve('x', base='relative')


async def test_the_shell_filesystem_runs_commands_in_a_command_only_backend(root: Path) -> None:
    workspace = Workspace(CommandsOnly(LocalWorkspaceBackend(root)))
    assert await workspace.run(['sh', '-c', 'pwd'], cwd='.') == await workspace.run(['pwd'])
    assert not workspace.read_only


class _Answers:
    """A command-only backend whose every command 'gives' one fixed result: a broken shell, or damaged output."""

    def __init__(self, result: CommandResult) -> None:
        self._result = result

    @property
    def ref(self) -> None:
        return None

    async def working_dir(self) -> str:
        return '/work'

    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - pydantic-ai 2.68's signature
    ) -> CommandResult:
        return self._result


@pytest.mark.parametrize('stdout', ['5\nAAAA', '3\nabc', 'x\nAAAA', 'no size'])
async def test_the_shell_filesystem_never_returns_damaged_output(stdout: str) -> None:
    workspace = Workspace(_Answers(CommandResult(exit_code=0, stdout=stdout, stderr='')))
    with pytest.raises(WorkspaceError, match='damaged output'):
        await workspace.read_bytes('f')
    with pytest.raises(WorkspaceError, match='damaged output'):
        await workspace.realpath('f')


async def test_the_shell_filesystem_refuses_a_size_that_is_not_a_number() -> None:
    workspace = Workspace(_Answers(CommandResult(exit_code=0, stdout='twelve\n', stderr='')))
    with pytest.raises(WorkspaceError, match='damaged output'):
        await workspace.stat('f')


async def test_a_failing_shell_is_a_workspace_error_not_an_answer() -> None:
    workspace = Workspace(_Answers(CommandResult(exit_code=2, stdout='', stderr='sh: broken\n')))
    for operation in (workspace.make_dir('d'), workspace.exists('f'), workspace.realpath('f')):
        with pytest.raises(WorkspaceError, match='sh: broken'):
            await operation
    silent = Workspace(_Answers(CommandResult(exit_code=2, stdout='', stderr='')))
    with pytest.raises(WorkspaceError, match=r"the shell failed on '/work/d' \(exit code 2\)"):
        await silent.make_dir('d')
    with pytest.raises(WorkspaceError, match='could not check whether'):
        await silent.exists('f')
    with pytest.raises(WorkspaceError, match='could not resolve the symlinks'):
        await silent.realpath('f')


class _FilesAndCommands(CommandsOnly):
    """Native file access and commands, but no `realpath` of its own."""

    async def read_bytes(self, path: str) -> bytes:
        return await self._backend.read_bytes(path)

    async def write_bytes(self, path: str, data: bytes) -> None:
        await self._backend.write_bytes(path, data)

    async def stat(self, path: str) -> FileEntry:
        return await self._backend.stat(path)

    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        return await self._backend.list_dir(path)

    async def make_dir(self, path: str) -> None:
        await self._backend.make_dir(path)

    async def remove(self, path: str) -> None:
        await self._backend.remove(path)

    async def exists(self, path: str) -> bool:
        return await self._backend.exists(path)


async def test_realpath_uses_the_shell_of_a_backend_without_its_own(root: Path) -> None:
    (root / 'out').symlink_to(root.parent)
    workspace = Workspace(_FilesAndCommands(LocalWorkspaceBackend(root)))
    assert await workspace.realpath('out/x') == str(root.parent / 'x')
    await workspace.write_text('f', 'native')
    assert await workspace.read_text('f') == 'native'
