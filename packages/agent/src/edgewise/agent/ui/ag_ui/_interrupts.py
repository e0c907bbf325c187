"""Tool approvals through AG-UI interrupts: a run waiting for approvals finishes with one interrupt per call;
the client answers with `resume` entries on its next request."""

from __future__ import annotations as _annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, StrictBool, ValidationError
from pydantic.alias_generators import to_camel

from ...exceptions import UserError
from ...messages import ToolCallPart
from ...tools import ToolApproved, ToolDenied
from ._sdk import core

__all__ = ('INTERRUPT_PREFIX', 'approval_interrupt', 'resume_answer', 'tool_call_id_of')

INTERRUPT_PREFIX = 'int-'
"""An interrupt's id is this and the id of the tool call it asks about."""


class _Answer(BaseModel):
    """The payload a client resumes an approval interrupt with."""

    model_config = ConfigDict(alias_generator=to_camel)

    approved: StrictBool
    edited_args: dict[str, Any] | None = None
    reason: str | None = None


_ANSWER_SCHEMA: dict[str, Any] = {
    'type': 'object',
    'properties': {'approved': {'type': 'boolean'}, 'editedArgs': {'type': 'object'}, 'reason': {'type': 'string'}},
    'required': ['approved'],
}


def approval_interrupt(call: ToolCallPart, metadata: dict[str, dict[str, Any]]) -> Any:
    """The interrupt asking for the approval of `call` (with its metadata from `DeferredToolRequests`)."""
    return core.Interrupt(
        id=f'{INTERRUPT_PREFIX}{call.tool_call_id}',
        reason='tool_call',
        tool_call_id=call.tool_call_id,
        message=f'Approve {call.tool_name}({call.args_as_json_str()})?',
        response_schema=dict(_ANSWER_SCHEMA),
        metadata=metadata.get(call.tool_call_id),
    )


def tool_call_id_of(interrupt_id: str) -> str:
    """The id of the tool call an interrupt asks about.

    Raises:
        UserError: the id is not one of an approval interrupt.
    """
    if not interrupt_id.startswith(INTERRUPT_PREFIX):
        raise UserError(
            f'Resume entry for interrupt {interrupt_id!r}: not an interrupt this agent sent (their ids start with '
            f'{INTERRUPT_PREFIX!r} and the tool call id).'
        )
    return interrupt_id.removeprefix(INTERRUPT_PREFIX)


def resume_answer(entry: Any) -> ToolApproved | ToolDenied:
    """The approval a resume entry gives: approved only by a valid payload with `approved: true`, denied
    otherwise (a cancelled entry, or a payload that is not understood, denies: nothing runs by mistake)."""
    if entry.status == 'cancelled':
        return ToolDenied('Cancelled by user.')
    try:
        answer = _Answer.model_validate(entry.payload)
    except ValidationError:
        return ToolDenied()
    if answer.approved:
        return ToolApproved(override_args=answer.edited_args)
    return ToolDenied(answer.reason) if answer.reason else ToolDenied()
