"""The choice of a run's model, as pydantic-ai 2.x makes it: a model given to the run (`run(model=...)`, a run spec's,
`agent.override(model=...)`) wins; else the capabilities' pick (`AbstractCapability.get_model`, the last one given),
else the agent's own model. A model id is resolved by the capabilities' `resolve_model_id` (the first model returned
wins), then by `infer_model`. A pick that is a selector (a function of a `ModelSelectionContext`) is asked before
each request step of the run; it bootstraps the run too, so an agent made without a model can run.
"""

from __future__ import annotations as _annotations

import inspect
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import Any

from .. import models
from ..capabilities.abstract import AbstractCapability
from ..exceptions import UserError
from ..messages import ModelMessage, ModelResponse
from ..models import KnownModelName, Model, ModelResolutionContext, ModelSelectionContext
from ..usage import RunUsage

__all__ = ('ModelChoice', 'choose_model', 'infer_agent_model', 'is_selector', 'model_for_agent_context', 'static_pick')

NO_MODEL = '`model` must either be set on the agent or included when calling it.'
_SUSPENDED = (
    'Cannot resume a suspended response with a dynamic capability model: the model that created the provider-side '
    'job cannot be reconstructed unambiguously. Pass that model explicitly to `run(model=...)` when resuming.'
)


def is_selector(pick: Any) -> bool:
    """Whether a capability's model pick is a selector function (a callable `Model` is still a model)."""
    return callable(pick) and not isinstance(pick, Model)


def infer_agent_model(agent: Any, model_id: str) -> Model:
    """`infer_model(model_id)`; the agent's own model id is inferred once, so its provider's client serves every
    run."""
    if model_id == agent.model:
        if agent._inferred_model is None or agent._inferred_model[0] != model_id:
            agent._inferred_model = (model_id, models.infer_model(model_id))
        found: Model = agent._inferred_model[1]
        return found
    return models.infer_model(model_id)


@dataclass(slots=True)
class ModelChoice:
    """How a run's model is chosen: the first step's model, the selector asked at the later steps (if a capability
    gave one) and the model ids resolved so far (each is resolved once per run)."""

    agent: Any
    """The agent running."""
    deps: Any
    """The run's dependencies (given to the resolvers and selectors)."""
    explicit: bool
    """Whether the run was given a model (`run(model=...)`, a spec's, an override's): no capability picks one then."""
    default: Model | None = None
    """The model the run has without the capabilities' pick (`None`: the agent has none)."""
    model: Model | None = None
    """The model of the first step."""
    selector: Any = None
    """The capabilities' selector, asked before each request step; `None` when the model is fixed for the run."""
    selected_for_step: int | None = None
    """The step the selector was last asked for."""
    capability: AbstractCapability[Any] | None = None
    """The run's capabilities as one (they resolve model ids)."""
    resolved: dict[tuple[int, str], Model] = field(default_factory=dict)
    """The models resolved so far, by the resolving capabilities and the model id."""
    default_id: str | None = None
    """The model id the default model was resolved from, if it was given as an id."""
    model_id: str | None = None
    """The model id the current model was picked or resolved from (`ModelRequestContext.model_id`), if any."""
    selected_id: str | None = field(default=None, repr=False)
    suspended: bool = False
    """Whether the run resumes a suspended response (which a selector cannot choose the model of)."""
    picked: bool = False
    """Whether the capabilities picked the first step's model (the run then enters its context)."""
    _stack: AsyncExitStack | None = field(default=None, repr=False)
    _entered: set[int] = field(default_factory=set, repr=False)

    async def __aenter__(self) -> ModelChoice:
        """Enter the context of the first step's model when the capabilities picked it; the models a selector
        picks later are entered as they are picked, each once, and left with this context (the end of the run)."""
        self._stack = AsyncExitStack()
        if self.picked:
            assert self.model is not None
            await self._enter(self.model)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        stack, self._stack = self._stack, None
        self._entered.clear()
        if stack is not None:
            await stack.__aexit__(exc_type, exc, tb)

    async def _enter(self, model: Model) -> None:
        entered_by_agent = self.agent._entered_model
        if self._stack is None or id(model) in self._entered:
            return
        if entered_by_agent is not None and entered_by_agent[1] is model:
            return
        self._entered.add(id(model))
        await self._stack.enter_async_context(model)

    async def resolve(self, pick: Model | KnownModelName | str) -> Model:
        """The model `pick` stands for: itself, or the model its id resolves to (once per run)."""
        if not isinstance(pick, str):
            return pick
        capability = self.capability
        key = (id(capability), pick)
        found = self.resolved.get(key)
        if found is None:
            if capability is not None and capability.has_resolve_model_id:
                context: ModelResolutionContext[Any] = ModelResolutionContext(agent=self.agent, deps=self.deps)
                found = await capability.resolve_model_id(context, model_id=pick)
            if found is None:
                entered_by_agent = self.agent._entered_model  # `async with agent:` entered a model for this id
                if entered_by_agent is not None and entered_by_agent[0] == pick:
                    found = entered_by_agent[1]
                else:
                    found = infer_agent_model(self.agent, pick)
            self.resolved[key] = found
        return found

    async def select(self, pick: Any, *, step: int, previous: Model | None, messages: Sequence[ModelMessage],
                     usage: RunUsage) -> Model:  # fmt: skip
        """The model the capabilities' `pick` (a model, a model id or a selector) gives for request step `step`."""
        if is_selector(pick):
            context: ModelSelectionContext[Any] = ModelSelectionContext(
                agent=self.agent, deps=self.deps, model=previous, run_step=step, messages=list(messages),
                usage=replace(usage),
            )  # fmt: skip
            pick = pick(context)
            if inspect.isawaitable(pick):
                pick = await pick
        self.selected_id = pick if isinstance(pick, str) else None
        return await self.resolve(pick)

    async def for_step(self, step: int, previous: Model, messages: Sequence[ModelMessage], usage: RunUsage) -> Model:
        """The model of request step `step` (the selector asked once per step), or `previous` when it is fixed."""
        if self.selector is None or self.selected_for_step == step:
            return previous
        self.selected_for_step = step
        model = await self.select(self.selector, step=step, previous=previous, messages=messages, usage=usage)
        self.model_id = self.selected_id
        await self._enter(model)
        return model

    async def after_for_run(self, capability: AbstractCapability[Any] | None) -> Model:
        """The first step's model once the capabilities are made for the run (`for_run`) and some changed: their
        pick now decides (a selector is asked again at the first step)."""
        self.capability = capability
        if self.explicit:
            assert self.model is not None
            return self.model
        pick: Any = capability.get_model() if capability is not None else None
        if is_selector(pick):
            if self.suspended:
                raise UserError(_SUSPENDED)
            self.selector, self.selected_for_step = pick, None
            assert self.model is not None  # the bootstrap model stands until the first step selects
            return self.model
        self.selector = None
        if pick is not None:
            self.model, self.picked = await self.resolve(pick), True
            self.model_id = pick if isinstance(pick, str) else None
        elif self.default is not None:
            self.model, self.picked, self.model_id = self.default, False, self.default_id
        else:
            raise UserError(
                'A capability removed the bootstrap model in `for_run()` but the agent has no default model.'
            )
        return self.model


def _ends_suspended(history: Sequence[ModelMessage]) -> bool:
    """Whether the history ends with a response suspended by its provider (pydantic-ai 2.x's `state='suspended'`:
    a provider-side job the same model must go on with)."""
    state: str | None = history[-1].state if history and isinstance(history[-1], ModelResponse) else None
    return state == 'suspended'


async def choose_model(
    agent: Any,
    model: Model | KnownModelName | None,
    capability: AbstractCapability[Any] | None,
    *,
    deps: Any,
    history: Sequence[ModelMessage],
    usage: RunUsage,
    missing: str = NO_MODEL,
) -> ModelChoice:
    """The run's model choice before its capabilities are made for it: the first step's model (the selector, if
    the capabilities give one, is asked here for step 1).

    Raises:
        UserError: no model anywhere, or a suspended response to resume with a selector choosing the model.
    """
    override = agent._override_model.get()
    explicit = model is not None or override is not None
    choice = ModelChoice(agent=agent, deps=deps, explicit=explicit, capability=capability)
    pick = None if explicit or capability is None else capability.get_model()
    suspended = _ends_suspended(history)
    if is_selector(pick) and suspended:
        raise UserError(_SUSPENDED)
    raw = override or model or agent.model
    if raw is not None:
        choice.default = await choice.resolve(raw)
        choice.default_id = choice.model_id = raw if isinstance(raw, str) else None
    if pick is not None:
        choice.model = await choice.select(pick, step=1, previous=choice.default, messages=history, usage=usage)
        choice.picked, choice.model_id = True, choice.selected_id
        if is_selector(pick):
            choice.selector, choice.selected_for_step = pick, 1
    elif choice.default is not None:
        choice.model = choice.default
    else:
        raise UserError(missing)
    choice.suspended = suspended
    return choice


def static_pick(agent: Any, use: str) -> Any:
    """The capabilities' pick of the agent's model, where no run (and so no deps) is at hand.

    Raises:
        UserError: the pick is a selector, or a model id the capabilities resolve: both need a run's deps.
    """
    root = agent._root_capability
    pick: Any = root.get_model()
    if is_selector(pick) or (isinstance(pick or agent.model, str) and root.has_resolve_model_id):
        raise UserError(f'The capability model requires run dependencies and {use}. Pass a concrete model explicitly.')
    return pick


def model_for_agent_context(agent: Any) -> Model | None:
    """The model `async with agent:` enters: the override's, a capability's static pick, or the agent's (a
    selector's picks and ids a capability resolves are entered by the runs that choose them); remembered on the
    agent (`_entered_model`), so that runs inside the block use that very model."""
    agent._entered_model = None
    selection: Any = agent._override_model.get()
    if selection is None:
        try:
            selection = static_pick(agent, 'is entered by the runs') or agent.model
        except UserError:
            return None
        if selection is None:
            return None
    model = infer_agent_model(agent, selection) if isinstance(selection, str) else selection
    agent._entered_model = (selection, model)
    return model
