"""The chunks of the Vercel AI SDK's UI message stream (what a server streams to a chat front end).

They follow the `UIMessageChunk` types of the AI SDK (`ai` on npm, versions 5 to 7), each sent as one
server-sent event `data: <json>`, camelCase on the wire; the stream ends with `data: [DONE]`. The approval
chunks (`tool-approval-request`, `tool-output-denied`) and `tool-input-error` need AI SDK 6 or later.
"""

from __future__ import annotations as _annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from ._camel import CamelBaseModel
from .request_types import ProviderMetadata

__all__ = (
    'AbortChunk',
    'BaseChunk',
    'DataChunk',
    'DoneChunk',
    'ErrorChunk',
    'FileChunk',
    'FinishChunk',
    'FinishReason',
    'FinishStepChunk',
    'MessageMetadataChunk',
    'ReasoningDeltaChunk',
    'ReasoningEndChunk',
    'ReasoningStartChunk',
    'SourceDocumentChunk',
    'SourceUrlChunk',
    'StartChunk',
    'StartStepChunk',
    'TextDeltaChunk',
    'TextEndChunk',
    'TextStartChunk',
    'ToolApprovalRequestChunk',
    'ToolInputAvailableChunk',
    'ToolInputDeltaChunk',
    'ToolInputErrorChunk',
    'ToolInputStartChunk',
    'ToolOutputAvailableChunk',
    'ToolOutputDeniedChunk',
    'ToolOutputErrorChunk',
)

FinishReason = Literal['stop', 'length', 'content-filter', 'tool-calls', 'error', 'other'] | None
"""Why the message ended."""


class BaseChunk(CamelBaseModel):
    """A chunk of the stream."""

    type: str
    """The chunk's kind."""

    def encode(self, sdk_version: int) -> str:
        """The chunk's JSON for a front end of AI SDK `sdk_version` (fields left unset are not sent)."""
        return self.model_dump_json(by_alias=True, exclude_none=True)


class TextStartChunk(BaseChunk):
    """A text part starts."""

    type: Literal['text-start'] = 'text-start'
    """The chunk's kind."""
    id: str
    """The text part's id."""
    provider_metadata: ProviderMetadata | None = None
    """Provider metadata."""


class TextDeltaChunk(BaseChunk):
    """More text."""

    type: Literal['text-delta'] = 'text-delta'
    """The chunk's kind."""
    delta: str
    """The text added."""
    id: str
    """The text part's id."""
    provider_metadata: ProviderMetadata | None = None
    """Provider metadata."""


class TextEndChunk(BaseChunk):
    """A text part ends."""

    type: Literal['text-end'] = 'text-end'
    """The chunk's kind."""
    id: str
    """The text part's id."""
    provider_metadata: ProviderMetadata | None = None
    """Provider metadata."""


class ReasoningStartChunk(BaseChunk):
    """A reasoning part starts."""

    type: Literal['reasoning-start'] = 'reasoning-start'
    """The chunk's kind."""
    id: str
    """The part's id."""
    provider_metadata: ProviderMetadata | None = None
    """Provider metadata."""


class ReasoningDeltaChunk(BaseChunk):
    """More reasoning."""

    type: Literal['reasoning-delta'] = 'reasoning-delta'
    """The chunk's kind."""
    id: str
    """The part's id."""
    delta: str
    """The text added."""
    provider_metadata: ProviderMetadata | None = None
    """Provider metadata."""


class ReasoningEndChunk(BaseChunk):
    """A reasoning part ends."""

    type: Literal['reasoning-end'] = 'reasoning-end'
    """The chunk's kind."""
    id: str
    """The part's id."""
    provider_metadata: ProviderMetadata | None = None
    """Provider metadata."""


class ErrorChunk(BaseChunk):
    """The run failed."""

    type: Literal['error'] = 'error'
    """The chunk's kind."""
    error_text: str
    """What went wrong."""


class ToolInputStartChunk(BaseChunk):
    """A tool call starts streaming."""

    type: Literal['tool-input-start'] = 'tool-input-start'
    """The chunk's kind."""
    tool_call_id: str
    """The call's id."""
    tool_name: str
    """The tool's name."""
    provider_executed: bool | None = None
    """Whether the provider runs the tool."""
    provider_metadata: ProviderMetadata | None = None
    """Provider metadata (not sent to AI SDK 5, which refuses it on this chunk)."""
    dynamic: bool | None = None
    """Whether the tool is dynamic."""

    def encode(self, sdk_version: int) -> str:
        """The chunk's JSON; without `providerMetadata` before AI SDK 6."""
        exclude = {'provider_metadata'} if sdk_version < 6 else None
        return self.model_dump_json(by_alias=True, exclude_none=True, exclude=exclude)


class ToolInputDeltaChunk(BaseChunk):
    """More of a tool call's arguments (JSON text)."""

    type: Literal['tool-input-delta'] = 'tool-input-delta'
    """The chunk's kind."""
    tool_call_id: str
    """The call's id."""
    input_text_delta: str
    """The JSON text added."""


class ToolInputAvailableChunk(BaseChunk):
    """A tool call's arguments are complete."""

    type: Literal['tool-input-available'] = 'tool-input-available'
    """The chunk's kind."""
    tool_call_id: str
    """The call's id."""
    tool_name: str
    """The tool's name."""
    input: Any
    """The arguments."""
    provider_executed: bool | None = None
    """Whether the provider runs the tool."""
    provider_metadata: ProviderMetadata | None = None
    """Provider metadata."""
    dynamic: bool | None = None
    """Whether the tool is dynamic."""


class ToolInputErrorChunk(BaseChunk):
    """A tool call's arguments are invalid (AI SDK 6)."""

    type: Literal['tool-input-error'] = 'tool-input-error'
    """The chunk's kind."""
    tool_call_id: str
    """The call's id."""
    tool_name: str
    """The tool's name."""
    input: Any
    """The arguments."""
    provider_executed: bool | None = None
    """Whether the provider runs the tool."""
    provider_metadata: ProviderMetadata | None = None
    """Provider metadata."""
    dynamic: bool | None = None
    """Whether the tool is dynamic."""
    error_text: str
    """What is wrong with them."""


class ToolOutputAvailableChunk(BaseChunk):
    """A tool call's result."""

    type: Literal['tool-output-available'] = 'tool-output-available'
    """The chunk's kind."""
    tool_call_id: str
    """The call's id."""
    output: Any
    """The result."""
    provider_executed: bool | None = None
    """Whether the provider ran the tool."""
    dynamic: bool | None = None
    """Whether the tool is dynamic."""
    preliminary: bool | None = None
    """Whether more results follow."""


class ToolOutputErrorChunk(BaseChunk):
    """A tool call failed."""

    type: Literal['tool-output-error'] = 'tool-output-error'
    """The chunk's kind."""
    tool_call_id: str
    """The call's id."""
    error_text: str
    """What went wrong."""
    provider_executed: bool | None = None
    """Whether the provider ran the tool."""
    dynamic: bool | None = None
    """Whether the tool is dynamic."""


class ToolApprovalRequestChunk(BaseChunk):
    """A tool call waits for the user's approval (AI SDK 6)."""

    type: Literal['tool-approval-request'] = 'tool-approval-request'
    """The chunk's kind."""
    approval_id: str
    """The approval's id."""
    tool_call_id: str
    """The call's id."""


class ToolOutputDeniedChunk(BaseChunk):
    """A tool call was denied (AI SDK 6)."""

    type: Literal['tool-output-denied'] = 'tool-output-denied'
    """The chunk's kind."""
    tool_call_id: str
    """The call's id."""


class SourceUrlChunk(BaseChunk):
    """A source cited, by URL."""

    type: Literal['source-url'] = 'source-url'
    """The chunk's kind."""
    source_id: str
    """The source's id."""
    url: str
    """Its URL."""
    title: str | None = None
    """Its title."""
    provider_metadata: ProviderMetadata | None = None
    """Provider metadata."""


class SourceDocumentChunk(BaseChunk):
    """A source cited, as a document."""

    type: Literal['source-document'] = 'source-document'
    """The chunk's kind."""
    source_id: str
    """The source's id."""
    media_type: str
    """Its media type."""
    title: str
    """Its title."""
    filename: str | None = None
    """Its file name."""
    provider_metadata: ProviderMetadata | None = None
    """Provider metadata."""


class FileChunk(BaseChunk):
    """A file the model made."""

    type: Literal['file'] = 'file'
    """The chunk's kind."""
    url: str
    """A `data:` URL of its content (or where it is)."""
    media_type: str
    """Its media type."""


class DataChunk(BaseChunk):
    """Application data (`type` is `data-<name>`)."""

    type: Annotated[str, Field(pattern=r'^data-')]
    """`data-` and the data's name."""
    id: str | None = None
    """The data's id."""
    data: Any
    """The data."""
    transient: bool | None = None
    """Whether the front end should not keep it in the message."""


class StartStepChunk(BaseChunk):
    """A step (one model response and its tool calls) starts."""

    type: Literal['start-step'] = 'start-step'
    """The chunk's kind."""


class FinishStepChunk(BaseChunk):
    """A step ends."""

    type: Literal['finish-step'] = 'finish-step'
    """The chunk's kind."""


class StartChunk(BaseChunk):
    """The assistant's message starts."""

    type: Literal['start'] = 'start'
    """The chunk's kind."""
    message_id: str | None = None
    """The message's id, if the server sets it."""
    message_metadata: Any | None = None
    """The message's metadata."""


class FinishChunk(BaseChunk):
    """The assistant's message ends."""

    type: Literal['finish'] = 'finish'
    """The chunk's kind."""
    finish_reason: FinishReason = None
    """Why."""
    message_metadata: Any | None = None
    """The message's metadata."""


class AbortChunk(BaseChunk):
    """The message was stopped."""

    type: Literal['abort'] = 'abort'
    """The chunk's kind."""
    reason: str | None = None
    """Why."""


class MessageMetadataChunk(BaseChunk):
    """Metadata merged into the assistant's message."""

    type: Literal['message-metadata'] = 'message-metadata'
    """The chunk's kind."""
    message_metadata: Any
    """The metadata."""


class DoneChunk(BaseChunk):
    """The end of the stream (`[DONE]`, not JSON)."""

    type: Literal['done'] = 'done'
    """The chunk's kind."""

    def encode(self, sdk_version: int) -> str:
        """`[DONE]`."""
        return '[DONE]'
