"""How the tool calls of one model response are answered under the agent's `end_strategy` (pydantic-ai 2.x).

- `'graceful'` (the default): the calls are taken in the order the model made them. The function tool calls made
  before an output call finish before it is processed; the output calls are processed one after another, the first
  valid one giving the output and the later ones skipped; the function tool calls still run after the output.
- `'exhaustive'`: the function tool calls and every output call run at the same time; the first valid output in
  call order is the output.
- `'early'`: the output calls in order, the first valid one ends the run and the function tool calls are skipped
  (they run only when no output call succeeded).

Under `'graceful'` and `'exhaustive'`, a function tool's retry prompt keeps the output from ending the run: the
model answers the retry first. A tool with `sequential=True` (an output tool too, `ToolOutput(sequential=True)`)
is a barrier: the calls made before it finish first, it runs alone, and the calls after it start when it is done.
Under `parallel_execution_mode('sequential')` every call is such a barrier.
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import pydantic

from .._output.schema import OutputProcessor, validation_errors
from .._run.deps import GraphAgentDeps
from .._run.result import FinalResult
from .._run.state import GraphAgentState
from ..exceptions import ModelRetry
from ..messages import ModelRequest, ModelRequestPart, RetryPromptPart, ToolCallPart, ToolReturnPart, UserPromptPart
from ..tools import RunContext, ToolDefinition
from .call_tools_parts import (
    OUTPUT_INVALID,
    OUTPUT_NOT_FINAL,
    OUTPUT_PROCESSED,
    OUTPUT_RETRY_FIRST,
    OUTPUT_SKIPPED,
    TOOL_SKIPPED,
    count_output_failure,
    status_part,
    validate_output,
)
from .output_hooks import OUTPUT_HOOKS, output_call_through_hooks
from .response_tool_calls import ToolCallsOutcome, interrupted_request, run_tool_calls, tool_retry_prompt

__all__ = ('ResponseCalls',)

_OUTPUT_FAILED = 'Output tool not used - output function execution failed.'


@dataclass
class _Processed:
    """What processing one output call gave: the output (`error` None) or the error to answer it with."""

    output: Any
    error: pydantic.ValidationError | ModelRetry | None
    ctx: RunContext[Any]
    budget: int


@dataclass
class ResponseCalls:
    """The tool calls of one response being answered: the parts of the next request, and the output if any."""

    state: GraphAgentState
    deps: GraphAgentDeps[Any, Any]
    output_tools: Mapping[str, OutputProcessor]
    step_tools: Mapping[str, ToolDefinition]
    answers: Mapping[str, Any] | None
    metadata: Mapping[str, Any] | None
    on_result: Callable[[ModelRequestPart], Awaitable[None]] | None
    validated: Mapping[str, Any] | None
    parts: list[ModelRequestPart] = field(default_factory=list)
    """The output calls' answers (the function tools' are in `outcome`, with those of the calls 'early' skips)."""
    outcome: ToolCallsOutcome = field(default_factory=ToolCallsOutcome)
    final: FinalResult[Any] | None = None
    failed_outputs: set[str] = field(default_factory=set)
    _winner: ToolReturnPart | None = None
    _retried: set[str] = field(default_factory=set)
    _unknown: list[ToolCallPart] = field(default_factory=list)
    _more: bool = False

    def __post_init__(self) -> None:
        self.prior_retries = self.state.tool_retries
        """The tools' retry counts when the step began."""
        self._start_tool_calls = self.state.usage.tool_calls
        if self.on_result is not None:
            self._store, self.on_result = self.on_result, self._checkpoint

    async def _checkpoint(self, part: ModelRequestPart) -> None:
        """Checkpoint a finished call with the run's tool call count as the step began (a resumed step counts the
        results it restores again), also when an earlier batch of the step was counted already."""
        usage = self.state.usage
        counted, usage.tool_calls = usage.tool_calls, self._start_tool_calls
        try:
            await self._store(part)
        finally:
            usage.tool_calls = counted

    async def answer(self, calls: list[ToolCallPart], unknown_calls: list[ToolCallPart]) -> None:
        """Answer `calls` (those of output and function tools, in call order) and the calls of unknown tools."""
        self._unknown = list(unknown_calls)
        strategy = self.deps.end_strategy
        if strategy == 'early':
            await self._early(calls)
        else:
            segments = self._segments(calls)
            for index, segment in enumerate(segments):
                self._more = index < len(segments) - 1
                if strategy == 'graceful':
                    await self._in_order(segment)
                else:
                    await self._together(segment)
            await self._run_functions([])  # the unknown calls, when no function tool call was made
            if self.final is not None and any(
                isinstance(p, RetryPromptPart) and p.tool_name in self.step_tools for p in self.outcome.parts
            ):
                # The output may rest on the call that failed: the model answers the retry first.
                assert self._winner is not None
                index = self.parts.index(self._winner)
                self.parts[index] = dataclasses.replace(self._winner, content=OUTPUT_RETRY_FIRST)
                self.final = None
        # A tool's retry count runs while it keeps failing, also across steps that do not call it (pydantic-ai 2.x);
        # a step where it is called without failing resets it.
        called = {call.tool_name for call in [*calls, *unknown_calls]}
        kept = {name: count for name, count in self.prior_retries.items() if name not in called}
        self.state.tool_retries = {**kept, **{n: self.prior_retries.get(n, 0) + 1 for n in self._retried}}

    def _segments(self, calls: list[ToolCallPart]) -> list[list[ToolCallPart]]:
        """The calls cut at the sequential ones (each alone in its segment), or one call a segment when the run's
        tools run one at a time."""
        manager = self.deps.tool_manager
        if manager.get_parallel_execution_mode([]) == 'sequential':
            return [[call] for call in calls]
        segments: list[list[ToolCallPart]] = [[]]
        for call in calls:
            if self._sequential(call):
                segments.extend(([call], []))
            else:
                segments[-1].append(call)
        return [segment for segment in segments if segment]

    def _sequential(self, call: ToolCallPart) -> bool:
        processor = self.output_tools.get(call.tool_name)
        if processor is not None:
            return processor.sequential
        tool = self.step_tools.get(call.tool_name)
        return tool is not None and tool.sequential

    async def _early(self, calls: list[ToolCallPart]) -> None:
        functions = [call for call in calls if call.tool_name not in self.output_tools]
        unknown, self._unknown = self._unknown, []  # answered with the function tool calls, or skipped with them
        for call in calls:
            if call.tool_name in self.output_tools:
                await self._in_order([call])
        if self.final is None:
            self._unknown = unknown
            segments = self._segments(functions)
            for index, segment in enumerate(segments):
                self._more = index < len(segments) - 1
                await self._run_functions(segment)
            await self._run_functions([])
            return
        # The calls of plain function tools first, then those of external tools and tools needing approval (each
        # in call order), as pydantic-ai skips them; calls of unknown tools are skipped with the plain ones
        # (pydantic-ai 2.x; they are not answered with a retry prompt).
        deferred_kinds = ('external', 'unapproved')
        skipping = sorted(
            [*functions, *unknown],
            key=lambda c: c.tool_name in self.step_tools and self.step_tools[c.tool_name].kind in deferred_kinds,
        )
        self.outcome.parts.extend(status_part(call, TOOL_SKIPPED) for call in skipping)

    async def _in_order(self, calls: list[ToolCallPart]) -> None:
        """Each output call after the function tool calls made before it (which run together)."""
        pending: list[ToolCallPart] = []
        for call in calls:
            if call.tool_name not in self.output_tools:
                pending.append(call)
                continue
            await self._run_functions(pending, checkpoint_all=True)  # the output call comes before the snapshot
            pending = []
            if self.final is not None:
                self.parts.append(status_part(call, OUTPUT_SKIPPED))
            else:
                self._settle(call, await self._process(call))
        await self._run_functions(pending)

    async def _together(self, calls: list[ToolCallPart]) -> None:
        """The function tool calls and the output calls at the same time; the outputs settled in call order."""
        outputs = [call for call in calls if call.tool_name in self.output_tools]
        functions = [call for call in calls if call.tool_name not in self.output_tools]
        processed: list[_Processed | None] = [None] * len(outputs)
        failure: list[BaseException] = []

        async def run(index: int, scope: anyio.CancelScope) -> None:
            try:
                if index < 0:
                    await self._run_functions(functions)
                else:
                    processed[index] = await self._process(outputs[index])
            except Exception as exc:  # the first failure as is (no exception group); the others stop
                failure.append(exc)
                scope.cancel()

        # Started in call order: the function tool calls (one batch) where the first of them was made.
        first_function = next((i for i, c in enumerate(calls) if c.tool_name not in self.output_tools), None)
        starts = list(range(len(outputs)))
        if first_function is not None:
            starts.insert(sum(c.tool_name in self.output_tools for c in calls[:first_function]), -1)
        async with anyio.create_task_group() as tg:
            for index in starts:
                tg.start_soon(run, index, tg.cancel_scope)
        if failure:
            raise failure[0]
        for call, got in zip(outputs, processed, strict=True):
            assert got is not None
            self._settle(call, got)

    async def _run_functions(self, calls: list[ToolCallPart], *, checkpoint_all: bool = False) -> None:
        checkpoint_all = checkpoint_all or self._more  # another segment of the step comes before its snapshot
        unknown, self._unknown = self._unknown, []
        if not calls and not unknown:
            return
        self.state.tool_retries = self.prior_retries  # each batch counts from the step's start
        try:
            got = await run_tool_calls(
                calls,
                self.state,
                self.deps,
                unknown,
                self.answers,
                self.metadata,
                self.on_result,
                self.validated,
                checkpoint_all=checkpoint_all,
            )
        except BaseException:
            self._keep_earlier_results()
            raise
        self._retried.update(p.tool_name for p in got.parts if isinstance(p, RetryPromptPart) and p.tool_name)
        self.outcome.parts.extend(got.parts)
        self.outcome.deferred.calls.extend(got.deferred.calls)
        self.outcome.deferred.approvals.extend(got.deferred.approvals)
        self.outcome.deferred.metadata.update(got.deferred.metadata)

    def _keep_earlier_results(self) -> None:
        """A batch after a barrier failed: the results of the batches before it are kept, with those the failed
        batch finished, in the history's request marked `'interrupted'` (made here when that batch finished none)."""
        earlier = [p for p in self.outcome.parts if isinstance(p, ToolReturnPart | RetryPromptPart | UserPromptPart)]
        if not earlier:
            return
        history = self.state.message_history
        last = history[-1] if history else None
        if isinstance(last, ModelRequest) and last.state == 'interrupted':
            last.parts = [*earlier, *last.parts]
        else:
            history.append(interrupted_request(earlier, self.state))

    async def _process(self, call: ToolCallPart) -> _Processed:
        state, deps = self.state, self.deps
        processor = self.output_tools[call.tool_name]
        # Each output tool has its own retry count and budget, as function tools do (pydantic-ai 1.107).
        budget = deps.max_result_retries if processor.max_retries is None else processor.max_retries
        call_ctx = deps.run_context(
            state, tool_name=call.tool_name, tool_call_id=call.tool_call_id,
            retry=self.prior_retries.get(call.tool_name, 0), max_retries=budget,
        )  # fmt: skip
        validation_context = deps.validation_context_for(call_ctx)  # also set on call_ctx, so validator_ctx's
        # Output validators see the run's output retry count and budget, whichever path the output took.
        validator_ctx = dataclasses.replace(call_ctx, retry=state.retries, max_retries=deps.max_result_retries)
        try:
            if deps.hooked & OUTPUT_HOOKS:
                output = await output_call_through_hooks(deps, processor, call, call_ctx, validator_ctx)
            else:
                value = processor.validate(call.args, validation_context)
                output = await processor.finish(value, call_ctx)
                output = await validate_output(output, validator_ctx, deps)
        except (pydantic.ValidationError, ModelRetry) as exc:
            return _Processed(None, exc, call_ctx, budget)
        return _Processed(output, None, call_ctx, budget)

    def _settle(self, call: ToolCallPart, got: _Processed) -> None:
        """The answer of a processed output call. A failure before the output is a retry prompt; after it,
        invalid arguments are only reported (a `ModelRetry` is still a retry prompt while the tool has retries)."""
        error = got.error
        if isinstance(error, pydantic.ValidationError):
            if self.final is not None:
                self.parts.append(status_part(call, OUTPUT_INVALID))
                return
            count_output_failure(self.state, got.ctx, error, self.failed_outputs)
            self.parts.append(tool_retry_prompt(call, validation_errors(error)))
        elif isinstance(error, ModelRetry):
            if self.final is None:
                count_output_failure(self.state, got.ctx, error, self.failed_outputs)
            elif got.ctx.retry >= got.budget:  # the output is given, and this tool has no retry left: only noted
                self.parts.append(status_part(call, _OUTPUT_FAILED))
                return
            self.parts.append(tool_retry_prompt(call, error.message))
        else:  # a later valid output (only 'exhaustive' processes one) is noted as not the output (pydantic-ai 2.x)
            part = status_part(call, OUTPUT_PROCESSED if self.final is None else OUTPUT_NOT_FINAL)
            self.parts.append(part)
            if self.final is None:
                self.final = FinalResult(got.output, call.tool_name, call.tool_call_id)
                self._winner = part
