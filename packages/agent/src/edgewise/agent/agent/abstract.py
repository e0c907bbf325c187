"""`AbstractAgent`: what every agent offers (`Agent`, `WrapperAgent` and an agent of your own), as in pydantic-ai 2.x.

An interface only: it holds no state and implements no run. `Agent` and `WrapperAgent` subclass it directly (one
level: each implements its members in its own module), so `isinstance(agent, AbstractAgent)` holds for both, and a
function typed `agent: AbstractAgent[Deps, Any]` (a capability's `for_agent`, say) takes either.
"""

from __future__ import annotations as _annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from typing import TYPE_CHECKING, Any, Generic

from ..output import OutputDataT, OutputSpec
from ..tools import AgentDepsT

if TYPE_CHECKING:
    from .._loop.agent_run import AgentRun
    from .._streaming.node_loop import EventStreamHandler
    from ..capabilities import CombinedCapability
    from ..messages import ModelMessage, SystemPromptPart, UserContent
    from ..models import KnownModelName, Model
    from ..settings import ModelSettings
    from ..toolsets import AbstractToolset
    from ..usage import RunUsage

__all__ = ('AbstractAgent',)


class AbstractAgent(ABC, Generic[AgentDepsT, OutputDataT]):
    """The interface of an agent: its name, types and toolsets, and `iter` and `override`, which the run entry
    points (`run`, `run_sync`, `run_stream`, ...) of `Agent` and `WrapperAgent` are built on.

    A subclass implements the abstract members; `system_prompt_parts` defaults to no system prompt.
    """

    description: str | None
    """What the agent does, for a caller choosing among agents (a parent agent's tool, an A2A card)."""

    @property
    @abstractmethod
    def name(self) -> str | None:
        """The agent's name (in spans, and as a tool of another agent); `None` until set or inferred."""

    @name.setter
    @abstractmethod
    def name(self, value: str | None) -> None:
        """Set the agent's name."""

    @property
    @abstractmethod
    def deps_type(self) -> type[AgentDepsT]:
        """The type of the dependencies the agent's tools receive (`ctx.deps`)."""

    @property
    @abstractmethod
    def output_type(self) -> OutputSpec[OutputDataT]:
        """The output type of runs that give none of their own."""

    @property
    @abstractmethod
    def event_stream_handler(self) -> EventStreamHandler | None:
        """The handler of the events of runs given none, if any."""

    @property
    @abstractmethod
    def toolsets(self) -> Sequence[AbstractToolset[AgentDepsT]]:
        """The agent's toolsets (output tools not included)."""

    @property
    def root_capability(self) -> CombinedCapability[AgentDepsT]:
        """The agent's capabilities as one; an agent that has none raises `NotImplementedError`."""
        raise NotImplementedError(f'{type(self).__name__} has no capabilities')

    async def system_prompt_parts(
        self,
        *,
        deps: AgentDepsT = None,  # type: ignore[assignment]
        model: Model | KnownModelName | None = None,
        message_history: Sequence[ModelMessage] | None = None,
        prompt: str | Sequence[UserContent] | None = None,
        usage: RunUsage | None = None,
        model_settings: ModelSettings | None = None,
    ) -> list[SystemPromptPart]:
        """The system prompts the first request of a run with these arguments would hold; none unless a subclass
        says otherwise (`Agent` and `WrapperAgent` do)."""
        return []

    @abstractmethod
    def iter(self, *args: Any, **kwargs: Any) -> AbstractAsyncContextManager[AgentRun[AgentDepsT, Any]]:
        """Start a run to be driven node by node (`async with agent.iter(prompt) as run`)."""

    @abstractmethod
    def override(self, *args: Any, **kwargs: Any) -> AbstractContextManager[None]:
        """Within the block, replace parts of the agent (model, deps, tools, ...) for the runs made in it."""
