"""The agent graph's state (persisted) and dependencies (per run, never persisted)."""

from __future__ import annotations as _annotations

import inspect
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeAlias

from typing_extensions import TypeVar

from ._deferred_tools import DeferredToolResults
from ._output import OutputSchema
from .exceptions import UnexpectedModelBehavior
from .messages import ModelMessage, UserContent
from .models import Model
from .settings import ModelSettings
from .tools import RunContext, ToolDefinition, resolve_return_schema
from .toolsets import AbstractToolset, ToolsetTool
from .usage import RunUsage, UsageLimits

__all__ = (
    'EndStrategy',
    'GraphAgentState',
    'GraphAgentDeps',
    'SystemPromptRunner',
    'OutputValidator',
    'call_user_function',
    'new_run_id',
)

DepsT = TypeVar('DepsT', default=None)
OutputT = TypeVar('OutputT', default=Any)

EndStrategy: TypeAlias = Literal['early', 'exhaustive']
"""What happens to the other tool calls of a response that gives the final output: skipped, or run."""


def new_run_id() -> str:
    """A new unique run id."""
    return os.urandom(16).hex()


@dataclass(kw_only=True)
class GraphAgentState:
    """The state of an agent run: everything needed to continue it, all of it serializable with pydantic."""

    message_history: list[ModelMessage] = field(default_factory=list)
    """The conversation so far, including the message history the run was given."""
    usage: RunUsage = field(default_factory=RunUsage)
    """The usage of the run so far."""
    retries: int = 0
    """How many times in a row the output has been retried."""
    tool_retries: dict[str, int] = field(default_factory=dict)
    """How many times in a row each tool has been retried."""
    run_step: int = 0
    """How many model requests the run has made."""
    run_id: str = field(default_factory=new_run_id)
    """The run's id."""

    def increment_retries(self, max_retries: int, error: BaseException | None = None) -> None:
        """Count one more output retry.

        Raises:
            UnexpectedModelBehavior: the output retry budget is spent.
        """
        self.retries += 1
        if self.retries > max_retries:
            raise UnexpectedModelBehavior(f'Exceeded maximum output retries ({max_retries})') from error


async def call_user_function(function: Callable[..., Any], *args: Any) -> Any:
    """Call a user's (sync or async) instructions, system prompt or validator function."""
    result = function(*args)
    if inspect.isawaitable(result):
        result = await result
    return result


def _takes_ctx(function: Callable[..., Any], plain_arity: int) -> bool:
    return len(inspect.signature(function).parameters) > plain_arity


@dataclass
class SystemPromptRunner:
    """A system prompt or instructions function, knowing whether it takes the `RunContext`."""

    function: Callable[..., Any]
    """The function."""
    dynamic: bool = False
    """Re-evaluated when a run continues a message history holding its earlier output."""
    takes_ctx: bool = field(init=False)

    def __post_init__(self) -> None:
        self.takes_ctx = _takes_ctx(self.function, 0)

    async def run(self, ctx: RunContext[Any]) -> str | None:
        """The function's text (`None` or empty for none)."""
        text: str | None = await call_user_function(self.function, *((ctx,) if self.takes_ctx else ()))
        return text


@dataclass
class OutputValidator:
    """An output validator, knowing whether it takes the `RunContext`."""

    function: Callable[..., Any]
    """The function: `(output) -> output` or `(ctx, output) -> output`, sync or async."""
    takes_ctx: bool = field(init=False)

    def __post_init__(self) -> None:
        self.takes_ctx = _takes_ctx(self.function, 1)

    async def validate(self, output: Any, ctx: RunContext[Any]) -> Any:
        """Run the validator; it may return a changed output or raise `ModelRetry`."""
        return await call_user_function(self.function, *((ctx, output) if self.takes_ctx else (output,)))


_NOT_COMPUTED: Any = object()

InstructionsItem: TypeAlias = str | SystemPromptRunner


@dataclass(kw_only=True)
class GraphAgentDeps(Generic[DepsT, OutputT]):
    """What the nodes of an agent run need besides the state: configuration, the model, the user's deps."""

    user_deps: DepsT
    """The run's dependencies, given to tools as `ctx.deps`."""
    prompt: str | Sequence[UserContent] | None
    """The user prompt the run started with."""
    new_message_index: int
    """Where the run's own messages start in `message_history`."""
    model: Model
    """The model of the run."""
    model_settings: ModelSettings | None
    """The merged settings of the model, the agent and the run."""
    usage_limits: UsageLimits
    """The run's usage limits."""
    max_result_retries: int
    """The output retry budget."""
    default_tool_retries: int
    """The retry budget of tools that set none."""
    end_strategy: EndStrategy
    """What happens to other tool calls once the output is given."""
    output_schema: OutputSchema
    """How the output is asked for and validated."""
    output_validators: Sequence[OutputValidator]
    """The output validators, in order."""
    toolset: AbstractToolset[Any]
    """The run's toolset: the agent's function tools and every other toolset of the agent and the run."""
    instructions: Sequence[InstructionsItem]
    """Instructions texts and functions, in order."""
    system_prompts: Sequence[str | SystemPromptRunner]
    """System prompt texts and functions, in order."""
    agent_name: str | None = None
    """The agent's name, for spans."""
    step_tools: dict[str, ToolDefinition] | None = None
    """The tools visible in the current step (after `prepare`), by the name the model sees."""
    step_tool_functions: dict[str, ToolsetTool[Any]] = field(default_factory=dict)
    """The toolset's tool behind each name of `step_tools`."""
    stores_waiting: bool = False
    """Whether a run stopping on deferred tool calls is stored as waiting (its persistence is durable)."""
    deferred_tool_results: DeferredToolResults | None = None
    """The answers a stored run waiting on deferred tool calls is resumed with (taken by the node that waits)."""
    _listing: Any = field(default=None, init=False, repr=False)
    _static_instructions: Any = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self._static_instructions = _NOT_COMPUTED

    def run_context(
        self,
        state: GraphAgentState,
        *,
        tool_name: str | None = None,
        tool_call_id: str | None = None,
        retry: int = 0,
        max_retries: int = 0,
    ) -> RunContext[DepsT]:
        """A `RunContext` for the current point of the run (for a tool call, when its name is given)."""
        return RunContext(
            deps=self.user_deps,
            model=self.model,
            usage=state.usage,
            prompt=self.prompt if isinstance(self.prompt, str) else None,
            messages=state.message_history,
            run_step=state.run_step,
            run_id=state.run_id,
            retries=state.tool_retries,
            tool_name=tool_name,
            tool_call_id=tool_call_id,
            retry=retry,
            max_retries=max_retries,
        )

    async def prepare_tools(self, state: GraphAgentState) -> dict[str, ToolDefinition]:
        """The tools of this step, as the run's toolset lists them.

        A toolset whose listing does not change (the same mapping as at the last step, as function tools
        without `prepare` give) costs no work past the listing.
        """
        ctx = self.run_context(state, max_retries=self.default_tool_retries)
        self.toolset = toolset = await self.toolset.for_run_step(ctx)
        listing = await toolset.get_tools(ctx)
        if listing is self._listing and self.step_tools is not None:
            return self.step_tools
        self._listing = listing
        self.step_tools = {name: resolve_return_schema(tool.tool_def) for name, tool in listing.items()}
        self.step_tool_functions = listing
        return self.step_tools

    async def instructions_text(self, state: GraphAgentState) -> str | None:
        """The instructions of the next request: the agent's texts and function results, then the toolsets',
        joined, prompted-output last."""
        ctx: RunContext[DepsT] | None = None
        if self._static_instructions is not _NOT_COMPUTED:
            texts: list[str] = list(self._static_instructions)
        else:
            texts = []
            for item in self.instructions:
                if isinstance(item, str):
                    text: str | None = item
                else:
                    ctx = ctx or self.run_context(state)
                    text = await item.run(ctx)
                if text:
                    texts.append(text.strip())
            if all(isinstance(item, str) for item in self.instructions):
                # Texts only: the same for every request of the run.
                self._static_instructions = tuple(texts)
        found = await self.toolset.get_instructions(ctx or self.run_context(state))
        if found:
            texts.extend(t.strip() for t in ([found] if isinstance(found, str) else found))
        if self.output_schema.instructions:
            texts.append(self.output_schema.instructions)
        return '\n\n'.join(texts) if texts else None
