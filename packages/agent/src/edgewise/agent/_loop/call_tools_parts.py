"""What a tool-call step answers with: the status parts of output and skipped calls, how output failures count, the
retry prompt for an answer with no output, the tool kinds stamped on calls, the calls a resumed step still answers,
and the checkpoints of a durable step.
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import anyio

from edgewise.graph import BaseNode, GraphRunContext

from .._output.schema import OutputSchema
from .._run.deps import GraphAgentDeps
from .._run.state import GraphAgentState
from ..exceptions import UnexpectedModelBehavior, UserError
from ..messages import (
    CompactionPart,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    NativeToolCallPart,
    RetryPromptPart,
    SpeechPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from ..tools import RunContext
from .output_hooks import OUTPUT_HOOKS

__all__ = (
    'OUTPUT_INVALID',
    'OUTPUT_NOT_FINAL',
    'OUTPUT_PROCESSED',
    'OUTPUT_SKIPPED',
    'TOOL_SKIPPED',
    'Checkpoints',
    'answer_text',
    'duplicate_call_ids',
    'calls_to_resume',
    'count_output_failure',
    'no_output_retry',
    'output_args_valid',
    'skipped_call',
    'status_part',
    'tag_tool_calls',
    'validate_output',
)


class Checkpoints:
    """Stores each tool call's result in the running node's snapshot as the call finishes (durable runs), so that a
    resumed step runs only the calls that had not finished."""

    def __init__(
        self,
        node: BaseNode[Any, Any, Any],
        ctx: GraphRunContext[GraphAgentState, GraphAgentDeps[Any, Any]],
        retries: int,
    ) -> None:
        self._node = node
        self._ctx = ctx
        # The output retry count as the step found it: the step's output calls are processed again on resume.
        self._retries = retries
        # Made by the first checkpoint: a step of one call (the most common) checkpoints nothing, as its result is
        # in the next snapshot, and a lock costs more to make than the rest of this object.
        self._lock: anyio.Lock | None = None

    async def add(self, part: ModelRequestPart) -> None:
        state, persistence = self._ctx.state, self._ctx.deps.persistence
        assert persistence is not None
        state.step_results.append(part)
        if self._lock is None:  # shared with the operation journal's checkpoints, when the run has one
            journal = self._ctx.deps.operation_journal
            self._lock = anyio.Lock() if journal is None else journal.lock
        async with self._lock:  # concurrent calls: each write holds the results of the writes before it
            await persistence.checkpoint(dataclasses.replace(state, retries=self._retries), self._node)


def count_output_failure(state: GraphAgentState, ctx: RunContext[Any], error: Exception, failed: set[str]) -> None:
    """Count a failed output tool call against its tool's budget (and the run's output retry count)."""
    if ctx.retry >= ctx.max_retries:
        state.check_incomplete_tool_call()
        raise UnexpectedModelBehavior(f'Exceeded maximum output retries ({ctx.max_retries})') from error
    assert ctx.tool_name is not None  # an output tool call's context
    failed.add(ctx.tool_name)
    state.retries += 1


def tag_tool_calls(response: ModelResponse, tool_kinds: dict[str, str]) -> None:
    """Give the calls of tools with a `tool_kind` (`search_tools`, `load_capability`) that kind (and their typed
    part, `LoadCapabilityCallPart`), as pydantic-ai types them."""
    response.parts = [
        ToolCallPart.narrow_type(dataclasses.replace(part, tool_kind=kind))
        if isinstance(part, ToolCallPart) and part.tool_kind is None and (kind := tool_kinds.get(part.tool_name))
        else part
        for part in response.parts
    ]


def duplicate_call_ids(calls: Sequence[ToolCallPart]) -> list[str]:
    """The call ids more than one of `calls` has, in the order each is first repeated (answers are matched to
    calls by id, so such calls cannot be told apart)."""
    seen: set[str] = set()
    duplicates: list[str] = []
    for call in calls:
        if call.tool_call_id in seen and call.tool_call_id not in duplicates:
            duplicates.append(call.tool_call_id)
        seen.add(call.tool_call_id)
    return duplicates


def calls_to_resume(
    history: Sequence[ModelMessage], response: ModelResponse, answers: dict[str, Any], calls: list[ToolCallPart]
) -> list[ToolCallPart]:
    """The calls of `response` a resumed run still has to answer with `answers`: those the request after the response
    (if any) does not answer already. That request stays in the history as it is, and the new request holds only the
    new answers (as pydantic-ai 1.107).

    Raises:
        UserError: the results do not answer exactly the calls left open, or two open calls share an id.
    """
    answered: set[str] = set()
    if history and history[-1] is not response and isinstance(last := history[-1], ModelRequest):
        answered = {p.tool_call_id for p in last.parts if isinstance(p, ToolReturnPart | RetryPromptPart)}
    open_calls = [c for c in calls if c.tool_call_id not in answered]
    if duplicates := duplicate_call_ids(open_calls):
        raise UserError(
            'Tool call results cannot be matched unambiguously because the message history contains duplicate '
            f'tool_call_id values: {duplicates}'
        )
    expected = {c.tool_call_id for c in open_calls}
    if expected != set(answers):
        raise UserError(
            'Tool call results need to be provided for all deferred tool calls. '
            f'Expected: {expected}, got: {set(answers)}'
        )
    return open_calls


def answer_text(response: ModelResponse) -> str:
    """The text answer of a response without tool calls: its text parts after its last native tool call (text before
    one is commentary), a spoken part's transcript counting as text; a compaction summary when there is no text."""
    texts: list[str] = []
    summaries: list[str] = []
    for part in response.parts:
        if isinstance(part, TextPart | SpeechPart):
            texts.append(part.content)
        elif isinstance(part, NativeToolCallPart):
            texts = []
        elif isinstance(part, CompactionPart) and part.content:
            summaries.append(part.content)
    return ''.join(texts) or ''.join(summaries)  # a response that only compacted (`pause_after_compaction`)


def text_as_is(response: ModelResponse, deps: GraphAgentDeps[Any, Any]) -> str | None:
    """The text answer of `response` (one without tool calls) when it is the run's output as it is: no function,
    validator or hook to run it through, and no image to take first (most text answers); else `None`, for
    `CallToolsNode` to handle the response the long way."""
    schema = deps.output_schema
    if not schema.takes_text_as_is or deps.output_validators or deps.hooked & OUTPUT_HOOKS:
        return None
    if schema.allows_image and response.images:  # an image is the output before any text (pydantic-ai)
        return None
    parts = response.parts
    if len(parts) == 1 and type(parts[0]) is TextPart:  # (most answers: one text, which `answer_text` would give)
        return parts[0].content or None
    return answer_text(response) or None


def no_output_retry(schema: OutputSchema, step_tools: dict[str, Any] | None) -> str:
    """What the model is asked when its answer gives no output, as pydantic-ai 2.x words it: the ways it has."""
    ways: list[str] = []
    if schema.tools:
        ways.append('include your response in a tool call')
    elif step_tools is None or step_tools:
        ways.append('call a tool')
    if schema.allows_image:
        ways.append('return an image')
    if schema.allow_text_output or schema.mode in ('native', 'prompted') or schema.auto_outputs is not None:
        ways.insert(0, 'return text')  # the model's own output mode may be text (pydantic-ai 2.x's 'auto')
    return f'Please {" or ".join(ways)}.'


OUTPUT_PROCESSED = 'Final result processed.'
OUTPUT_NOT_FINAL = 'Output tool processed, but its value will not be the final result of the agent run.'
OUTPUT_SKIPPED = 'Output tool not used - a final result was already processed.'
OUTPUT_INVALID = 'Output tool not used - output failed validation.'
OUTPUT_RETRY_FIRST = 'Output not used as the final result - addressing tool retries from this round first.'
TOOL_SKIPPED = 'Tool not executed - a final result was already processed.'


def skipped_call(part: ToolReturnPart | RetryPromptPart | None) -> bool:
    return isinstance(part, ToolReturnPart) and part.content == TOOL_SKIPPED


def output_args_valid(part: ToolReturnPart | RetryPromptPart, validated: bool | None) -> bool | None:
    """`args_valid` of an output call's events, from how it was answered (as pydantic-ai sets it)."""
    if isinstance(part, ToolReturnPart):
        if part.content == OUTPUT_SKIPPED:
            return None
        if part.content == OUTPUT_INVALID:
            return False
    return validated


def status_part(call: ToolCallPart, content: str) -> ToolReturnPart:
    return ToolReturnPart(call.tool_name, content, call.tool_call_id)


async def validate_output(output: Any, ctx: RunContext[Any], deps: GraphAgentDeps[Any, Any]) -> Any:
    for validator in deps.output_validators:
        output = await validator.validate(output, ctx)
    return output
