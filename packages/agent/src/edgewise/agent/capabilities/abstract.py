"""`AbstractCapability`: a piece of agent behaviour given with `Agent(capabilities=[...])`, and what its
`before_model_request` hook sees (`ModelRequestContext`)."""

from __future__ import annotations as _annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeAlias

from .._run_options import AgentInstructions, AgentModelSettings
from ..messages import ModelMessage
from ..models import Model, ModelRequestParameters
from ..settings import ModelSettings
from ..tools import AgentDepsT, AgentNativeTool, RunContext

__all__ = ('AbstractCapability', 'ModelRequestContext', 'AgentCapability', 'CapabilityFunc')


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


@dataclass
class AbstractCapability(Generic[AgentDepsT]):
    """Base of capabilities: override the hooks you need; the defaults change nothing."""

    def get_instructions(self) -> AgentInstructions:
        """Instructions this capability adds to every request (texts or functions of the run context)."""
        return None

    def get_model_settings(self) -> AgentModelSettings | None:
        """Model settings this capability adds (under the agent's and the run's)."""
        return None

    def get_native_tools(self) -> Sequence[AgentNativeTool[AgentDepsT]]:
        """Native tools (run by the model's provider) this capability adds to every request."""
        return ()

    async def before_model_request(
        self, ctx: RunContext[AgentDepsT], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        """Called before each model request with what is about to be sent; return it, changed or not."""
        return request_context

    def has_request_hook(self) -> bool:
        """Whether this capability overrides `before_model_request` (so runs without one skip building a context)."""
        return type(self).before_model_request is not AbstractCapability.before_model_request


CapabilityFunc: TypeAlias = Callable[[RunContext[Any]], 'AbstractCapability[Any] | None']
"""A function of the run context returning a capability (or `None`) for that run."""

AgentCapability: TypeAlias = 'AbstractCapability[AgentDepsT] | CapabilityFunc'
"""What `Agent(capabilities=[...])` takes: capabilities, or functions returning one per run."""
