"""Workspaces: the environment an agent run works in (files and commands), what tools get as `ctx.workspace`.

- `protocol`: what a backend is (`WorkspaceBackend`, `SupportsCommands`, `SupportsFilesystem`, `SupportsRealpath`),
  the values it returns (`CommandResult`, `FileEntry`) and the errors it raises.
- `workspace`: `Workspace`, the API over a backend (relative paths, text, `cwd=`, file operations through the shell
  for a backend that only runs commands), and `WrapperWorkspace`, the base of the policy wrappers.
- `local`: `LocalWorkspaceBackend`, a directory of this machine and its subprocesses.
- `readonly`, `authority`, `unavailable`: `ReadOnlyWorkspace`, `AuthorityWorkspace`, `UnavailableWorkspace`.
"""

from typing import TYPE_CHECKING

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
from .unavailable import UnavailableWorkspace
from .workspace import Workspace, WrapperWorkspace

if TYPE_CHECKING:
    from .authority import AuthorityWorkspace
    from .local import LocalWorkspaceBackend
    from .readonly import ReadOnlyWorkspace

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

# The backends and policies a run only has when it asks for them: imported on first use, so that every agent (whose
# `RunContext.workspace` is a `Workspace`) does not load subprocess handling.
_LAZY = {'AuthorityWorkspace': '.authority', 'LocalWorkspaceBackend': '.local', 'ReadOnlyWorkspace': '.readonly'}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
