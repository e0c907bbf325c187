"""`FallbackModel`: a model that sends each request to its models in turn until one answers (as pydantic-ai's)."""

from __future__ import annotations as _annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager, suppress
from dataclasses import dataclass, field, replace
from datetime import timedelta
from types import TracebackType
from typing import Any, NoReturn, TypeAlias

import anyio

from .._instrument import set_request_span_attributes
from .._messages.continuation_pin import (
    FALLBACK_MODEL_PIN_KEY,
    REPLACE_PREVIOUS_RESPONSE_KEY,
    continuation_pin,
    with_framework_marks,
)
from .._messages.model_messages import ModelMessage, ModelResponse, ModelResponsePart
from .._utils import get_first_param_type
from ..exceptions import (
    ContentFilterError,
    FallbackExceptionGroup,
    IncompleteToolCall,
    ModelAPIError,
    OutputTokenLimitExceeded,
    UserError,
)
from ..profiles import ModelProfile
from ..settings import ModelSettings
from . import KnownModelName, infer_model
from ._attempts import AttemptLog, AttemptStart
from ._continuation import cancel_suspended_job, mark_suspended_job_cancelled
from ._message_preparation import prepare_history
from ._model import Model, RunContext
from ._request_parameters import ModelRequestParameters
from ._request_timeout import timed_request, timed_stream
from ._streamed_response import StreamedResponse
from ._task_instrumentation import server_attributes
from ._tool_announcements import announce_tool_availability
from ._tool_call_ids import fit_tool_call_ids

__all__ = ('FallbackModel', 'FallbackOn', 'FallbackPredicates', 'ResponseRejected', 'raise_fallback_group')

ExceptionHandler: TypeAlias = Callable[[Exception], bool | Awaitable[bool]]
ResponseHandler: TypeAlias = Callable[[ModelResponse], bool | Awaitable[bool]]
FallbackOn: TypeAlias = (
    'type[Exception] | tuple[type[Exception], ...] | Callable[..., Any] '
    '| Sequence[type[Exception] | Callable[..., Any]]'
)
"""When `FallbackModel` moves on to its next model: exception types, a function of the exception (sync or async,
true to move on), a function of the response whose first parameter is annotated `ModelResponse` (true: reject
the response and move on), or a sequence of these."""


REJECTED_STATUS = 'Response rejected by fallback_on'
"""The status of the span of an attempt whose response a `fallback_on` response handler turned down."""


class ResponseRejected(Exception):
    """In a `FallbackExceptionGroup`: responses that a `fallback_on` response handler turned down."""

    def __init__(self, rejected_count: int) -> None:
        super().__init__(f'{rejected_count} model response(s) rejected by fallback_on handler')


def _takes_response(handler: Callable[..., Any]) -> bool:
    """Whether `handler`'s first parameter is annotated `ModelResponse` (a response handler).

    Raises:
        UserError: its annotations name something not defined at run time (see `get_first_param_type`).
    """
    return get_first_param_type(handler) is ModelResponse


@dataclass
class FallbackPredicates:
    """A `fallback_on` read once, shared by `FallbackModel` and the `ModelFallback` capability: the functions of an
    exception, the functions of a response, and whether refusals and cut-off responses count as failures."""

    exception_handlers: list[ExceptionHandler] = field(default_factory=list[ExceptionHandler])
    response_handlers: list[ResponseHandler] = field(default_factory=list[ResponseHandler])
    content_filter: bool = False
    """`fallback_on` names `ContentFilterError` (or a subclass): a response with `finish_reason='content_filter'` is
    turned down (the run would only raise the error once the response is taken)."""
    output_token_limit: bool = False
    """`fallback_on` names `OutputTokenLimitExceeded` (or a subclass other than `IncompleteToolCall`): a response with
    `finish_reason='length'` is turned down."""

    @classmethod
    def parse(cls, fallback_on: FallbackOn, *, owner: str, default: str) -> FallbackPredicates:
        """Read `fallback_on`; `owner` and `default` name the class and its default in the error for an empty one.

        Raises:
            UserError: `fallback_on` names nothing, or holds something that is neither an exception type nor a
                function.
        """
        found = cls()
        one = isinstance(fallback_on, type) or callable(fallback_on)
        if not one and (isinstance(fallback_on, str | bytes) or not isinstance(fallback_on, Iterable)):
            raise UserError(_not_a_condition(owner, f'fallback_on={fallback_on!r}'))
        items: Sequence[Any] = [fallback_on] if one else list(fallback_on)  # type: ignore[arg-type]
        for item in items:
            if not (isinstance(item, type) or callable(item)):
                raise UserError(_not_a_condition(owner, f'{item!r} in fallback_on'))
        types = tuple(item for item in items if isinstance(item, type) and issubclass(item, BaseException))
        if types:
            found.exception_handlers.append(lambda exc: isinstance(exc, types))
        found.content_filter = any(issubclass(kind, ContentFilterError) for kind in types)
        found.output_token_limit = any(
            issubclass(kind, OutputTokenLimitExceeded) and not issubclass(kind, IncompleteToolCall) for kind in types
        )
        for item in items:
            if not isinstance(item, type):
                (found.response_handlers if _takes_response(item) else found.exception_handlers).append(item)
        if not found.exception_handlers and not found.response_handlers:
            raise UserError(
                f'{owner} created with empty fallback_on. All exceptions will propagate and all responses '
                f'will be accepted. Use fallback_on={default} for default behavior.'
            )
        return found

    async def moves_on(self, value: Exception | ModelResponse) -> bool:
        """Whether `value` (an exception, or a response) is a failure to move on from."""
        if isinstance(value, ModelResponse) and (
            (self.content_filter and value.finish_reason == 'content_filter')
            or (self.output_token_limit and value.finish_reason == 'length')
        ):
            return True
        handlers: Sequence[Callable[[Any], Any]] = (
            self.exception_handlers if isinstance(value, Exception) else self.response_handlers
        )
        for handler in handlers:
            verdict = handler(value)
            if inspect.isawaitable(verdict):
                verdict = await verdict
            if verdict:
                return True
        return False


def _not_a_condition(owner: str, what: str) -> str:
    return (
        f'{owner} got {what}: give exception types, functions of the exception or of the response, or a sequence '
        'of these.'
    )


def _fitted(model: Model, messages: list[ModelMessage], params: ModelRequestParameters) -> list[ModelMessage]:
    """`messages` fitted to `model`: a run prepares its messages for the fallback's first model, keeping the tools
    revealed mid-run as parts when any model takes them natively (`FallbackModel.prepare_messages`), so those are
    announced here to a model that does not; and the tool call ids fitted to its `tool_call_id_length`, if its
    profile has one (each model may take other ids)."""
    if not _keeps_reveals(model):
        messages = announce_tool_availability(messages, params)
    length = model.profile.get('tool_call_id_length')
    return messages if length is None else fit_tool_call_ids(messages, length)


def _keeps_reveals(model: Model) -> bool:
    """Whether the tools revealed mid-run reach `model` as parts: it takes them natively (`tool_addition_mode`), or
    it is a fallback (at any depth) among whose models one does (each of its models is then fitted in turn)."""
    if model.tool_addition_mode is not None:
        return True
    return isinstance(model, FallbackModel) and any(_keeps_reveals(inner) for inner in model.models)


@dataclass(init=False, eq=False, repr=False)
class FallbackModel(Model):
    """Sends each request to `default_model`, then to each of `fallback_models` in turn while the one asked fails
    in a way `fallback_on` names (by default a `ModelAPIError`: a provider error or an HTTP error status). When
    every model fails, raises a `FallbackExceptionGroup` of their exceptions. An error `fallback_on` does not name
    is raised at once. A streamed request moves on only while the stream opens; an error in the middle of a
    stream is raised.

    A suspended response is pinned to the model that gave it (`metadata['__pydantic_ai__']['fallback_model_id']`,
    as pydantic-ai 2.x), so that the turn is continued on that model. In an instrumented run, the request's `chat`
    span names the model that served the request.

    Its profile (what the run's output mode and tools are prepared for) is the default model's (pydantic-ai 2.x
    raises: there each model prepares the request itself); each model adapts the request parameters itself.

    A dataclass, as pydantic-ai 2.x's: its fields are `models` and the private `fallback_on` it read. Equality and
    hashing stay by identity, as for Edgewise's other models.
    """

    models: list[Model]
    """The models, in the order they are tried."""

    _predicates: FallbackPredicates = field(repr=False)

    def __init__(
        self,
        default_model: Model | KnownModelName | str,
        *fallback_models: Model | KnownModelName | str,
        fallback_on: FallbackOn = (ModelAPIError,),
    ) -> None:
        """Make the model.

        Args:
            default_model: The model (or model name) asked first.
            fallback_models: The models (or names) asked next, in order.
            fallback_on: When to move on (see `FallbackOn`).

        Raises:
            UserError: `fallback_on` is empty.
        """
        super().__init__()
        self.models = [infer_model(default_model), *(infer_model(m) for m in fallback_models)]
        self._predicates = FallbackPredicates.parse(fallback_on, owner='FallbackModel', default='(ModelAPIError,)')
        self._entered = 0
        self._enter_lock: anyio.Lock | None = None
        self._exit_stack: AsyncExitStack | None = None

    async def _moves_on(self, value: Exception | ModelResponse) -> bool:
        return await self._predicates.moves_on(value)

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        """The first model's response that is not an error `fallback_on` names (nor a rejected response). A request
        continuing a suspended response goes to the model pinned on it; when that model fails the way `fallback_on`
        names, its job is cancelled and the turn starts afresh on the models in order, without the suspended
        response.

        Raises:
            FallbackExceptionGroup: every model failed.
        """
        chain = _Chain()
        rewound = continued_job_cancelled = False
        if (pinned := self._continuation_model(messages)) is not None:
            suspended = messages[-1]
            assert isinstance(suspended, ModelResponse)  # (`_continuation_model` found it so)
            start = AttemptStart()
            try:
                response = await self._ask(pinned, messages, model_settings, model_request_parameters)
            except Exception as exc:
                if not await self._moves_on(exc):
                    self._mark_request_span(pinned)
                    raise
                failure: Exception | ModelResponse = exc
                abandoned: ModelResponse | None = suspended
            else:
                if not await self._moves_on(response):
                    self._mark_request_span(pinned)
                    return _pinned(response, pinned)
                # A turned-down response still suspended has a job running; a finished one has none.
                failure, abandoned = response, response if response.state == 'suspended' else None
            if abandoned is not None:
                await cancel_suspended_job(pinned, abandoned)
                continued_job_cancelled = abandoned is suspended
            chain.failed(pinned, failure, start)
            messages, rewound = messages[:-1], True
        try:
            return await self._request_chain(chain, messages, model_settings, model_request_parameters, rewound)
        except BaseException as error:
            if continued_job_cancelled:
                mark_suspended_job_cancelled(error)
            raise

    async def _request_chain(
        self,
        chain: _Chain,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        rewound: bool,
    ) -> ModelResponse:
        """Ask the models in order (after a pinned model that failed, when `rewound`)."""
        for model in self.models:
            start = AttemptStart()
            try:
                response = await self._ask(model, messages, model_settings, model_request_parameters)
            except Exception as exc:
                if await self._moves_on(exc):
                    chain.failed(model, exc, start)
                    continue
                self._mark_request_span(model)
                raise
            if await self._moves_on(response):
                chain.failed(model, response, start)
                continue
            response = chain.log.attach(response)
            if rewound:  # a fresh turn: it replaces the suspended one the pinned model left
                response = replace(
                    response, metadata=with_framework_marks(response.metadata, **{REPLACE_PREVIOUS_RESPONSE_KEY: True})
                )
            self._mark_request_span(model)
            return _pinned(response, model)
        chain.exhausted()

    @staticmethod
    async def _ask(
        model: Model, messages: list[ModelMessage], settings: ModelSettings | None, params: ModelRequestParameters
    ) -> ModelResponse:
        """`model`'s response, under its own `request_timeout`, to the messages and parameters fitted to it."""
        fitted = model.customize_request_parameters(params)
        return await timed_request(model, _fitted(model, messages, params), settings, fitted)

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        """The stream of the first model whose stream opens without an error `fallback_on` names. A request
        continuing a suspended response goes to the model pinned on it, as in `request`.

        Raises:
            FallbackExceptionGroup: every model failed to open its stream.
        """
        chain = _Chain()
        rewound = False
        if (pinned := self._continuation_model(messages)) is not None:
            suspended = messages[-1]
            assert isinstance(suspended, ModelResponse)  # (`_continuation_model` found it so)
            async with AsyncExitStack() as stack:
                start = AttemptStart()
                try:
                    response = await stack.enter_async_context(
                        self._open(pinned, messages, model_settings, model_request_parameters, run_context)
                    )
                except Exception as exc:
                    if not await self._moves_on(exc):
                        self._mark_request_span(pinned)
                        raise
                    await cancel_suspended_job(pinned, suspended)
                    chain.failed(pinned, exc, start)
                    messages, rewound = messages[:-1], True
                else:
                    response._continuation_pin = pinned.model_id
                    self._mark_request_span(pinned)
                    yield response
                    return
        try:
            for model in self.models:
                start = AttemptStart()
                async with AsyncExitStack() as stack:
                    try:
                        response = await stack.enter_async_context(
                            self._open(model, messages, model_settings, model_request_parameters, run_context)
                        )
                    except Exception as exc:
                        if await self._moves_on(exc):
                            chain.failed(model, exc, start)
                            continue
                        self._mark_request_span(model)
                        raise
                    if rewound:  # set before the first event: the run places the stream's parts by it
                        response._framework_marks = {REPLACE_PREVIOUS_RESPONSE_KEY: True}
                    response._continuation_pin = model.model_id
                    chain.log.attach_to_stream(response)
                    self._mark_request_span(model)
                    yield response
                    return
            chain.exhausted()
        except BaseException as error:
            if rewound:  # the job of the suspended response was cancelled on giving up the pinned model
                mark_suspended_job_cancelled(error)
            raise

    @staticmethod
    def _open(
        model: Model,
        messages: list[ModelMessage],
        settings: ModelSettings | None,
        params: ModelRequestParameters,
        run_context: RunContext[Any] | None,
    ) -> AbstractAsyncContextManager[StreamedResponse]:
        """`model`'s stream, under its own deadlines, of the messages and parameters fitted to it."""
        fitted = model.customize_request_parameters(params)
        return timed_stream(model, _fitted(model, messages, params), settings, fitted, run_context)

    def _continuation_model(self, messages: list[ModelMessage]) -> Model | None:
        """The model that continues the suspended response `messages` end with: the one pinned on it, if it is one of
        these models (else `None`: the request goes to the models in order)."""
        last = messages[-1] if messages else None
        if not isinstance(last, ModelResponse) or last.state != 'suspended':
            return None
        return self._pinned_model(last)

    def _pinned_model(self, response: ModelResponse) -> Model | None:
        """The model whose `model_id` is pinned on `response`, if it is one of these models."""
        if (model_id := continuation_pin(response)) is None:
            return None
        return next((model for model in self.models if model.model_id == model_id), None)

    def _mark_request_span(self, model: Model) -> None:
        """Have the request's `chat` span (when the run is traced) name `model`, the one that served the request
        (or raised its error), rather than this fallback model."""
        attributes: dict[str, Any] = {
            'gen_ai.request.model': model.model_name,
            'gen_ai.provider.name': model.system,
            'gen_ai.system': model.system,
        }
        base_url = getattr(model, 'base_url', None)
        attributes.update(server_attributes(base_url if isinstance(base_url, str) else None))
        set_request_span_attributes(self.model_name, attributes)

    async def __aenter__(self) -> FallbackModel:
        """Enter every model's context (their providers' HTTP clients), on the first of nested entries."""
        if self._enter_lock is None:
            self._enter_lock = anyio.Lock()
        async with self._enter_lock:
            if self._entered == 0:
                async with AsyncExitStack() as stack:
                    for model in self.models:
                        await stack.enter_async_context(model)
                    self._exit_stack = stack.pop_all()
            self._entered += 1
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """Leave the models' contexts, on the matching last exit."""
        assert self._enter_lock is not None  # entered before
        async with self._enter_lock:
            self._entered -= 1
            if self._entered == 0 and self._exit_stack is not None:
                stack, self._exit_stack = self._exit_stack, None
                await stack.__aexit__(exc_type, exc, tb)

    def _starts_request_deadline(self) -> bool:
        return False  # each model it tries gets a deadline of its own

    def continuation_delay(self, response: ModelResponse) -> float | None:
        """The wait before continuing a suspended response: that of the model pinned on it; without a pin (or one
        naming none of these models), the first model's that has a wait."""
        if (pinned := self._pinned_model(response)) is not None:
            return pinned.continuation_delay(response)
        return next((d for model in self.models if (d := model.continuation_delay(response)) is not None), None)

    async def cancel_suspended_response(self, response: ModelResponse) -> None:
        """Has the model pinned on `response` stop the provider's work on it; without a pin (or one naming none of
        these models), every model is asked, and a model's error is dropped so that the others are still asked."""
        if (pinned := self._pinned_model(response)) is not None:
            await pinned.cancel_suspended_response(response)
            return
        for model in self.models:
            with suppress(Exception):
                await model.cancel_suspended_response(response)

    @property
    def profile(self) -> ModelProfile:
        """The default model's profile."""
        return self.models[0].profile

    def prepare_messages(
        self, messages: list[ModelMessage], model_request_parameters: ModelRequestParameters | None = None
    ) -> list[ModelMessage]:
        """The history as the default model is sent it (see `Model.prepare_messages`), except that the tools revealed
        mid-run stay as parts when any of the models takes them natively (`tool_addition_mode`): each model is then
        sent them as it takes them, announced in a system prompt to a model that does not."""
        native = any(_keeps_reveals(model) for model in self.models)
        return prepare_history(messages, self.profile, model_request_parameters, keeps_tool_deltas=native)

    @property
    def context_window(self) -> int | None:
        """The smallest context window its models are known to have (a history that fits it fits them all), or
        `None` when none is known."""
        windows = [window for model in self.models if (window := model.context_window) is not None]
        return min(windows, default=None)

    def resolve_cache_retention(self, model_settings: ModelSettings | None) -> timedelta | None:
        """The longest retention any of its models resolves the settings to (any may answer), or `None`."""
        retentions = [r for model in self.models if (r := model.resolve_cache_retention(model_settings)) is not None]
        return max(retentions, default=None)

    def _caching_not_enabled(self, model_settings: ModelSettings | None) -> bool:
        # Which of the models answers is not known before the request, so nothing is said about its caching.
        return False

    @property
    def model_name(self) -> str:
        """`fallback:` and the models' names, comma-separated."""
        return f'fallback:{",".join(model.model_name for model in self.models)}'

    @property
    def system(self) -> str:
        """`fallback:` and the models' systems, comma-separated."""
        return f'fallback:{",".join(model.system for model in self.models)}'

    @property
    def base_url(self) -> str | None:
        """The first model's base URL."""
        return self.models[0].base_url

    @property
    def canonical_system(self) -> str:
        """The first model's: each model, once tried, decides for itself what of the history it sends."""
        return self.models[0].canonical_system

    @property
    def compatible_systems(self) -> frozenset[str]:
        """The first model's (see `canonical_system`)."""
        return self.models[0].compatible_systems

    def accepts_stateless_artifacts(self, response: ModelResponse, part: ModelResponsePart | None = None) -> bool:
        """The first model's answer (see `canonical_system`)."""
        return self.models[0].accepts_stateless_artifacts(response, part)

    def accepts_server_state(self, response: ModelResponse) -> bool:
        """The first model's answer (see `canonical_system`)."""
        return self.models[0].accepts_server_state(response)

    @property
    def model_id(self) -> str:
        """`fallback:` and the models' ids, comma-separated."""
        return f'fallback:{",".join(model.model_id for model in self.models)}'

    def __repr__(self) -> str:
        # pydantic-ai 2.x's: the model name, then the dataclass fields shown in a repr
        return f'{type(self).__qualname__}(model_name={self.model_name!r}, models={self.models!r})'


@dataclass
class _Chain:
    """What a request to a fallback model's chain collected: the errors, the responses turned down, and the
    attempts."""

    errors: list[Exception] = field(default_factory=list[Exception])
    rejected: int = 0
    log: AttemptLog = field(default_factory=AttemptLog)

    def failed(self, model: Model, failure: Exception | ModelResponse, start: AttemptStart) -> None:
        """Note that the attempt at `model` begun at `start` failed with `failure` (an error, or a response turned
        down)."""
        if isinstance(failure, Exception):
            self.errors.append(failure)
            self.log.record(model, failure, start)
        else:
            self.rejected += 1
            self.log.record(model, failure, start, status=REJECTED_STATUS)

    def exhausted(self) -> NoReturn:
        """Raise the group of every model's failure."""
        raise_fallback_group(self.errors, self.rejected, log=self.log)


def _pinned(response: ModelResponse, model: Model) -> ModelResponse:
    """`response`, pinned to `model` when it is suspended (so that its continuation goes back to `model`)."""
    if response.state != 'suspended':
        return response
    metadata = with_framework_marks(response.metadata, **{FALLBACK_MODEL_PIN_KEY: model.model_id})
    return replace(response, metadata=metadata)


def raise_fallback_group(
    errors: list[Exception], rejected: int, *, owner: str = 'FallbackModel', log: AttemptLog | None = None
) -> NoReturn:
    """Raise the `FallbackExceptionGroup` of a chain of `owner`'s where no model answered: the errors, then a
    `ResponseRejected` counting the responses turned down (if any); its `attempts` are those of `log`."""
    found = [*errors, ResponseRejected(rejected)] if rejected else errors
    group = FallbackExceptionGroup(f'All models from {owner} failed', found)
    if log is not None:
        log.put_on(group)
    raise group
