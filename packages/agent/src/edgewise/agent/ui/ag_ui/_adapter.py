"""`AGUIAdapter`: serves an agent to an AG-UI client."""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from ...messages import ForceDownloadMode, ModelMessage
from ...output import OutputDataT
from ...tools import AgentDepsT, DeferredToolResults, ToolApproved, ToolDefinition, ToolDenied
from ...toolsets import AbstractToolset, ExternalToolset
from .._adapter import UIAdapter
from ._event_stream import AGUIEventStream
from ._interrupts import resume_answer, tool_call_id_of
from ._messages import dump_ag_ui_messages, load_ag_ui_messages
from ._sdk import DEFAULT_AG_UI_VERSION, core
from ._utils import parse_ag_ui_version

if TYPE_CHECKING:
    from starlette.requests import Request

__all__ = ('AGUIAdapter',)


@dataclass
class AGUIAdapter(UIAdapter[Any, Any, Any, AgentDepsT, OutputDataT]):
    """Runs an agent for one AG-UI `RunAgentInput` and streams back AG-UI events.

    The input's tools are the frontend's: a call of one ends the run (`DeferredToolRequests`), for the
    frontend to run and send back as a tool message. Its `state` goes into deps that are a `StateHandler`
    (`StateDeps`); its `thread_id` is the conversation id; its `resume` entries answer the approval interrupts
    a run finished with (approved only by `{"approved": true}`, with `editedArgs` to change the arguments).
    """

    _: KW_ONLY
    ag_ui_version: str = DEFAULT_AG_UI_VERSION
    """The AG-UI version of the client."""

    @classmethod
    def build_run_input(cls, body: bytes) -> Any:
        """The request body as a `RunAgentInput`."""
        return core.RunAgentInput.model_validate_json(body)

    @classmethod
    async def from_request(
        cls,
        request: Request,
        *,
        agent: Any,
        ag_ui_version: str = DEFAULT_AG_UI_VERSION,
        manage_system_prompt: Literal['server', 'client'] = 'server',
        allowed_file_url_schemes: frozenset[str] = frozenset({'http', 'https'}),
        allowed_file_url_force_download: frozenset[ForceDownloadMode] = frozenset(),
        allow_uploaded_files: bool = False,
        strip_workspace_refs: bool = True,
        **kwargs: Any,
    ) -> AGUIAdapter[AgentDepsT, OutputDataT]:
        """`UIAdapter.from_request`, with the client's AG-UI version."""
        return await super().from_request(
            request,
            agent=agent,
            ag_ui_version=ag_ui_version,
            manage_system_prompt=manage_system_prompt,
            allowed_file_url_schemes=allowed_file_url_schemes,
            allowed_file_url_force_download=allowed_file_url_force_download,
            allow_uploaded_files=allow_uploaded_files,
            strip_workspace_refs=strip_workspace_refs,
            **kwargs,
        )

    def build_event_stream(self) -> AGUIEventStream[AgentDepsT, OutputDataT]:
        """An `AGUIEventStream` for this request."""
        return AGUIEventStream(self.run_input, accept=self.accept, ag_ui_version=self.ag_ui_version)

    @cached_property
    def messages(self) -> list[ModelMessage]:
        """The input's messages as Edgewise messages."""
        return self.load_messages(self.run_input.messages)

    @cached_property
    def toolset(self) -> AbstractToolset[AgentDepsT] | None:
        """The frontend's tools, as tools whose calls end the run."""
        tools = self.run_input.tools
        if not tools:
            return None
        definitions = [
            ToolDefinition(name=t.name, description=t.description, parameters_json_schema=t.parameters or {})
            for t in tools
        ]
        return ExternalToolset(definitions, id='ag-ui-frontend')

    @cached_property
    def state(self) -> dict[str, Any] | None:
        """The input's state, if it is a non-empty JSON object."""
        state = self.run_input.state
        return state if isinstance(state, dict) and state else None

    @cached_property
    def conversation_id(self) -> str | None:
        """The input's thread id."""
        return str(self.run_input.thread_id)

    @cached_property
    def deferred_tool_results(self) -> DeferredToolResults | None:
        """The answers of the input's `resume` entries to approval interrupts."""
        entries = self.run_input.resume or ()
        approvals: dict[str, bool | ToolApproved | ToolDenied] = {
            tool_call_id_of(entry.interrupt_id): resume_answer(entry) for entry in entries
        }
        return DeferredToolResults(approvals=approvals) if approvals else None

    @classmethod
    def load_messages(cls, messages: Sequence[Any]) -> list[ModelMessage]:
        """Edgewise messages from AG-UI messages."""
        return load_ag_ui_messages(messages)

    @classmethod
    def dump_messages(
        cls, messages: Sequence[ModelMessage], *, ag_ui_version: str = DEFAULT_AG_UI_VERSION
    ) -> list[Any]:
        """AG-UI messages from Edgewise messages; for a client of an AG-UI version before 0.1.13, which has no
        reasoning messages, without the thinking parts; before 0.1.19, which has no activities, without an MCP App's
        `mcp-apps` activity after its tool return (as the event stream sends it)."""
        version = parse_ag_ui_version(ag_ui_version)
        return dump_ag_ui_messages(messages, reasoning=version >= (0, 1, 13), activities=version >= (0, 1, 19))
