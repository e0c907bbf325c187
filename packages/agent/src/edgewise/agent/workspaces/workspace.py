"""`Workspace`, what tools and hooks get as `ctx.workspace`: a backend, with relative paths, text helpers and file
operations through the shell for a backend that only runs commands; and `WrapperWorkspace`, the base of the policy
wrappers (`ReadOnlyWorkspace`, `AuthorityWorkspace`)."""

from __future__ import annotations as _annotations

import posixpath
from collections.abc import Mapping, Sequence

from .._messages.workspace_refs import Authority
from ..exceptions import UserError
from ._authority import AuthorityLayer, is_within, layer_level, lowest
from ._shell import ShellFilesystem
from .protocol import (
    CommandResult,
    FileEntry,
    SupportsCommands,
    SupportsFilesystem,
    SupportsRealpath,
    WorkspaceBackend,
    WorkspaceCommand,
    WorkspaceRef,
    check_command_form,
    check_timeout,
)
from .unavailable import NO_WORKSPACE, UnavailableWorkspace

__all__ = ('Workspace', 'WrapperWorkspace')

_FILESYSTEM_MEMBERS = ('read_bytes', 'write_bytes', 'stat', 'list_dir', 'make_dir', 'remove', 'exists')


class Workspace(WorkspaceBackend):
    """A backend with the API tools use: paths relative to the working directory, text, `cwd=` for commands.

    Paths are joined onto the working directory and normalized as text (`resolve`): that confines nothing, so a
    path with `..`, an absolute path or a symlink reaches outside the working directory. To check where a path
    leads, compare `await ws.realpath(path)` with `await ws.working_dir()`.

    Args:
        backend: The backend (or another `Workspace`) the operations go to.
    """

    def __init__(self, backend: WorkspaceBackend) -> None:
        self._backend = backend
        # Worked out once: every response of a run reads it, and `isinstance` with a protocol's subclass is slow.
        self._attached = (
            backend.attached if isinstance(backend, Workspace) else not isinstance(backend, UnavailableWorkspace)
        )

    @classmethod
    def detached(cls) -> Workspace:
        """A workspace over `NO_WORKSPACE` (what a run without one has), made without `__init__`'s protocol checks:
        every run starts with one."""
        workspace = cls.__new__(cls)
        workspace._backend, workspace._attached = NO_WORKSPACE, False
        return workspace

    @property
    def backend(self) -> WorkspaceBackend:
        """The backend under every wrapper (for what only that backend offers)."""
        backend = self._backend
        return backend.backend if isinstance(backend, Workspace) else backend

    @property
    def read_only(self) -> bool:
        """Whether commands and changes of files are refused (a `ReadOnlyWorkspace` is among the wrappers)."""
        return isinstance(self._backend, Workspace) and self._backend.read_only

    @property
    def attached(self) -> bool:
        """Whether the workspace reaches an environment (`False` over an `UnavailableWorkspace`)."""
        return self._attached

    @property
    def ref(self) -> WorkspaceRef | None:
        """The environment's `WorkspaceRef`, `None` until the environment exists."""
        return self._backend.ref

    @property
    def authority(self) -> Authority:
        """The authority of the workspace's files: `'operator'` unless an `AuthorityWorkspace` lowers it (with
        several, the lowest wins). `authority_of` gives one file's, which `path_authority` can change."""
        return lowest(level for level, _ in self._authority_layers())

    def _authority_layers(self) -> list[AuthorityLayer]:
        """The levels each wrapper gives, innermost first."""
        backend = self._backend
        return backend._authority_layers() if isinstance(backend, Workspace) else []

    async def authority_of(self, path: str) -> Authority:
        """The authority of the file at `path`, for a capability deciding how to send its text.

        The lowest level the wrappers give it, each by its longest `path_authority` key containing it, counting both
        where the path is written and where its symlinks lead (a link can neither raise nor launder a level). A
        path outside the working directory that no key contains is `'none'`.
        """
        root = await self.working_dir()
        layers: list[AuthorityLayer] = []
        for level, paths in self._authority_layers():
            resolved: dict[str, Authority] = {}
            for key, key_level in paths.items():
                for location in {await self.resolve(key, base=root), await self.realpath(posixpath.join(root, key))}:
                    resolved[location] = lowest((key_level, resolved.get(location, key_level)))
            layers.append((level, resolved))
        zones = [root, *(key for _, paths in layers for key in paths)]
        written = await self.resolve(path)
        target = await self.realpath(written)
        if not any(is_within(target, zone) for zone in zones):
            return 'none'
        locations = {written, target} if any(is_within(written, zone) for zone in zones) else {target}
        return lowest(layer_level(location, layer) for location in locations for layer in layers)

    def durable_policy(self) -> tuple[object, ...]:
        """The arguments of this wrapper that change what it does (empty unless a wrapper has some), so that a
        durable step can tell two configurations of one wrapper class apart."""
        return ()

    @property
    def _filesystem(self) -> SupportsFilesystem:
        backend = self._backend
        if isinstance(backend, SupportsFilesystem):
            return backend
        missing = [name for name in _FILESYSTEM_MEMBERS if not hasattr(backend, name)]
        if len(missing) < len(_FILESYSTEM_MEMBERS):
            raise UserError(
                f'The backend {type(backend).__name__} implements only part of `SupportsFilesystem`: it lacks '
                f'{", ".join(f"`{name}`" for name in missing)}. Add them, or remove the others to have file '
                'operations run through its shell.'
            )
        raise UserError(
            f'The backend {type(backend).__name__} does not support file operations: give it the methods of '
            '`SupportsFilesystem`, or of `SupportsCommands` to have them run through its shell.'
        )

    async def _shell(self) -> ShellFilesystem | None:
        backend = self._backend
        if isinstance(backend, SupportsFilesystem) or not isinstance(backend, SupportsCommands):
            return None
        return ShellFilesystem(backend, await self.working_dir())

    async def _files(self) -> SupportsFilesystem:
        shell = await self._shell()
        return self._filesystem if shell is None else shell

    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - pydantic-ai 2.68's signature
        cwd: str | None = None,
    ) -> CommandResult:
        """Run a command and wait for it (no timeout unless given).

        Args:
            command: An argv sequence, or one string with `shell=True`.
            shell: Whether `command` is a shell string.
            env: Environment variables added on top of the backend's own.
            timeout: Seconds before the command is stopped (`WorkspaceTimeoutError`).
            cwd: Where it starts, resolved like file paths (default: the working directory). A missing one raises
                `FileNotFoundError`, a file `NotADirectoryError`.

        Raises:
            UserError: The backend does not run commands.
        """
        check_timeout(timeout)
        if not isinstance(command, str) and not command:
            raise ValueError('command must not be empty: give the program and its arguments')
        backend = self._backend
        if not isinstance(backend, SupportsCommands):
            raise UserError(f'The backend {type(backend).__name__} does not run commands (no `SupportsCommands`).')
        if cwd is None:
            return await backend.run(command, shell=shell, env=env, timeout=timeout)
        if isinstance(backend, Workspace):
            return await backend.run(command, shell=shell, env=env, timeout=timeout, cwd=cwd)
        check_command_form(command, shell=shell)
        directory = await self.resolve(cwd)
        if not (await self.stat(directory)).is_dir:
            raise NotADirectoryError(directory)
        if isinstance(command, str):
            import shlex  # (loaded by the first command, not with the agent)

            return await backend.run(
                f'cd -- {shlex.quote(directory)} || exit\n{command}', shell=True, env=env, timeout=timeout
            )
        wrapped = ['/bin/sh', '-c', 'cd -- "$1" || exit; shift; exec "$@"', 'sh', directory, *command]
        return await backend.run(wrapped, env=env, timeout=timeout)

    async def working_dir(self) -> str:
        """The working directory, which relative paths are joined onto."""
        return await self._backend.working_dir()

    async def resolve(self, path: str, *, base: str | None = None) -> str:
        """`path` joined onto `base` (default: the working directory) and normalized as text.

        Symlinks are not followed and `..` may climb out of `base`: this confines nothing (see `realpath`).
        """
        if base is not None and not posixpath.isabs(base):
            raise ValueError(f'base must be an absolute path, got {base!r}')
        if posixpath.isabs(path):
            return posixpath.normpath(path)
        return posixpath.normpath(posixpath.join(base or await self.working_dir(), path))

    async def realpath(self, path: str) -> str:
        """Where `path` leads in the environment: every symlink followed, `..` climbing from a link's target, as
        `os.path.realpath(path, strict=False)` does. A backend that neither resolves symlinks nor runs commands
        only gets the path normalized as text."""
        if not posixpath.isabs(path):
            # Joined, not normalized: `link/..` climbs from the link's target.
            path = posixpath.join(await self.working_dir(), path)
        backend = self._backend
        if isinstance(backend, SupportsRealpath):
            return await backend.realpath(path)
        if isinstance(backend, SupportsCommands):  # native files or not, its shell sees the symlinks
            return await ShellFilesystem(backend, await self.working_dir()).realpath(path)
        return posixpath.normpath(path)

    async def read_bytes(self, path: str) -> bytes:
        """The file's contents."""
        return await (await self._files()).read_bytes(await self.resolve(path))

    async def write_bytes(self, path: str, data: bytes) -> None:
        """Write the file (replacing its contents), making missing parent directories."""
        await (await self._files()).write_bytes(await self.resolve(path), data)

    async def stat(self, path: str) -> FileEntry:
        """What is at `path`."""
        return await (await self._files()).stat(await self.resolve(path))

    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        """The entries of a directory (not recursive)."""
        return await (await self._files()).list_dir(await self.resolve(path))

    async def make_dir(self, path: str) -> None:
        """Make a directory and its missing parents."""
        await (await self._files()).make_dir(await self.resolve(path))

    async def remove(self, path: str) -> None:
        """Remove a file, a symlink, or a directory with everything in it (never the working directory)."""
        await (await self._files()).remove(await self.resolve(path))

    async def exists(self, path: str) -> bool:
        """Whether something exists at `path`."""
        return await (await self._files()).exists(await self.resolve(path))

    async def read_text(self, path: str, *, encoding: str = 'utf-8') -> str:
        """The file's contents as text (bytes that do not decode raise `UnicodeDecodeError`)."""
        return (await self.read_bytes(path)).decode(encoding)

    async def write_text(self, path: str, content: str, *, encoding: str = 'utf-8') -> None:
        """Write text to the file."""
        await self.write_bytes(path, content.encode(encoding))


class WrapperWorkspace(Workspace):
    """A workspace around another one: the base of policy wrappers, which override the operations they change.

    Args:
        wrapped: The workspace the operations go to.
    """

    _backend: Workspace

    def __init__(self, wrapped: Workspace) -> None:
        super().__init__(wrapped)

    @property
    def wrapped(self) -> Workspace:
        """The workspace this one wraps."""
        return self._backend
