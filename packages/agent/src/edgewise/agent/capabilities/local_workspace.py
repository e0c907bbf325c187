"""`LocalWorkspace`: the capability that gives runs a directory of this machine as their workspace."""

from __future__ import annotations as _annotations

import os
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path

from .._messages.workspace_refs import Authority
from ..tools import AgentDepsT, RunContext
from ..workspaces import (
    AuthorityWorkspace,
    LocalWorkspaceBackend,
    ReadOnlyWorkspace,
    Workspace,
    WorkspaceBackend,
    WorkspaceRef,
)
from ..workspaces._authority import lowest
from .abstract import AbstractCapability

__all__ = ('LocalWorkspace',)


@dataclass
class LocalWorkspace(AbstractCapability[AgentDepsT]):
    """Gives each run a directory of this machine as `ctx.workspace` (a `LocalWorkspaceBackend`): host
    subprocesses and the host filesystem, isolating nothing. For trusted local work; untrusted code wants a
    container- or VM-based workspace.

    It only ever serves its own directory: asked for the environment of another ref, it supplies nothing.
    """

    working_dir: str | Path
    """The directory (`~` expanded; a relative path is taken from the current directory when this is made)."""
    _: KW_ONLY
    read_only: bool = False
    """Whether the workspace is a `ReadOnlyWorkspace` (no commands, no changes of files)."""
    authority: Authority = 'operator'
    """The authority of the directory's files; below `'operator'`, the workspace is an `AuthorityWorkspace`."""
    path_authority: Mapping[str, Authority] | None = None
    """Levels for some directories and files under or outside `working_dir` (`~` expanded; the longest matching
    path wins; see `Workspace.authority_of`)."""
    env: Mapping[str, str] | None = field(default=None, repr=False)
    """Environment variables for every command (beside `PATH`, `HOME` and the locale, nothing else of this
    process's environment reaches commands: do not pass `os.environ`, it holds secrets)."""
    id: str | None = 'local_workspace'
    """The capability's id in `RunContext.capabilities`."""

    def __post_init__(self) -> None:
        # Pinned now: a later change of the current directory does not move the workspace (and a system without
        # POSIX process groups is refused where the capability is written).
        self.working_dir = LocalWorkspaceBackend(self.working_dir).ref.id
        if self.path_authority:
            expanded: dict[str, Authority] = {}
            for path, level in self.path_authority.items():
                key = os.path.expanduser(path)
                expanded[key] = lowest((level, expanded.get(key, level)))  # two spellings keep the lower level
            self.path_authority = expanded

    def get_workspace(self, ctx: RunContext[AgentDepsT], *, ref: WorkspaceRef | None) -> WorkspaceBackend | None:
        backend = LocalWorkspaceBackend(self.working_dir, env=self.env)
        if ref is not None and ref != backend.ref:
            return None  # a ref (from a history, say) never sends host access to another directory
        workspace: WorkspaceBackend = backend
        if self.read_only:
            workspace = ReadOnlyWorkspace(Workspace(workspace))
        if self.authority != 'operator' or self.path_authority:
            workspace = AuthorityWorkspace(
                Workspace(workspace), authority=self.authority, path_authority=self.path_authority
            )
        return workspace
