"""`VercelAIAdapter`: serves an agent to a Vercel AI SDK chat front end (`useChat`)."""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from pydantic import TypeAdapter

from ...messages import ForceDownloadMode, ModelMessage
from ...output import OutputDataT
from ...tools import AgentDepsT, DeferredToolResults, ToolDenied
from .._adapter import UIAdapter
from ._event_stream import VercelAIEventStream
from ._messages import MessageIdFunc, approval_responses, dump_ui_messages, load_ui_messages
from .request_types import RequestData, UIMessage
from .response_types import BaseChunk

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

__all__ = ('VercelAIAdapter',)

_REQUEST_DATA: TypeAdapter[RequestData] = TypeAdapter(RequestData)


@dataclass
class VercelAIAdapter(UIAdapter[RequestData, UIMessage, BaseChunk, AgentDepsT, OutputDataT]):
    """Runs an agent for one request of an AI SDK chat (`useChat`'s body: the chat id and all its messages)
    and streams the answer as a UI message stream.

    With `sdk_version=6` (or 7), tool calls that need approval are sent as approval requests, and the
    approvals the user gave (`approval-responded` parts) continue the run as `deferred_tool_results`.
    """

    _: KW_ONLY
    sdk_version: Literal[5, 6, 7] = 5
    """The AI SDK major version of the front end: 6 or 7 for tool approvals."""
    server_message_id: str | None = None
    """The id of the assistant's message, sent in the stream's `start` chunk if set."""

    @classmethod
    def build_run_input(cls, body: bytes) -> RequestData:
        """The request body as a `SubmitMessage` or `RegenerateMessage`."""
        return _REQUEST_DATA.validate_json(body)

    @classmethod
    async def from_request(
        cls,
        request: Request,
        *,
        agent: Any,
        sdk_version: Literal[5, 6, 7] = 5,
        server_message_id: str | None = None,
        manage_system_prompt: Literal['server', 'client'] = 'server',
        allowed_file_url_schemes: frozenset[str] = frozenset({'http', 'https'}),
        allowed_file_url_force_download: frozenset[ForceDownloadMode] = frozenset(),
        allow_uploaded_files: bool = False,
        strip_workspace_refs: bool = True,
        **kwargs: Any,
    ) -> VercelAIAdapter[AgentDepsT, OutputDataT]:
        """`UIAdapter.from_request`, with the AI SDK version and the server's message id."""
        return await super().from_request(
            request,
            agent=agent,
            sdk_version=sdk_version,
            server_message_id=server_message_id,
            manage_system_prompt=manage_system_prompt,
            allowed_file_url_schemes=allowed_file_url_schemes,
            allowed_file_url_force_download=allowed_file_url_force_download,
            allow_uploaded_files=allow_uploaded_files,
            strip_workspace_refs=strip_workspace_refs,
            **kwargs,
        )

    @classmethod
    async def dispatch_request(
        cls,
        request: Request,
        *,
        agent: Any,
        sdk_version: Literal[5, 6, 7] = 5,
        server_message_id: str | None = None,
        manage_system_prompt: Literal['server', 'client'] = 'server',
        allowed_file_url_schemes: frozenset[str] = frozenset({'http', 'https'}),
        allowed_file_url_force_download: frozenset[ForceDownloadMode] = frozenset(),
        allow_uploaded_files: bool = False,
        strip_workspace_refs: bool = True,
        **kwargs: Any,
    ) -> Response:
        """`UIAdapter.dispatch_request`, with the AI SDK version and the server's message id; the other arguments
        (`message_history`, `deps`, `model`, `persistence`, ...) are those of `UIAdapter.dispatch_request`."""
        return await super().dispatch_request(
            request,
            agent=agent,
            sdk_version=sdk_version,
            server_message_id=server_message_id,
            manage_system_prompt=manage_system_prompt,
            allowed_file_url_schemes=allowed_file_url_schemes,
            allowed_file_url_force_download=allowed_file_url_force_download,
            allow_uploaded_files=allow_uploaded_files,
            strip_workspace_refs=strip_workspace_refs,
            **kwargs,
        )

    def build_event_stream(self) -> VercelAIEventStream[AgentDepsT, OutputDataT]:
        """A `VercelAIEventStream` for this request."""
        return VercelAIEventStream(
            self.run_input, accept=self.accept, sdk_version=self.sdk_version, server_message_id=self.server_message_id
        )

    @cached_property
    def messages(self) -> list[ModelMessage]:
        """The chat's messages as Edgewise messages."""
        return self.load_messages(self.run_input.messages)

    @cached_property
    def conversation_id(self) -> str | None:
        """The chat's id."""
        return self.run_input.id

    @cached_property
    def deferred_tool_results(self) -> DeferredToolResults | None:
        """The approvals the user answered (AI SDK 6 and later): approved, or denied (with the reason sent to
        the model)."""
        if self.sdk_version < 6:
            return None
        approvals: dict[str, Any] = {}
        for call_id, answer in approval_responses(self.run_input.messages):
            if answer.approved:
                approvals[call_id] = True
            else:
                approvals[call_id] = ToolDenied(answer.reason) if answer.reason else False
        return DeferredToolResults(approvals=approvals) if approvals else None

    @classmethod
    def load_messages(cls, messages: Sequence[UIMessage]) -> list[ModelMessage]:
        """Edgewise messages from the chat's `UIMessage`s."""
        return load_ui_messages(messages)

    @classmethod
    def dump_messages(
        cls,
        messages: Sequence[ModelMessage],
        *,
        generate_message_id: MessageIdFunc | None = None,
        sdk_version: Literal[5, 6, 7] = 5,
    ) -> list[UIMessage]:
        """The chat's `UIMessage`s from Edgewise messages (e.g. a stored conversation to show again).

        Args:
            messages: The history.
            generate_message_id: Makes each message's id (default: stable ids from the messages).
            sdk_version: With 6 or 7, tool calls without a result are shown waiting for approval.
        """
        return dump_ui_messages(messages, message_id=generate_message_id, sdk_version=sdk_version)
