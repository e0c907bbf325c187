"""Which workspace a run works in: the one given to it, one its capabilities supply (for a ref, or the one the
history's last response records), and the `ModelResponse.workspace_ref` the run records."""

from __future__ import annotations as _annotations

from typing import Any, Literal

from .._run.deps import GraphAgentDeps
from .._run.state import GraphAgentState
from ..capabilities.abstract import AbstractCapability
from ..exceptions import UserError
from ..messages import ModelResponse
from ..workspaces import Workspace, WorkspaceBackend, WorkspaceRef

__all__ = (
    'check_workspace_argument',
    'history_workspace_ref',
    'refresh_workspace_ref',
    'refuse_unresolved_workspace',
    'select_workspace',
)


def check_workspace_argument(workspace: object) -> None:
    """Refuse a `workspace=` that is not a backend, a `WorkspaceRef`, `'new'` or `None`."""
    if isinstance(workspace, AbstractCapability):
        raise UserError(
            f'`{type(workspace).__name__}` is a capability: give it in `capabilities=[...]`, or give `workspace=` a '
            'backend such as `LocalWorkspaceBackend(path)`.'
        )
    if workspace is None or workspace == 'new' or isinstance(workspace, (WorkspaceRef, WorkspaceBackend)):
        return
    raise UserError(
        f"`workspace=` takes a backend or `Workspace`, a `WorkspaceRef(provider=..., id=...)` or 'new', not "
        f'{type(workspace).__name__}: for a directory of this machine, give `LocalWorkspaceBackend(path)`.'
    )


def select_workspace(
    graph_deps: GraphAgentDeps[Any, Any],
    state: GraphAgentState,
    requested: WorkspaceBackend | WorkspaceRef | Literal['new'] | None = None,
) -> bool:
    """Set the run's workspace: the one given to the run, else the first its capabilities supply (`get_workspace`,
    for the ref given, or without one the ref of the history's last response; `'new'` offers none). Whether the run
    has one now."""
    if requested is not None and requested != 'new' and not isinstance(requested, WorkspaceRef):
        graph_deps.workspace = requested if isinstance(requested, Workspace) else Workspace(requested)
        return True
    root = graph_deps.root_capability
    if root is None or not root.overrides('get_workspace'):
        return False
    ref = requested if isinstance(requested, WorkspaceRef) else None
    if requested is None:
        ref = history_workspace_ref(state)
    backend = root.get_workspace(graph_deps.run_context(state), ref=ref)
    if backend is None:
        return False
    if ref is not None and backend.ref is not None and backend.ref != ref:
        raise UserError(
            f'A capability asked for workspace `{ref.provider}:{ref.id}` supplied another one '
            f'(`{backend.ref.provider}:{backend.ref.id}`): its `get_workspace` must return `None` for a ref it cannot '
            'reach.'
        )
    graph_deps.workspace = backend if isinstance(backend, Workspace) else Workspace(backend)
    return True


def history_workspace_ref(state: GraphAgentState) -> WorkspaceRef | None:
    """The `workspace_ref` of the last response of the run's history: the environment the conversation worked in."""
    for message in reversed(state.message_history):
        if isinstance(message, ModelResponse):
            return message.workspace_ref
    return None


def refresh_workspace_ref(graph_deps: GraphAgentDeps[Any, Any], state: GraphAgentState) -> None:
    """Record the run's workspace ref again on the history's last response, if this run made it: a workspace
    capability may have made its environment (and so its ref) after the response came."""
    for message in reversed(state.message_history):
        if isinstance(message, ModelResponse):
            # By `run_id`: a history processor may have copied an earlier run's response, whose ref stays.
            if message.run_id == state.run_id:
                message.workspace_ref = graph_deps.workspace_ref
            return


def refuse_unresolved_workspace(
    graph_deps: GraphAgentDeps[Any, Any],
    requested: WorkspaceBackend | WorkspaceRef | Literal['new'] | None,
    *,
    history_ref: WorkspaceRef | None = None,
) -> None:
    """Raise, for a run (`graph_deps`) that has no workspace, when it asked for one (`'new'`, a ref) that no
    capability supplied, or when the history continues in a workspace (`history_ref`) that none of the agent's
    workspace capabilities reaches (an agent without any, one summarizing the conversation say, ignores it)."""
    root = graph_deps.root_capability
    has_capability = root is not None and root.overrides('get_workspace')
    if requested == 'new':
        raise UserError(
            "`workspace='new'` needs a capability that supplies a workspace, and none did: add one, such as "
            "`capabilities=[LocalWorkspace('.')]`."
        )
    if isinstance(requested, WorkspaceRef):
        named = f'`{requested.provider}:{requested.id}`'
        if not has_capability:
            raise UserError(
                f'Workspace {named} was given to the run, but no capability of the agent supplies workspaces.'
            )
        raise UserError(
            f"Workspace {named} was given to the run, but none of the agent's workspace capabilities reaches it."
        )
    if requested is None and history_ref is not None and has_capability:
        raise UserError(
            f'The message history continues in workspace `{history_ref.provider}:{history_ref.id}`, but none of the '
            "agent's workspace capabilities reaches it: pass `workspace='new'` to start in a new one, or the "
            'workspace to continue in as `workspace=`.'
        )
