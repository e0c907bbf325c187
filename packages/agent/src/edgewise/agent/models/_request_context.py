"""`ModelRequestContext`: what is about to be sent to a model, as the capabilities' request hooks see it
(re-exported by `models` and `capabilities`)."""

from __future__ import annotations as _annotations

from dataclasses import dataclass

from .._messages.model_messages import ModelMessage
from ..settings import ModelSettings
from ._model import Model
from ._request_parameters import ModelRequestParameters

__all__ = ('ModelRequestContext',)


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
