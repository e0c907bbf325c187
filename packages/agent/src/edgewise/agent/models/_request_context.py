"""`ModelRequestContext`: what is about to be sent to a model, as the capabilities' request hooks see it
(re-exported by `models` and `capabilities`); `ModelResolutionContext` and `ModelSelectionContext`: what a
capability choosing the run's model is given (`AbstractCapability.resolve_model_id` and `get_model`)."""

from __future__ import annotations as _annotations

from dataclasses import dataclass, field
from typing import Any, Generic

from typing_extensions import TypeVar

from .._messages.model_messages import ModelMessage
from .._messages.usage_counts import RunUsage
from ..settings import ModelSettings
from ._model import Model
from ._request_parameters import ModelRequestParameters

__all__ = ('ModelRequestContext', 'ModelResolutionContext', 'ModelSelectionContext')

ModelContextDepsT = TypeVar('ModelContextDepsT', default=object, covariant=True)
"""The type of the run's dependencies a model selection or resolution context carries."""


@dataclass(kw_only=True)
class ModelRequestContext:
    """What is about to be sent to the model; `before_model_request` hooks may change any of it."""

    model: Model
    """The model the request goes to."""
    messages: list[ModelMessage]
    """The message history to send (ending with the new request); it replaces the run's history."""
    model_settings: ModelSettings | None
    """The request's settings."""
    model_request_parameters: ModelRequestParameters
    """The request's tools and output mode."""
    model_id: str | None = field(default=None, init=False)
    """The model id the run's model was picked or resolved from (`'openai:gpt-5'`, or an alias a capability's
    `resolve_model_id` turned into a model); `None` when the model was given as a model. Set by the run; it says
    nothing of a model a hook swapped in."""
    streaming: bool = field(default=False, init=False)
    """Whether the run streams this response (`run_stream`, `run_stream_events`, a streamed node of `iter`, or a
    run given an event stream handler). Set by the run; changing it changes nothing."""
    attempt: int = 1
    """Which attempt at the request step this is, from `1`: a hook's `RetryModelRequest` makes another. Only
    `wrap_model_request`, `on_model_request_error` and `after_model_request` can see more than `1` (in Edgewise,
    `wrap_model_request` runs again for each attempt); not `RunContext.run_step`, which counts the steps."""


@dataclass(frozen=True, kw_only=True)
class ModelResolutionContext(Generic[ModelContextDepsT]):
    """What `AbstractCapability.resolve_model_id` is given to turn a model id into a model: the agent and the
    run's dependencies (a run context does not exist yet: it needs the model)."""

    agent: Any
    """The agent whose model is resolved (typed loosely: the agent sits above the models)."""
    deps: ModelContextDepsT
    """The dependencies given to the run."""


@dataclass(frozen=True, kw_only=True)
class ModelSelectionContext(ModelResolutionContext[ModelContextDepsT]):
    """What a model selector (a function returned by `AbstractCapability.get_model`) is given before each request
    step of a run, to pick the model of that step."""

    model: Model | None
    """At the first step, the model the run would use without the selector (`None` if it has none); afterwards the
    model of the step before."""
    run_step: int
    """The step being selected for, from `1`."""
    messages: list[ModelMessage]
    """A copy of the message history before this step's request (changing it changes nothing)."""
    usage: RunUsage
    """A copy of the usage of the run before this step's request."""
