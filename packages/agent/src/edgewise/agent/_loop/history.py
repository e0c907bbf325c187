"""The message history as sent to the model: adjacent requests merged as pydantic-ai 1.107 sends them, where a
run's own messages start in a history that a capability rewrote, the user prompt of a request sent again, and the
dynamic system prompts of a continued history re-evaluated; the settings change a request records."""

from __future__ import annotations as _annotations

import dataclasses
import itertools
from collections.abc import Sequence
from typing import Any

from .._run.deps import GraphAgentDeps
from .._run.state import GraphAgentState
from .._tools.deferred_calls import DeferredToolResults
from ..exceptions import UserError
from ..messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelSettingsDeltaEvent,
    ModelSettingsDeltaPart,
    RetryFeedbackPart,
    RetryPromptPart,
    SystemPromptPart,
    ToolAvailabilityDeltaPart,
    ToolCallPart,
    ToolReturnPart,
    UserContent,
    UserPromptPart,
    post_compaction_window,
)
from ..models import Model, ModelRequestParameters
from ..models._instruction_history import RECORD_PARTS
from ..models._lookalike_notes import holds_lookalike
from ..settings import ModelSettings, merge_model_settings
from ..tools import RunContext

__all__ = (
    'INTERRUPTED_TOOL_RETURN',
    'SYNTHESIZED_TOOL_RETURN_KEY',
    'check_prompt_fits',
    'close_interrupted_calls',
    'first_new_index',
    'for_model',
    'keep_partial_response',
    'response_to_answer',
    'has_tool_deltas',
    'request_has_tool_deltas',
    'record_settings_change',
    'has_adjacent_same_kind',
    'merge_adjacent',
    'prompt_of',
    'refresh_dynamic_prompts',
    'with_statements',
    'sent_messages',
    'validate_history',
)


def resumed_index_after_hooks(index: int | None, before: int, after: int) -> int | None:
    """Where the resumed request sits after request hooks turned a history of `before` messages into one of `after`:
    at the end on its first request (`index == -1`, the request being sent), later moved by the number of messages
    the hooks added or took out ahead of it; `None` when that number says it was taken out itself."""
    if index == -1:
        return after - 1
    if index is None:
        return None
    shifted = index - (before - after)
    return shifted if shifted >= 0 else None


def first_new_index(
    messages: list[ModelMessage], run_id: str, resumed: ModelRequest | None, resumed_index: int | None = None
) -> int:
    """Where the run's own messages start in a history a capability rewrote: after the request the run resumed
    (found by identity, else by content, else at `resumed_index`, where it sat when the hooks rebuilt it), else at
    the first message of the run."""
    if resumed is not None:
        for index, message in enumerate(messages):
            if message is resumed:
                return index + 1
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if isinstance(message, ModelRequest) and (
                message.parts,
                message.timestamp,
                message.instructions,
                message.metadata,
            ) == (resumed.parts, resumed.timestamp, resumed.instructions, resumed.metadata):
                return index + 1
        if resumed_index is not None and 0 <= resumed_index < len(messages):
            return resumed_index + 1
    return next((i for i, m in enumerate(messages) if m.run_id == run_id), len(messages))


def has_adjacent_same_kind(messages: Sequence[ModelMessage]) -> bool:
    """Whether two requests (or two responses) follow each other in `messages`."""
    return any(type(a) is type(b) for a, b in itertools.pairwise(messages))


def sent_messages(
    state: GraphAgentState, deps: GraphAgentDeps[Any, Any], params: ModelRequestParameters
) -> list[ModelMessage]:
    """The history as sent to the model: adjacent requests merged (and adjacent responses that did not come from a
    model), as pydantic-ai sends them. Only histories given by the caller or changed by a capability can hold them,
    so runs without those send their history as it is. A history holding spoken turns goes through
    `Model.prepare_messages` with the request's `params` (so that the tools it announces are those the request
    serves)."""
    history = state.message_history
    sent = merge_adjacent(history) if deps.merge_adjacent else history
    if not deps.speech.holds(history, _has_speech):  # (only the messages added since the last request are read)
        return sent
    prepared = deps.model.prepare_messages(sent, params)
    # Spoken turns left with nothing to say are dropped, which can leave two requests side by side.
    return prepared if prepared is sent else merge_adjacent(prepared)


def _has_speech(message: ModelMessage) -> bool:
    for part in message.parts:  # noqa: SIM110  # (a loop: `any` would make a generator for every message)
        if part.part_kind == 'speech':
            return True
    return False


def for_model(
    messages: list[ModelMessage], model: Model, params: ModelRequestParameters, deps: GraphAgentDeps[Any, Any]
) -> list[ModelMessage]:
    """`messages` as `model` is sent them (`Model.prepare_messages`: the tools revealed mid-run announced, the records
    of instructions, loads and settings projected, tool call ids fitted to the profile's `tool_call_id_length`, notes
    added next to text copying a framework tag), for a run whose history may hold such parts or text, or a model
    whose profile fixes the ids' length; else `messages`."""
    if (
        deps.tool_deltas
        or model.profile.get('tool_call_id_length') is not None
        # user, tool or retry text copying a framework tag: each message read once (the last one again, since the
        # next request sent can be merged into it)
        or deps.lookalike.holds(messages, holds_lookalike, reread_last=True)
    ):
        return model.prepare_messages(messages, params)
    return messages


_PREPARED_PARTS = (ToolAvailabilityDeltaPart, RetryFeedbackPart, *RECORD_PARTS)


def has_tool_deltas(messages: Sequence[ModelMessage]) -> bool:
    """Whether `messages` hold a part `Model.prepare_messages` renders or drops: a `ToolAvailabilityDeltaPart`, a
    `RetryFeedbackPart`, a record of instructions, capability loads or settings (`InstructionDeltaPart`, ...), or a
    request-scoped system prompt or a statement of an appending one (`context_id`)."""
    return any(request_has_tool_deltas(m) for m in messages if isinstance(m, ModelRequest))


def request_has_tool_deltas(request: ModelRequest) -> bool:
    """`has_tool_deltas([request])`, for the one request each step adds (a loop over its parts, no generator)."""
    for p in request.parts:
        if isinstance(p, _PREPARED_PARTS) or (
            isinstance(p, SystemPromptPart) and (p.scope == 'request' or p.context_id is not None)
        ):
            return True
    return False


def merge_adjacent(history: Sequence[ModelMessage]) -> list[ModelMessage]:
    """`history` with adjacent requests merged, and adjacent responses that did not come from a model."""
    merged: list[ModelMessage] = []
    for message in history:
        last = merged[-1] if merged else None
        if (
            isinstance(message, ModelRequest)
            and isinstance(last, ModelRequest)
            and (not last.instructions or not message.instructions or last.instructions == message.instructions)
        ):
            parts = sorted(
                [*last.parts, *message.parts], key=lambda p: not isinstance(p, ToolReturnPart | RetryPromptPart)
            )
            merged[-1] = ModelRequest(
                parts,
                instructions=last.instructions or message.instructions,
                timestamp=message.timestamp or last.timestamp,
            )
        elif (
            isinstance(message, ModelResponse)
            and isinstance(last, ModelResponse)
            and synthetic_response(last)
            and synthetic_response(message)
        ):
            merged[-1] = dataclasses.replace(last, parts=[*last.parts, *message.parts])
        else:
            merged.append(message)
    return merged


def synthetic_response(response: ModelResponse) -> bool:
    return response.provider_response_id is None and response.provider_name is None and response.model_name is None


def prompt_of(request: ModelRequest) -> str | list[UserContent] | None:
    """The user prompt content of `request`: its one user prompt, or the contents of its user prompts in a list."""
    prompts = [part.content for part in request.parts if isinstance(part, UserPromptPart)]
    if not prompts:
        return None
    if len(prompts) == 1:
        return prompts[0] if isinstance(prompts[0], str) else list(prompts[0])
    combined: list[UserContent] = []
    for content in prompts:
        if isinstance(content, str):
            combined.append(content)
        else:
            combined.extend(content)
    return combined


async def refresh_dynamic_prompts(
    history: list[Any], deps: GraphAgentDeps[Any, Any], ctx: RunContext[Any]
) -> tuple[int, list[SystemPromptPart]]:
    """Re-evaluate the dynamic system prompts in `history`: the index of the first message replaced (or its length),
    and the new statements of the appending ones (`on_change='append'`) whose text changed since their latest part,
    which the history keeps as it is."""
    first = len(history)
    dynamic = {p.function.__qualname__: p for p in deps.system_prompts if not isinstance(p, str) and p.dynamic}
    if not dynamic:
        return first, []
    latest: dict[str, SystemPromptPart] = {}
    for index, message in enumerate(history):
        if not isinstance(message, ModelRequest):
            continue
        parts: list[ModelRequestPart] = []
        for part in message.parts:
            if isinstance(part, SystemPromptPart) and (runner := dynamic.get(part.dynamic_ref or '')) is not None:
                if runner.context_id is not None:
                    latest[runner.function.__qualname__] = part
                else:
                    text = await runner.run(ctx)
                    part = SystemPromptPart(text or '', dynamic_ref=part.dynamic_ref)
            parts.append(part)
        if parts != message.parts:
            # A new message rather than an edit in place: the history belongs to the caller.
            history[index] = dataclasses.replace(message, parts=parts)
            first = min(first, index)
    statements: list[SystemPromptPart] = []
    for ref, part in latest.items():
        runner = dynamic[ref]
        text = await runner.run(ctx) or ''
        if text != part.content:
            statements.append(SystemPromptPart(text, dynamic_ref=ref, context_id=runner.context_id))
    return first, statements


def with_statements(parts: Sequence[ModelRequestPart], statements: list[SystemPromptPart]) -> list[ModelRequestPart]:
    """A request's `parts` with the new `statements` of appending system prompts: each right after its prompt's latest
    part in `parts` (so that it follows the text it replaces), the others at the start."""
    placed = list(parts)
    opening: list[ModelRequestPart] = []
    for statement in statements:
        at = [
            index
            for index, part in enumerate(placed)
            if isinstance(part, SystemPromptPart) and part.dynamic_ref == statement.dynamic_ref
        ]
        if at:
            placed.insert(at[-1] + 1, statement)
        else:
            opening.append(statement)
    return [*opening, *placed]


def validate_history(history: Sequence[ModelMessage] | None) -> list[ModelMessage]:
    """A run's `message_history` as a list of messages (dicts, as JSON brings them, validated into messages).

    Raises:
        UserError: an item is not a valid message.
    """
    if not history:
        return []
    if all(isinstance(m, ModelRequest | ModelResponse) for m in history):
        return list(history)
    try:
        return ModelMessagesTypeAdapter.validate_python(list(history))
    except Exception as exc:
        raise UserError(f'`message_history` holds items that are not valid messages: {exc}') from exc


def check_prompt_fits(user_prompt: Any, history: list[ModelMessage]) -> None:
    """Refuse a new user prompt after a history whose last response has tool calls to answer.

    Raises:
        UserError: it has.
    """
    if user_prompt is not None and history and isinstance(last := history[-1], ModelResponse) and last.tool_calls:
        raise UserError('Cannot provide a new user prompt when the message history contains unprocessed tool calls.')


INTERRUPTED_TOOL_RETURN = 'The tool call was interrupted before a result was produced.'
"""What the model is told of a tool call that an interrupted run left without a result."""
SYNTHESIZED_TOOL_RETURN_KEY = 'pydantic_ai_synthesized_tool_return'
"""The metadata key (set to `True`) of a tool return made up for such a call (pydantic-ai's key, so that histories
read the same in both)."""


def close_interrupted_calls(history: list[ModelMessage], new_prompt: bool) -> list[ModelMessage]:
    """A history that an interrupted run left, made sendable: the tool calls of its last response that have no
    result get one saying they were interrupted (`outcome='interrupted'`). That is done when the history ends with
    a request marked `'interrupted'` (the results of the calls that finished; the others are added to it), or, when
    a new prompt follows, with a response marked `'interrupted'` (a cut stream) that has tool calls. Any other
    history is returned as it is."""
    cut = history[-1] if history else None
    if new_prompt and isinstance(cut, ModelResponse) and cut.state == 'interrupted' and cut.tool_calls:
        return [*history, ModelRequest(_interrupted_returns(cut, set()), timestamp=cut.timestamp)]
    if len(history) < 2 or not isinstance(last := history[-1], ModelRequest) or last.state != 'interrupted':
        return history
    response = history[-2]
    if not isinstance(response, ModelResponse):
        return history
    answered = {p.tool_call_id for p in last.parts if isinstance(p, ToolReturnPart | RetryPromptPart)}
    if not (returns := _interrupted_returns(response, answered)):
        return history
    results = [p for p in last.parts if isinstance(p, ToolReturnPart | RetryPromptPart)]
    others = [p for p in last.parts if not isinstance(p, ToolReturnPart | RetryPromptPart)]
    return [*history[:-1], dataclasses.replace(last, parts=[*results, *returns, *others])]


def _interrupted_returns(response: ModelResponse, answered: set[str]) -> list[ModelRequestPart]:
    returns: list[ModelRequestPart] = []
    for call in response.tool_calls:
        if call.tool_call_id not in answered:
            metadata = {SYNTHESIZED_TOOL_RETURN_KEY: True}
            part = ToolReturnPart(call.tool_name, INTERRUPTED_TOOL_RETURN, call.tool_call_id, metadata=metadata)
            part.timestamp, part.outcome = response.timestamp, 'interrupted'
            returns.append(part)
    return returns


def keep_partial_response(state: GraphAgentState, partial: ModelResponse) -> None:
    """Keep what a response had streamed when an error or a cancellation stopped it, marked `'interrupted'`, at the
    end of the history, and count its usage: `capture_run_messages()` and `RunCancelled` show it. A response that
    `StreamedRunResult.cancel()` stopped on purpose is left to that result, which keeps it."""
    if partial.state == 'interrupted':
        return
    partial.state = 'interrupted'
    partial.run_id = partial.run_id or state.run_id
    partial.conversation_id = partial.conversation_id or state.conversation_id
    state.usage.incr(partial.usage)
    state.message_history.append(partial)


def response_to_answer(history: list[Any], results: DeferredToolResults) -> tuple[ModelResponse, dict[str, Any]]:
    """The history's last response, whose deferred calls `results` answer, and the answers by call id.

    Raises:
        UserError: the history holds no response with tool calls, or a call answered already has a result.
    """
    if not history:
        raise UserError('Tool call results were provided, but the message history is empty.')
    response = next((m for m in reversed(history) if isinstance(m, ModelResponse)), None)
    if response is None:
        raise UserError('Tool call results were provided, but the message history does not contain a `ModelResponse`.')
    if not any(isinstance(p, ToolCallPart) for p in response.parts):
        raise UserError(
            'Tool call results were provided, but the message history does not contain any unprocessed tool calls.'
        )
    answers = results.to_tool_call_results()
    if history[-1] is not response:
        for part in history[-1].parts:
            if isinstance(part, ToolReturnPart | RetryPromptPart) and part.tool_call_id in answers:
                raise UserError(
                    f'Tool call {part.tool_call_id!r} was already executed and its result cannot be overridden.'
                )
    return response, answers


def record_settings_change(
    history: list[ModelMessage], model: Model, settings: ModelSettings | None, recorded: bool
) -> ModelSettingsDeltaEvent | None:
    """Record on the last request of `history` a `ModelSettingsDeltaPart` when the effort level the request sends
    (the unified `thinking` setting over the model's own settings, when it names a level) differs from the one in
    effect (the last such part after the latest compaction), and return its event; else `None`.

    The first level named, and a change to or from no level, open a window (`top_level=True`). Reading the history
    makes it idempotent: a resent request finds the part it recorded. `recorded` is whether the history may hold such
    parts (without, a request naming no level costs no pass over the history).
    """
    if not recorded and not settings and not model.settings:  # (most requests: no setting, nothing recorded)
        return None
    merged = merge_model_settings(model.settings, settings) or {}
    thinking = merged.get('thinking')
    wanted = thinking if isinstance(thinking, str) else None
    if wanted is None and not recorded:
        return None
    current = next(
        (
            part
            for message in reversed(post_compaction_window(history))
            if isinstance(message, ModelRequest)
            for part in reversed(message.parts)
            if isinstance(part, ModelSettingsDeltaPart) and 'thinking' in part.settings
        ),
        None,
    )
    in_effect = current.settings.get('thinking') if current is not None else None
    if in_effect == wanted:
        return None
    top_level = current is None or in_effect is None or wanted is None
    delta = ModelSettingsDeltaPart(settings={'thinking': wanted}, top_level=top_level)
    request = next(message for message in reversed(history) if isinstance(message, ModelRequest))
    request.parts = [*request.parts, delta]
    return ModelSettingsDeltaEvent(part=delta)
