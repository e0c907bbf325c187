"""`ReadOnlyWorkspace`: a policy wrapper that refuses commands and changes of files."""

from __future__ import annotations as _annotations

from collections.abc import Mapping
from typing import NoReturn

from .protocol import WorkspaceCommand, WorkspaceReadOnlyError
from .workspace import WrapperWorkspace

__all__ = ('ReadOnlyWorkspace',)

_REFUSAL = (
    'This workspace is read-only: commands and changes of files are refused; reading files, listing directories '
    'and checking paths are allowed.'
)


class ReadOnlyWorkspace(WrapperWorkspace):
    """A workspace that reads but refuses `write_bytes`, `write_text`, `make_dir`, `remove` and commands (which
    could change files) with `WorkspaceReadOnlyError`. It restricts this API; it does not isolate anything."""

    @property
    def read_only(self) -> bool:
        return True

    async def write_bytes(self, path: str, data: bytes) -> NoReturn:
        raise WorkspaceReadOnlyError(_REFUSAL)

    async def make_dir(self, path: str) -> NoReturn:
        raise WorkspaceReadOnlyError(_REFUSAL)

    async def remove(self, path: str) -> NoReturn:
        raise WorkspaceReadOnlyError(_REFUSAL)

    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - pydantic-ai 2.68's signature
        cwd: str | None = None,
    ) -> NoReturn:
        raise WorkspaceReadOnlyError(_REFUSAL)
