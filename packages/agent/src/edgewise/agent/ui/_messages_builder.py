"""Grows a message history part by part, as protocol messages are read into Edgewise messages."""

from __future__ import annotations as _annotations

from dataclasses import dataclass, field

from ..messages import (
    CapabilityLoadDeltaPart,
    InstructionBaselinePart,
    InstructionDeltaPart,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    ModelSettingsDeltaPart,
    RetryFeedbackPart,
    RetryPromptPart,
    SystemPromptPart,
    ToolAvailabilityDeltaPart,
    ToolReturnPart,
    UserPromptPart,
)

__all__ = ('BuilderCheckpoint', 'MessagesBuilder')

_REQUEST_PARTS = (
    SystemPromptPart,
    UserPromptPart,
    ToolReturnPart,
    RetryPromptPart,
    RetryFeedbackPart,
    ToolAvailabilityDeltaPart,
    CapabilityLoadDeltaPart,
    ModelSettingsDeltaPart,
    InstructionDeltaPart,
    InstructionBaselinePart,
)


@dataclass(frozen=True)
class BuilderCheckpoint:
    """Where a `MessagesBuilder` stood at one moment: compare with `MessagesBuilder.last_modified` later.

    Meaningful only in the process that took it (it holds the builder's last message itself).
    """

    message_count: int
    """How many messages the builder held."""
    last_message: ModelMessage | None
    """The builder's last message then."""
    last_message_part_count: int
    """How many parts that message had then."""


@dataclass
class MessagesBuilder:
    """Builds `ModelRequest`s and `ModelResponse`s from parts added one by one: a request part goes into the
    last message when it is a request and starts a new request otherwise, and so for response parts."""

    messages: list[ModelMessage] = field(default_factory=list)
    """The messages built so far."""

    def add(self, part: ModelRequestPart | ModelResponsePart) -> None:
        """Add `part` to the last message if that message is of its side, else to a new message."""
        last = self.messages[-1] if self.messages else None
        if isinstance(part, _REQUEST_PARTS):
            if isinstance(last, ModelRequest):
                last.parts = [*last.parts, part]
            else:
                self.messages.append(ModelRequest(parts=[part]))
        elif isinstance(last, ModelResponse):
            last.parts = [*last.parts, part]
        else:
            self.messages.append(ModelResponse(parts=[part]))

    def checkpoint(self) -> BuilderCheckpoint:
        """The builder's state now, for `last_modified`."""
        last = self.messages[-1] if self.messages else None
        return BuilderCheckpoint(len(self.messages), last, len(last.parts) if last is not None else 0)

    def last_modified(
        self, checkpoint: BuilderCheckpoint, *, of_type: type[ModelRequest] | type[ModelResponse]
    ) -> ModelMessage | None:
        """The first message of type `of_type` grown or started since `checkpoint`, if any."""
        touched: list[ModelMessage] = []
        before = checkpoint.last_message
        if before is not None and len(before.parts) > checkpoint.last_message_part_count:
            touched.append(before)
        touched += self.messages[checkpoint.message_count :]
        return next((m for m in touched if isinstance(m, of_type)), None)
