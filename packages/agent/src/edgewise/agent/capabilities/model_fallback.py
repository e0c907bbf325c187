"""`ModelFallback`: a capability that sends a request step to other models when the step's model fails or gives a
response `fallback_on` turns down (as pydantic-ai 2.68's)."""

from __future__ import annotations as _annotations

import copy
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast, get_args

from .. import exceptions
from ..exceptions import (
    ContentFilterError,
    ModelAPIError,
    OutputTokenLimitExceeded,
    UsageLimitExceeded,
    UserError,
)
from ..messages import ModelMessage, ModelResponse
from ..models import KnownModelName, Model, ModelRequestContext, infer_model
from ..models._attempts import AttemptLog, AttemptStart
from ..models.fallback import REJECTED_STATUS, FallbackOn, FallbackPredicates, raise_fallback_group
from ..models.wrapper import WrapperModel
from ..tools import AgentDepsT, RunContext
from .abstract import AbstractCapability, AgentModel, CapabilityOrdering, WrapModelRequestHandler

__all__ = ('ModelFallback', 'STICKY_METADATA_KEY')

STICKY_METADATA_KEY = 'model_fallback'
"""The key of `ModelResponse.metadata` under which a sticky `ModelFallback` notes the model that answered
(`{'model_id': ..., 'fell_back': ...}`): pydantic-ai reads `model_id` and `failed_attempts` instead, which Edgewise
does not set on every response yet, and histories pinned this way by earlier Edgewise versions keep their pin."""

_SpecFallbackError = Literal['ModelAPIError', 'ModelHTTPError', 'ContentFilterError', 'OutputTokenLimitExceeded']
"""The exceptions an agent spec can name in `ModelFallback`'s `fallback_on` (the ones Edgewise has of pydantic-ai's
list)."""

_SPEC_FALLBACK_ERRORS: dict[str, type[Exception]] = {
    name: getattr(exceptions, name) for name in get_args(_SpecFallbackError)
}

Candidate = Model | KnownModelName | str


@dataclass(init=False)
class ModelFallback(AbstractCapability[AgentDepsT]):
    """Asks other models when the one serving a request step fails: the chain is the step's model (the agent's,
    the run's, or the one a capability such as `SelectModel` picked), then `models` in order. A model already asked
    in the step is skipped, so naming the agent's own model first costs nothing.

    ```py
    from edgewise.agent import Agent
    from edgewise.agent.capabilities import ModelFallback

    agent = Agent('openai:gpt-5', capabilities=[ModelFallback('anthropic:claude-sonnet-4-5')])
    agent = Agent(capabilities=[ModelFallback('openai:gpt-5', 'anthropic:claude-sonnet-4-5')])  # no agent model
    ```

    The request step is not repeated: the hooks outside this capability (`before_model_request`, the other
    capabilities' `wrap_model_request`) run once, and no model sees a retry prompt. A response turned down still
    counts in the run's usage. With `sticky=True`, a conversation that fell back stays on the model that answered,
    in later steps and in later runs continuing its history.

    Prefer it to `FallbackModel` inside an agent; `FallbackModel` does the same for a bare `Model`.
    """

    models: list[Candidate]
    """The models asked, in order, after the step's own."""
    sticky: bool
    """Whether a conversation that fell back stays on the model that answered."""

    _predicates: FallbackPredicates = field(repr=False)
    _supplies_model: bool = field(repr=False)
    _default_model: Candidate | None = field(repr=False)
    """The model a step has when nothing picks one, as the run starts: the agent's own, or the first of `models`."""
    _resolved: dict[str, Model] = field(repr=False)
    """The candidates given as names, as resolved in this run (each once)."""

    def __init__(
        self,
        *models: Candidate,
        fallback_on: FallbackOn = (ModelAPIError, ContentFilterError, OutputTokenLimitExceeded),
        sticky: bool = False,
    ) -> None:
        """Make the capability.

        Args:
            models: The models (or model names) asked after the step's own; with no agent model, the first is the
                model of the run.
            fallback_on: When to move on, as `FallbackModel`'s (exception types, functions of the exception or, with
                a first parameter annotated `ModelResponse`, of the response). By default any `ModelAPIError`, and a
                response the content filter stopped (`ContentFilterError`) or the output token limit cut off
                (`OutputTokenLimitExceeded`): naming these two exceptions turns such responses down. Streamed
                responses are taken as they come (with a `UserWarning` when there are response functions): they
                have reached the reader already; a stream that fails to open still moves on.
            sticky: Whether a conversation that fell back keeps asking the model that answered first, in later steps
                and runs, instead of the step's own model (only when the step's model is the agent's default: a
                model given to the run or picked by a capability is still asked first). Should that model fail, the
                chain goes on with the models after it, then the step's own, then those before it.

        Raises:
            UserError: no model is given, or `fallback_on` is empty.
        """
        super().__init__()
        if not models:
            raise UserError('`ModelFallback` requires at least one model to fall back to.')
        self.models = list(models)
        self.sticky = sticky
        self._predicates = FallbackPredicates.parse(
            fallback_on,
            owner='`ModelFallback`',
            default='(ModelAPIError, ContentFilterError, OutputTokenLimitExceeded)',
        )
        self._supplies_model = False
        self._default_model = None
        self._resolved = {}

    def get_ordering(self) -> CapabilityOrdering:
        """Innermost: the other capabilities' request hooks see only the response that was taken."""
        return CapabilityOrdering(position='innermost')

    def for_agent(self, agent: Any) -> ModelFallback[AgentDepsT]:
        """A copy that also gives the run its model when `agent` has none of its own (a capability's model would
        otherwise win over the agent's)."""
        return self._copy(_supplies_model=agent.model is None)

    def get_model(self) -> AgentModel[AgentDepsT] | None:
        """The first of `models` when the agent has no model; else `None`."""
        return self.models[0] if self._supplies_model else None

    async def for_run(self, ctx: RunContext[AgentDepsT]) -> ModelFallback[AgentDepsT]:
        """A copy for the run, which resolves the candidates' names once."""
        agent_model = ctx.agent.model if ctx.agent is not None else None
        return self._copy(_default_model=self.models[0] if agent_model is None else agent_model, _resolved={})

    def _copy(self, **changes: Any) -> ModelFallback[AgentDepsT]:
        found = copy.copy(self)
        found.__dict__.update(changes)
        return found

    async def wrap_model_request(
        self, ctx: RunContext[AgentDepsT], *, request_context: ModelRequestContext, handler: WrapModelRequestHandler
    ) -> ModelResponse:
        """Send the request to the step's model, then down the chain while the one asked fails.

        Raises:
            FallbackExceptionGroup: every model failed (or gave a response turned down).
        """
        remaining: list[Candidate] = list(self.models)
        current = request_context
        if (pinned := self._pinned(request_context)) is not None:
            remaining, candidate = pinned
            current = _with_model(request_context, await self._resolve(candidate), candidate)
        attempted: list[Model] = []
        errors: list[Exception] = []
        rejected = 0
        log = AttemptLog()
        while True:
            attempted.append(current.model)
            start = AttemptStart()
            try:
                response = await handler(current)
            except Exception as exc:
                if isinstance(exc, UsageLimitExceeded) or not await self._predicates.moves_on(exc):
                    raise
                errors.append(exc)
                log.record(current.model, exc, start)
            else:
                if current.streaming:
                    if self._predicates.response_handlers:
                        warnings.warn(
                            '`ModelFallback` response handlers in `fallback_on` are not applied to streamed requests, '
                            'so the streamed response is accepted as is.',
                            UserWarning,
                            stacklevel=2,
                        )
                    return self._noted(log.attach(response), current, fell_back=bool(errors or rejected))
                if not await self._predicates.moves_on(response):
                    return self._noted(log.attach(response), current, fell_back=bool(errors or rejected))
                rejected += 1
                # Paid for, though it never enters the history: the run counts its usage from the attempt's record.
                log.record(current.model, response, start, status=REJECTED_STATUS)
            following = await self._next(request_context, remaining, attempted)
            if following is None:
                raise_fallback_group(errors, rejected, owner='ModelFallback', log=log)
            current = following

    async def _next(
        self, request_context: ModelRequestContext, remaining: list[Candidate], attempted: list[Model]
    ) -> ModelRequestContext | None:
        """The request moved to the next candidate not asked yet in this step, or `None` when none is left."""
        while remaining:
            candidate = remaining.pop(0)
            model = await self._resolve(candidate)
            if not any(_is_or_wraps(asked, model) for asked in attempted):
                return _with_model(request_context, model, candidate)
        return None

    async def _resolve(self, candidate: Candidate) -> Model:
        if isinstance(candidate, Model):
            return candidate
        found = self._resolved.get(candidate)
        if found is None:
            found = self._resolved[candidate] = infer_model(candidate)
        return found

    def _pinned(self, request_context: ModelRequestContext) -> tuple[list[Candidate], Candidate] | None:
        """With `sticky`, when the conversation fell back to one of `models` and the step has the default model:
        the candidates after the pinned one (then the step's model and those before it), and the pinned one."""
        if not (self.sticky and self._is_default(request_context)):
            return None
        pinned = _fallen_back_to(request_context.messages)
        step_id = request_context.model_id or request_context.model.model_id
        if pinned is None or pinned == step_id or (index := self._index_of(pinned)) is None:
            return None
        return [*self.models[index + 1 :], request_context.model, *self.models[:index]], self.models[index]

    def _index_of(self, model_id: str) -> int | None:
        return next((i for i, candidate in enumerate(self.models) if _pin_id(candidate) == model_id), None)

    def _is_default(self, request_context: ModelRequestContext) -> bool:
        default = self._default_model
        if isinstance(default, Model):
            return _is_or_wraps(request_context.model, default)
        return default is not None and request_context.model_id == default

    def _noted(
        self, response: ModelResponse, request_context: ModelRequestContext, *, fell_back: bool
    ) -> ModelResponse:
        """`response`, with the id of the model that answered when the chain moved on to it (`model_id`), and noted
        in its metadata when `sticky` (the pin of later steps)."""
        if fell_back and response.model_id is None:
            response = replace(response, model_id=request_context.model_id or request_context.model.model_id)
        if not self.sticky:
            return response
        answered = request_context.model_id or request_context.model.model_id
        metadata = {**(response.metadata or {}), STICKY_METADATA_KEY: {'model_id': answered, 'fell_back': fell_back}}
        return replace(response, metadata=metadata)

    @classmethod
    def from_spec(
        cls,
        models: KnownModelName | str | Sequence[KnownModelName | str],
        *,
        fallback_on: _SpecFallbackError | Sequence[_SpecFallbackError] = (
            'ModelAPIError',
            'ContentFilterError',
            'OutputTokenLimitExceeded',
        ),
        sticky: bool = False,
    ) -> ModelFallback[Any]:
        """Build it from an agent spec: model names, and `fallback_on` as names of exception classes of
        `edgewise.agent.exceptions` (`ModelAPIError`, `ModelHTTPError`, `ContentFilterError`,
        `OutputTokenLimitExceeded`); functions can only be given to `ModelFallback(...)` itself.

        ```yaml
        capabilities:
          - ModelFallback: [anthropic:claude-sonnet-4-5, openai:gpt-5]
          - ModelFallback: {models: [openai:gpt-5], fallback_on: [ModelHTTPError], sticky: true}
        ```

        Raises:
            UserError: a model is not a name, or `fallback_on` names something else.
        """
        given_models = _spec_list(models, 'models')
        if invalid := [model for model in given_models if not isinstance(model, str)]:
            raise UserError(f'`ModelFallback` in an agent spec takes model names, got {invalid!r}.')
        given_errors = _spec_list(fallback_on, 'fallback_on')
        if unknown := [name for name in given_errors if not (isinstance(name, str) and name in _SPEC_FALLBACK_ERRORS)]:
            raise UserError(
                '`ModelFallback` `fallback_on` in an agent spec takes names of exception classes, '
                f'got {unknown!r}. Valid names: {", ".join(_SPEC_FALLBACK_ERRORS)}.'
            )
        error_types = tuple(_SPEC_FALLBACK_ERRORS[cast(str, name)] for name in given_errors)
        return cls(*cast(list[str], given_models), fallback_on=error_types, sticky=sticky)


def _spec_list(value: object, name: str) -> Sequence[object]:
    """A spec argument given as one name or a list of names, as a list (a mapping is refused)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, Sequence):
        return cast(Sequence[object], value)
    raise UserError(f'`ModelFallback` `{name}` in an agent spec must be a name or a list of names, got {value!r}.')


def _with_model(request_context: ModelRequestContext, model: Model, candidate: Candidate) -> ModelRequestContext:
    moved = replace(request_context, model=model)
    moved.model_id = candidate if isinstance(candidate, str) else None
    moved.streaming = request_context.streaming
    return moved


def _pin_id(model: Candidate) -> str:
    """How a candidate is named in the noted metadata: the name it was given as, or its `model_id`."""
    return model if isinstance(model, str) else model.model_id


def _fallen_back_to(messages: Sequence[ModelMessage]) -> str | None:
    """The model the conversation fell back to, when the latest responses all came from it since the fallback."""
    model_id: str | None = None
    for message in reversed(messages):
        if not isinstance(message, ModelResponse):
            continue
        note = (message.metadata or {}).get(STICKY_METADATA_KEY)
        noted_id = note.get('model_id') if isinstance(note, dict) else None
        if noted_id is None or (model_id is not None and noted_id != model_id):
            return None
        model_id = noted_id
        if note.get('fell_back'):  # type: ignore[union-attr]  # a dict: `noted_id` was found in it
            return model_id
    return None


def _is_or_wraps(model: Model, candidate: Model) -> bool:
    while True:
        if model is candidate:
            return True
        if not isinstance(model, WrapperModel):
            return False
        model = model.wrapped
