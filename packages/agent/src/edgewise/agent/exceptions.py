"""The exceptions of `edgewise.agent`: one tree, each leaf also a subclass of the closest builtin.

```
AgentError(Exception)                       root of every error raised by edgewise.agent
 +-- UserError(RuntimeError)                the agent, a tool or a run was set up wrongly
 |    +-- UndrainedPendingMessagesError     no longer raised (a bare `async for` used to end with it when
 |                                          enqueued content was left undelivered)
 +-- SpecError(ValueError)                  an agent or capability spec names an unknown capability, or its
 |                                          arguments do not build one
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
re-exported here, as in pydantic-ai 2.x; `UnsupportedSettingWarning(UserWarning)` lives here, as there.
"""

from __future__ import annotations as _annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeAlias

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
    'PydanticAIDeprecationWarning',
    'CostCalculationFailedWarning',
    'CostNotFoundWarning',
    'UsageExtractionFailedWarning',
    'UsageLimitUnavailableWarning',
    'FallbackExceptionGroup',
)


class AgentError(Exception):
    """Root of every exception raised by `edgewise.agent`."""

    message: str
    """What went wrong and, where possible, what to do about it."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


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


class AgentRunError(AgentError, RuntimeError):
    """A run of an agent failed."""

    def __str__(self) -> str:
        return self.message


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


_ATTACHED_PREFIX = '_edgewise_'
"""Attributes Edgewise attaches to an error on its way (kept when the error is pickled)."""


class ModelAPIError(AgentRunError):
    """A request to a model provider's API failed: the connection dropped, it timed out, or it was refused.

    The models raise one of its categories when the provider says what went wrong (`ModelRateLimitError`,
    `ModelQuotaExceededError`, `ModelUnavailableError`, `ModelServerError`, `ModelConnectionError`,
    `ModelRequestRejectedError`, `ModelRequestTimeout` and their subclasses); an HTTP error status is also a
    `ModelHTTPError`, whatever its category.
    """

    model_name: str
    """The name of the model the request was for."""
    body: object | None
    """The body of the provider's error response or error event, when there is one."""
    provider_error_code: str | None
    """The provider's machine-readable error code (`'rate_limit_exceeded'`, `'RESOURCE_EXHAUSTED'`), if it sent one."""
    provider_error_type: str | None
    """The provider's error type, when it sends one apart from the code (`'overloaded_error'`)."""
    retry_after: float | None
    """How many seconds the provider asked to wait before trying again, if it said (an HTTP error reads its
    `retry-after-ms` or `Retry-After` header; a Gemini error also the `RetryInfo` of its body)."""
    in_stream: bool
    """Whether the provider reported the error inside a stream that had already started with a success status (a
    `ModelHTTPError` then carries the status the same error has before a stream opens)."""

    def __init__(
        self,
        model_name: str,
        message: str,
        *,
        body: object | None = None,
        provider_error_code: str | None = None,
        provider_error_type: str | None = None,
        retry_after: float | None = None,
        in_stream: bool = False,
    ) -> None:
        self.model_name = model_name
        self.body = body
        self.provider_error_code = provider_error_code
        self.provider_error_type = provider_error_type
        self.retry_after = retry_after
        self.in_stream = in_stream
        super().__init__(message)

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.model_name, self.message), self.__getstate__()

    def __getstate__(self) -> dict[str, Any]:
        attached = {key: value for key, value in vars(self).items() if key.startswith(_ATTACHED_PREFIX)}
        return {
            'body': self.body,
            'provider_error_code': self.provider_error_code,
            'provider_error_type': self.provider_error_type,
            'retry_after': self.retry_after,
            'in_stream': self.in_stream,
            **attached,
        }

    def __setstate__(self, state: dict[str, Any] | None) -> None:
        self.__dict__.update(state or {})


class ModelRateLimitError(ModelAPIError):
    """The provider refused the request because a rate limit was reached (an HTTP 429, a `RESOURCE_EXHAUSTED`):
    waiting helps, `retry_after` says how long when the provider said. An exhausted quota is a
    `ModelQuotaExceededError` instead."""


class ModelQuotaExceededError(ModelAPIError):
    """The account's quota, credits or billing is exhausted, as the provider said explicitly (an HTTP 402, OpenAI's
    `insufficient_quota`, Anthropic's `billing_error` or low credit balance, Gemini's daily quota): waiting does
    not help."""


class ModelUnavailableError(ModelAPIError):
    """The provider or model could not serve the request for now (an HTTP 503, an `UNAVAILABLE`)."""


class ModelOverloadedError(ModelUnavailableError):
    """The provider or model could not serve the request because it is overloaded, as it said (an HTTP 529,
    Anthropic's `overloaded_error`, a 503 or `UNAVAILABLE` whose message says overloaded)."""


class ModelServerError(ModelAPIError):
    """The provider failed with a server error of no other category (an HTTP 500, 502, 504, an `INTERNAL`)."""


TransportPhase = Literal['pool', 'connect', 'write', 'read']
"""The stage of a request at which its transport failed (see `ModelConnectionError.phase`)."""

RequestTimeoutSetting: TypeAlias = Literal['request_timeout', 'first_event_timeout']
"""The model setting whose timeout ran out (see `ModelRequestTimeout.setting`)."""


class ModelConnectionError(ModelAPIError):
    """The request did not reach the provider, or its response could not be read (a refused or reset connection, a
    stream cut off); the transport's exception is the `__cause__`. The message names the server (host and port)
    and never a credential."""

    phase: TransportPhase | None
    """Where the transport failed: `'pool'` (waiting for a pooled connection) and `'connect'` (opening one): the
    request was not sent; `'write'` (sending it): it may have been partly sent; `'read'` (reading the response, a
    stream broken off): it was sent, so the provider may have acted on it. `None` when unknown."""

    def __init__(
        self,
        model_name: str,
        message: str,
        *,
        phase: TransportPhase | None = None,
        body: object | None = None,
        provider_error_code: str | None = None,
        provider_error_type: str | None = None,
        retry_after: float | None = None,
        in_stream: bool = False,
    ) -> None:
        self.phase = phase
        super().__init__(
            model_name,
            message,
            body=body,
            provider_error_code=provider_error_code,
            provider_error_type=provider_error_type,
            retry_after=retry_after,
            in_stream=in_stream,
        )

    def __getstate__(self) -> dict[str, Any]:
        return {**super().__getstate__(), 'phase': self.phase}


class ModelTimeoutError(ModelConnectionError):
    """One attempt at the request timed out in the HTTP client (the `timeout` model setting, per attempt); the
    deadline over every attempt, `request_timeout`, raises `ModelRequestTimeout` instead."""


class ModelRequestRejectedError(ModelAPIError):
    """The provider rejected the request itself (an HTTP 400 or 422, an `INVALID_ARGUMENT`), so sending it again
    unchanged will not succeed; its subclasses say why when the provider does. Another model may accept it, so
    `FallbackModel` falls back on it by default."""


class ModelContextWindowExceededError(ModelRequestRejectedError):
    """The input is longer than the model's context window: compact or truncate the history and try again (an
    overflow reported with a 400 is also a `ModelHTTPError` with status 400)."""


class ModelAuthenticationError(ModelRequestRejectedError):
    """The provider rejected the request's credentials or does not allow them this request (an HTTP 401 or 403, an
    `UNAUTHENTICATED`, `PERMISSION_DENIED` or invalid API key): check the key and its access to the model."""


class ModelNotFoundError(ModelRequestRejectedError):
    """The provider does not know the model (or deployment) the request names (an HTTP 404, a `NOT_FOUND`,
    OpenAI's `model_not_found`); a wrong base URL gives it too."""


class ModelRequestTimeout(ModelAPIError):
    """A model request did not finish within its `request_timeout` model setting, or a streamed one produced no event
    within its `first_event_timeout`; `setting` says which. The deadline covers every attempt (retries included)
    and, for a stream, reading it to its last event."""

    timeout: float
    """The timeout that ran out, in seconds."""
    setting: RequestTimeoutSetting
    """The model setting whose timeout ran out."""

    def __init__(self, model_name: str, timeout: float, *, setting: RequestTimeoutSetting = 'request_timeout') -> None:
        self.timeout = timeout
        self.setting = setting
        super().__init__(model_name, _request_timeout_message(model_name, timeout, setting))

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.model_name, self.timeout), self.__getstate__()

    def __getstate__(self) -> dict[str, Any]:
        return {**super().__getstate__(), 'setting': self.setting}

    def __setstate__(self, state: dict[str, Any] | None) -> None:
        super().__setstate__(state)
        self.message = _request_timeout_message(self.model_name, self.timeout, self.setting)
        self.args = (self.message,)


def _request_timeout_message(model_name: str, timeout: float, setting: RequestTimeoutSetting) -> str:
    message = f'Request to model {model_name!r} timed out after {timeout:g} seconds'
    return message + (' without producing any output' if setting == 'first_event_timeout' else '')


HTTPErrorCategory: TypeAlias = type[
    ModelRateLimitError | ModelQuotaExceededError | ModelUnavailableError | ModelServerError | ModelRequestRejectedError
]
"""An error category an HTTP error can also belong to (see `ModelHTTPError.for_category`)."""


class ModelHTTPError(ModelAPIError):
    """A model provider answered with an HTTP status of 400 or more (after any retries).

    An error of a category is an instance of the category too: `except ModelRateLimitError` catches a 429, and
    `except ModelHTTPError` still does. An error reported inside an open stream carries the status the provider
    gives the same error outside a stream, with `in_stream` set.
    """

    status_code: int
    """The HTTP status of the response."""
    headers: dict[str, str] | None
    """The response's headers, names in lower case (`error.headers.get('retry-after')`); `None` when the error
    did not come with headers (an error reported inside a stream, say)."""
    suggested_model_id: str | None
    """A known model id close to the one the provider rejected as unknown (`'openai:gpt-5'` for `'gpt-5x'`), named
    in the message as a hint; `None` when there is no such suggestion."""
    hint: str | None
    """What to do about the error, added to the message."""

    def __init__(
        self,
        status_code: int,
        model_name: str,
        body: object | None = None,
        *,
        headers: Mapping[str, str] | None = None,
        suggested_model_id: str | None = None,
        hint: str | None = None,
        provider_error_code: str | None = None,
        provider_error_type: str | None = None,
        retry_after: float | None = None,
        in_stream: bool = False,
    ) -> None:
        self.status_code = status_code
        self.headers = None if headers is None else {name.lower(): value for name, value in headers.items()}
        self.suggested_model_id = suggested_model_id
        self.hint = hint
        super().__init__(
            model_name,
            f'status_code: {status_code}, model_name: {model_name}, body: {body}',
            body=body,
            provider_error_code=provider_error_code,
            provider_error_type=provider_error_type,
            retry_after=retry_after if retry_after is not None else _retry_after(self.headers),
            in_stream=in_stream,
        )
        self._add_suggestion()

    def _add_suggestion(self) -> None:
        if self.suggested_model_id is not None:
            self.message += f'. Did you mean {self.suggested_model_id!r}?'
        if self.hint is not None:
            self.message += f'. {self.hint}'
        self.args = (self.message,)

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.status_code, self.model_name, self.body), self.__getstate__()

    def __getstate__(self) -> dict[str, Any]:
        own = {'headers': self.headers, 'suggested_model_id': self.suggested_model_id, 'hint': self.hint}
        return {**super().__getstate__(), **own}

    def __setstate__(self, state: dict[str, Any] | None) -> None:
        state = state or {}
        super().__setstate__(state)
        self.headers = state.get('headers')
        if 'retry_after' not in state:  # pickled by an earlier version, which kept only the headers
            self.retry_after = _retry_after(self.headers)
        # The constructor ran without the suggestion and the hint (pickle passes only the positional arguments).
        self.suggested_model_id = state.get('suggested_model_id')
        self.hint = state.get('hint')
        self._add_suggestion()

    @staticmethod
    def for_category(
        category: HTTPErrorCategory | None,
        *,
        status_code: int,
        model_name: str,
        body: object | None = None,
        headers: Mapping[str, str] | None = None,
        suggested_model_id: str | None = None,
        hint: str | None = None,
        provider_error_code: str | None = None,
        provider_error_type: str | None = None,
        retry_after: float | None = None,
        in_stream: bool = False,
    ) -> ModelHTTPError:
        """A `ModelHTTPError` that is also an instance of `category` (or a plain one for `None`), as the models
        raise them; for a custom model or a test.

        Raises:
            TypeError: `category` is not a category an HTTP error can belong to (`ModelConnectionError`, say).
        """
        if category is None:
            error_class: type[ModelHTTPError] = ModelHTTPError
        elif (found := _HTTP_CATEGORY_CLASSES.get(category)) is None:
            raise TypeError(f'{category.__name__} is not an error category an HTTP error can belong to.')
        else:
            error_class = found
        return error_class(
            status_code,
            model_name,
            body,
            headers=headers,
            suggested_model_id=suggested_model_id,
            hint=hint,
            provider_error_code=provider_error_code,
            provider_error_type=provider_error_type,
            retry_after=retry_after,
            in_stream=in_stream,
        )

    @property
    def provider_retry_hint(self) -> bool | None:
        """Whether the provider said another attempt may succeed (its `x-should-retry` header, which OpenAI and
        Anthropic send): `None` without the header or with a value other than `true` and `false`."""
        value = (self.headers or {}).get('x-should-retry', '').strip().lower()
        return {'true': True, 'false': False}.get(value)


class _CategorizedHTTPError(ModelHTTPError):
    """The private classes `ModelHTTPError.for_category` makes: each a `ModelHTTPError` and one category, named as
    the category (so tracebacks and reprs read `ModelRateLimitError`). Catch the category or `ModelHTTPError`."""

    category: ClassVar[type[ModelAPIError]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.category = cls.__bases__[1]
        cls.__name__ = cls.category.__name__
        cls.__qualname__ = cls.category.__qualname__

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickle would look the class up by its (borrowed) name: rebuild it from its category instead.
        arguments = (self.category, self.status_code, self.model_name, self.body)
        return _categorized_http_error, arguments, self.__getstate__()


def _categorized_http_error(
    category: type[ModelAPIError], status_code: int, model_name: str, body: object | None
) -> ModelHTTPError:
    return _HTTP_CATEGORY_CLASSES[category](status_code, model_name, body)


class _HTTPModelRateLimitError(_CategorizedHTTPError, ModelRateLimitError):
    pass


class _HTTPModelQuotaExceededError(_CategorizedHTTPError, ModelQuotaExceededError):
    pass


class _HTTPModelUnavailableError(_CategorizedHTTPError, ModelUnavailableError):
    pass


class _HTTPModelOverloadedError(_CategorizedHTTPError, ModelOverloadedError):
    pass


class _HTTPModelServerError(_CategorizedHTTPError, ModelServerError):
    pass


class _HTTPModelRequestRejectedError(_CategorizedHTTPError, ModelRequestRejectedError):
    pass


class _HTTPModelContextWindowExceededError(_CategorizedHTTPError, ModelContextWindowExceededError):
    pass


class _HTTPModelAuthenticationError(_CategorizedHTTPError, ModelAuthenticationError):
    pass


class _HTTPModelNotFoundError(_CategorizedHTTPError, ModelNotFoundError):
    pass


_HTTP_CATEGORY_CLASSES: dict[type[ModelAPIError], type[_CategorizedHTTPError]] = {
    cls.category: cls
    for cls in (
        _HTTPModelRateLimitError,
        _HTTPModelQuotaExceededError,
        _HTTPModelUnavailableError,
        _HTTPModelOverloadedError,
        _HTTPModelServerError,
        _HTTPModelRequestRejectedError,
        _HTTPModelContextWindowExceededError,
        _HTTPModelAuthenticationError,
        _HTTPModelNotFoundError,
    )
}


def _retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from `retry-after-ms` (milliseconds, as OpenAI and Anthropic send it) or `Retry-After` (a
    number of seconds, or an HTTP date: the time left until then, at least 0); names in lower case."""
    if headers is None:
        return None
    if (milliseconds := headers.get('retry-after-ms')) is not None:
        try:
            value = float(milliseconds)
        except ValueError:
            value = -1.0
        if 0 <= value < float('inf'):
            return value / 1000
    raw = headers.get('retry-after')
    if raw is None:
        return None
    try:
        seconds = float(int(raw))
    except ValueError:
        pass
    except OverflowError:  # more seconds than a float holds: no usable wait
        return None
    else:
        return seconds if seconds >= 0 else None
    from email.utils import parsedate_to_datetime  # only for this rare form

    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # the asctime form of an HTTP date has no zone: it is UTC
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(tz=timezone.utc)).total_seconds())


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


class FallbackExceptionGroup(ExceptionGroup[Any]):
    """Every model of a `FallbackModel` (or of a `ModelFallback` capability's chain) failed: the group holds each
    model's exception, in order (and a `ResponseRejected` when a `fallback_on` response handler turned responses
    down)."""

    attempts: Sequence[ModelRequestAttempt] = ()
    """Every attempt made, in order, with the usage of the responses turned down (which the run's usage counts)."""
