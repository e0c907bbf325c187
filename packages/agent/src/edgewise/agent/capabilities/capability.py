"""`Capability`: instructions, tools and toolsets given together as one capability, without a subclass (as
pydantic-ai 1.107's `Capability`)."""

from __future__ import annotations as _annotations

from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, TypeAlias, overload

from .._run.options import AgentInstructions, instruction_items
from ..tools import AgentDepsT, Tool, ToolFuncEither
from ..toolsets import AbstractToolset, AgentToolset, CombinedToolset, FunctionToolset
from ..toolsets._dynamic import DynamicToolset
from .abstract import AbstractCapability

__all__ = ('Capability', 'CapabilityDescription')

CapabilityDescription: TypeAlias = 'str | Callable[..., Any]'
"""What a capability says it is: a text, or a function (sync or async, of the run context or of nothing) giving
one."""


@dataclass(init=False)
class Capability(AbstractCapability[AgentDepsT]):
    """Instructions, function tools and toolsets as one capability, without writing a subclass; more tools and
    instruction functions can be added with its `tool`, `tool_plain` and `instructions` decorators (also after the
    capability is given to an agent). For model settings, hooks or native tools, subclass `AbstractCapability`.

    ```python
    from edgewise.agent import Agent, RunContext
    from edgewise.agent.capabilities import Capability
    from edgewise.agent.models.test import TestModel

    weather = Capability[str](instructions='Answer in one sentence.')


    @weather.tool
    def forecast(ctx: RunContext[str], day: str) -> str:
        return f'sunny in {ctx.deps} on {day}'


    agent = Agent(TestModel(), deps_type=str, capabilities=[weather])
    print(agent.run_sync('Weather on Monday?', deps='Paris').output)
    #> {"forecast":"sunny in Paris on a"}
    ```
    """

    _: KW_ONLY
    id: str | None = None
    """The capability's id."""
    description: str | None = None
    """The description, when it is a text (`get_description()` also gives one given as a function)."""
    defer_loading: bool = False
    """Whether the capability is loaded only when the model asks for it (`AbstractCapability.defer_loading`)."""
    toolsets: Sequence[AgentToolset[AgentDepsT]] = ()
    """The toolsets (or functions of the run context returning one) whose tools the capability adds."""
    tools: Sequence[Tool[AgentDepsT] | ToolFuncEither[AgentDepsT, ...]] = ()
    """The function tools given to the constructor."""
    _function_toolset: FunctionToolset[AgentDepsT] = field(init=False, repr=False)
    _instructions: list[Any] = field(init=False, repr=False)
    _description: CapabilityDescription | None = field(init=False, repr=False)

    def __init__(
        self,
        *,
        instructions: AgentInstructions = None,
        toolsets: Sequence[AgentToolset[AgentDepsT]] | None = None,
        tools: Sequence[Tool[AgentDepsT] | ToolFuncEither[AgentDepsT, ...]] = (),
        id: str | None = None,
        description: CapabilityDescription | None = None,
        defer_loading: bool = False,
    ) -> None:
        """Args:
        instructions: Instructions (texts, or functions of the run context) added to every request.
        toolsets: Toolsets, or functions of the run context returning one.
        tools: Function tools (`Tool`s or functions taking the run context or not).
        id: An id for the capability.
        description: What the capability is, as a text or a function giving one (`get_description()`).
        defer_loading: Load the capability only when the model asks for it (the `load_capability` tool); needs
            `id`.
        """
        self.id = id
        self.description = description if isinstance(description, str) else None
        self._description = description
        self.defer_loading = defer_loading
        self.toolsets = tuple(toolsets or ())
        self.tools = tools
        self._function_toolset = FunctionToolset(list(tools), id=id)  # the id names it for durable execution
        self._instructions = instruction_items(instructions)

    @classmethod
    def get_serialization_name(cls) -> str | None:
        """`None`: holds functions, so agent specs cannot name it."""
        return None

    def get_description(self) -> CapabilityDescription | None:
        """The description given to the constructor (a text or a function)."""
        return self._description

    def get_instructions(self) -> AgentInstructions:
        """The instructions given to the constructor, then those added with `@capability.instructions`."""
        return list(self._instructions) or None

    def get_toolset(self) -> AbstractToolset[AgentDepsT] | None:
        """The function tools and the toolsets, as one toolset. With neither, the (empty) toolset of the function
        tools, so that tools added later with `@capability.tool` still reach the agent."""
        toolsets: list[AbstractToolset[AgentDepsT]] = [self._function_toolset] if self._function_toolset.tools else []
        toolsets += [t if isinstance(t, AbstractToolset) else DynamicToolset(t) for t in self.toolsets]
        if not toolsets:
            return self._function_toolset
        return toolsets[0] if len(toolsets) == 1 else CombinedToolset(toolsets)

    @overload
    def tool(self, func: Callable[..., Any], /) -> Callable[..., Any]: ...

    @overload
    def tool(self, /, **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]: ...

    def tool(self, func: Any = None, /, **options: Any) -> Any:
        """Add a function tool taking the run context first, as `Agent.tool` (same options)."""
        return self._function_toolset.tool(**options) if func is None else self._function_toolset.tool(func)

    @overload
    def tool_plain(self, func: Callable[..., Any], /) -> Callable[..., Any]: ...

    @overload
    def tool_plain(self, /, **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]: ...

    def tool_plain(self, func: Any = None, /, **options: Any) -> Any:
        """Add a function tool that does not take the run context, as `Agent.tool_plain` (same options)."""
        if func is None:
            return self._function_toolset.tool_plain(**options)
        return self._function_toolset.tool_plain(func)

    @overload
    def instructions(self, func: Callable[..., Any], /) -> Callable[..., Any]: ...

    @overload
    def instructions(self, /) -> Callable[[Callable[..., Any]], Callable[..., Any]]: ...

    def instructions(self, func: Any = None, /) -> Any:
        """Add an instructions function (sync or async, taking the run context or nothing), as
        `Agent.instructions`: `@capability.instructions` or `@capability.instructions()`."""

        def register(function: Any) -> Any:
            self._instructions.append(function)
            return function

        return register if func is None else register(func)
