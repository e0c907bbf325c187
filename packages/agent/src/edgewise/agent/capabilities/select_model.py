"""`SelectModel`: a capability picking the model of each request step with a function (as pydantic-ai 2.x)."""

from __future__ import annotations as _annotations

from dataclasses import dataclass

from ..tools import AgentDepsT
from .abstract import AbstractCapability, ModelSelector

__all__ = ('SelectModel',)


@dataclass
class SelectModel(AbstractCapability[AgentDepsT]):
    """Picks the model of each request step with `selector`, a function (sync or async) given a
    `ModelSelectionContext` (the agent, the run's deps, the step, the history and usage so far, the model the step
    before used) and returning a model or a model id. It runs before the first step of the run too, so an agent
    made without a model can run with one. A model given to the run (`run(model=...)`) wins over it."""

    selector: ModelSelector[AgentDepsT]
    """The function picking the model of a step."""

    def get_model(self) -> ModelSelector[AgentDepsT]:
        """The selector."""
        return self.selector

    @classmethod
    def get_serialization_name(cls) -> str | None:
        """`None`: takes a function, so agent specs cannot name it."""
        return None
