"""The result of an agent run (its output, its messages and its usage), and the event that carries it at the end
of `run_stream_events` (re-exported by `result`)."""

from __future__ import annotations as _annotations

import dataclasses
import warnings
from copy import deepcopy
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Generic, Literal

from typing_extensions import TypeVar

from .. import messages as _messages
from .._tools.deferred_calls import DeferredToolRequests
from .._warnings import PydanticAIDeprecationWarning
from ..conversation import RUN_CONVERSATION, Conversation, RunConversation, mark_stored
from ..messages import ModelMessage, ModelRequest, ModelResponse, ToolReturnPart
from ..usage import RunUsage
from .state import GraphAgentState

if TYPE_CHECKING:
    from ..workspaces.workspace import Workspace

__all__ = ('AgentRunResult', 'AgentRunResultEvent', 'CallableRunUsage', 'FinalResult')

OutputDataT = TypeVar('OutputDataT', default=str, covariant=True)
OutputT = TypeVar('OutputT', default=str)


class CallableRunUsage(RunUsage):
    """A `RunUsage` that can also be called (`result.usage()`, the spelling before pydantic-ai 1.107 made it a
    property): the call warns and returns the usage itself."""

    @classmethod
    def of(cls, usage: RunUsage) -> CallableRunUsage:
        """A callable copy of `usage`."""
        callable_usage = cls.__new__(cls)
        callable_usage.__dict__.update(usage.__dict__)
        return callable_usage

    def __call__(self) -> RunUsage:
        warnings.warn(
            '`usage` is no longer a method; access it as a property (drop the parentheses).',
            PydanticAIDeprecationWarning,
            stacklevel=2,
        )
        return self

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RunUsage):
            return all(getattr(self, f.name) == getattr(other, f.name) for f in dataclasses.fields(RunUsage))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return 'Run' + RunUsage.__repr__(self).removeprefix('CallableRun')


class CallableDatetime(datetime):
    """A `datetime` that can also be called (`result.timestamp()`, the spelling before pydantic-ai 1.107 made it a
    property): the call warns and returns a plain `datetime` of the same value."""

    @classmethod
    def of(cls, value: datetime) -> CallableDatetime:
        """A callable copy of `value`."""
        return cls(value.year, value.month, value.day, value.hour, value.minute, value.second, value.microsecond,
                   value.tzinfo, fold=value.fold)  # fmt: skip

    def __call__(self) -> datetime:
        warnings.warn(
            '`timestamp` is no longer a method; access it as a property (drop the parentheses).',
            PydanticAIDeprecationWarning,
            stacklevel=2,
        )
        return datetime(self.year, self.month, self.day, self.hour, self.minute, self.second, self.microsecond,
                        self.tzinfo, fold=self.fold)  # fmt: skip


@dataclass
class FinalResult(Generic[OutputDataT]):
    """The output a run ends with, and the output tool call that gave it (if any)."""

    output: OutputDataT
    """The output."""
    tool_name: str | None = None
    """The name of the output tool that gave the output, or `None` for text output."""
    tool_call_id: str | None = None
    """The id of that output tool call."""


_STAMPED = ('timestamp', 'instructions', 'run_id', 'conversation_id')
"""The fields of a request a run fills in when they are unset."""


def _rewritten(message: ModelMessage, original: ModelMessage) -> bool:
    """Whether `message` differs from `original` beyond what a run adds to a request it sends: the fields it fills
    in, and parts put around the request's own (a reinjected system prompt, say), which keep their order."""
    filled: dict[str, Any] = {
        name: getattr(message, name, None) for name in _STAMPED if getattr(original, name, False) is None
    }
    if isinstance(message, ModelRequest) and isinstance(original, ModelRequest):
        remaining = iter(message.parts)
        if all(part in remaining for part in original.parts):
            filled['parts'] = message.parts
    return message != dataclasses.replace(original, **filled)


@dataclass
class AgentRunResult(Generic[OutputDataT]):
    """What a finished run returns: the output, the messages and the usage."""

    output: OutputDataT
    """The output of the run."""
    # Results compare by their output alone, as pydantic-ai's do.
    _output_tool_name: str | None = field(default=None, repr=False, compare=False)
    _state: GraphAgentState | None = field(default=None, repr=False, compare=False)
    _new_message_index: int = field(default=0, repr=False, compare=False)
    _output_tool_call_id: str | None = field(default=None, repr=False, compare=False)

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
        return _messages.ModelMessagesTypeAdapter.dump_json(
            self.all_messages(output_tool_return_content=output_tool_return_content)
        )

    def new_messages(self, *, output_tool_return_content: str | None = None) -> list[ModelMessage]:
        """The messages of this run only (without the message history it was given)."""
        return self.all_messages(output_tool_return_content=output_tool_return_content)[self._new_message_index :]

    def new_messages_json(self, *, output_tool_return_content: str | None = None) -> bytes:
        """`new_messages()` as JSON."""
        return _messages.ModelMessagesTypeAdapter.dump_json(
            self.new_messages(output_tool_return_content=output_tool_return_content)
        )

    @property
    def workspace(self) -> Workspace:
        """The workspace the run used, still usable after it (pass it as `workspace=` to go on in it); a detached
        one for a run that had none attached, and for a result not made by a run."""
        workspace: Workspace | None = self.__dict__.get('_workspace')  # (set by the run: a live object, not a field)
        if workspace is None:
            from ..workspaces.workspace import Workspace

            return Workspace.detached()
        return workspace

    def __getstate__(self) -> dict[str, Any]:
        # A pickled result (a DBOS workflow's) leaves the live workspace behind: it may hold secrets and means
        # nothing in another process; its ref stays on the responses (`workspace_ref`).
        state = dict(self.__dict__)
        state.pop('_workspace', None)
        return state

    @property
    def usage(self) -> CallableRunUsage:
        """The usage of the run (`result.usage`; calling it, `result.usage()`, still works but is deprecated)."""
        return CallableRunUsage.of(self._state.usage if self._state is not None else RunUsage())

    @property
    def response(self) -> ModelResponse:
        """The last response of the model (before the output tool's acknowledgement, if any)."""
        for message in reversed(self.all_messages()):
            if isinstance(message, ModelResponse):
                return message
        raise ValueError('No response found in the message history')

    @property
    def timestamp(self) -> CallableDatetime:
        """When the model's last response was made (`result.timestamp`; calling it still works but is deprecated)."""
        return CallableDatetime.of(self.response.timestamp)

    @property
    def run_id(self) -> str | None:
        """The id of the run."""
        return self._state.run_id if self._state is not None else None

    @property
    def conversation_id(self) -> str | None:
        """The id of the conversation the run belongs to."""
        return self._state.conversation_id if self._state is not None else None

    @property
    def conversation(self) -> Conversation:
        """The run's `Conversation`, to carry into the next run (`conversation=`) or to store: its messages, its usage
        (copies of both), its id, the deferred tool calls it waits on when the run ended with `DeferredToolRequests`,
        and, for a run that continued a stored conversation, its revision and where the messages its store does not
        have start (`new_message_index`). Each access makes a new one: a store advances the `revision` of the one it
        saves, so keep that one to go on with."""
        output = self.output
        carried = self._carried()
        conversation = Conversation(
            messages=self.all_messages(),
            usage=deepcopy(self._state.usage) if self._state is not None else RunUsage(),
            deferred_tool_requests=deepcopy(output) if isinstance(output, DeferredToolRequests) else None,
            revision=carried.revision if carried is not None else None,
        )
        if self.conversation_id is not None:
            conversation.conversation_id = self.conversation_id
        index = self._unsaved_start(conversation.messages, carried)
        if index is not None and carried is not None and carried.unchecked:
            conversation.new_message_index = index  # the store compares the messages before it with its own
        elif index is not None:
            mark_stored(conversation, conversation.messages[:index])
        return conversation

    def _carried(self) -> RunConversation | None:
        return self._state.__dict__.get(RUN_CONVERSATION) if self._state is not None else None

    def _unsaved_start(self, messages: list[ModelMessage], carried: RunConversation | None) -> int | None:
        """Where the messages the store does not have start: after all of them once a store saved this result;
        else before the unsaved ones the run was given, while they are still there just before the run's own."""
        if carried is None:
            return None
        if carried.saved:
            return len(messages)
        if carried.unsaved is None:
            return None
        start = self._new_message_index - len(carried.unsaved)
        given = messages[start : self._new_message_index] if start >= 0 else []
        if len(given) != len(carried.unsaved) or any(map(_rewritten, given, carried.unsaved)):
            return None  # a capability rewrote the history it was given: the store compares it all
        return start

    def _conversation_saved(self, revision: str) -> None:
        """A store saved this result's conversation: its `conversation` goes on from `revision`."""
        if self._state is None:
            return
        carried = self._state.__dict__.setdefault(RUN_CONVERSATION, RunConversation(revision=None, unsaved=None))
        carried.revision, carried.unchecked, carried.saved = revision, False, True

    @property
    def metadata(self) -> dict[str, Any] | None:
        """The run's metadata (`Agent(metadata=...)`, `run(metadata=...)`), as computed when it ended."""
        return self._state.metadata if self._state is not None else None

    def _with_output_return(self, messages: list[ModelMessage], content: str) -> list[ModelMessage]:
        name = self._output_tool_name
        if name is None or not messages:
            raise ValueError('Cannot set output tool return content when the return type is `str`.')
        last = messages[-1]
        target = next(
            (p for p in last.parts if isinstance(p, ToolReturnPart) and p.tool_name == name
             and p.tool_call_id == (self._output_tool_call_id or p.tool_call_id)),
            None,
        )  # fmt: skip
        if target is None:
            raise LookupError(f'No tool call found with tool name {name!r}.')
        parts = [
            ToolReturnPart(p.tool_name, content, p.tool_call_id, timestamp=p.timestamp) if p is target else p
            for p in last.parts
        ]
        messages[-1] = dataclasses.replace(last, parts=parts)  # type: ignore[arg-type]
        return messages

    def __repr__(self) -> str:
        return f'AgentRunResult(output={self.output!r})'


@dataclass(repr=False)
class AgentRunResultEvent(Generic[OutputT]):
    """The last event of `Agent.run_stream_events`: the run's result."""

    result: AgentRunResult[OutputT]
    """The result of the run."""
    _: KW_ONLY
    event_kind: Literal['agent_run_result'] = 'agent_run_result'
    """Tag of this event kind."""

    def __repr__(self) -> str:
        return f'AgentRunResultEvent(result={self.result!r})'
