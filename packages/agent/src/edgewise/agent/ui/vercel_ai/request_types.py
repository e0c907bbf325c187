"""The messages a Vercel AI SDK chat front end sends (`UIMessage` and its parts), as pydantic models.

They follow the `UIMessage` types of the AI SDK (`ai` on npm, versions 5 to 7): field names are snake_case
here and camelCase on the wire. A tool part's `type` is `tool-<name>`, a dynamic tool's is `dynamic-tool`;
one model per tool `state`. The approval states (`approval-requested`, `approval-responded`,
`output-denied`) are those of AI SDK 6 and later.
"""

from __future__ import annotations as _annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, StrictBool

from ._camel import CamelBaseModel

__all__ = (
    'DataUIPart',
    'DynamicToolApprovalRequestedPart',
    'DynamicToolApprovalRespondedPart',
    'DynamicToolInputAvailablePart',
    'DynamicToolInputStreamingPart',
    'DynamicToolOutputAvailablePart',
    'DynamicToolOutputDeniedPart',
    'DynamicToolOutputErrorPart',
    'DynamicToolUIPart',
    'FileUIPart',
    'ProviderMetadata',
    'ReasoningUIPart',
    'RegenerateMessage',
    'RequestData',
    'SourceDocumentUIPart',
    'SourceUrlUIPart',
    'StepStartUIPart',
    'SubmitMessage',
    'TextUIPart',
    'ToolApproval',
    'ToolApprovalRequested',
    'ToolApprovalRequestedPart',
    'ToolApprovalResponded',
    'ToolApprovalRespondedPart',
    'ToolInputAvailablePart',
    'ToolInputStreamingPart',
    'ToolOutputAvailablePart',
    'ToolOutputDeniedPart',
    'ToolOutputErrorPart',
    'ToolUIPart',
    'UIMessage',
    'UIMessagePart',
)

ProviderMetadata = dict[str, dict[str, Any]]
"""Provider metadata: JSON objects by provider (Edgewise keeps its own under `pydantic_ai`)."""


class TextUIPart(CamelBaseModel):
    """Text."""

    type: Literal['text'] = 'text'
    """The part's kind."""
    text: str
    """The text."""
    state: Literal['streaming', 'done'] | None = None
    """Whether the text is still streaming."""
    provider_metadata: ProviderMetadata | None = None
    """Provider metadata."""


class ReasoningUIPart(CamelBaseModel):
    """The model's reasoning (thinking)."""

    type: Literal['reasoning'] = 'reasoning'
    """The part's kind."""
    text: str
    """The reasoning text."""
    state: Literal['streaming', 'done'] | None = None
    """Whether it is still streaming."""
    provider_metadata: ProviderMetadata | None = None
    """Provider metadata (Edgewise keeps a thinking part's signature there)."""


class SourceUrlUIPart(CamelBaseModel):
    """A source the answer cites, by URL."""

    type: Literal['source-url'] = 'source-url'
    """The part's kind."""
    source_id: str
    """The source's id."""
    url: str
    """Its URL."""
    title: str | None = None
    """Its title."""
    provider_metadata: ProviderMetadata | None = None
    """Provider metadata."""


class SourceDocumentUIPart(CamelBaseModel):
    """A source the answer cites, as a document."""

    type: Literal['source-document'] = 'source-document'
    """The part's kind."""
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


class FileUIPart(CamelBaseModel):
    """A file: a URL, or its content as a `data:` URL."""

    type: Literal['file'] = 'file'
    """The part's kind."""
    media_type: str
    """The file's media type."""
    filename: str | None = None
    """Its name."""
    url: str
    """Where it is, or a `data:` URL of its content."""
    provider_metadata: ProviderMetadata | None = None
    """Provider metadata."""


class StepStartUIPart(CamelBaseModel):
    """The start of a step of the assistant's message."""

    type: Literal['step-start'] = 'step-start'
    """The part's kind."""


class DataUIPart(CamelBaseModel):
    """Application data (`type` is `data-<name>`)."""

    type: Annotated[str, Field(pattern=r'^data-')]
    """`data-` and the data's name."""
    id: str | None = None
    """The data's id."""
    data: Any
    """The data."""


class ToolApprovalRequested(CamelBaseModel):
    """An approval asked for and not given yet."""

    id: str
    """The approval's id."""


class ToolApprovalResponded(CamelBaseModel):
    """The user's answer to an approval."""

    id: str
    """The approval's id."""
    approved: StrictBool
    """Whether the call is approved: a JSON boolean only (`1` or `"true"` are refused, not read as yes)."""
    reason: str | None = None
    """Why (sent to the model with a denial)."""


ToolApproval = ToolApprovalRequested | ToolApprovalResponded
"""An approval of a tool call, asked for or answered."""


class _ToolPart(CamelBaseModel):
    tool_call_id: str
    """The call's id."""
    title: str | None = None
    """A title for the call."""
    input: Any | None = None
    """The call's arguments."""
    provider_executed: bool | None = None
    """Whether the provider ran the tool (a native tool)."""
    call_provider_metadata: ProviderMetadata | None = None
    """Provider metadata of the call."""
    approval: ToolApproval | None = None
    """The call's approval, if it needs one."""


class _StaticTool(_ToolPart):
    type: Annotated[str, Field(pattern=r'^tool-')]
    """`tool-` and the tool's name."""


class _DynamicTool(_ToolPart):
    type: Literal['dynamic-tool'] = 'dynamic-tool'
    """The part's kind."""
    tool_name: str
    """The tool's name."""


class ToolInputStreamingPart(_StaticTool):
    """A tool call whose arguments are streaming."""

    state: Literal['input-streaming'] = 'input-streaming'
    """The call's state."""


class ToolInputAvailablePart(_StaticTool):
    """A tool call with its arguments, not answered yet."""

    state: Literal['input-available'] = 'input-available'
    """The call's state."""


class ToolOutputAvailablePart(_StaticTool):
    """A tool call and its result."""

    state: Literal['output-available'] = 'output-available'
    """The call's state."""
    output: Any | None = None
    """The result."""
    preliminary: bool | None = None
    """Whether more results follow."""


class ToolOutputErrorPart(_StaticTool):
    """A tool call that failed."""

    state: Literal['output-error'] = 'output-error'
    """The call's state."""
    raw_input: Any | None = None
    """Arguments that could not be parsed."""
    error_text: str
    """What went wrong."""


class ToolApprovalRequestedPart(_StaticTool):
    """A tool call waiting for the user's approval."""

    state: Literal['approval-requested'] = 'approval-requested'
    """The call's state."""


class ToolApprovalRespondedPart(_StaticTool):
    """A tool call the user approved or denied, not run yet."""

    state: Literal['approval-responded'] = 'approval-responded'
    """The call's state."""


class ToolOutputDeniedPart(_StaticTool):
    """A tool call the user denied."""

    state: Literal['output-denied'] = 'output-denied'
    """The call's state."""


ToolUIPart = (
    ToolInputStreamingPart
    | ToolInputAvailablePart
    | ToolOutputAvailablePart
    | ToolOutputErrorPart
    | ToolApprovalRequestedPart
    | ToolApprovalRespondedPart
    | ToolOutputDeniedPart
)
"""A call of a tool the front end knows by name, in any state."""


class DynamicToolInputStreamingPart(_DynamicTool):
    """A dynamic tool call whose arguments are streaming."""

    state: Literal['input-streaming'] = 'input-streaming'
    """The call's state."""


class DynamicToolInputAvailablePart(_DynamicTool):
    """A dynamic tool call with its arguments, not answered yet."""

    state: Literal['input-available'] = 'input-available'
    """The call's state."""


class DynamicToolOutputAvailablePart(_DynamicTool):
    """A dynamic tool call and its result."""

    state: Literal['output-available'] = 'output-available'
    """The call's state."""
    output: Any | None = None
    """The result."""
    preliminary: bool | None = None
    """Whether more results follow."""


class DynamicToolOutputErrorPart(_DynamicTool):
    """A dynamic tool call that failed."""

    state: Literal['output-error'] = 'output-error'
    """The call's state."""
    error_text: str
    """What went wrong."""


class DynamicToolApprovalRequestedPart(_DynamicTool):
    """A dynamic tool call waiting for the user's approval."""

    state: Literal['approval-requested'] = 'approval-requested'
    """The call's state."""


class DynamicToolApprovalRespondedPart(_DynamicTool):
    """A dynamic tool call the user approved or denied, not run yet."""

    state: Literal['approval-responded'] = 'approval-responded'
    """The call's state."""


class DynamicToolOutputDeniedPart(_DynamicTool):
    """A dynamic tool call the user denied."""

    state: Literal['output-denied'] = 'output-denied'
    """The call's state."""


DynamicToolUIPart = (
    DynamicToolInputStreamingPart
    | DynamicToolInputAvailablePart
    | DynamicToolOutputAvailablePart
    | DynamicToolOutputErrorPart
    | DynamicToolApprovalRequestedPart
    | DynamicToolApprovalRespondedPart
    | DynamicToolOutputDeniedPart
)
"""A call of a tool the front end does not know by name, in any state."""

UIMessagePart = (
    TextUIPart
    | ReasoningUIPart
    | ToolUIPart
    | DynamicToolUIPart
    | SourceUrlUIPart
    | SourceDocumentUIPart
    | FileUIPart
    | DataUIPart
    | StepStartUIPart
)
"""Any part of a `UIMessage`."""


class UIMessage(CamelBaseModel):
    """A message of the chat as the front end keeps it."""

    id: str
    """The message's id."""
    role: Literal['system', 'user', 'assistant']
    """Who it is from."""
    metadata: Any | None = None
    """Application metadata (Edgewise keeps a message's timestamp under `pydantic_ai`)."""
    parts: list[UIMessagePart]
    """Its parts, in order."""


class SubmitMessage(CamelBaseModel, extra='allow'):
    """A request to answer the chat's messages (a new user message, or approvals given)."""

    trigger: Literal['submit-message'] = 'submit-message'
    """What asked for the request."""
    id: str
    """The chat's id."""
    messages: list[UIMessage]
    """The whole chat."""


class RegenerateMessage(CamelBaseModel, extra='allow'):
    """A request to answer the chat's last message again."""

    trigger: Literal['regenerate-message']
    """What asked for the request."""
    id: str
    """The chat's id."""
    messages: list[UIMessage]
    """The chat up to the message to answer again."""
    message_id: str | None = None
    """The id of the message regenerated."""


RequestData = Annotated[SubmitMessage | RegenerateMessage, Discriminator('trigger')]
"""The body of a chat request."""
