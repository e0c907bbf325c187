"""`EdgewiseDurability`: every run of an agent stored in an Edgewise persistence, the pydantic-ai 2.x way.

pydantic-ai 2.x makes durable execution a capability (`TemporalDurability`, `DBOSDurability`): code adds it to
`Agent(capabilities=[...])` and its runs become durable, with no wrapper agent. This capability does the same
over Edgewise's own durable runs: each run that is not given a `persistence=` is stored, step by step and tool
call by tool call, in the store the capability names, and `Agent.resume(run_id)` finishes it after a crash.
"""

from __future__ import annotations as _annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from edgewise.graph.persistence import BaseStatePersistence

from .abstract import AbstractCapability

__all__ = ('EdgewiseDurability', 'durability_of')

PersistenceFactory = Callable[[str], BaseStatePersistence[Any, Any]]
"""Makes the persistence of one run from its run id."""


@dataclass
class EdgewiseDurability(AbstractCapability[Any]):
    """Store each run of the agent in `store`, so that it resumes after a crash (`agent.resume(run_id)`).

    A run's id is its `run_id` (`AgentRun.run_id`, `AgentRunResult.run_id`, `RunContext.run_id`): keep it to
    resume the run. A run given its own `persistence=` uses that one instead. Not buildable from an agent spec.

    Example:
        ```python
        agent = Agent('openai:gpt-5', capabilities=[EdgewiseDurability('sqlite:///runs.db')])
        result = await agent.run('Hello')  # stored in runs.db under result.run_id
        ```
    """

    store: str | PersistenceFactory
    """A store URL (`'sqlite:///runs.db'`, `'postgresql://...'`, `'file:///runs/'`) or a function making the
    persistence of a run from its id."""

    def persistence(self, run_id: str) -> BaseStatePersistence[Any, Any]:
        """A new persistence object for the run `run_id` in the store (to resume, inspect or fork the run).

        Raises:
            PersistenceError: `store` is not a store URL.
        """
        if isinstance(self.store, str):
            from edgewise.graph.persistence.store import persistence_from_url

            return persistence_from_url(self.store, run_id)
        return self.store(run_id)

    @classmethod
    def get_serialization_name(cls) -> str | None:
        """`None`: a durability capability is given in code, not in an agent spec."""
        return None

    def __repr__(self) -> str:
        # A store URL may carry a password: name the kind of store only.
        store = self.store.split(':', 1)[0] + ':...' if isinstance(self.store, str) else repr(self.store)
        return f'EdgewiseDurability(store={store})'


def durability_of(capabilities: Sequence[Any]) -> EdgewiseDurability | None:
    """The last `EdgewiseDurability` among `capabilities` (the run's own come after the agent's), or `None`."""
    found = None
    for capability in capabilities:
        if isinstance(capability, EdgewiseDurability):
            found = capability
    return found
