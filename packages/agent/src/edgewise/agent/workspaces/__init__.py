"""Workspaces: the environment an agent run works in (files and commands), what tools get as `ctx.workspace`.

- `protocol`: what a backend is (`WorkspaceBackend`, `SupportsCommands`, `SupportsFilesystem`, `SupportsRealpath`),
  the values it returns (`CommandResult`, `FileEntry`) and the errors it raises.
- `workspace`: `Workspace`, the API over a backend (relative paths, text, `cwd=`, file operations through the shell
  for a backend that only runs commands), and `WrapperWorkspace`, the base of the policy wrappers.
- `local`: `LocalWorkspaceBackend`, a directory of this machine and its subprocesses.
- `readonly`, `authority`, `unavailable`: `ReadOnlyWorkspace`, `AuthorityWorkspace`, `UnavailableWorkspace`.
"""

from .authority import AuthorityWorkspace
from .local import LocalWorkspaceBackend
from .protocol import (
    CommandResult,
    FileEntry,
    SupportsCommands,
    SupportsFilesystem,
    SupportsRealpath,
    WorkspaceBackend,
    WorkspaceCommand,
    WorkspaceError,
    WorkspaceOutputLimitError,
    WorkspaceReadOnlyError,
    WorkspaceRef,
    WorkspaceTimeoutError,
    WorkspaceUnavailableError,
)
from .readonly import ReadOnlyWorkspace
from .unavailable import UnavailableWorkspace
from .workspace import Workspace, WrapperWorkspace

__all__ = (
    'AuthorityWorkspace',
    'CommandResult',
    'FileEntry',
    'LocalWorkspaceBackend',
    'ReadOnlyWorkspace',
    'SupportsCommands',
    'SupportsFilesystem',
    'SupportsRealpath',
    'UnavailableWorkspace',
    'Workspace',
    'WorkspaceBackend',
    'WorkspaceCommand',
    'WorkspaceError',
    'WorkspaceOutputLimitError',
    'WorkspaceReadOnlyError',
    'WorkspaceRef',
    'WorkspaceTimeoutError',
    'WorkspaceUnavailableError',
    'WrapperWorkspace',
)
