"""Running the function tool calls of one model response: validation, retries, concurrency, deferral, usage.

Calls go through the run's toolset (`GraphAgentDeps.toolset`), which lists the step's tools; the arguments
are validated with each tool's validator before the toolset calls it. A call is deferred (the run will end
on it) when its tool is external or needs approval, or when the tool raises `CallDeferred` or
`ApprovalRequired`. When a run resumes with `DeferredToolResults`, the deferred calls get their answers here.
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

import anyio

from .._run.deps import GraphAgentDeps
from .._run.state import GraphAgentState
from .._tools.deferred_calls import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied
from ..exceptions import (
    ApprovalRequired,
    CallDeferred,
    ModelRetry,
    ToolFailed,
    ToolFailedError,
    ToolRetryError,
    UnexpectedModelBehavior,
    UserError,
)
from ..messages import (
    ModelRequest,
    ModelRequestPart,
    RetryPromptPart,
    ToolAvailabilityDeltaPart,
    ToolCallPart,
    ToolReturn,
    ToolReturnPart,
    UserPromptPart,
)
from ..tool_manager import ToolManager, ValidatedToolCall
from ..toolsets import ToolsetTool
from ..toolsets._tool_search import discovered_tool_names
from .call_tools_parts import duplicate_call_ids
from .step_tool_manager import prepare_step_tools

__all__ = (
    'answer_deferred_inline',
    'interrupted_request',
    'validate_for_events',
    'run_tool_calls',
    'tool_retry_prompt',
    'ToolCallsOutcome',
    'unknown_tool_exhausted',
)


def tool_retry_prompt(call: ToolCallPart, content: Any) -> RetryPromptPart:
    """The retry prompt answering a tool call (function, output or unknown tool): `content` tells the model
    what to fix."""
    return RetryPromptPart(content, tool_name=call.tool_name, tool_call_id=call.tool_call_id)


def unknown_tool_part(call: ToolCallPart, available: Sequence[str]) -> RetryPromptPart:
    """The retry prompt for a call of a tool that does not exist (or is hidden in this step)."""
    names = ', '.join(repr(name) for name in sorted(available))
    hint = f'Available tools: {names}' if names else 'No tools available.'
    return tool_retry_prompt(call, f'Unknown tool name: {call.tool_name!r}. {hint}')


@dataclass
class _Deferral:
    kind: Literal['external', 'unapproved']
    metadata: dict[str, Any] | None = None


@dataclass
class _Returned:
    """A tool's `ToolReturn` split: its return part, the user prompt of its `content`, the tools it reveals."""

    part: ToolReturnPart
    prompt: UserPromptPart | None = None
    tools: list[str] | None = None


@dataclass
class ToolCallsOutcome:
    """What running the calls of a response gave: the parts for the next request and the deferred calls."""

    parts: list[ModelRequestPart] = field(default_factory=list)
    """Tool returns and retry prompts, in call order (unknown tools' retry prompts last)."""
    deferred: DeferredToolRequests = field(default_factory=DeferredToolRequests)
    """The calls the run ends on: external ones and ones waiting for approval."""

    @property
    def has_deferred(self) -> bool:
        """Whether any call was deferred."""
        return bool(self.deferred.calls or self.deferred.approvals)


def unknown_tool_exhausted(call: ToolCallPart, state: GraphAgentState, deps: GraphAgentDeps[Any, Any]) -> bool:
    """Whether a call of an unknown tool ends the run (its name has no retries left) instead of a retry prompt."""
    return state.tool_retries.get(call.tool_name, 0) >= deps.default_tool_retries


def _unknown(call: ToolCallPart, state: GraphAgentState, deps: GraphAgentDeps[Any, Any]) -> RetryPromptPart:
    if unknown_tool_exhausted(call, state, deps):
        state.check_incomplete_tool_call()
        name, max_retries = call.tool_name, deps.default_tool_retries
        raise UnexpectedModelBehavior(f'Tool {name!r} exceeded max retries count of {max_retries}')
    return unknown_tool_part(call, [*(deps.step_tools or {}), *deps.output_schema.tools])


def _withheld(tool: ToolsetTool[Any], state: GraphAgentState, deps: GraphAgentDeps[Any, Any]) -> str | None:
    """For a tool the model was not shown (still hidden by a tool search or an unloaded capability): the text of
    the retry prompt refusing its call, saying what reveals it (as pydantic-ai 2.x: guessing a hidden tool's name
    does not run it); `None` for a tool the model may call.

    Raises:
        UnexpectedModelBehavior: the tool's retries are used up.
    """
    tool_def = tool.tool_def
    if not tool_def.defer_loading:
        return None
    owner = tool_def.capability_id
    deferred_owner = owner is not None and getattr(deps.capabilities.get(owner), 'defer_loading', False) is True
    if deferred_owner and owner not in deps.loaded_capability_ids:
        message = (
            f'Tool {tool_def.name!r} is not available yet: it belongs to capability {owner!r}. Call '
            "`load_capability` for it first, then call the tool again once you've read the capability's instructions."
        )
    elif tool_def.name in discovered_tool_names(state.message_history):  # found by a search in this very response
        return None
    else:
        message = (
            f"Tool {tool_def.name!r} is not available yet: search for it first, then call it again once you've seen "
            'its schema.'
        )
    if state.tool_retries.get(tool_def.name, 0) >= tool.max_retries:
        state.check_incomplete_tool_call()
        raise UnexpectedModelBehavior(f'Tool {tool_def.name!r} exceeded max retries count of {tool.max_retries}')
    return message


async def _run_one(
    tool: ToolsetTool[Any],
    call: ToolCallPart,
    state: GraphAgentState,
    deps: GraphAgentDeps[Any, Any],
    answer: Any = None,
    metadata: Any = None,
    validated: ValidatedToolCall[Any] | None = None,
) -> ModelRequestPart | _Returned | _Deferral:
    """Run one call; `answer` is its `DeferredToolResults` entry when the run resumes with one, `validated` its
    validation when it was validated already (to tell `args_valid` in a streamed call event)."""
    if isinstance(answer, ToolDenied):
        return ToolReturnPart(call.tool_name, answer.message, call.tool_call_id, outcome='denied')
    if isinstance(answer, ModelRetry):
        return tool_retry_prompt(call, answer.message)
    if isinstance(answer, ToolFailed):
        return ToolReturnPart(call.tool_name, answer.message, call.tool_call_id, outcome='failed')
    if isinstance(answer, RetryPromptPart):
        return dataclasses.replace(answer, tool_name=call.tool_name, tool_call_id=call.tool_call_id)
    if answer is None and (withheld := _withheld(tool, state, deps)) is not None:
        return tool_retry_prompt(call, withheld)
    external = tool.tool_def.kind == 'external'
    if answer is not None and not isinstance(answer, ToolApproved):
        return _return_part(call, answer, tool.tool_def.tool_kind)  # a `ToolReturn` answer splits as a tool's
    approved = isinstance(answer, ToolApproved)
    if isinstance(answer, ToolApproved) and answer.override_args is not None:
        call = dataclasses.replace(call, args=answer.override_args)
    manager: ToolManager[Any] = deps.tool_manager
    # A tool deferred by its kind is deferred as such: a deferral its validator raises adds nothing (no metadata).
    by_kind: _Deferral | None = None
    if external or (tool.tool_def.kind == 'unapproved' and not approved):
        by_kind = _Deferral('external' if external else 'unapproved')
    try:
        if validated is None:  # (a call validated for its event was validated as it runs here, approved or not)
            validated = await manager.validate_tool_call(call, approved=approved, metadata=metadata)
        if validated.args_valid:
            if external and approved:
                raise UserError(
                    f'External tools cannot be called: pass the result of {call.tool_name!r} in '
                    '`DeferredToolResults.calls`, not an approval.'
                )
            if by_kind is not None:
                return by_kind
        result = await manager.execute_tool_call(validated)
    except ToolRetryError as exc:
        return exc.tool_retry
    except ToolFailedError as exc:
        return exc.tool_failed
    except CallDeferred as exc:
        return by_kind or _Deferral('external', exc.metadata)
    except ApprovalRequired as exc:
        return by_kind or _Deferral('unapproved', exc.metadata)
    except UnexpectedModelBehavior:
        state.check_incomplete_tool_call()  # arguments cut by the token limit: say so rather than "retries"
        raise
    return _return_part(call, result, tool.tool_def.tool_kind)


def _return_part(call: ToolCallPart, result: Any, tool_kind: str | None = None) -> ToolReturnPart | _Returned:
    # A `ToolReturn` splits into the tool's result (with its metadata), a user prompt sent after the results and the
    # deferred tools it reveals.
    if isinstance(result, ToolReturn):
        _check_tool_names(result.tools)
        part = ToolReturnPart(
            call.tool_name, result.return_value, call.tool_call_id, metadata=result.metadata, tool_kind=tool_kind
        )
        if tool_kind is not None:
            part = ToolReturnPart.narrow_type(part)
        prompt = UserPromptPart(result.content) if result.content else None
        return _Returned(part, prompt, result.tools) if prompt is not None or result.tools else part
    if isinstance(result, list) and any(isinstance(item, ToolReturn) for item in result):
        raise UserError(
            f'The return value of tool {call.tool_name!r} contains invalid nested `ToolReturn` objects. '
            '`ToolReturn` should be used directly.'
        )
    part = ToolReturnPart(call.tool_name, result, call.tool_call_id, tool_kind=tool_kind)
    return part if tool_kind is None else ToolReturnPart.narrow_type(part)


def _check_tool_names(tools: object) -> None:
    """Refuse a `ToolReturn.tools` that is not a sequence of tool names (`None`: reveals none).

    Raises:
        UserError: `tools` is a bare string, not a sequence, or holds something other than strings.
    """
    if tools is None:
        return
    if isinstance(tools, str) or not isinstance(tools, Sequence) or not all(isinstance(name, str) for name in tools):
        raise UserError(
            '`ToolReturn.tools` must be a list of tool names: pass a list of strings (not a bare string, another '
            'kind of value or non-string items).'
        )


def _reveal(
    result: _Returned, call: ToolCallPart, revealed: set[str], deps: GraphAgentDeps[Any, Any], state: GraphAgentState
) -> ToolAvailabilityDeltaPart | None:
    """The delta part recording the tools `result` reveals, those in `revealed` (by the history or an earlier call
    of the step; updated) left out; `None` when none is left.

    Raises:
        UserError: a tool to reveal belongs to a deferred capability that is not loaded (loading the capability is
            what reveals its tools, with its instructions and hooks).
    """
    tools = list(dict.fromkeys(result.tools or ()))
    run_ctx = deps.run_context(state)
    step_tools = deps.step_tools or {}
    for name in tools:
        tool = step_tools.get(name)
        owner = None if tool is None else tool.capability_id
        if owner is not None and owner in run_ctx.capabilities and owner not in run_ctx.active_capability_ids:
            raise UserError(
                f'`ToolReturn.tools` cannot reveal {name!r}: it belongs to capability {owner!r}, which must be '
                'loaded with `load_capability` so its instructions and hooks activate with it.'
            )
    added = [name for name in tools if name not in revealed]
    revealed.update(added)
    deps.discovered_tool_names.update(added)  # the run context answers at once (the next step reads the history)
    deps.tool_deltas = True
    return ToolAvailabilityDeltaPart(tools_added=added, tool_call_id=call.tool_call_id) if added else None


async def run_tool_calls(
    calls: Sequence[ToolCallPart],
    state: GraphAgentState,
    deps: GraphAgentDeps[Any, Any],
    unknown_calls: Sequence[ToolCallPart] = (),
    answers: Mapping[str, Any] | None = None,
    metadata: Mapping[str, Any] | None = None,
    on_result: Callable[[ModelRequestPart], Awaitable[None]] | None = None,
    validated: Mapping[str, ValidatedToolCall[Any]] | None = None,
    *,
    checkpoint_all: bool = False,
) -> ToolCallsOutcome:
    """Run the calls (concurrently unless one of the tools is `sequential`); the parts come in call order,
        followed by a retry prompt for each call of an unknown tool, then the content of `ToolReturn`s. `answers`
        are the resumed run's deferred tool results by call id (`metadata` its metadata).

        A call whose result is in `state.step_results` (checkpointed before a durable run was resumed) is not run
        again; `on_result` is awaited with each new result as its call finishes (to checkpoint it), but the last (unless
    `checkpoint_all`: more work of the step comes before its next snapshot).

        Updates the run's tool call count (checking `tool_calls_limit` first, counting the unknown calls as
        pydantic-ai does) and each tool's retry count (unknown tools included, on the agent's tool retry budget).
    """
    outcome = ToolCallsOutcome()
    if not calls and not unknown_calls:
        return outcome
    deps.usage_limits.check_before_tool_call(state.usage, len(calls) + len(unknown_calls), state.message_history)
    unknown_parts = [_unknown(call, state, deps) for call in unknown_calls]  # checked before any tool runs
    tools = deps.step_tool_functions
    answers = answers or {}
    meta = metadata or {}
    checked = validated or {}
    results: list[ModelRequestPart | _Returned | _Deferral | None] = [None] * len(calls)
    pending = list(enumerate(calls))
    if state.step_results:
        stored = {p.tool_call_id: p for p in state.step_results if isinstance(p, ToolReturnPart | RetryPromptPart)}
        for i, call in enumerate(calls):
            results[i] = stored.get(call.tool_call_id)
        pending = [(i, call) for i, call in pending if results[i] is None]
    unfinished = [len(pending)]

    async def one(i: int, call: ToolCallPart) -> None:
        call_id = call.tool_call_id
        result = await _run_one(tools[call.tool_name], call, state, deps, answers.get(call_id), meta.get(call_id),
                                checked.get(call_id))  # fmt: skip
        results[i] = result
        unfinished[0] -= 1
        # The last call to finish is not checkpointed: its result is stored with the step's next snapshot, which
        # comes right after (one write per step for a step of one call). A `ToolReturn`'s extra content is not
        # part of the checkpoint: a resumed step keeps the tool's result without it.
        if on_result is not None and (unfinished[0] or checkpoint_all) and not isinstance(result, _Deferral):
            await on_result(result.part if isinstance(result, _Returned) else result)

    try:
        await _run_pending(pending, one, deps)
    except BaseException:
        if any(r is not None and not isinstance(r, _Deferral) for r in results):  # what finished is kept
            state.message_history.append(interrupted_request(results, state))
        raise
    parts = outcome.parts
    revealed: set[str] | None = None  # the tools revealed before, read from the history when a call reveals some
    for call, result in zip(calls, results, strict=True):
        if isinstance(result, _Deferral):
            (outcome.deferred.calls if result.kind == 'external' else outcome.deferred.approvals).append(call)
            if result.metadata is not None:
                outcome.deferred.metadata[call.tool_call_id] = result.metadata
        elif isinstance(result, _Returned):
            parts.append(result.part)
            if result.tools:
                revealed = discovered_tool_names(state.message_history) if revealed is None else revealed
                if (delta := _reveal(result, call, revealed, deps, state)) is not None:
                    parts.append(delta)
        elif result is not None:
            parts.append(result)
    parts.extend(unknown_parts)
    # Content of `ToolReturn`s goes after every tool result, in call order.
    parts.extend(result.prompt for result in results if isinstance(result, _Returned) and result.prompt is not None)
    state.usage.tool_calls += sum(isinstance(p, ToolReturnPart) for p in parts)
    failed = {p.tool_name for p in parts if isinstance(p, RetryPromptPart) and p.tool_name is not None}
    # A tool's retry count runs while it keeps failing; a step where it succeeds (or is not called) resets it.
    state.tool_retries = {name: state.tool_retries.get(name, 0) + 1 for name in failed}
    return outcome


async def _run_pending(
    pending: list[tuple[int, ToolCallPart]],
    one: Callable[[int, ToolCallPart], Awaitable[None]],
    deps: GraphAgentDeps[Any, Any],
) -> None:
    """Run the pending calls: concurrently, unless one of their tools is `sequential`."""
    manager: ToolManager[Any] = deps.tool_manager
    if len(pending) <= 1 or manager.get_parallel_execution_mode([c for _, c in pending]) == 'sequential':
        for i, call in pending:
            await one(i, call)
        return
    failure: list[BaseException] = []

    async def run(i: int, call: ToolCallPart, scope: anyio.CancelScope) -> None:
        try:
            await one(i, call)
        except Exception as exc:
            # Keep the first failure as is (no exception group) and stop the other calls.
            failure.append(exc)
            scope.cancel()

    async with anyio.create_task_group() as tg:
        for i, call in pending:
            tg.start_soon(run, i, call, tg.cancel_scope)
    if failure:
        raise failure[0]


def interrupted_request(results: Sequence[object], state: GraphAgentState) -> ModelRequest:
    """The request of the tool results among `results` (tool returns, retry prompts, a `ToolReturn`'s split), marked
    `'interrupted'`: an error or a cancellation stopped the step before it was whole. It is never sent;
    `capture_run_messages()` and `RunCancelled` show it, and a run given that history answers the other calls of
    the response as interrupted."""
    answers: list[ModelRequestPart] = []
    prompts: list[ModelRequestPart] = []  # a `ToolReturn`'s content, after the answers (as in a whole request)
    for result in results:
        if isinstance(result, _Returned):
            answers.append(result.part)
            prompts.extend([result.prompt] if result.prompt is not None else [])
        elif isinstance(result, ToolReturnPart | RetryPromptPart):
            answers.append(result)
        elif isinstance(result, UserPromptPart):
            prompts.append(result)
    parts = [*answers, *prompts]
    now = datetime.now(timezone.utc)
    return ModelRequest(
        parts, timestamp=now, run_id=state.run_id, conversation_id=state.conversation_id, state='interrupted'
    )


async def answer_deferred_inline(
    outcome: ToolCallsOutcome,
    calls: Sequence[ToolCallPart],
    state: GraphAgentState,
    deps: GraphAgentDeps[Any, Any],
    on_result: Callable[[ModelRequestPart], Awaitable[None]] | None = None,
) -> DeferredToolResults | None:
    """Let the capabilities' `handle_deferred_tool_calls` answer the deferred calls of `outcome` inside the run
    (`HandleDeferredToolCalls`): the answered calls run (or are denied) now, their results join the outcome's
    parts in call order, and only the calls nobody answered stay deferred. Gives the handlers' answers when they
    answered some of the calls.

    Raises:
        UnexpectedModelBehavior: two deferred calls share an id (their answers could not be told apart).
    """
    if duplicates := duplicate_call_ids([*outcome.deferred.calls, *outcome.deferred.approvals]):
        raise UnexpectedModelBehavior(
            f'Deferred tool calls must have unique tool_call_id values; duplicate ids: {duplicates}'
        )
    root = deps.root_capability
    if root is None or not outcome.has_deferred or not root.overrides('handle_deferred_tool_calls'):
        return None
    results: DeferredToolResults | None = await root.handle_deferred_tool_calls(
        deps.run_context(state), requests=outcome.deferred
    )
    if results is None:
        return None
    answers = results.to_tool_call_results()
    answered = [c for c in calls if c.tool_call_id in answers]
    if not answered:
        return None
    retries = state.tool_retries
    more = await run_tool_calls(answered, state, deps, (), answers, results.metadata, on_result)
    state.tool_retries = {**retries, **state.tool_retries}
    outcome.deferred = outcome.deferred.remaining(results) or DeferredToolRequests()
    order = {call.tool_call_id: index for index, call in enumerate(calls)}

    def position(indexed: tuple[int, ModelRequestPart]) -> tuple[int, int]:
        index, part = indexed
        call_id = getattr(part, 'tool_call_id', None)
        if isinstance(part, UserPromptPart) or call_id is None:
            return (2, index)  # a `ToolReturn`'s content, after every result
        return (0, order[call_id]) if call_id in order else (1, index)

    merged = [*outcome.parts, *more.parts]
    outcome.parts[:] = [part for _, part in sorted(enumerate(merged), key=position)]
    # `more` may defer again (a tool raising `CallDeferred` after its approval): those stay open.
    outcome.deferred.calls.extend(more.deferred.calls)
    outcome.deferred.approvals.extend(more.deferred.approvals)
    outcome.deferred.metadata.update(more.deferred.metadata)
    return results


async def validate_for_events(
    calls: Sequence[ToolCallPart],
    state: GraphAgentState,
    deps: GraphAgentDeps[Any, Any],
    answered: Mapping[str, Any],
    metadata: Mapping[str, Any] | None = None,
) -> tuple[dict[str, bool], dict[str, ValidatedToolCall[Any]]]:
    """Validate the calls before their call events are streamed, so that each event tells `args_valid` (as
    pydantic-ai 1.107's do): by call id, whether the arguments validated, and the function tools' validations,
    which running the calls then uses instead of validating again. An approved call (`ToolApproved` in `answered`)
    is validated as it will run: approved, with its override arguments and its `metadata`. Calls with another
    deferred answer, of unknown tools, or whose tool has no retries left are left to run as usual (their
    `args_valid` stays `None`)."""
    valid: dict[str, bool] = {}
    validations: dict[str, ValidatedToolCall[Any]] = {}
    if deps.step_tools is None and any(isinstance(a, ToolApproved) for a in answered.values()):
        await prepare_step_tools(state, deps)  # resumed with approvals: this process has not prepared the step yet
    tools = deps.step_tool_functions or {}
    output_tools = deps.output_schema.tools
    manager: ToolManager[Any] = deps.tool_manager
    meta = metadata or {}
    for call in calls:
        call_id = call.tool_call_id
        approval = answered.get(call_id)
        if call_id in answered and not isinstance(approval, ToolApproved):
            continue
        if call.tool_name in output_tools:
            ctx = deps.run_context(state, tool_name=call.tool_name, tool_call_id=call_id)
            try:
                output_tools[call.tool_name].validate(call.args, deps.validation_context_for(ctx))
            except ValueError:  # `ValidationError` too
                valid[call_id] = False
            else:
                valid[call_id] = True
        elif call.tool_name not in tools:
            valid[call_id] = False  # an unknown tool: the model is told so
        elif manager is not None:
            try:
                if isinstance(approval, ToolApproved):
                    if approval.override_args is not None:
                        call = dataclasses.replace(call, args=approval.override_args)
                    checked = await manager.validate_tool_call(call, approved=True, metadata=meta.get(call_id))
                else:
                    checked = await manager.validate_tool_call(call)
            except UnexpectedModelBehavior:
                continue  # no retries left: running the call raises it, as without a stream
            validations[call_id] = checked
            valid[call_id] = checked.args_valid
    return valid, validations
