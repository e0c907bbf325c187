"""The capabilities' run hooks around a run driven by `Agent.iter`: `wrap_run`, `before_run`, `after_run` and
`on_run_error`.

`wrap_run` runs in a task of its own; its `handler()` calls the `before_run` hooks, then waits until the
caller's `async with agent.iter(...)` block has driven the run to its end, and returns the run's result (or
raises the run's error). The run starts once the hook has called `handler`; a hook that returns without calling
it skips the run (its result is the run's). A result the hook returns in place of the run's (a recovery from the
run's error, say) becomes the run's result. An error no `wrap_run` recovered from goes to the `on_run_error`
hooks, which may return a result instead; the result, however it came, goes through the `after_run` hooks.

Context variables that `wrap_run` (before calling `handler`) or `before_run` set are set in the caller's task too
for the run (the node, model and tool hooks see them, and so do `on_run_error` and `after_run`), and restored once
the run is over.
"""

from __future__ import annotations as _annotations

import contextvars
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import anyio

from .._run.result import AgentRunResult
from ..capabilities._hook_table import hook_names
from ..capabilities.abstract import AbstractCapability
from ..models._capability_loads import capability_load_window
from ..tools import RunContext
from .agent_run import AgentRun

__all__ = ('RUN_HOOKS', 'wrapped_run')

RUN_HOOKS = hook_names('run')
"""The hooks that make a run go through `wrapped_run`."""


@asynccontextmanager
async def wrapped_run(
    capability: AbstractCapability[Any], ctx: RunContext[Any], agent_run: AgentRun[Any, Any]
) -> AsyncIterator[None]:
    """Drive `agent_run` inside the block, within the run hooks of `capability` (see the module docstring)."""
    progress = anyio.Event()  # the hook called `handler`, or returned
    block_done = anyio.Event()
    started = False
    run_error: Exception | None = None
    outcome: list[AgentRunResult[Any] | Exception] = []
    outer = contextvars.copy_context()
    hook_context: contextvars.Context | None = None

    async def handler() -> AgentRunResult[Any]:
        nonlocal started, hook_context
        with capability_load_window(ctx.pending_messages, []) as loads:  # loads go on the run's first request
            await capability.before_run(ctx)
        if loads:
            agent_run.ctx.deps.loads_ahead = loads
        hook_context = contextvars.copy_context()
        started = True
        progress.set()
        await block_done.wait()
        if run_error is not None:
            raise run_error
        result = agent_run.result
        assert result is not None  # the block ended the run (an unfinished run cancels the hook instead)
        return result

    async def hook() -> None:
        try:
            outcome.append(await capability.wrap_run(ctx, handler=handler))
        except Exception as exc:
            outcome.append(exc)
        finally:
            progress.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(hook)
        await progress.wait()
        if not started:  # skipped: the hook's result is the run's
            found = outcome[0]
            if isinstance(found, Exception):
                raise found
            agent_run.override_result(await capability.after_run(ctx, result=found), skipped=True)
            yield
            return
        assert hook_context is not None  # set by `handler` before `started`
        run_context = hook_context
        with _context_of(run_context, outer):
            try:
                yield
            except Exception as exc:
                run_error = exc
            except BaseException:
                tg.cancel_scope.cancel()
                raise
            if run_error is None and agent_run.result is None:
                tg.cancel_scope.cancel()  # the caller left the run unfinished: nothing for the hook to return
            block_done.set()
    with _context_of(run_context, outer):
        if not outcome:
            if run_error is not None:
                raise run_error
            return
        found = outcome[0]
        if isinstance(found, Exception):
            # The run's error (or the hook's own), not recovered by `wrap_run`: the error hooks may still recover.
            found = await capability.on_run_error(ctx, error=found)
        result = await capability.after_run(ctx, result=found)
        if result is not agent_run.result:
            agent_run.override_result(result)


@contextmanager
def _context_of(hook_context: contextvars.Context, outer: contextvars.Context) -> Iterator[None]:
    """Inside the block, the context variables the run hooks set (`hook_context` differing from `outer`, the
    caller's context when the run started) have the hooks' values; the caller's come back after it."""
    tokens: list[tuple[contextvars.ContextVar[Any], contextvars.Token[Any]]] = []
    for var in hook_context:
        value = hook_context[var]
        if var not in outer or outer[var] is not value:
            tokens.append((var, var.set(value)))
    try:
        yield
    finally:
        for var, token in reversed(tokens):
            var.reset(token)
