"""Running the function tool calls of one model response: validation, retries, concurrency, usage."""

from __future__ import annotations as _annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio
import pydantic

from . import _instrument
from ._function_schema import FunctionSchema
from ._output import validation_errors
from ._run_deps import GraphAgentDeps, GraphAgentState
from .exceptions import ModelRetry, UnexpectedModelBehavior, UserError
from .messages import ModelRequestPart, RetryPromptPart, ToolCallPart, ToolReturn, ToolReturnPart, UserPromptPart
from .tools import Tool

__all__ = ('run_tool_calls', 'tool_retry_prompt')


def tool_retry_prompt(call: ToolCallPart, content: Any) -> RetryPromptPart:
    """The retry prompt answering a tool call (function, output or unknown tool): `content` tells the model
    what to fix."""
    return RetryPromptPart(content, tool_name=call.tool_name, tool_call_id=call.tool_call_id)


def unknown_tool_part(call: ToolCallPart, available: Sequence[str]) -> RetryPromptPart:
    """The retry prompt for a call of a tool that does not exist (or is hidden in this step)."""
    names = ', '.join(repr(name) for name in sorted(available))
    hint = f'Available tools: {names}' if names else 'No tools available.'
    return tool_retry_prompt(call, f'Unknown tool name: {call.tool_name!r}. {hint}')


def _unknown(call: ToolCallPart, state: GraphAgentState, deps: GraphAgentDeps[Any, Any]) -> RetryPromptPart:
    name, max_retries = call.tool_name, deps.default_tool_retries
    if state.tool_retries.get(name, 0) >= max_retries:
        raise UnexpectedModelBehavior(f'Tool {name!r} exceeded max retries count of {max_retries}')
    return unknown_tool_part(call, [*(deps.step_tools or {}), *deps.output_schema.tools])


async def _run_one(
    tool: Tool[Any], call: ToolCallPart, state: GraphAgentState, deps: GraphAgentDeps[Any, Any]
) -> ModelRequestPart | tuple[ToolReturnPart, UserPromptPart]:
    name = call.tool_name  # the name the model used (a `prepare` function may have renamed the tool)
    max_retries = tool.max_retries if tool.max_retries is not None else deps.default_tool_retries
    retry = state.tool_retries.get(name, 0)
    tool_ctx = deps.run_context(
        state, tool_name=name, tool_call_id=call.tool_call_id, retry=retry, max_retries=max_retries
    )
    schema = tool.function_schema
    error: Exception
    step_def = (deps.step_tools or {}).get(name)
    timeout = step_def.timeout if step_def is not None else tool.timeout
    if timeout is None:
        timeout = deps.tool_timeout
    try:
        kwargs = schema.validate(call.args, deps.validation_context_for(tool_ctx))
        if tool.args_validator is not None:
            checked = tool.args_validator(tool_ctx, **kwargs)
            if inspect.isawaitable(checked):
                await checked
        with _instrument.span_if(
            deps.tracing, 'running tool: {tool_name}', tool_name=name, tool_call_id=call.tool_call_id
        ):
            result = await _call(schema, kwargs, tool_ctx, timeout)
    except pydantic.ValidationError as exc:
        error = exc
        content: Any = validation_errors(exc)
    except ModelRetry as exc:
        error = exc
        content = exc.message
    else:
        return _return_part(call, result)
    if retry >= max_retries:
        raise UnexpectedModelBehavior(f'Tool {name!r} exceeded max retries count of {max_retries}') from error
    return tool_retry_prompt(call, content)


def _return_part(call: ToolCallPart, result: Any) -> ToolReturnPart | tuple[ToolReturnPart, UserPromptPart]:
    # A `ToolReturn` splits into the tool's result (with its metadata) and a user prompt sent after the results.
    if isinstance(result, ToolReturn):
        part = ToolReturnPart(call.tool_name, result.return_value, call.tool_call_id, metadata=result.metadata)
        return (part, UserPromptPart(result.content)) if result.content else part
    if isinstance(result, list) and any(isinstance(item, ToolReturn) for item in result):
        raise UserError(
            f'The return value of tool {call.tool_name!r} contains invalid nested `ToolReturn` objects. '
            '`ToolReturn` should be used directly.'
        )
    return ToolReturnPart(call.tool_name, result, call.tool_call_id)


async def _call(schema: FunctionSchema, kwargs: dict[str, Any], ctx: Any, limit: float | None) -> Any:
    if limit is None:
        return await schema.call(kwargs, ctx)
    try:
        with anyio.fail_after(limit):
            return await schema.call(kwargs, ctx)
    except TimeoutError:
        # as pydantic-ai: a tool that runs too long is a retry for the model, not an error of the run
        raise ModelRetry(f'Timed out after {limit} seconds.') from None


async def run_tool_calls(
    calls: Sequence[ToolCallPart],
    state: GraphAgentState,
    deps: GraphAgentDeps[Any, Any],
    unknown_calls: Sequence[ToolCallPart] = (),
    on_result: Callable[[ModelRequestPart], Awaitable[None]] | None = None,
) -> list[ModelRequestPart]:
    """Run the calls (concurrently unless one of the tools is `sequential`); the parts come in call order,
    followed by a retry prompt for each call of an unknown tool.

    A call whose result is in `state.step_results` (checkpointed before a durable run was resumed) is not run
    again; `on_result` is awaited with each new result as its call finishes (to checkpoint it), but the last.

    Updates the run's tool call count (checking `tool_calls_limit` first, counting the unknown calls as
    pydantic-ai does) and each tool's retry count (unknown tools included, on the agent's tool retry budget).
    """
    if not calls and not unknown_calls:
        return []
    deps.usage_limits.check_before_tool_call(state.usage, len(calls) + len(unknown_calls), state.message_history)
    unknown_parts = [_unknown(call, state, deps) for call in unknown_calls]  # checked before any tool runs
    tools = deps.step_tool_functions
    tool_defs = deps.step_tools or {}
    results: list[ModelRequestPart | tuple[ToolReturnPart, UserPromptPart] | None] = [None] * len(calls)
    pending = list(enumerate(calls))
    if state.step_results:
        stored = {p.tool_call_id: p for p in state.step_results if isinstance(p, ToolReturnPart | RetryPromptPart)}
        for i, call in enumerate(calls):
            results[i] = stored.get(call.tool_call_id)
        pending = [(i, call) for i, call in pending if results[i] is None]

    unfinished = [len(pending)]

    async def run_one(i: int, call: ToolCallPart) -> None:
        result = results[i] = await _run_one(tools[call.tool_name], call, state, deps)
        unfinished[0] -= 1
        # The last call to finish is not checkpointed: its result is stored with the step's next snapshot, which
        # comes right after (one write per step for a step of one call). A `ToolReturn`'s extra content is not
        # part of the checkpoint: a resumed step keeps the tool's result without it.
        if on_result is not None and unfinished[0]:
            await on_result(result[0] if isinstance(result, tuple) else result)

    if len(pending) <= 1 or any(tool_defs[c.tool_name].sequential for _, c in pending):
        for i, call in pending:
            await run_one(i, call)
    else:
        failure: list[BaseException] = []

        async def run(i: int, call: ToolCallPart, scope: anyio.CancelScope) -> None:
            try:
                await run_one(i, call)
            except Exception as exc:
                # Keep the first failure as is (no exception group) and stop the other calls.
                failure.append(exc)
                scope.cancel()

        async with anyio.create_task_group() as tg:
            for i, call in pending:
                tg.start_soon(run, i, call, tg.cancel_scope)
        if failure:
            raise failure[0]
    # Content of `ToolReturn`s goes after every tool result, in call order.
    parts: list[ModelRequestPart] = [r[0] if isinstance(r, tuple) else r for r in results if r is not None]
    parts += unknown_parts
    parts += [r[1] for r in results if isinstance(r, tuple)]
    state.usage.tool_calls += sum(isinstance(p, ToolReturnPart) for p in parts)
    failed = {p.tool_name for p in parts if isinstance(p, RetryPromptPart) and p.tool_name is not None}
    # A tool's retry count runs while it keeps failing; a step where it succeeds (or is not called) resets it.
    state.tool_retries = {name: state.tool_retries.get(name, 0) + 1 for name in failed}
    return parts
