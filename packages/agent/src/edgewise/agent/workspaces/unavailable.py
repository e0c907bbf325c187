"""`UnavailableWorkspace`: a backend every operation of which raises `WorkspaceUnavailableError` with a reason."""

from __future__ import annotations as _annotations

from collections.abc import Mapping
from typing import NoReturn

from .protocol import SupportsCommands, WorkspaceBackend, WorkspaceCommand, WorkspaceUnavailableError

__all__ = ('UnavailableWorkspace',)


class UnavailableWorkspace(WorkspaceBackend, SupportsCommands):
    """A backend that reaches no environment: every operation raises `WorkspaceUnavailableError(reason)`.

    Args:
        reason: What the error says (why there is no workspace, and how to get one).
    """

    def __init__(self, reason: str) -> None:
        self.reason = reason
        """The message of every error this backend raises."""

    @property
    def ref(self) -> None:
        """Always `None`: there is no environment to come back to."""
        return None

    async def run(
        self,
        command: WorkspaceCommand,
        *,
        shell: bool = False,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - pydantic-ai 2.68's signature
    ) -> NoReturn:
        raise WorkspaceUnavailableError(self.reason)

    async def working_dir(self) -> NoReturn:
        raise WorkspaceUnavailableError(self.reason)


NO_WORKSPACE = UnavailableWorkspace(
    "No workspace is attached to this run. Add `LocalWorkspace(path)` to the agent's `capabilities` to work in a "
    "directory of this machine (commands and file operations then run with this process's permissions), or add "
    'another capability whose `get_workspace` supplies one.'
)
"""The backend of `RunContext.workspace` when no workspace is attached."""
