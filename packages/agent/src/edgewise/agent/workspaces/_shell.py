"""File operations made of shell commands, for a backend that runs commands but has no native file access.

Needs a POSIX `sh` with `test` and `printf`, and `base64`, `find`, `mkdir`, `readlink`, `rm` and `wc`. File contents
travel base64-encoded, so any bytes survive; each command's output stays under the backend's output limit only
for files of a few MiB (a backend with larger files should implement `SupportsFilesystem`).
"""

from __future__ import annotations as _annotations

import base64
import binascii
import posixpath
import uuid
from contextlib import suppress

import anyio

from .protocol import CommandResult, FileEntry, SupportsCommands, WorkspaceError

__all__ = ('ShellFilesystem',)

# Exit codes the scripts below use for path-level failures: 100 + the Linux errno, above what `sh` and the
# utilities exit with themselves, so a utility's failure is never read as a missing path.
_NOT_FOUND = 102
_EXISTS = 117
_NOT_DIRECTORY = 120
_IS_DIRECTORY = 121
_NOT_REGULAR = 122

_WRITE_CHUNK = 64 * 1024
"""Base64 characters per command: one argument of `execve` may not exceed 128 KiB on Linux."""

_MAX_LINKS = 40
"""Symlinks `realpath` follows before it keeps the rest as written (as Linux's limit), so a loop ends."""

_CLEANUP_TIMEOUT = 10
"""Seconds spent removing a failed write's temporary file, even when the caller was cancelled."""

_CHECK_ANCESTORS = (
    'while [ "$parent" != / ]; do '
    f'if test -e "$parent" && ! test -d "$parent"; then exit {_NOT_DIRECTORY}; fi; '
    'test -d "$parent" && break; parent=${parent%/*}; [ -n "$parent" ] || parent=/; done; '
)
"""Exits with `_NOT_DIRECTORY` when an existing ancestor of `$parent` is not a directory."""


def _quote(text: str) -> str:
    import shlex  # (loaded by the first command, not with the agent)

    return shlex.quote(text)


def _decode(output: str, path: str) -> bytes:
    """Decode `<size>\\n<base64>`, refusing anything but exactly `size` bytes (never a partial result)."""
    size, _, encoded = output.partition('\n')
    try:
        data = base64.b64decode(encoded)
    except binascii.Error:
        data = None
    if not size.strip().isdigit() or data is None or len(data) != int(size):
        raise WorkspaceError(f'the shell returned damaged output for {path!r}; try again')
    return data


class ShellFilesystem:
    """`SupportsFilesystem` and `SupportsRealpath` through a backend's `run`."""

    def __init__(self, backend: SupportsCommands, working_dir: str) -> None:
        self._backend = backend
        self._working_dir = working_dir

    async def _run(self, script: str) -> CommandResult:
        return await self._backend.run(script, shell=True)

    async def _check(self, result: CommandResult, path: str) -> None:
        errors: dict[int, type[OSError]] = {
            _NOT_FOUND: FileNotFoundError,
            _EXISTS: FileExistsError,
            _NOT_DIRECTORY: NotADirectoryError,
            _IS_DIRECTORY: IsADirectoryError,
        }
        if result.exit_code == 0:
            return
        if result.exit_code in errors:
            raise errors[result.exit_code](path)
        if result.exit_code == _NOT_REGULAR:
            raise OSError(f'not a regular file: {path!r}')
        raise WorkspaceError(result.stderr.strip() or f'the shell failed on {path!r} (exit code {result.exit_code})')

    async def read_bytes(self, path: str) -> bytes:
        quoted = _quote(path)
        result = await self._run(
            f'if test -d {quoted}; then exit {_IS_DIRECTORY}; elif test -f {quoted}; then '
            f'wc -c < {quoted} && base64 < {quoted}; elif test -e {quoted}; then exit {_NOT_REGULAR}; '
            f'else exit {_NOT_FOUND}; fi'
        )
        await self._check(result, path)
        return _decode(result.stdout, path)

    async def write_bytes(self, path: str, data: bytes) -> None:
        # Staged beside the real target and decoded in one step, so a failed transfer leaves the file as it was.
        target = await self.realpath(path)
        parent = posixpath.dirname(target)
        staged = _quote(posixpath.join(parent, f'.edgewise-{uuid.uuid4().hex}.tmp'))
        quoted_target, quoted_parent = _quote(target), _quote(parent)
        encoded = base64.b64encode(data).decode()
        chunks = [encoded[start : start + _WRITE_CHUNK] for start in range(0, len(encoded), _WRITE_CHUNK)] or ['']
        try:
            for index, chunk in enumerate(chunks):
                prepare = (
                    f'parent={quoted_parent}; {_CHECK_ANCESTORS}mkdir -p {quoted_parent} && ' if index == 0 else ''
                )
                result = await self._run(f"{prepare}printf '%s' {_quote(chunk)} {'>' if index == 0 else '>>'} {staged}")
                await self._check(result, path)
            result = await self._run(
                f'if test -d {quoted_target}; then status={_IS_DIRECTORY}; '
                f'elif test -e {quoted_target} && ! test -f {quoted_target}; then status={_NOT_REGULAR}; '
                f'else base64 -d < {staged} > {quoted_target}; status=$?; fi; rm -f {staged}; exit $status'
            )
            await self._check(result, path)
        except BaseException:
            # Cancellation is level-triggered in anyio: only a shielded scope lets the cleanup run.
            with anyio.move_on_after(_CLEANUP_TIMEOUT, shield=True):
                with suppress(Exception):
                    await self._run(f'rm -f {staged}')
            raise

    async def stat(self, path: str) -> FileEntry:
        quoted = _quote(path)
        result = await self._run(
            f'if test -d {quoted}; then echo directory; elif test -f {quoted}; then wc -c < {quoted}; '
            f'elif test -e {quoted}; then exit {_NOT_REGULAR}; else exit {_NOT_FOUND}; fi'
        )
        await self._check(result, path)
        name = posixpath.basename(posixpath.normpath(path))
        output = result.stdout.strip()
        if output == 'directory':
            return FileEntry(name=name, path=path, is_dir=True, size=None)
        if not output.isdigit():
            raise WorkspaceError(f'the shell returned damaged output for {path!r}; try again')
        return FileEntry(name=name, path=path, is_dir=False, size=int(output))

    async def list_dir(self, path: str) -> list[FileEntry]:
        quoted = _quote(path)
        # `find` writes to a file first: through a pipe, only the last command's status would count.
        listing = f'"${{TMPDIR:-/tmp}}/.edgewise-{uuid.uuid4().hex}.list"'
        mark = ' -exec sh -c \'for f do test -d "$f" && d=d || d=-; printf "%s%s\\000" "$d" "$f"; done\' sh {} +'
        result = await self._run(
            f'file={listing}; trap \'rm -f "$file"\' EXIT; '
            f'if ! test -d {quoted}; then test -e {quoted} && exit {_NOT_DIRECTORY}; exit {_NOT_FOUND}; fi; '
            f'find -H {quoted} -mindepth 1 -maxdepth 1{mark} > "$file" && wc -c < "$file" && base64 < "$file"'
        )
        await self._check(result, path)
        names = _decode(result.stdout, path).decode(errors='surrogateescape').split('\0')
        entries = sorted((entry for entry in names if entry), key=lambda entry: entry[1:])
        return [
            FileEntry(name=posixpath.basename(entry[1:]), path=entry[1:], is_dir=entry[0] == 'd', size=None)
            for entry in entries
        ]

    async def make_dir(self, path: str) -> None:
        quoted = _quote(path)
        result = await self._run(
            f'if test -e {quoted} && ! test -d {quoted}; then exit {_EXISTS}; fi; '
            f'parent={_quote(posixpath.dirname(path))}; {_CHECK_ANCESTORS}mkdir -p {quoted}'
        )
        await self._check(result, path)

    async def remove(self, path: str) -> None:
        target = posixpath.join(await self.realpath(posixpath.dirname(path)), posixpath.basename(path))
        if self._working_dir == target or self._working_dir.startswith(target.rstrip('/') + '/'):
            raise ValueError(f'refusing to remove {path!r}: it is the working directory or one of its ancestors')
        quoted = _quote(path)
        result = await self._run(f'(test -e {quoted} || test -L {quoted}) || exit {_NOT_FOUND}; rm -rf {quoted}')
        await self._check(result, path)

    async def exists(self, path: str) -> bool:
        result = await self._run(f'test -e {_quote(path)}')
        if result.exit_code not in (0, 1):
            raise WorkspaceError(result.stderr.strip() or f'could not check whether {path!r} exists')
        return result.exit_code == 0

    async def realpath(self, path: str) -> str:
        # Walks the path one name at a time: a symlink is replaced by its target (read with `readlink`), `..`
        # drops the last name resolved so far, and a missing name is kept as written. The result is sent as
        # base64, since command substitution would lose a trailing newline of a name.
        result = await self._run(
            f'rest={_quote(path.lstrip("/"))}; done_=; links=0; '
            'while [ -n "$rest" ]; do '
            'case "$rest" in */*) part=${rest%%/*}; rest=${rest#*/};; *) part=$rest; rest=;; esac; '
            'case "$part" in ""|.) ;; ..) done_=${done_%/*};; *) '
            f'if [ "$links" -lt {_MAX_LINKS} ] && [ -L "$done_/$part" ]; then links=$((links + 1)); '
            'target=$(readlink -- "$done_/$part" && printf x) || exit 1; target=${target%?x}; '
            'case "$target" in /*) done_=;; esac; rest="$target/$rest"; '
            'else done_="$done_/$part"; fi;; esac; done; '
            'value=${done_:-/}; printf %s "$value" | wc -c; printf %s "$value" | base64'
        )
        if result.exit_code != 0:
            raise WorkspaceError(result.stderr.strip() or f'could not resolve the symlinks of {path!r}')
        return _decode(result.stdout, path).decode(errors='surrogateescape')
