"""`AuthorityWorkspace`: a policy wrapper that caps the authority of a workspace's files."""

from __future__ import annotations as _annotations

from collections.abc import Mapping

from .._messages.workspace_refs import Authority
from ..exceptions import UserError
from ._authority import AuthorityLayer
from .workspace import Workspace, WrapperWorkspace

__all__ = ('AuthorityWorkspace',)


class AuthorityWorkspace(WrapperWorkspace):
    """A workspace whose files carry at most `authority` (`Workspace.authority`, `Workspace.authority_of`).

    Every operation works as before: this changes how a capability should send the files' text to the model,
    not what the agent can do. Wrapping never raises a level: with several wrappers, the lowest wins.

    Args:
        wrapped: The workspace to wrap.
        authority: The level of the workspace's files: `'user'` for the user's own, `'none'` for files nobody on
            the application's side wrote (a cloned repository, say).
        path_authority: Levels for some directories and files (the longest matching path wins), relative to the
            working directory or absolute. `~` is not expanded.

    Raises:
        UserError: A `path_authority` path starts with `~`.
    """

    def __init__(
        self, wrapped: Workspace, *, authority: Authority, path_authority: Mapping[str, Authority] | None = None
    ) -> None:
        super().__init__(wrapped)
        self._authority: Authority = authority
        self._path_authority: dict[str, Authority] = dict(path_authority or {})
        for path in self._path_authority:
            if path.startswith('~'):
                raise UserError(
                    f'`path_authority` path {path!r} starts with `~`, which is not expanded in a workspace (it would '
                    'name a directory `~` in the working directory): give an absolute path, or use '
                    '`LocalWorkspace(path_authority=...)`, which expands `~` on this machine.'
                )

    def _authority_layers(self) -> list[AuthorityLayer]:
        return [*super()._authority_layers(), (self._authority, self._path_authority)]

    def durable_policy(self) -> tuple[object, ...]:
        return (self._authority, self._path_authority)
