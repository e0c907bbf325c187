"""The keyword arguments the entry points of `Agent` share (`IterOptions`, `RunOptions`), and the checks of the
nodes a run gives (`Agent.is_user_prompt_node` and its siblings, shared with `WrapperAgent`)."""

from __future__ import annotations as _annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Generic, Literal

from typing_extensions import TypedDict, TypeIs, TypeVar

from edgewise.graph import BaseStatePersistence, End

from .._loop.nodes import AgentNode, CallToolsNode, ModelRequestNode, UserPromptNode
from .._message_flow.cancellation import CancellationToken
from .._run.options import AgentInstructions, AgentMetadata, AgentModelSettings, AgentRetries
from .._run.result import FinalResult
from .._streaming.node_loop import EventStreamHandler
from .._tools.deferred_calls import DeferredToolResults
from ..capabilities import AgentCapability
from ..conversation import Conversation
from ..messages import ModelMessage
from ..models import KnownModelName, Model
from ..tool_manager import ParallelExecutionMode, ToolManager
from ..tools import AgentDepsT
from ..toolsets import AbstractToolset
from ..usage import RunUsage, UsageLimits
from ..workspaces import WorkspaceBackend, WorkspaceRef

if TYPE_CHECKING:  # (a spec is loaded only by the programs that use one)
    from ._from_spec import AgentSpec

__all__ = (
    'IterOptions',
    'RunOptions',
    'is_call_tools_node',
    'is_end_node',
    'is_model_request_node',
    'is_user_prompt_node',
    'parallel_tool_call_execution_mode',
)

RunOutputDataT = TypeVar('RunOutputDataT')
_T = TypeVar('_T')
_S = TypeVar('_S')


class IterOptions(TypedDict, Generic[AgentDepsT], total=False):
    """The keyword arguments of `iter` after `output_type`, shared by the typed overloads of `iter`, `run_stream`
    and `run_stream_events` (which differ only in `output_type`, the type of the result)."""

    conversation: Conversation | None
    message_history: Sequence[ModelMessage] | None
    conversation_id: str | None
    run_id: str | None
    model: Model | KnownModelName | None
    instructions: AgentInstructions
    deps: AgentDepsT
    model_settings: AgentModelSettings[Any] | None
    usage_limits: UsageLimits | None
    usage: RunUsage | None
    metadata: AgentMetadata | None
    retries: int | AgentRetries | None
    infer_name: bool
    capabilities: Sequence[AgentCapability[AgentDepsT]] | None
    persistence: BaseStatePersistence[Any, Any] | None
    toolsets: Sequence[AbstractToolset[AgentDepsT]] | None
    deferred_tool_results: DeferredToolResults | None
    spec: dict[str, Any] | AgentSpec | None
    cancellation_token: CancellationToken | None
    timeout: float | None
    workspace: WorkspaceBackend | WorkspaceRef | Literal['new'] | None


class RunOptions(IterOptions[AgentDepsT], total=False):
    """The keyword arguments of `run` and `run_sync` after `output_type`: those of `iter` and a handler of events."""

    event_stream_handler: EventStreamHandler | None


def is_user_prompt_node(node: AgentNode[_T, _S] | End[FinalResult[_S]]) -> TypeIs[UserPromptNode[_T, _S]]:
    """Whether `node` is a `UserPromptNode` (narrowing its type, generic parameters kept)."""
    return isinstance(node, UserPromptNode)


def is_model_request_node(node: AgentNode[_T, _S] | End[FinalResult[_S]]) -> TypeIs[ModelRequestNode[_T, _S]]:
    """Whether `node` is a `ModelRequestNode` (narrowing its type, generic parameters kept)."""
    return isinstance(node, ModelRequestNode)


def is_call_tools_node(node: AgentNode[_T, _S] | End[FinalResult[_S]]) -> TypeIs[CallToolsNode[_T, _S]]:
    """Whether `node` is a `CallToolsNode` (narrowing its type, generic parameters kept)."""
    return isinstance(node, CallToolsNode)


def is_end_node(node: AgentNode[_T, _S] | End[FinalResult[_S]]) -> TypeIs[End[FinalResult[_S]]]:
    """Whether `node` is the `End` of the run (narrowing its type, generic parameters kept)."""
    return isinstance(node, End)


@contextmanager
def parallel_tool_call_execution_mode(mode: ParallelExecutionMode = 'parallel') -> Iterator[None]:
    """Inside the block, the tool calls of every run go as `mode` says (`'sequential'`: one at a time)."""
    with ToolManager.parallel_execution_mode(mode):
        yield
