"""What a workspace backend is: the protocols it implements, the values it returns and the errors it raises.

A backend implements `WorkspaceBackend` and `SupportsCommands`, `SupportsFilesystem` or both (`SupportsRealpath`
optionally). Conformance is structural: any object with the members conforms. What every backend promises:

- building it does no I/O; its first operation creates the environment, or attaches to the one its ref names
  (raising `WorkspaceUnavailableError` when that one is gone, never making a replacement);
- its `ref` is set as soon as the environment exists and never changes; it never destroys the environment;
- commands and file operations see one filesystem;
- a command's non-zero exit is a `CommandResult`, not an exception; a missing program exits 127; a timeout raises
  `WorkspaceTimeoutError`, too much output `WorkspaceOutputLimitError`, a dead environment
  `WorkspaceUnavailableError`; path-level failures raise the builtin `OSError` subclasses (`FileNotFoundError`,
  `IsADirectoryError`...), bad arguments `TypeError` / `ValueError`.
"""

from __future__ import annotations as _annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeAlias, runtime_checkable

from .._messages.workspace_refs import WorkspaceRef
from ..exceptions import AgentError

__all__ = (
    'CommandResult',
    'FileEntry',
    'SupportsCommands',
    'SupportsFilesystem',
    'SupportsRealpath',
    'WorkspaceBackend',
    'WorkspaceCommand',
    'WorkspaceError',
    'WorkspaceOutputLimitError',
    'WorkspaceReadOnlyError',
    'WorkspaceRef',
    'WorkspaceTimeoutError',
    'WorkspaceUnavailableError',
)

WorkspaceCommand: TypeAlias = str | Sequence[str]
"""A command: an argv sequence (`['ls', '-l']`), or one shell string, run with `shell=True`."""


def check_timeout(timeout: float | None) -> None:
    """Refuse a `timeout=` that is not `None` or a positive finite number of seconds."""
    if timeout is None:
        return
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not math.isfinite(timeout) or timeout <= 0:
        raise ValueError(f'timeout must be a positive finite number of seconds or None, got {timeout!r}')


def check_command_form(command: WorkspaceCommand, *, shell: bool) -> None:
    """Refuse a shell string without `shell=True`, and an argv sequence with it."""
    if isinstance(command, str) and not shell:
        raise TypeError('a command given as one string runs through the shell: pass shell=True, or an argv list')
    if not isinstance(command, str) and shell:
        raise TypeError('shell=True takes the command as one string; pass shell=False to run an argv list')


class WorkspaceError(AgentError, RuntimeError):
    """A workspace operation failed on purpose (a policy, a limit, an environment that is gone)."""


class WorkspaceOutputLimitError(WorkspaceError):
    """A command wrote more output than the backend keeps; `stdout` and `stderr` hold what came first."""

    def __init__(self, message: str, *, limit: int, stdout: str = '', stderr: str = '') -> None:
        super().__init__(message)
        self.limit = limit
        """The number of bytes (stdout and stderr together) the backend keeps."""
        self.stdout = stdout
        """The start of the command's standard output."""
        self.stderr = stderr
        """The start of the command's standard error."""


class WorkspaceUnavailableError(WorkspaceError):
    """The environment is gone or cannot be used (deleted, expired, never attached): trying again will not help."""


class WorkspaceTimeoutError(WorkspaceError, TimeoutError):
    """A command ran past its `timeout=` and was stopped; `stdout` and `stderr` hold what it wrote until then."""

    def __init__(self, message: str, *, stdout: str = '', stderr: str = '') -> None:
        super().__init__(message)
        self.stdout = stdout
        """The command's standard output until it was stopped."""
        self.stderr = stderr
        """The command's standard error until it was stopped."""


class WorkspaceReadOnlyError(WorkspaceError, PermissionError):
    """A command or a change of files was refused because the workspace is read-only (`ReadOnlyWorkspace`)."""


@dataclass(frozen=True, kw_only=True)
class CommandResult:
    """What a finished command gave."""

    exit_code: int
    """The command's exit code (non-zero is a result, not an error; killed by signal N: 128 + N)."""
    stdout: str
    """Its standard output (bytes that are not UTF-8 become U+FFFD)."""
    stderr: str
    """Its standard error (bytes that are not UTF-8 become U+FFFD)."""


@dataclass(frozen=True, kw_only=True)
class FileEntry:
    """A file or directory of the workspace."""

    name: str
    """Its base name."""
    path: str
    """Its absolute POSIX path in the workspace."""
    is_dir: bool
    """Whether it is a directory (a symlink counts as what it points to)."""
    size: int | None
    """Its size in bytes for a regular file, when known; `None` for a directory."""


@runtime_checkable
class SupportsCommands(Protocol):
    """A backend that runs commands (without it, `Workspace.run` raises `UserError`)."""

    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - pydantic-ai 2.68's signature
    ) -> CommandResult:
        """Run a command in `working_dir()`, stdin at end of file, and wait for it.

        Args:
            command: An argv sequence, or one string with `shell=True` (a mismatch raises `TypeError`).
            shell: Whether `command` is a shell string.
            env: Environment variables added on top of the backend's own.
            timeout: Seconds before the command is stopped and `WorkspaceTimeoutError` is raised; `None` waits.
        """
        ...


@runtime_checkable
class SupportsFilesystem(Protocol):
    """A backend with native file access (without it, `Workspace` does file operations through the shell).

    Paths are absolute POSIX paths; a missing one raises `FileNotFoundError` (except in `exists`).
    """

    async def read_bytes(self, path: str) -> bytes:
        """The file's contents (a directory raises `IsADirectoryError`)."""
        ...

    async def write_bytes(self, path: str, data: bytes) -> None:
        """Write the file, making missing parent directories and writing through a symlink."""
        ...

    async def stat(self, path: str) -> FileEntry:
        """What is at `path`."""
        ...

    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        """The entries of a directory (not recursive)."""
        ...

    async def make_dir(self, path: str) -> None:
        """Make a directory and its missing parents; an existing directory is fine."""
        ...

    async def remove(self, path: str) -> None:
        """Remove a file, a symlink, or a directory with everything in it.

        The working directory and its ancestors are refused with `ValueError`.
        """
        ...

    async def exists(self, path: str) -> bool:
        """Whether something exists at `path`."""
        ...


@runtime_checkable
class SupportsRealpath(Protocol):
    """A backend that resolves symlinks itself (what path checks need to see where a path leads)."""

    async def realpath(self, path: str) -> str:
        """`path` with every symlink followed and `..` applied, as `os.path.realpath(path, strict=False)` does."""
        ...


@runtime_checkable
class WorkspaceBackend(Protocol):
    """The environment an agent run works in (see the module docstring for what every backend promises)."""

    @property
    def ref(self) -> WorkspaceRef | None:
        """The environment's name: `None` until one is created, then the same for good."""
        ...

    async def working_dir(self) -> str:
        """Where commands start and relative paths lead: absolute, symlinks resolved."""
        ...
