"""Responses a provider suspended mid-turn (`state='suspended'`: Anthropic's `pause_turn`, a background job still
running), and how the pieces of a continued turn fold into one response.

A run asks the model again with the suspended response at the end of the messages; the provider goes on with the
same turn. Each answer is a segment of the turn: one under the same `provider_response_id` is the whole turn so far
(a job polled again) and replaces what came before; one under a new id (or from another model) holds new parts, added
after the earlier ones, with the usages summed. A segment a `FallbackModel` marks as replacing the turn (its pinned
model failed and another started the turn afresh) replaces it. The agent loop (`_loop/continuation.py`) drives the
requests.
"""

from __future__ import annotations as _annotations

import dataclasses
from contextlib import suppress
from typing import Literal

import anyio

from .._messages.continuation_pin import replaces_previous, without_replace_mark
from .._messages.model_messages import ModelResponse
from ._model import Model

__all__ = (
    'MAX_BACKGROUND_POLLS',
    'MAX_GENERATION_CONTINUATIONS',
    'MergeMode',
    'cancel_abandoned_job',
    'cancel_suspended_job',
    'mark_suspended_job_cancelled',
    'merge_mode',
    'merge_responses',
)

MAX_GENERATION_CONTINUATIONS = 10
"""How many times a turn may be suspended again after a segment that generated something new (new parts, or another
model's answer) before the run gives up with `UnexpectedModelBehavior`: a model that never finishes its turn."""

MAX_BACKGROUND_POLLS = 1000
"""How many times one background job (the same `provider_response_id`) may be polled and still be running before the
run gives up with `UnexpectedModelBehavior`; a job may rightly run for minutes, so this bound is a last resort."""

MergeMode = Literal['replace-same-id', 'replace-new', 'accumulate']
"""How a segment folds into the turn so far: `'replace-same-id'` (the same job polled again: the segment is the
whole turn), `'replace-new'` (another model answered, or a `FallbackModel` started the turn afresh: its segment
replaces the turn, the usages are summed) or `'accumulate'` (new parts, added after the earlier ones)."""


def merge_mode(existing: ModelResponse, new: ModelResponse) -> MergeMode:
    """How `new`, the next segment of a suspended turn, folds into `existing`, the turn so far."""
    if replaces_previous(new):  # it may come from the same model as the turn, so this is asked first
        return 'replace-new'
    if existing.provider_response_id and existing.provider_response_id == new.provider_response_id:
        return 'replace-same-id'
    if existing.model_name and new.model_name and existing.model_name != new.model_name:
        return 'replace-new'
    return 'accumulate'


def merge_responses(existing: ModelResponse, new: ModelResponse) -> ModelResponse:
    """The turn so far, `existing`, continued by its next segment `new` (see `merge_mode`). The other fields are the
    new segment's; `provider_details` and `metadata` keep the keys of earlier segments that the new one lacks (a
    `FallbackModel`'s pin stays), the `replace_previous_response` mark is dropped, and the earlier segments'
    `failed_attempts` come first."""
    mode = merge_mode(existing, new)
    if mode == 'replace-same-id':
        merged = new
    elif mode == 'replace-new':
        merged = dataclasses.replace(new, usage=existing.usage + new.usage)
    else:
        merged = dataclasses.replace(
            new,
            parts=[*existing.parts, *new.parts],
            usage=existing.usage + new.usage,
            provider_response_id=new.provider_response_id or existing.provider_response_id,
        )
    if existing.provider_details:
        merged = dataclasses.replace(
            merged, provider_details={**existing.provider_details, **(merged.provider_details or {})}
        )
    if existing.metadata:
        merged = dataclasses.replace(merged, metadata={**existing.metadata, **(merged.metadata or {})})
    if merged.history_digest is None and existing.history_digest is not None:
        # A segment that recorded no digest keeps the turn's earlier one; it covers fewer parts than the merged
        # response holds, so a later request sends the whole history rather than continue from this turn.
        merged = dataclasses.replace(merged, history_digest=existing.history_digest)
    if existing.failed_attempts:  # the attempts before the turn began stay with the turn
        earlier = [*existing.failed_attempts, *(merged.failed_attempts or ())]
        merged = dataclasses.replace(merged, failed_attempts=earlier)
    if (metadata := without_replace_mark(merged.metadata)) is not merged.metadata:
        merged = dataclasses.replace(merged, metadata=metadata)
    return merged


_JOB_CANCELLED = '_edgewise_suspended_job_cancelled'


def mark_suspended_job_cancelled(error: BaseException) -> None:
    """Mark `error` as raised by a model that already cancelled the job of the suspended response it was asked to
    continue (a `FallbackModel` whose pinned model failed): the run does not cancel it a second time."""
    setattr(error, _JOB_CANCELLED, True)


async def cancel_abandoned_job(model: Model, response: ModelResponse, error: BaseException) -> None:
    """`cancel_suspended_job` for `response`, the suspended turn `error` made the run give up on, unless the model
    already cancelled it (`mark_suspended_job_cancelled`)."""
    if getattr(error, _JOB_CANCELLED, False) is not True:
        await cancel_suspended_job(model, response)


async def cancel_suspended_job(model: Model, response: ModelResponse) -> None:
    """Have `model` stop the provider's work on `response`, a suspended turn the run gives up on. It runs shielded
    from the cancellation that may be stopping the run, and an error of its own is dropped: it must not replace the
    error (or cancellation) that ends the run."""
    with anyio.CancelScope(shield=True), suppress(Exception):
        await model.cancel_suspended_response(response)
