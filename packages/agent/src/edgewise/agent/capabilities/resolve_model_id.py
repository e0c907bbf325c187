"""`ResolveModelId`: a capability turning model ids into models with a function (as pydantic-ai 2.x)."""

from __future__ import annotations as _annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

from ..models import KnownModelName, Model, ModelResolutionContext
from ..tools import AgentDepsT
from .abstract import AbstractCapability

__all__ = ('ModelIdResolver', 'ResolveModelId')

ModelIdResolver: TypeAlias = (
    'Callable[[ModelResolutionContext[AgentDepsT], str], Awaitable[Model | None] | Model | None]'
)
"""A function (sync or async) of a `ModelResolutionContext` and a model id, giving the model the id stands for or
`None` to leave it to the next resolver."""


@dataclass
class ResolveModelId(AbstractCapability[AgentDepsT]):
    """Resolves the model ids of the run (the agent's, the run's, or one a capability picks) with `resolver`: the
    model it returns is used; `None` leaves the id to the capabilities after this one and at last to
    `infer_model`. Use it for aliases (`'fast'`), or models built per tenant from the run's deps."""

    resolver: Callable[[ModelResolutionContext[Any], str], Any]
    """The function resolving a model id (typed as `ModelIdResolver`)."""

    async def resolve_model_id(
        self, ctx: ModelResolutionContext[AgentDepsT], *, model_id: KnownModelName | str
    ) -> Model | None:
        """What the resolver returns for `model_id` (awaited when it is async)."""
        found = self.resolver(ctx, model_id)
        if inspect.isawaitable(found):
            found = await found
        resolved: Model | None = found
        return resolved

    @classmethod
    def get_serialization_name(cls) -> str | None:
        """`None`: takes a function, so agent specs cannot name it."""
        return None
