"""The result of an agent run: its output, its messages and its usage."""

from __future__ import annotations as _annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic

from typing_extensions import TypeVar

from .messages import ModelMessage, ModelRequest, ToolReturnPart
from .usage import RunUsage

if TYPE_CHECKING:
    from ._run_deps import GraphAgentState

__all__ = (
    'AgentRunResult',
    'FinalResult',
    'StreamedRunResult',
    'AgentEventStream',
    'AgentRunResultEvent',
    'AgentStream',
)

OutputDataT = TypeVar('OutputDataT', default=str, covariant=True)


@dataclass
class FinalResult(Generic[OutputDataT]):
    """The output a run ends with, and the output tool call that gave it (if any)."""

    output: OutputDataT
    """The output."""
    tool_name: str | None = None
    """The name of the output tool that gave the output, or `None` for text output."""
    tool_call_id: str | None = None
    """The id of that output tool call."""


@dataclass
class AgentRunResult(Generic[OutputDataT]):
    """What a finished run returns: the output, the messages and the usage."""

    output: OutputDataT
    """The output of the run."""
    _output_tool_name: str | None = field(default=None, repr=False)
    _state: GraphAgentState | None = field(default=None, repr=False)
    _new_message_index: int = field(default=0, repr=False)
    _output_tool_call_id: str | None = field(default=None, repr=False)

    def all_messages(self, *, output_tool_return_content: str | None = None) -> list[ModelMessage]:
        """Every message of the conversation, including the message history the run was given.

        Args:
            output_tool_return_content: Replace the content of the output tool's return part with this
                (to continue the conversation with a different acknowledgement).
        """
        messages = list(self._state.message_history) if self._state is not None else []
        if output_tool_return_content is not None:
            messages = self._with_output_return(messages, output_tool_return_content)
        return messages

    def all_messages_json(self, *, output_tool_return_content: str | None = None) -> bytes:
        """`all_messages()` as JSON."""
        from .messages import ModelMessagesTypeAdapter

        return ModelMessagesTypeAdapter.dump_json(
            self.all_messages(output_tool_return_content=output_tool_return_content)
        )

    def new_messages(self, *, output_tool_return_content: str | None = None) -> list[ModelMessage]:
        """The messages of this run only (without the message history it was given)."""
        return self.all_messages(output_tool_return_content=output_tool_return_content)[self._new_message_index :]

    def new_messages_json(self, *, output_tool_return_content: str | None = None) -> bytes:
        """`new_messages()` as JSON."""
        from .messages import ModelMessagesTypeAdapter

        return ModelMessagesTypeAdapter.dump_json(
            self.new_messages(output_tool_return_content=output_tool_return_content)
        )

    def usage(self) -> RunUsage:
        """The usage of the run."""
        return self._state.usage if self._state is not None else RunUsage()

    @property
    def run_id(self) -> str | None:
        """The id of the run."""
        return self._state.run_id if self._state is not None else None

    def _with_output_return(self, messages: list[ModelMessage], content: str) -> list[ModelMessage]:
        if self._output_tool_name is None or not messages:
            raise ValueError('This run did not end with an output tool call, so there is no output tool return to set.')
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        parts = [
            ToolReturnPart(p.tool_name, content, p.tool_call_id, timestamp=p.timestamp)
            if isinstance(p, ToolReturnPart) and p.tool_call_id == self._output_tool_call_id
            else p
            for p in last.parts
        ]
        messages[-1] = ModelRequest(parts, timestamp=last.timestamp, instructions=last.instructions, run_id=last.run_id)
        return messages

    def __repr__(self) -> str:
        return f'AgentRunResult(output={self.output!r})'


# Streaming results live in their own modules; they are part of this module's public API.
from ._event_stream import AgentEventStream  # noqa: E402
from ._stream_events import AgentRunResultEvent  # noqa: E402
from ._streamed_result import StreamedRunResult  # noqa: E402
from ._streaming import AgentStream  # noqa: E402
