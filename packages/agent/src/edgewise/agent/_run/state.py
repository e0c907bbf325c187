"""The state of an agent run: what a stored run keeps (persisted with each snapshot), and the run's ids."""

from __future__ import annotations as _annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

import pydantic
from pydantic_core import core_schema

from .._message_flow.pending import PendingMessage
from .._messages.ids import uuid7
from ..exceptions import IncompleteToolCall, UnexpectedModelBehavior, UserError
from ..messages import ModelMessage, ModelRequestPart, ModelResponse, ToolCallPart
from ..usage import RunUsage

__all__ = (
    'GraphAgentState',
    'NEW_CONVERSATION',
    'new_conversation_id',
    'new_run_id',
    'resolve_conversation_id',
    'resolve_run_id',
)


_new = object.__new__


def new_run_id() -> str:
    """A new unique run id."""
    return os.urandom(16).hex()


NEW_CONVERSATION = 'new'
"""The `conversation_id` that starts a new conversation whatever the message history holds."""


def new_conversation_id() -> str:
    """A new conversation id: a UUID version 7 (time-ordered: 48 bits of Unix milliseconds, then random bits)."""
    return uuid7()


def resolve_conversation_id(explicit: str | None, history: Sequence[ModelMessage]) -> str:
    """The run's conversation id: `explicit` (`'new'` for a fresh one), else the latest one in `history`, else new."""
    if explicit == NEW_CONVERSATION:
        return new_conversation_id()
    if explicit is not None:
        return explicit
    for message in reversed(history):
        if message.conversation_id is not None:
            return message.conversation_id
    return new_conversation_id()


def resolve_run_id(explicit: str | None, history: Sequence[ModelMessage]) -> str:
    """The run's id: `explicit` (a caller's own id, `run(run_id=...)`), else a new one. A run never takes its id from
    `history`: a run continuing a conversation (or resuming deferred calls) is a new run.

    Raises:
        UserError: `explicit` is empty, or a message of `history` already carries it.
    """
    if explicit is None:
        return new_run_id()
    if not explicit:
        raise UserError('`run_id` must be a non-empty string: pass an id of your own, or leave it out for a new one.')
    if any(message.run_id == explicit for message in history):
        raise UserError(
            f'`run_id={explicit!r}` already appears in `message_history`: each run needs an id of its own '
            '(leave `run_id` out to get a new one).'
        )
    return explicit


@dataclass(kw_only=True)
class GraphAgentState:
    """The state of an agent run: everything needed to continue it, all of it serializable with pydantic."""

    message_history: list[ModelMessage] = field(default_factory=list)
    """The conversation so far, including the message history the run was given."""
    usage: RunUsage = field(default_factory=RunUsage)
    """The usage of the run so far."""
    retries: int = 0
    """How many times in a row the output has been retried."""
    tool_retries: dict[str, int] = field(default_factory=dict)
    """How many times in a row each tool has been retried."""
    run_step: int = 0
    """How many model requests the run has made."""
    run_id: str = field(default_factory=new_run_id)
    """The run's id."""
    conversation_id: str = field(default_factory=new_conversation_id)
    """The id of the conversation the run belongs to (shared by runs continuing one message history)."""
    metadata: dict[str, Any] | None = None
    """The run's metadata, computed when it starts and again when it ends well."""
    message_offset: int = 0
    """Where the messages this state stores start: a durable run stores in each snapshot only the messages after
    those its previous snapshot held (`message_history[message_offset:]`), so a step costs the same however
    long the conversation; resuming puts the history back together from the run's snapshots. 0 otherwise."""
    response_in_node: bool = False
    """Whether the last message of the history, the model's response, is stored in the snapshot's node only (the
    `CallToolsNode` that handles it), not in `message_history` too: a durable run sets it from recording a response
    to the end of its handling. Snapshots stored with it put the response back after their messages when a run is
    resumed or shown. Snapshots of earlier versions (without it) hold the response twice."""
    step_results: list[ModelRequestPart] = field(default_factory=list)
    """The results of the tool calls of the step in progress that have finished (a durable run checkpoints
    them one by one, so that a resumed step runs only the calls that had not finished)."""
    operation_results: Annotated[dict[str, Any], pydantic.Field(exclude_if=lambda results: not results)] = field(
        default_factory=dict
    )
    """The journaled results of the `durable_operation` methods called while the node in progress runs, by call
    (a durable run checkpoints each as it is returned, so that a resumed node gets it instead of calling again);
    stored only when there are some."""
    pending_messages: list[PendingMessage] = field(default_factory=list)
    """Content enqueued (`RunContext.enqueue`, `AgentRun.enqueue`) and not yet delivered to the model; stored with
    the run, so that a resumed run still delivers it."""
    last_max_tokens: Annotated[int | None, pydantic.Field(exclude=True)] = field(
        default=None, repr=False, compare=False
    )
    """The `max_tokens` setting of the last request (for error messages only; not persisted)."""

    @classmethod
    def started(
        cls, *, message_history: list[ModelMessage], usage: RunUsage, conversation_id: str, run_id: str
    ) -> GraphAgentState:
        """`GraphAgentState(message_history=..., usage=..., conversation_id=..., run_id=...)`, the state every new run
        starts from, at a lower cost: its `__dict__` made at once (in the order of the fields), not field by field."""
        state = _new(cls)
        state.__dict__ = {
            'message_history': message_history, 'usage': usage, 'retries': 0, 'tool_retries': {}, 'run_step': 0,
            'run_id': run_id, 'conversation_id': conversation_id, 'metadata': None, 'message_offset': 0,
            'response_in_node': False, 'step_results': [], 'operation_results': {}, 'pending_messages': [],
            'last_max_tokens': None,
        }  # fmt: skip
        return state

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: pydantic.GetCoreSchemaHandler) -> Any:
        # `message_history` is written from `_stored_messages` (under the same key, last), not from the field: a
        # function wrapping the whole state's serialization would convert it to Python data and serialize that.
        schema: Any = handler(source)
        resolved: Any = handler.resolve_ref_schema(schema)
        args = resolved['schema']
        field = next(f for f in args['fields'] if f['name'] == 'message_history')
        field['serialization_exclude'] = True
        stored = core_schema.computed_field('_stored_messages', field['schema'], alias='message_history')
        args['computed_fields'] = [*(args.get('computed_fields') or ()), stored]
        resolved['config'] = {**(resolved.get('config') or {}), 'serialize_by_alias': True}
        return schema

    @property
    def _stored_messages(self) -> list[ModelMessage]:
        """The messages a snapshot of this state stores: those after `message_offset` (the others are in the run's
        earlier snapshots), but the response its node holds (`response_in_node`)."""
        offset, history = self.message_offset, self.message_history
        if self.response_in_node:
            return history[offset:-1]
        return history[offset:] if offset else history

    def increment_retries(self, max_retries: int, error: BaseException | None = None) -> None:
        """Count one more output retry.

        Raises:
            UnexpectedModelBehavior: the output retry budget is spent.
        """
        self.retries += 1
        if self.retries > max_retries:
            self.check_incomplete_tool_call()
            raise UnexpectedModelBehavior(f'Exceeded maximum output retries ({max_retries})') from error

    def check_incomplete_tool_call(self) -> None:
        """Raise `IncompleteToolCall` when the last response stopped at the token limit in the middle of a tool
        call (its arguments are not a whole JSON object): retrying it would be cut short again."""
        history = self.message_history
        response = history[-1] if history else None
        if not isinstance(response, ModelResponse) or response.finish_reason != 'length' or not response.parts:
            return
        call = response.parts[-1]
        if not isinstance(call, ToolCallPart):
            return
        try:
            call.args_as_dict(raise_if_invalid=True)
        except ValueError:
            raise IncompleteToolCall(
                f'Model token limit ({self.last_max_tokens or "provider default"}) exceeded while generating a tool '
                'call, resulting in incomplete arguments. Increase the `max_tokens` model setting, or simplify the '
                'prompt to result in a shorter response that will fit within the limit.'
            ) from None
