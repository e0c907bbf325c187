"""The exceptions of `edgewise.agent`: one tree, each leaf also a subclass of the closest builtin.

```
AgentError(Exception)                       root of every error raised by edgewise.agent
 +-- UserError(RuntimeError)                the agent, a tool or a run was set up wrongly
 |    +-- UndrainedPendingMessagesError     no longer raised (a bare `async for` used to end with it when
 |                                          enqueued content was left undelivered)
 +-- SpecError(ValueError)                  an agent or capability spec names an unknown capability, or its
 |                                          arguments do not build one
 +-- WorkspaceError(RuntimeError)           a workspace operation failed on purpose (`edgewise.agent.workspaces`)
 |    +-- WorkspaceOutputLimitError         a command wrote more output than the backend keeps
 |    +-- WorkspaceUnavailableError         the environment is gone, or none is attached
 |    +-- WorkspaceTimeoutError(TimeoutError)        a command ran past its timeout
 |    +-- WorkspaceReadOnlyError(PermissionError)    a read-only workspace refused a command or a change
 +-- AgentRunError(RuntimeError)            a run failed
      +-- HookTimeoutError(TimeoutError)    a function of a `Hooks` capability ran past its timeout
      +-- RunCancelled                      the application cancelled the run (`AgentRun.cancel()`,
      |    |                                `RunContext.cancel()`, a `CancellationToken`)
      |    +-- RunTimedOut(TimeoutError)    the run went past its deadline
      +-- UnexpectedModelBehavior           the model answered in a way the run cannot use
      |    +-- ContentFilterError           the provider's content filter emptied the response
      |    +-- OutputTokenLimitExceeded     the output token limit cut the response short of any output
      |         +-- IncompleteToolCall      ... in the middle of a tool call's arguments
      +-- UsageLimitExceeded                a run went past one of its `UsageLimits`
      +-- ConcurrencyLimitExceeded          too many runs already wait for a concurrency slot
      +-- SuspendedResponseExpired          the provider no longer has a batch (or job) a run was waiting on
      +-- ModelAPIError                     a request to a model provider's API failed
      |    +-- ModelHTTPError               the provider answered with a 4xx or 5xx status (an error of a
      |    |                                category below is also an instance of the category)
      |    +-- ModelRateLimitError          a rate limit was reached (429): wait `retry_after`
      |    +-- ModelQuotaExceededError      the account's quota, credits or billing is exhausted
      |    +-- ModelUnavailableError        the provider cannot serve the request for now (503)
      |    |    +-- ModelOverloadedError    ... because it is overloaded (529, `overloaded_error`)
      |    +-- ModelServerError             any other server error (500, 502, 504)
      |    +-- ModelConnectionError         the request did not get through (`phase`: where it failed)
      |    |    +-- ModelTimeoutError       one attempt timed out in the HTTP client
      |    +-- ModelRequestRejectedError    the provider rejected the request itself (400, 422)
      |    |    +-- ModelContextWindowExceededError   the input is longer than the context window
      |    |    +-- ModelAuthenticationError          the credentials were refused (401, 403)
      |    |    +-- ModelNotFoundError                the model is unknown (404)
      |    +-- ModelRequestTimeout          the request ran past its `request_timeout` / `first_event_timeout`
      +-- MCPError                          an MCP server could not start, closed, or answered with an error

FallbackExceptionGroup(ExceptionGroup)      every model of a `FallbackModel` or `ModelFallback` failed (one
                                            exception each)

ModelRetry(Exception)                       not an error: raised by tools and validators to ask the model
                                            to try again
ToolFailed(Exception)                       not an error: raised by a tool (or its validator or hooks) whose
                                            call is done and failed; the model sees the failure
CallDeferred(Exception)                     not an error: raised by a tool whose result comes from outside
ApprovalRequired(Exception)                 not an error: raised by a tool whose call waits for approval
ToolRetryError(Exception)                   not an error: carries the retry prompt of a failed tool call
                                            from the tool manager to the run
ToolFailedError(Exception)                  not an error: carries the failed tool return of a `ToolFailed`
                                            from the tool manager to the run
SkipModelRequest(Exception)                 not an error: raised by a capability's model request hook to
                                            answer with its own response instead of the model's
RetryModelRequest(Exception)                not an error: raised by a capability's model request hook to
                                            attempt the request again, on the same or another model
SkipToolValidation(Exception)               not an error: raised by a tool validate hook to give the
                                            validated arguments without validating
SkipToolExecution(Exception)                not an error: raised by a tool execute hook to give the tool's
                                            result without running it
```

`ModelRetry` stands outside the tree, as in pydantic-ai: it is a signal that user code raises for the run to
catch, not a failure of the package. Under `AgentError`, an `except AgentError:` in a tool (around a nested
agent run, say) would swallow the tool's own request for a retry.

The warnings (`PydanticAIDeprecationWarning`, `CostCalculationFailedWarning`, `CostNotFoundWarning`,
`UsageExtractionFailedWarning`, `UsageLimitUnavailableWarning`) live in `edgewise.agent._warnings` and are
re-exported here, as in pydantic-ai 2.x; `UnsupportedSettingWarning(UserWarning)` and
`MessageHistoryMutatedWarning(Warning)` live here, as there.
"""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ._errors.base import AgentError, AgentRunError
from ._errors.model_api import (
    HTTPErrorCategory as HTTPErrorCategory,
)
from ._errors.model_api import (
    ModelAPIError,
    ModelAuthenticationError,
    ModelConnectionError,
    ModelContextWindowExceededError,
    ModelHTTPError,
    ModelNotFoundError,
    ModelOverloadedError,
    ModelQuotaExceededError,
    ModelRateLimitError,
    ModelRequestRejectedError,
    ModelRequestTimeout,
    ModelServerError,
    ModelTimeoutError,
    ModelUnavailableError,
    RequestTimeoutSetting,
    TransportPhase,
    _categorized_http_error,
)
from ._messages.attempts import ModelRequestAttempt
from ._messages.model_messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    ToolReturnPart,
    messages_type_adapter,
)
from ._messages.usage_counts import RunUsage
from ._warnings import (
    CostCalculationFailedWarning,
    CostNotFoundWarning,
    PydanticAIDeprecationWarning,
    UsageExtractionFailedWarning,
    UsageLimitUnavailableWarning,
)

if TYPE_CHECKING:
    import pydantic_core

__all__ = (
    'AgentError',
    'ModelRetry',
    'ToolFailed',
    'CallDeferred',
    'ApprovalRequired',
    'SkipModelRequest',
    'RetryModelRequest',
    'SkipToolValidation',
    'SkipToolExecution',
    'UserError',
    'PrepareReturnedNoneError',
    'UndrainedPendingMessagesError',
    'SpecError',
    'HookTimeoutError',
    'AgentRunError',
    'RunCancelled',
    'RunTimedOut',
    'UnexpectedModelBehavior',
    'UsageLimitExceeded',
    'ConcurrencyLimitExceeded',
    'SuspendedResponseExpired',
    'ContentFilterError',
    'OutputTokenLimitExceeded',
    'IncompleteToolCall',
    'ToolRetryError',
    'ToolFailedError',
    'ModelAPIError',
    'ModelHTTPError',
    'ModelRateLimitError',
    'ModelQuotaExceededError',
    'ModelUnavailableError',
    'ModelOverloadedError',
    'ModelServerError',
    'ModelConnectionError',
    'TransportPhase',
    'ModelTimeoutError',
    'RequestTimeoutSetting',
    'ModelContextWindowExceededError',
    'ModelRequestRejectedError',
    'ModelAuthenticationError',
    'ModelNotFoundError',
    'ModelRequestTimeout',
    'MCPError',
    'UnsupportedSettingWarning',
    'MessageHistoryMutatedWarning',
    'PydanticAIDeprecationWarning',
    'CostCalculationFailedWarning',
    'CostNotFoundWarning',
    'UsageExtractionFailedWarning',
    'UsageLimitUnavailableWarning',
    'FallbackExceptionGroup',
)


class ModelRetry(Exception):
    """Raise it from a tool or an output validator to send `message` back to the model and let it retry.

    Not an `AgentError`: it is a signal for the run, which catches it, not an error of the package.
    """

    message: str
    """What the model is told about why it must try again."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, type(self)) and other.message == self.message

    def __hash__(self) -> int:
        return hash((type(self), self.message))

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        """Stored (in `DeferredToolResults.calls`, say) as `{'message': ..., 'kind': 'model-retry'}`."""
        from pydantic_core import core_schema

        stored = core_schema.typed_dict_schema(
            {
                'message': core_schema.typed_dict_field(core_schema.str_schema()),
                'kind': core_schema.typed_dict_field(core_schema.literal_schema(['model-retry'])),
            }
        )
        return core_schema.no_info_after_validator_function(
            lambda data: cls(data['message']),
            stored,
            serialization=core_schema.plain_serializer_function_ser_schema(
                lambda retry: {'message': retry.message, 'kind': 'model-retry'}, return_schema=stored
            ),
        )


class ToolFailed(Exception):
    """Raise it from a tool, its `args_validator` or a tool validation or execution hook when the call is done and
    failed (the resource is missing, the operation is not supported, the service refused for good): the model gets
    a tool return with `outcome='failed'` and `message` as its content, and adapts.

    Unlike `ModelRetry`, the model is not told to try again and the tool's retry budget is not spent (bound repeated
    failures with `UsageLimits`). Elsewhere (output functions, output validators) it is an ordinary exception.
    It is also a valid answer in `DeferredToolResults.calls`, for an external call that failed.
    """

    message: str
    """What the model is told about the failure."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, type(self)) and other.message == self.message

    def __hash__(self) -> int:
        return hash((type(self), self.message))

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        """Stored (in `DeferredToolResults.calls`, say) as `{'message': ..., 'kind': 'tool-failed'}`; an instance
        validates as itself."""
        from pydantic_core import core_schema

        stored = core_schema.typed_dict_schema(
            {
                'message': core_schema.typed_dict_field(core_schema.str_schema()),
                'kind': core_schema.typed_dict_field(core_schema.literal_schema(['tool-failed'])),
            }
        )
        from_stored = core_schema.no_info_after_validator_function(lambda data: cls(data['message']), stored)
        return core_schema.json_or_python_schema(
            json_schema=from_stored,
            python_schema=core_schema.union_schema([core_schema.is_instance_schema(cls), from_stored]),
            serialization=core_schema.plain_serializer_function_ser_schema(
                lambda failed: {'message': failed.message, 'kind': 'tool-failed'}, return_schema=stored
            ),
        )


class CallDeferred(Exception):
    """Raise it from a tool whose result will come from outside the run: the run ends with the call in
    `DeferredToolRequests.calls` (and `metadata` under its id in `DeferredToolRequests.metadata`)."""

    metadata: dict[str, Any] | None
    """Data for whoever produces the result."""

    def __init__(self, metadata: dict[str, Any] | None = None) -> None:
        self.metadata = metadata
        super().__init__()

    def __reduce__(self) -> tuple[type, tuple[Any, ...]]:
        return type(self), (self.metadata,)


class ApprovalRequired(Exception):
    """Raise it from a tool whose call must be approved first: the run ends with the call in
    `DeferredToolRequests.approvals`; once approved, the tool runs again with `ctx.tool_call_approved`."""

    metadata: dict[str, Any] | None
    """Data for whoever approves the call."""

    def __init__(self, metadata: dict[str, Any] | None = None) -> None:
        self.metadata = metadata
        super().__init__()

    def __reduce__(self) -> tuple[type, tuple[Any, ...]]:
        return type(self), (self.metadata,)


class SkipModelRequest(Exception):
    """Raise it from a capability's `before_model_request` or `wrap_model_request` hook to use `response` instead
    of sending the request (the history changes the `before_model_request` hooks made are then not kept)."""

    response: ModelResponse
    """The response the run goes on with."""

    def __init__(self, response: ModelResponse) -> None:
        self.response = response
        super().__init__()


class RetryModelRequest(Exception):
    """Raise it from a capability's model request hooks to make another attempt at the request, on `model` (a
    model or its name) or, by default, the same one. The run stays on the same step: the model is not told that
    an earlier attempt happened (unlike `ModelRetry`, which asks the model itself to try again)."""

    model: Any
    """The model to attempt next (a `Model` or a model name), or `None` for the same one again."""

    def __init__(self, model: Any = None) -> None:
        self.model = model
        super().__init__()


class SkipToolValidation(Exception):
    """Raise it from a capability's `before_tool_validate` or `wrap_tool_validate` hook to take `validated_args` as
    the call's validated arguments without validating."""

    validated_args: dict[str, Any]
    """The arguments the tool is called with."""

    def __init__(self, validated_args: dict[str, Any]) -> None:
        self.validated_args = validated_args
        super().__init__()


class SkipToolExecution(Exception):
    """Raise it from a capability's `before_tool_execute` or `wrap_tool_execute` hook to take `result` as the tool's
    result without running it."""

    result: Any
    """The tool's result."""

    def __init__(self, result: Any) -> None:
        self.result = result
        super().__init__()


class UserError(AgentError, RuntimeError):
    """The agent, one of its tools or a run's arguments were set up wrongly; the message says how to fix it."""


class PrepareReturnedNoneError(UserError, TypeError):
    """A tools `prepare` callback (`PrepareTools`, `PrepareOutputTools`, `PreparedToolset`, `Agent(prepare_tools=...)`)
    returned `None` (pydantic-ai 2.x; 1.x took it as "no tools"). A `UserError` as pydantic-ai 2.x raises it, and a
    `TypeError` as its upgrade guide names it. Return `[]` to show no tools, or `tool_defs` to keep them."""

    @classmethod
    def of(cls, prepare_func: Any) -> PrepareReturnedNoneError:
        """The error naming the callback at fault."""
        name = getattr(prepare_func, '__name__', None) or str(prepare_func)
        return cls(
            f'Prepare function {name!r} returned `None`; return `[]` to expose no tools, or return `tool_defs` to '
            'pass them through unchanged.'
        )


class UndrainedPendingMessagesError(UserError):
    """No longer raised: a run iterated with a bare `async for node in agent_run` used to end with it when enqueued
    content was still queued. Bare iteration now runs each node through `AgentRun.next`, so that content is
    delivered as under `agent.run()`; the class stays so that existing `except` clauses keep working.
    """


class SpecError(AgentError, ValueError):
    """An agent or capability spec names a capability the registry lacks, or its arguments do not build it; the
    message names the capability (and the valid names)."""


class HookTimeoutError(AgentRunError, TimeoutError):
    """A hook function registered on a `Hooks` capability with a `timeout` ran past it."""

    hook_name: str
    """The hook (`before_tool_execute`, ...)."""
    func_name: str
    """The name of the function that timed out."""
    timeout: float
    """Its timeout, in seconds."""

    def __init__(self, hook_name: str, func_name: str, timeout: float) -> None:
        self.hook_name = hook_name
        self.func_name = func_name
        self.timeout = timeout
        super().__init__(f'Hook {hook_name!r} function {func_name!r} timed out after {timeout}s')

    def __reduce__(self) -> tuple[type, tuple[Any, ...]]:
        return type(self), (self.hook_name, self.func_name, self.timeout)


_RUN_CANCELLED_ATTR = '_edgewise_run_cancelled'


class RunCancelled(AgentRunError):
    """The application cancelled the run: `AgentRun.cancel()`, `RunContext.cancel()` or a `CancellationToken`.

    A normal outcome to catch, not a failure of the run. The run stopped where it was (the model request in
    flight torn down, running tools cancelled); what it had done is kept: `all_messages()` holds the history up
    to the cancellation, with the partial response of an interrupted stream (`state='interrupted'`) and the
    results of the tool calls that finished (in a request with `state='interrupted'`). Pass `all_messages()` as
    `message_history` to a new run to go on from there; the calls left without a result are answered as
    interrupted before the history reaches a model.

    A cancellation from outside the run (a cancel scope or a timeout around it, a cancelled task) is not turned
    into this error: it goes on as the event loop's cancellation, and `RunCancelled.from_cancellation(exc)`
    recovers the run's state from it. When both happen, the outside cancellation wins.
    """

    def __init__(
        self,
        message: str,
        *,
        messages: Sequence[ModelMessage] = (),
        new_message_index: int = 0,
        usage: RunUsage | None = None,
        metadata: dict[str, Any] | None = None,
        run_id: str | None = None,
        conversation_id: str | None = None,
    ) -> None:
        self._messages = list(messages)
        self._new_message_index = new_message_index
        self._usage = usage if usage is not None else RunUsage()
        self._metadata = metadata
        self._run_id = run_id
        self._conversation_id = conversation_id
        super().__init__(message)

    def __reduce__(self) -> tuple[type[RunCancelled], tuple[str], dict[str, Any]]:
        return type(self), (self.message,), self.__dict__

    def attach_to(self, exc: BaseException) -> None:
        """Ride along on `exc` (an outside cancellation), for `from_cancellation`."""
        setattr(exc, _RUN_CANCELLED_ATTR, self)

    @classmethod
    def from_cancellation(cls, exc: BaseException) -> RunCancelled | None:
        """The state of the run a cancellation ended: `exc` itself if it is a `RunCancelled`, else the one that an
        outside cancellation of a run (or an error chained to it, e.g. the `TimeoutError` of
        `anyio.fail_after`) carries; `None` when `exc` did not end a run.

        Re-raise an outside cancellation after reading it: the cancel scope or task group that sent it needs it.
        """
        pending, seen = [exc], set[int]()
        while pending:
            current = pending.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            if isinstance(current, cls):
                return current
            attached = getattr(current, _RUN_CANCELLED_ATTR, None)
            if isinstance(attached, cls):
                return attached
            pending.extend(e for e in (current.__cause__, current.__context__) if e is not None)
            if isinstance(current, BaseExceptionGroup):
                pending.extend(current.exceptions)
        return None

    def all_messages(self) -> list[ModelMessage]:
        """The whole history of the run when it was cancelled (a copy), ready to be a new run's `message_history`."""
        return self._messages

    def all_messages_json(self) -> bytes:
        """`all_messages()` as JSON."""
        return messages_type_adapter().dump_json(self._messages)

    def new_messages(self) -> list[ModelMessage]:
        """The messages of the cancelled run itself (not those of the history it was given)."""
        return self._messages[self._new_message_index :]

    def new_messages_json(self) -> bytes:
        """`new_messages()` as JSON."""
        return messages_type_adapter().dump_json(self.new_messages())

    @property
    def response(self) -> ModelResponse:
        """The last response of the history.

        Raises:
            ValueError: the run was cancelled before any response came.
        """
        for message in reversed(self._messages):
            if isinstance(message, ModelResponse):
                return message
        raise ValueError('No response found in the message history')

    @property
    def timestamp(self) -> datetime:
        """The timestamp of the last response (`ValueError` when there is none)."""
        return self.response.timestamp

    @property
    def usage(self) -> RunUsage:
        """The usage of the run until it was cancelled."""
        return self._usage

    @property
    def metadata(self) -> dict[str, Any] | None:
        """The run's metadata."""
        return self._metadata

    @property
    def run_id(self) -> str | None:
        """The run's id, `None` when it was cancelled before it started."""
        return self._run_id

    @property
    def conversation_id(self) -> str | None:
        """The conversation's id, `None` when the run was cancelled before it started."""
        return self._conversation_id


class RunTimedOut(RunCancelled, TimeoutError):
    """The run did not finish before its deadline. It is stopped like a `RunCancelled` (which it is, so
    `all_messages()` holds what the run completed, ready to go on from), and it is a `TimeoutError`."""


class UnexpectedModelBehavior(AgentRunError):
    """The model answered in a way the run cannot use, for longer than the retry budget allows."""

    body: str | None
    """The model's raw answer, when there is one worth showing."""

    def __init__(self, message: str, body: str | None = None) -> None:
        self.body = body
        super().__init__(message)

    def __str__(self) -> str:
        if self.body:
            return f'{self.message}, body:\n{self.body}'
        return self.message


class UsageLimitExceeded(AgentRunError):
    """A run went past one of its `UsageLimits`; `messages` holds what was exchanged until then."""

    messages: list[ModelMessage]
    """The messages of the run up to the point where the limit was hit."""

    def __init__(self, message: str, messages: list[ModelMessage] | None = None) -> None:
        self.messages = messages if messages is not None else []
        super().__init__(message)


class ConcurrencyLimitExceeded(AgentRunError):
    """More runs wait for a concurrency slot than the limit's `max_queued` allows (see `ConcurrencyLimit`)."""


class SuspendedResponseExpired(AgentRunError):
    """The provider no longer has the work a run was waiting on: a batch of `BatchModelRequests` whose check or
    results answered 404 (providers keep batches and their results for a limited time, and only for the project that
    made them). Start a new run from the messages before the request to try again."""


class ContentFilterError(UnexpectedModelBehavior):
    """The provider's content filter stopped the model: the response has finish reason `'content_filter'` and
    nothing usable in it."""


class OutputTokenLimitExceeded(UnexpectedModelBehavior):
    """A response reached its output token limit (`max_tokens`, or the model's own) before the model finished, so
    it holds no output the run can use (`finish_reason='length'`): asking again with the same limit would hit it
    again. Raise `max_tokens` or ask for less. Plain text cut off this way is the run's output instead. Named in a
    `fallback_on` (of `ModelFallback`, where it is a default, or of `FallbackModel`), it stands for any response cut
    off that way, so the next model is asked."""


class IncompleteToolCall(OutputTokenLimitExceeded):
    """The model hit its token limit while writing a tool call, so the call's arguments are cut short; raise
    `max_tokens` (or ask for less) and run again."""


class ToolRetryError(Exception):
    """Carries the retry prompt of a tool call that failed validation or raised `ModelRetry`: the tool manager
    raises it, the run sends `tool_retry` back to the model.

    Not an `AgentError`: like `ModelRetry`, it is a signal the run catches, not a failure of the package.
    """

    tool_retry: RetryPromptPart
    """The retry prompt for the model."""

    def __init__(self, tool_retry: RetryPromptPart) -> None:
        self.tool_retry = tool_retry
        content = tool_retry.content
        super().__init__(content if isinstance(content, str) else _describe_errors(content, tool_retry.tool_name))

    def __reduce__(self) -> tuple[type, tuple[RetryPromptPart]]:
        return type(self), (self.tool_retry,)


class ToolFailedError(Exception):
    """Carries the failed tool return (`outcome='failed'`) of a tool call that raised `ToolFailed`: the tool manager
    raises it, the run sends `tool_failed` to the model as the call's result.

    Not an `AgentError`: like `ToolRetryError`, it is a signal the run catches.
    """

    tool_failed: ToolReturnPart
    """The failed tool return for the model."""

    def __init__(self, tool_failed: ToolReturnPart) -> None:
        self.tool_failed = tool_failed
        super().__init__(tool_failed.model_response_str(wrap_if_error=False))

    def __reduce__(self) -> tuple[type, tuple[ToolReturnPart]]:
        return type(self), (self.tool_failed,)


def _describe_errors(errors: list[pydantic_core.ErrorDetails], tool_name: str | None) -> str:
    # Built from the details themselves: serialized details have lost the `ctx` objects that pydantic would need
    # to rebuild a `ValidationError`, but their `msg` is already the readable text.
    count = len(errors)
    header = f'{count} validation error{"" if count == 1 else "s"}' + (f' for {tool_name!r}' if tool_name else '')
    lines = [header]
    for error in errors:
        lines.append('.'.join(str(item) for item in error['loc']) if error['loc'] else '__root__')
        lines.append(f'  {error["msg"]} [type={error["type"]}, input_value={error["input"]!r}]')
    return '\n'.join(lines)


class MCPError(AgentRunError):
    """An MCP server failed: it could not be started or reached, closed the connection, or answered with an error.

    The message names the server and, during a tool call, the tool. (A tool that reports an error of its own
    is not one of these: the model is asked to retry, as for any tool.)
    """

    code: int | None
    """The JSON-RPC error code the server answered with, if it answered."""
    data: object | None
    """The error's data, if the server sent any."""

    def __init__(self, message: str, code: int | None = None, data: object | None = None) -> None:
        self.code = code
        self.data = data
        super().__init__(message)

    def __reduce__(self) -> tuple[type, tuple[str, int | None, object | None]]:
        return type(self), (self.message, self.code, self.data)


class UnsupportedSettingWarning(UserWarning):
    """A model ignores a `ModelSettings` field a request relies on (`timeout`, `max_retries`, `stop_sequences`,
    `parallel_tool_calls=False` with function tools, `extra_headers`, `extra_body`); the message names the setting
    and the model. Turn it into an error with `warnings.filterwarnings('error', category=UnsupportedSettingWarning)`.
    (pydantic-ai 2.68's class; Edgewise's models do not emit it yet.)
    """


class MessageHistoryMutatedWarning(Warning):
    """pydantic-ai 2.68 warns with this at the end of a traced run whose history messages were changed in place, as
    its cached serialization of each message could then make request spans disagree with what was sent. Edgewise
    serializes a request's messages afresh for its span, so the spans always show what was sent and this warning is
    never emitted; the class is here for code that filters it. Changing history in place is still best avoided:
    build new messages (`dataclasses.replace`) in a history processor instead.
    """


class FallbackExceptionGroup(ExceptionGroup[Any]):
    """Every model of a `FallbackModel` (or of a `ModelFallback` capability's chain) failed: the group holds each
    model's exception, in order (and a `ResponseRejected` when a `fallback_on` response handler turned responses
    down)."""

    attempts: Sequence[ModelRequestAttempt] = ()
    """Every attempt made, in order, with the usage of the responses turned down (which the run's usage counts)."""


# The classes defined in the private modules are shown (in tracebacks) and pickled as members of this module, where
# users import them from (and so are the categorized HTTP errors, through the function that rebuilds them).
for _cls in (
    AgentError,
    AgentRunError,
    ModelAPIError,
    ModelRateLimitError,
    ModelQuotaExceededError,
    ModelUnavailableError,
    ModelOverloadedError,
    ModelServerError,
    ModelConnectionError,
    ModelTimeoutError,
    ModelRequestRejectedError,
    ModelContextWindowExceededError,
    ModelAuthenticationError,
    ModelNotFoundError,
    ModelRequestTimeout,
    ModelHTTPError,
    _categorized_http_error,
):
    _cls.__module__ = __name__
del _cls
