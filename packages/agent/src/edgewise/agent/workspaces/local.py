"""`LocalWorkspaceBackend`: a directory of this machine as a workspace, commands as host subprocesses.

It isolates nothing: commands and absolute paths reach whatever this process can.
"""

from __future__ import annotations as _annotations

import os
import shutil
import signal
import stat as stat_module
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from subprocess import DEVNULL, PIPE
from typing import TypeVar

import anyio
import anyio.abc
import anyio.to_thread

from .protocol import (
    CommandResult,
    FileEntry,
    SupportsCommands,
    SupportsFilesystem,
    SupportsRealpath,
    WorkspaceBackend,
    WorkspaceCommand,
    WorkspaceOutputLimitError,
    WorkspaceRef,
    WorkspaceTimeoutError,
    WorkspaceUnavailableError,
    check_command_form,
    check_timeout,
)

__all__ = ('LocalWorkspaceBackend',)

_T = TypeVar('_T')

_INHERITED_ENV = ('PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE')
"""What commands get of this process's environment: where the tools are, and the locale; never its secrets."""

MAX_OUTPUT_BYTES = 10 * 1024 * 1024
"""The most stdout and stderr (together) one command may write before it is stopped."""

_PREVIEW_BYTES = 64 * 1024
"""How much of each stream a `WorkspaceOutputLimitError` keeps."""

_DRAIN_GRACE = 2.0
"""Seconds the pipes are still read after the command exited (a background child may hold them open)."""

_EXIT_POLL = 0.01
"""Seconds between looks at whether the command exited: waiting on the process itself would also wait for its
pipes on some anyio versions, which a background child can hold open for ever."""

_REAP_GRACE = 2.0
"""Seconds spent closing a finished or killed process's pipes and reaping it, even when cancelled."""


def _decode(data: bytes | bytearray) -> str:
    return bytes(data).decode('utf-8', errors='replace')


class LocalWorkspaceBackend(WorkspaceBackend, SupportsCommands, SupportsFilesystem, SupportsRealpath):
    """A directory of this machine as the workspace: files through the host filesystem, commands as subprocesses
    (POSIX only).

    Nothing is isolated. Commands get only `PATH`, `HOME`, `LANG`, `LC_ALL` and `LC_CTYPE` of this process's
    environment, plus `env`. A command that times out or is cancelled is killed with its whole process group; one
    that writes more than 10 MiB is stopped with `WorkspaceOutputLimitError`. The directory is the environment:
    the caller creates and removes it, and an operation raises `WorkspaceUnavailableError` when it is missing.

    Args:
        working_dir: The directory; `~` is expanded, a relative path is taken from the current directory now.
        env: Environment variables for every command (a call's `env` goes on top).
    """

    def __init__(self, working_dir: str | Path, *, env: Mapping[str, str] | None = None) -> None:
        if os.name != 'posix':
            raise NotImplementedError(
                '`LocalWorkspaceBackend` needs a POSIX system (it stops a command by killing its process group); '
                'use a container- or VM-based workspace on this platform.'
            )
        path = Path(working_dir).expanduser()
        self._working_dir = path if path.is_absolute() else Path.cwd() / path
        self._resolved: Path | None = None
        self._ref = WorkspaceRef(provider='local', id=os.path.normpath(self._working_dir))
        self._env = {name: os.environ[name] for name in _INHERITED_ENV if name in os.environ} | dict(env or {})
        self._locks: dict[str, tuple[anyio.Lock, list[int]]] = {}

    def __repr__(self) -> str:
        # The environment variables stay out: they may hold secrets.
        return f'LocalWorkspaceBackend({self._ref.id!r})'

    @property
    def ref(self) -> WorkspaceRef:
        """`WorkspaceRef(provider='local', id=<the directory's absolute path>)`, from construction on."""
        return self._ref

    def _root(self) -> Path:
        root = self._resolved or self._working_dir.resolve()
        if not root.is_dir():
            raise WorkspaceUnavailableError(
                f'The local workspace directory {str(self._working_dir)!r} does not exist (or is not a directory): '
                'create it, or attach another workspace.'
            )
        self._resolved = root
        return root

    async def _in_thread(self, function: Callable[[], _T]) -> _T:
        # Filesystem calls block: they run in a worker thread, never on the event loop.
        return await anyio.to_thread.run_sync(function)

    async def working_dir(self) -> str:
        return str(await self._in_thread(self._root))

    @staticmethod
    def _path(path: str) -> Path:
        if not os.path.isabs(path):
            raise ValueError(f'path must be absolute, got {path!r} (Workspace resolves relative paths)')
        return Path(path)

    @asynccontextmanager
    async def _lock(self, path: str) -> AsyncIterator[None]:
        """One read or write at a time for a file (by its real path), so parallel tool calls never see a half
        written file; the entry lives while someone holds or waits for it."""
        key = await self._in_thread(lambda: os.path.realpath(path))
        lock, users = self._locks.setdefault(key, (anyio.Lock(), [0]))
        users[0] += 1
        try:
            async with lock:
                yield
        finally:
            users[0] -= 1
            if not users[0]:
                del self._locks[key]

    async def read_bytes(self, path: str) -> bytes:
        def read() -> bytes:
            self._root()
            # Non-blocking, so a FIFO is refused instead of waiting for a writer.
            fd = os.open(self._path(path), os.O_RDONLY | os.O_NONBLOCK)
            try:
                mode = os.fstat(fd).st_mode
                if stat_module.S_ISDIR(mode):
                    raise IsADirectoryError(path)
                if not stat_module.S_ISREG(mode):
                    raise OSError(f'not a regular file: {path!r}')
                with open(fd, 'rb', closefd=False) as file:
                    return file.read()
            finally:
                os.close(fd)

        async with self._lock(path):
            return await self._in_thread(read)

    async def write_bytes(self, path: str, data: bytes) -> None:
        def write() -> None:
            target = self._path(path)
            self._root()
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
            except FileExistsError as error:
                raise NotADirectoryError(path) from error
            with suppress(FileNotFoundError):
                mode = target.stat().st_mode
                if not stat_module.S_ISREG(mode) and not stat_module.S_ISDIR(mode):
                    raise OSError(f'not a regular file: {path!r}')
            target.write_bytes(data)

        async with self._lock(path):
            await self._in_thread(write)

    async def stat(self, path: str) -> FileEntry:
        def stat() -> FileEntry:
            self._root()
            target = self._path(path)
            info = target.stat()
            is_dir = stat_module.S_ISDIR(info.st_mode)
            return FileEntry(name=target.name, path=path, is_dir=is_dir, size=None if is_dir else info.st_size)

        return await self._in_thread(stat)

    async def list_dir(self, path: str) -> Sequence[FileEntry]:
        def entries() -> list[FileEntry]:
            self._root()
            found: list[FileEntry] = []
            with os.scandir(self._path(path)) as scan:
                children = sorted(scan, key=lambda child: child.path)
            for child in children:
                try:
                    is_dir = child.is_dir()
                except OSError:  # a symlink loop: listed, as a non-directory
                    is_dir = False
                try:
                    size = None if is_dir else child.stat().st_size
                except OSError:  # a broken symlink: listed, without a size
                    size = None
                found.append(FileEntry(name=child.name, path=child.path, is_dir=is_dir, size=size))
            return found

        return await self._in_thread(entries)

    async def make_dir(self, path: str) -> None:
        def make() -> None:
            target = self._path(path)
            self._root()
            target.mkdir(parents=True, exist_ok=True)

        await self._in_thread(make)

    async def remove(self, path: str) -> None:
        def remove() -> None:
            target = self._path(path)
            root = self._root()
            if not target.is_symlink() and target.resolve() in (root, *root.parents):
                raise ValueError(f'refusing to remove {path!r}: it is the working directory or one of its ancestors')
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            else:
                target.unlink()  # a file, or a symlink itself (never what it points to)

        await self._in_thread(remove)

    async def exists(self, path: str) -> bool:
        def exists() -> bool:
            self._root()
            return self._path(path).exists()

        return await self._in_thread(exists)

    async def realpath(self, path: str) -> str:
        def resolve() -> str:
            self._root()
            return os.path.realpath(self._path(path))

        return await self._in_thread(resolve)

    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - pydantic-ai 2.68's signature
    ) -> CommandResult:
        check_timeout(timeout)
        check_command_form(command, shell=shell)
        root = await self._in_thread(self._root)
        deadline = None if timeout is None else anyio.current_time() + timeout
        try:
            process = await anyio.open_process(
                command if isinstance(command, str) else list(command),
                cwd=root,
                env={**self._env, **(env or {})},
                stdin=DEVNULL,
                stdout=PIPE,
                stderr=PIPE,
                start_new_session=True,  # its own process group, so a kill reaches its children too
            )
        except (FileNotFoundError, PermissionError) as error:
            await self._in_thread(self._root)  # a directory deleted meanwhile is the environment being gone
            if isinstance(command, str) or error.filename not in (command[0], None):
                raise
            missing = isinstance(error, FileNotFoundError)
            return CommandResult(
                exit_code=127 if missing else 126,
                stdout='',
                stderr=f'{command[0]}: {"command not found" if missing else "Permission denied"}\n',
            )
        stdout, stderr = bytearray(), bytearray()
        try:
            exit_code = await self._collect(process, stdout, stderr, deadline)
        except BaseException:
            await self._kill(process)
            raise
        overflowed = len(stdout) + len(stderr) > MAX_OUTPUT_BYTES
        if exit_code is None or overflowed:
            await self._kill(process)
        else:
            await self._reap(process)
        if exit_code is None:
            raise WorkspaceTimeoutError(
                f'The command ran past its timeout of {timeout:g}s and was killed with its process group.',
                stdout=_decode(stdout),
                stderr=_decode(stderr),
            )
        if overflowed:
            raise WorkspaceOutputLimitError(
                f'The command wrote more than {MAX_OUTPUT_BYTES // (1024 * 1024)} MiB of output and was stopped: '
                'redirect its output to a file and read a part of it.',
                limit=MAX_OUTPUT_BYTES,
                stdout=_decode(stdout[:_PREVIEW_BYTES]),
                stderr=_decode(stderr[:_PREVIEW_BYTES]),
            )
        await self._in_thread(self._root)  # a command that deleted the directory leaves no live environment
        return CommandResult(exit_code=exit_code, stdout=_decode(stdout), stderr=_decode(stderr))

    async def _collect(
        self, process: anyio.abc.Process, stdout: bytearray, stderr: bytearray, deadline: float | None
    ) -> int | None:
        """Read both pipes until the command exits (and a little after); the exit code, or `None` at the deadline.

        Output past the limit kills the process group and returns at once (the caller sees the sizes)."""
        assert process.stdout is not None
        assert process.stderr is not None
        exit_code: int | None = None

        async def read(stream: anyio.abc.ByteReceiveStream, buffer: bytearray) -> None:
            async for chunk in stream:
                buffer.extend(chunk)
                if len(stdout) + len(stderr) > MAX_OUTPUT_BYTES:
                    self._signal_group(process)
                    group.cancel_scope.cancel()

        with anyio.CancelScope(deadline=float('inf') if deadline is None else deadline):
            async with anyio.create_task_group() as group:
                group.start_soon(read, process.stdout, stdout)
                group.start_soon(read, process.stderr, stderr)
                while process.returncode is None:  # noqa: ASYNC110 (see _EXIT_POLL: no event to wait for)
                    await anyio.sleep(_EXIT_POLL)
                code = process.returncode
                exit_code = 128 - code if code < 0 else code  # killed by signal N: 128 + N, as shells say
                group.cancel_scope.deadline = min(group.cancel_scope.deadline, anyio.current_time() + _DRAIN_GRACE)
        if exit_code is not None:
            return exit_code
        # Not exited: stopped for its output (the caller sees the sizes), or at the deadline.
        return -1 if len(stdout) + len(stderr) > MAX_OUTPUT_BYTES else None

    @staticmethod
    def _signal_group(process: anyio.abc.Process) -> None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        except PermissionError:  # pragma: no cover - only when the command changed its user (setuid)
            with suppress(ProcessLookupError):
                process.kill()

    async def _kill(self, process: anyio.abc.Process) -> None:
        self._signal_group(process)
        await self._reap(process)

    async def _reap(self, process: anyio.abc.Process) -> None:
        # Bounded: a background child may hold the pipes open for ever (anyio before 4.15 waits for them here).
        with anyio.move_on_after(_REAP_GRACE, shield=True):
            await process.aclose()
