"""Workspaces over real temporary directories: the local backend with its native file access, and the same backend
seen through its commands only (so `Workspace` does file operations through the shell)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from edgewise.agent.workspaces import CommandResult, LocalWorkspaceBackend, Workspace, WorkspaceCommand, WorkspaceRef


class CommandsOnly:
    """A backend that only runs commands: what a sandbox without a file API looks like."""

    def __init__(self, backend: LocalWorkspaceBackend) -> None:
        self._backend = backend

    @property
    def ref(self) -> WorkspaceRef:
        return self._backend.ref

    async def working_dir(self) -> str:
        return await self._backend.working_dir()

    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - pydantic-ai 2.68's signature
    ) -> CommandResult:
        return await self._backend.run(command, shell=shell, env=env, timeout=timeout)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The working directory, its real path (the temporary directory may sit behind a symlink)."""
    directory = tmp_path / 'work'
    directory.mkdir()
    return directory.resolve()


@pytest.fixture(params=['native', 'shell'])
def workspace(request: pytest.FixtureRequest, root: Path) -> Workspace:
    backend = LocalWorkspaceBackend(root)
    return Workspace(backend if request.param == 'native' else CommandsOnly(backend))
