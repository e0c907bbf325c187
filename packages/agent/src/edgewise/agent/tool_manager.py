"""`ToolManager`: the tools of one run step, and the validation and calling of the model's tool calls.

A run makes one per step with `for_run_step` (which lists the toolset's tools and passes them through the
capabilities' `prepare_tools` hooks); the run's `CallToolsNode` then validates each function tool call with
`validate_tool_call` and runs it with `execute_tool_call`, each through the capabilities' tool hooks
(`before_tool_validate`, `wrap_tool_validate`, `on_tool_validate_error`, `after_tool_validate`, and the same four
for `*_tool_execute`) when some capability of the run has one. A call that fails (arguments that do not validate,
an unknown tool, a `ModelRetry` from the tool) comes back as a `ToolRetryError` carrying the retry prompt for
the model, or as `UnexpectedModelBehavior` once the tool's retry budget is spent. A call whose tool, validator or
hook raised `ToolFailed` comes back as a `ToolFailedError` carrying the failed tool return (no retry is spent).
"""

from __future__ import annotations as _annotations

import dataclasses
import inspect
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeAlias, TypeVar

import pydantic

from . import _instrument
from ._output.schema import validation_errors
from ._tools.deferred_calls import DeferredToolRequests, DeferredToolResults, ToolApproved, ToolDenied
from ._tools.definition import ToolDefinition
from .capabilities._hook_table import hook_names
from .capabilities.abstract import AbstractCapability
from .exceptions import (
    ApprovalRequired,
    CallDeferred,
    ModelRetry,
    SkipToolExecution,
    SkipToolValidation,
    ToolFailed,
    ToolFailedError,
    ToolRetryError,
    UnexpectedModelBehavior,
    UserError,
)
from .messages import (
    CapabilityLoadDeltaPart,
    RetryPromptPart,
    ToolAvailabilityDeltaPart,
    ToolCallPart,
    ToolReturnPart,
)
from .tools import AgentDepsT, RunContext
from .toolsets import AbstractToolset, ToolsetTool
from .toolsets._default_methods import same_every_step

__all__ = ('ToolManager', 'ValidatedToolCall', 'ParallelExecutionMode', 'TOOL_HOOKS')

VALIDATE_HOOKS = hook_names('tool_validate')
EXECUTE_HOOKS = hook_names('tool_execute')
TOOL_HOOKS = VALIDATE_HOOKS | EXECUTE_HOOKS
"""The capabilities' hooks on function tool calls."""

ParallelExecutionMode: TypeAlias = Literal['parallel', 'sequential', 'parallel_ordered_events']
"""How the function tool calls of one response run: at the same time, or one after the other in call order.
(`'parallel_ordered_events'` runs them at the same time too: Edgewise always gives their result events in call
order, once all have finished.)"""

_T = TypeVar('_T')

_execution_mode: ContextVar[ParallelExecutionMode] = ContextVar('edgewise_tool_execution_mode', default='parallel')


@dataclass
class ValidatedToolCall(Generic[AgentDepsT]):
    """A tool call after validation: its tool, its run context and its arguments, or why they are invalid."""

    call: ToolCallPart
    """The call as the model made it."""
    tool: ToolsetTool[AgentDepsT] | None
    """The tool called (`None` for an unknown tool)."""
    ctx: RunContext[AgentDepsT]
    """The run context of the call (its tool name, call id, retry count and budget)."""
    args_valid: bool
    """Whether the arguments validated."""
    validated_args: dict[str, Any] | None = None
    """The validated arguments, when they are valid."""
    validation_error: ToolRetryError | ToolFailedError | None = None
    """The retry prompt for the model when they are not valid, or the failed tool return when the tool's validator
    or a validation hook raised `ToolFailed`."""
    deferral: CallDeferred | ApprovalRequired | None = None
    """The deferral a validation hook raised once the arguments were valid (`after_tool_validate`, or
    `wrap_tool_validate` after its handler): running the call raises it, so the call is deferred, not run."""


@dataclass
class ToolManager(Generic[AgentDepsT]):
    """Validates and calls the tools of one run step (see the module docstring)."""

    toolset: AbstractToolset[AgentDepsT]
    """The run's toolset."""
    root_capability: AbstractCapability[AgentDepsT] | None = None
    """The run's capabilities, whose `prepare_tools` hooks filter the step's tools."""
    ctx: RunContext[AgentDepsT] | None = None
    """The step's run context (set by `for_run_step`)."""
    tools: dict[str, ToolsetTool[AgentDepsT]] | None = None
    """The step's tools by name (set by `for_run_step`)."""
    failed_tools: set[str] = field(default_factory=set[str])
    """The tools whose calls failed in this step (each counts one retry against its budget)."""
    succeeded_tools: set[str] = field(default_factory=set[str])
    """The tools a call of which succeeded in this step (a tool that also failed in the step still counts the
    failure: the failure wins)."""
    default_max_retries: int = 1
    """The retry budget of unknown tools."""
    validation_context: Any = None
    """The pydantic validation context of tool arguments, or a function of the call's run context giving it."""
    tracing: bool = False
    """Whether tool calls make spans."""
    deferrals_are_span_errors: bool = False
    """Whether a call deferred (`CallDeferred`, `ApprovalRequired`) ends its span as an error (span formats before
    5); from format 5 on a deferral is control flow and the span ends without error."""
    hooked: frozenset[str] | None = None
    """The tool hooks (`TOOL_HOOKS`) some capability of the run implements; the others are skipped. `None` (the
    default) finds them on `root_capability`."""
    carry_over: bool = True
    """Whether the manager carries the retry counts from step to step itself, as a manager used on its own does:
    `for_run_step` at the step the manager is at gives the manager back, and at another step a tool that failed in
    this one counts one more retry, a tool that only succeeded starts again from none, and the others keep their
    count. An agent run sets `False`: it keeps the counts in its (persisted) state and passes them in the run
    context of each step."""

    @property
    def capability_loads(self) -> list[CapabilityLoadDeltaPart | ToolAvailabilityDeltaPart]:
        """The records of the capabilities the step's tool calls loaded (`RunContext.load_capability`), waiting to go
        on the next request; an agent run takes them when the step ends (dropping them when it ends the run)."""
        # Not a field: no constructor argument, and no `init=False` field for `_copy_with` to mishandle.
        found: list[CapabilityLoadDeltaPart | ToolAvailabilityDeltaPart] = self.__dict__.setdefault(
            '_capability_loads', []
        )
        return found

    @classmethod
    @contextmanager
    def parallel_execution_mode(cls, mode: ParallelExecutionMode = 'parallel') -> Iterator[None]:
        """Inside the block, tool calls run as `mode` says (e.g. `'sequential'`, one after the other)."""
        token = _execution_mode.set(mode)
        try:
            yield
        finally:
            _execution_mode.reset(token)

    def get_parallel_execution_mode(self, calls: list[ToolCallPart] | None = None) -> ParallelExecutionMode:
        """The mode set by `parallel_execution_mode` (`'parallel'` by default); with `calls`, `'sequential'` when one
        of their tools is `sequential` (an agent run then makes the calls of the batch one after the other)."""
        if calls is not None and any(self.is_sequential(call) for call in calls):
            return 'sequential'
        return _execution_mode.get()

    def is_sequential(self, call: ToolCallPart) -> bool:
        """Whether the call's tool is `sequential` (runs alone); `False` for an unknown tool."""
        tool = self._step_tools().get(call.tool_name)
        return tool is not None and tool.tool_def.sequential

    async def for_run_step(self, ctx: RunContext[AgentDepsT]) -> ToolManager[AgentDepsT]:
        """A manager for the step `ctx` is at: the toolset's tools of that step, through the capabilities'
        `prepare_tools` hooks.

        Raises:
            UserError: a `prepare_tools` hook returned a tool the toolset does not have (added or renamed).
        """
        if self.carry_over and self.ctx is not None:
            if ctx.run_step == self.ctx.run_step:
                return self
            retries = {name: n for name, n in self.ctx.retries.items() if name not in self.succeeded_tools}
            retries.update({name: self.ctx.retries.get(name, 0) + 1 for name in self.failed_tools})
            ctx = _copy_with(ctx, RunContext, retries=retries)
        toolset = self.toolset
        if not same_every_step(toolset):  # (else the step's toolset is the one of the last step)
            toolset = await toolset.for_run_step(ctx)
        tools = await toolset.get_tools(ctx)
        manager = _copy_with(
            self, ToolManager, toolset=toolset, ctx=ctx, tools=tools, failed_tools=set(), succeeded_tools=set()
        )
        ctx.tool_manager = manager  # `ctx.tools` / `ctx.available_tool_names` from here on (`prepare_tools` too)
        root = self.root_capability
        if root is not None and root.overrides('prepare_tools'):
            prepared = await root.prepare_tools(ctx, [tool.tool_def for tool in tools.values()])
            by_name = {tool_def.name: tool_def for tool_def in prepared}
            if by_name.keys() - tools.keys():
                raise UserError(
                    'Prepare function cannot add or rename tools. Use `FunctionToolset.add_function()` or '
                    '`RenamedToolset` instead.'
                )
            manager.tools = {
                name: dataclasses.replace(tools[name], tool_def=tool_def) for name, tool_def in by_name.items()
            }
        return manager

    @property
    def tool_defs(self) -> list[ToolDefinition]:
        """The definitions of the step's tools."""
        return [tool.tool_def for tool in self._step_tools().values()]

    def get_tool_def(self, name: str) -> ToolDefinition | None:
        """The definition of the step's tool `name`, if it has one."""
        tool = self._step_tools().get(name)
        return tool.tool_def if tool is not None else None

    async def validate_tool_call(
        self, call: ToolCallPart, *, approved: bool = False, metadata: Any = None, wrap_validation_errors: bool = True
    ) -> ValidatedToolCall[AgentDepsT]:
        """Validate the call's arguments (then the tool's own `args_validator`). Invalid arguments, an unknown
        tool or a `ModelRetry` from the validator give a `ValidatedToolCall` with a `validation_error`.

        Args:
            call: The tool call.
            approved: Whether the call was approved (`ctx.tool_call_approved`).
            metadata: The call's metadata from `DeferredToolResults` (`ctx.tool_call_metadata`).
            wrap_validation_errors: `False` raises the `ValidationError`, `ModelRetry` or `ToolFailed` itself and
                spends no retry (for callers that call tools on their own behalf and want the error as it is).

        Raises:
            UnexpectedModelBehavior: the call failed and the tool has no retries left.
        """
        tools = self._step_tools()
        name = call.tool_name
        tool = tools.get(name)
        max_retries = tool.max_retries if tool is not None else self.default_max_retries
        ctx = self._call_context(call, max_retries, approved, metadata)
        try:
            if tool is None:
                raise ModelRetry(_unknown_tool_message(name, tools))
            if self._hooked() & VALIDATE_HOOKS and tool.tool_def.kind != 'output':
                args = await self._validate_with_hooks(call, tool, ctx)
            else:
                args = await self._validate(call.args, tool, ctx)
        except SkipToolValidation as skip:
            return ValidatedToolCall(call, tool, ctx, args_valid=True, validated_args=skip.validated_args)
        except (pydantic.ValidationError, ModelRetry) as error:
            if not wrap_validation_errors:
                raise
            self._check_max_retries(name, ctx, error)
            self.failed_tools.add(name)
            retry = _retry_error(call, error)
            return ValidatedToolCall(call, tool, ctx, args_valid=False, validation_error=retry)
        except ToolFailed as error:
            if not wrap_validation_errors:
                raise
            return ValidatedToolCall(call, tool, ctx, args_valid=False, validation_error=_failed_error(call, error))
        except _HeldDeferral as held:  # through the validation hooks: with the arguments they left
            deferral, args = held.deferral, held.validated_args
            return ValidatedToolCall(call, tool, ctx, args_valid=True, validated_args=args, deferral=deferral)
        except (CallDeferred, ApprovalRequired) as deferral:
            # From the tool's `args_validator` or a validation hook: the arguments are valid and running the call
            # raises the deferral (so a call validated for its streamed event is not validated again).
            return ValidatedToolCall(call, tool, ctx, args_valid=True, validated_args={}, deferral=deferral)
        return ValidatedToolCall(call, tool, ctx, args_valid=True, validated_args=args)

    async def _validate(
        self, args: str | dict[str, Any] | None, tool: ToolsetTool[AgentDepsT], ctx: RunContext[AgentDepsT]
    ) -> dict[str, Any]:
        validated = _validate_args(tool, args, self._validation_context(ctx))
        await _run_args_validator(tool, ctx, validated)
        return validated

    async def _validate_with_hooks(
        self, call: ToolCallPart, tool: ToolsetTool[AgentDepsT], ctx: RunContext[AgentDepsT]
    ) -> dict[str, Any]:
        root = self.root_capability
        assert root is not None  # hooks come from the run's capabilities
        tool_def = tool.tool_def
        raw: str | dict[str, Any] = call.args if call.args is not None else {}
        with _no_deferral_before_validation('before_tool_validate'):
            raw = await root.before_tool_validate(ctx, call=call, tool_def=tool_def, args=raw)
        found: dict[str, Any] | None = None  # the arguments the handler validated, once it has

        async def validate(args: str | dict[str, Any]) -> dict[str, Any]:
            nonlocal found
            found = _validate_args(tool, args, self._validation_context(ctx))
            await _run_args_validator(tool, ctx, found)
            return found

        deferral: CallDeferred | ApprovalRequired | None = None
        try:
            args = await root.wrap_tool_validate(ctx, call=call, tool_def=tool_def, args=raw, handler=validate)
        except (pydantic.ValidationError, ModelRetry) as error:
            with _no_deferral_before_validation('on_tool_validate_error'):
                args = await root.on_tool_validate_error(ctx, call=call, tool_def=tool_def, args=raw, error=error)
        except (CallDeferred, ApprovalRequired) as raised:
            if found is None:  # raised before the arguments were validated
                raise _deferred_too_early('wrap_tool_validate', raised) from raised
            deferral, args = raised, found  # the `args_validator`'s (or the hook's after its handler)
        # `after_tool_validate` guards the validated arguments, of a deferred call too: it may still reject the
        # call, change its arguments, or defer it itself (its deferral replaces one held).
        try:
            args = await root.after_tool_validate(ctx, call=call, tool_def=tool_def, args=args)
        except (CallDeferred, ApprovalRequired) as raised:
            raise _HeldDeferral(raised, args) from raised
        if deferral is not None:
            raise _HeldDeferral(deferral, args) from deferral
        return args

    async def execute_tool_call(
        self, validated: ValidatedToolCall[AgentDepsT], *, wrap_validation_errors: bool = True
    ) -> Any:
        """Call the tool with the validated arguments and return what it returns. `wrap_validation_errors=False`
        raises a `ModelRetry`, `ToolFailed` or hook `ValidationError` as it is, spending no retry, and does not
        record a success in `succeeded_tools`.

        Raises:
            ToolRetryError: the arguments were invalid, or the tool raised `ModelRetry` (the error carries the
                retry prompt for the model).
            ToolFailedError: the tool, its validator or a tool hook raised `ToolFailed` (the error carries the failed
                tool return for the model).
            UnexpectedModelBehavior: the tool raised `ModelRetry` with no retries left.
        """
        if validated.validation_error is not None:
            raise validated.validation_error
        if validated.deferral is not None:
            raise validated.deferral
        tool, call, ctx = validated.tool, validated.call, validated.ctx
        assert tool is not None
        assert validated.validated_args is not None
        if tool.tool_def.kind == 'external':
            raise UserError(
                f'External tool {call.tool_name!r} cannot be called: its result comes from outside the run.'
            )
        try:
            result = await self._traced_call(call, tool, ctx, validated.validated_args)
        except (ModelRetry, pydantic.ValidationError) as error:  # a hook validating further: as `ModelRetry`
            if not wrap_validation_errors:
                raise
            self._check_max_retries(call.tool_name, ctx, error)
            self.failed_tools.add(call.tool_name)
            raise _retry_error(call, error) from error
        except ToolFailed as error:
            if not wrap_validation_errors:
                raise
            raise _failed_error(call, error) from error
        if wrap_validation_errors:
            self.succeeded_tools.add(call.tool_name)
        return result

    async def _traced_call(
        self, call: ToolCallPart, tool: ToolsetTool[AgentDepsT], ctx: RunContext[AgentDepsT], args: dict[str, Any]
    ) -> Any:
        deferral: CallDeferred | ApprovalRequired | None = None
        with _instrument.span_if(
            self.tracing, 'running tool: {tool_name}', tool_name=call.tool_name, tool_call_id=call.tool_call_id
        ):
            try:
                if self._hooked() & EXECUTE_HOOKS:
                    return await self._execute_with_hooks(call, tool, ctx, args)
                return await self.toolset.call_tool(call.tool_name, args, ctx, tool)
            except (CallDeferred, ApprovalRequired) as error:
                if self.deferrals_are_span_errors:
                    raise
                deferral = error  # raised once the span has ended, so that it does not record an error
        raise deferral

    async def _execute_with_hooks(
        self, call: ToolCallPart, tool: ToolsetTool[AgentDepsT], ctx: RunContext[AgentDepsT], args: dict[str, Any]
    ) -> Any:
        root = self.root_capability
        assert root is not None  # hooks come from the run's capabilities
        tool_def = tool.tool_def

        async def execute(args: dict[str, Any]) -> Any:
            return await self.toolset.call_tool(call.tool_name, args, ctx, tool)

        try:
            args = await root.before_tool_execute(ctx, call=call, tool_def=tool_def, args=args)
            try:
                result = await root.wrap_tool_execute(ctx, call=call, tool_def=tool_def, args=args, handler=execute)
            except (SkipToolExecution, CallDeferred, ApprovalRequired, ToolRetryError, ModelRetry, ToolFailed):
                raise  # not failures of the tool (a `ToolFailed` is the call's failed result already)
            except Exception as error:
                result = await root.on_tool_execute_error(ctx, call=call, tool_def=tool_def, args=args, error=error)
            return await root.after_tool_execute(ctx, call=call, tool_def=tool_def, args=args, result=result)
        except SkipToolExecution as skip:
            return skip.result

    async def handle_call(
        self,
        call: ToolCallPart,
        *,
        approved: bool = False,
        metadata: Any = None,
        wrap_validation_errors: bool = True,
    ) -> Any:
        """Validate the call, then run it: what the tool returns.

        A call the tool defers (it raises `ApprovalRequired` or `CallDeferred`, or its definition says it needs
        approval or is external) goes to the capabilities' `handle_deferred_tool_calls` (`HandleDeferredToolCalls`)
        and is answered there and then: an approved call runs, an external result is returned as the handler
        gave it, and a denied call returns the `ToolDenied` (check for it: it is not the tool's result).

        Args:
            call: The tool call to handle.
            approved: Whether the call has been approved (`ctx.tool_call_approved`).
            metadata: The call's data from `DeferredToolResults.metadata` (`ctx.tool_call_metadata`).
            wrap_validation_errors: `False` raises a `ValidationError`, `ModelRetry` or `ToolFailed` of the
                arguments or the tool itself, spending none of the tool's retries.

        Raises:
            ToolRetryError: the call failed and the model should retry (the error carries the prompt).
            ToolFailedError: the call is done and failed (`ToolFailed`; the error carries the failed tool return).
            UnexpectedModelBehavior: the call failed and the tool has no retries left.
            ApprovalRequired / CallDeferred: the call was deferred and no handler answered it, or the tool
                deferred it again once approved.
        """
        try:
            validated = await self.validate_tool_call(
                call, approved=approved, metadata=metadata, wrap_validation_errors=wrap_validation_errors
            )
            tool = validated.tool
            if not approved and validated.args_valid and validated.deferral is None and tool and tool.tool_def.defer:
                raise CallDeferred() if tool.tool_def.kind == 'external' else ApprovalRequired()
            return await self.execute_tool_call(validated, wrap_validation_errors=wrap_validation_errors)
        except (CallDeferred, ApprovalRequired) as deferral:
            return await self._answer_deferred(call, deferral, wrap_validation_errors)

    async def _answer_deferred(
        self, call: ToolCallPart, deferral: CallDeferred | ApprovalRequired, wrap_validation_errors: bool
    ) -> Any:
        """What the capabilities' `handle_deferred_tool_calls` answers for the deferred `call` (see `handle_call`);
        `deferral` is raised again when nobody answers it."""
        call_id = call.tool_call_id
        requests = DeferredToolRequests(
            approvals=[call] if isinstance(deferral, ApprovalRequired) else [],
            calls=[call] if isinstance(deferral, CallDeferred) else [],
            metadata={call_id: deferral.metadata} if deferral.metadata else {},
        )
        results = await self.resolve_deferred_tool_calls(requests)
        answer = results.to_tool_call_results().get(call_id) if results is not None else None
        if results is None or answer is None:
            raise deferral
        if isinstance(answer, ToolDenied):
            return answer
        if isinstance(answer, ToolApproved):
            override = answer.override_args
            approved_call = call if override is None else dataclasses.replace(call, args=override)
            validated = await self.validate_tool_call(
                approved_call,
                approved=True,
                metadata=results.metadata.get(call_id),
                wrap_validation_errors=wrap_validation_errors,
            )
            return await self.execute_tool_call(validated, wrap_validation_errors=wrap_validation_errors)
        if isinstance(answer, ToolFailed):
            if not wrap_validation_errors:
                raise answer
            raise _failed_error(call, answer)
        if isinstance(answer, ModelRetry):
            raise _retry_error(call, answer)
        if isinstance(answer, RetryPromptPart):
            raise ToolRetryError(dataclasses.replace(answer, tool_name=call.tool_name, tool_call_id=call_id))
        return answer  # an external result, as the handler gave it (a plain value or a `ToolReturn`)

    async def resolve_deferred_tool_calls(self, requests: DeferredToolRequests) -> DeferredToolResults | None:
        """The answers the capabilities' `handle_deferred_tool_calls` give to `requests` (`handle_call` asks this for
        a call that defers), or `None` when no capability of the run handles deferred calls or none answered."""
        root, ctx = self.root_capability, self.ctx
        if root is None or ctx is None or not root.overrides('handle_deferred_tool_calls'):
            return None
        results: DeferredToolResults | None = await root.handle_deferred_tool_calls(ctx, requests=requests)
        return results

    def _hooked(self) -> frozenset[str]:
        if self.hooked is not None:
            return self.hooked
        root = self.root_capability
        return frozenset(hook for hook in TOOL_HOOKS if root is not None and root.overrides(hook))

    def _step_tools(self) -> dict[str, ToolsetTool[AgentDepsT]]:
        if self.tools is None:
            raise UserError('This ToolManager has not been prepared for a run step: call `for_run_step(ctx)` first.')
        return self.tools

    def _call_context(
        self, call: ToolCallPart, max_retries: int, approved: bool, metadata: Any
    ) -> RunContext[AgentDepsT]:
        ctx = self.ctx
        assert ctx is not None  # set with `tools` by `for_run_step`
        return _copy_with(
            ctx,
            RunContext,
            tool_name=call.tool_name,
            tool_call_id=call.tool_call_id,
            retry=ctx.retries.get(call.tool_name, 0),
            max_retries=max_retries,
            tool_call_approved=approved,
            tool_call_metadata=metadata,
        )

    def _validation_context(self, ctx: RunContext[AgentDepsT]) -> Any:
        context = self.validation_context
        if callable(context):
            context = context(ctx)
        ctx.validation_context = context
        return context

    def _check_max_retries(self, name: str, ctx: RunContext[AgentDepsT], error: Exception) -> None:
        if ctx.retry >= ctx.max_retries:
            raise UnexpectedModelBehavior(f'Tool {name!r} exceeded max retries count of {ctx.max_retries}') from error


def _copy_with(obj: _T, plain: type[Any], **changes: Any) -> _T:
    """`dataclasses.replace(obj, **changes)`, without its `__init__` when `obj` is of the dataclass `plain` itself
    (which has no `__post_init__` and no `init=False` fields, so the copy is the same): twice per step of a run."""
    if type(obj) is not plain:
        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]  # a subclass may have its own __init__
    copy: _T = object.__new__(plain)
    copy.__dict__.update(obj.__dict__)
    copy.__dict__.update(changes)
    return copy


def _validate_args(tool: ToolsetTool[Any], args: str | dict[str, Any] | None, context: Any) -> dict[str, Any]:
    validator = tool.args_validator
    if isinstance(args, str):
        result: dict[str, Any] = validator.validate_json(args or '{}', context=context)
    else:
        result = validator.validate_python(args or {}, context=context)
    return result


def _unknown_tool_message(name: str, tools: dict[str, Any]) -> str:
    names = ', '.join(repr(tool) for tool in sorted(tools))
    return f'Unknown tool name: {name!r}. ' + (f'Available tools: {names}' if names else 'No tools available.')


async def _run_args_validator(tool: ToolsetTool[Any], ctx: RunContext[Any], args: dict[str, Any]) -> None:
    """The tool's own `args_validator` on its validated `args` (it may raise to reject or defer the call)."""
    if tool.args_validator_func is not None:
        checked = tool.args_validator_func(ctx, **args)
        if inspect.isawaitable(checked):
            await checked


class _HeldDeferral(Exception):
    """A deferral raised once the arguments were valid (by the tool's `args_validator`, or a validation hook after
    them), with the arguments the call is deferred with (as the validation hooks left them)."""

    def __init__(self, deferral: CallDeferred | ApprovalRequired, validated_args: dict[str, Any]) -> None:
        super().__init__(deferral)
        self.deferral = deferral
        self.validated_args = validated_args


def _retry_error(call: ToolCallPart, error: pydantic.ValidationError | ModelRetry) -> ToolRetryError:
    content: Any = validation_errors(error) if isinstance(error, pydantic.ValidationError) else error.message
    return ToolRetryError(RetryPromptPart(content, tool_name=call.tool_name, tool_call_id=call.tool_call_id))


def _failed_error(call: ToolCallPart, error: ToolFailed) -> ToolFailedError:
    part = ToolReturnPart(call.tool_name, error.message, call.tool_call_id, outcome='failed')
    return ToolFailedError(part)


def _deferred_too_early(hook: str, deferral: CallDeferred | ApprovalRequired) -> UserError:
    return UserError(
        f'`{hook}` raised `{type(deferral).__name__}`, but a tool call can only be deferred once its arguments have '
        "been validated. Raise it from `after_tool_validate`, from the tool's `args_validator`, or from "
        '`before_tool_execute` instead.'
    )


@contextmanager
def _no_deferral_before_validation(hook: str) -> Iterator[None]:
    """A deferral raised in `hook`, which runs before the arguments are valid, is a `UserError` (as pydantic-ai 2.x):
    a deferred call must carry valid arguments."""
    try:
        yield
    except (CallDeferred, ApprovalRequired) as deferral:
        raise _deferred_too_early(hook, deferral) from deferral
