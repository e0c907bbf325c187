"""Runners of the functions a user gives an agent for its instructions, system prompts and output validators:
each knows whether its function takes the `RunContext`, and calls it (sync or async)."""

from __future__ import annotations as _annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeAlias

from typing_extensions import TypeVar

from ..messages import (
    CapabilityInstructionSource,
    InstructionChangePolicy,
    InstructionId,
    InstructionPart,
    SystemPromptPart,
)
from ..models._model import AgentDepsT, RunContext

__all__ = (
    'CapabilityInstructionRunner',
    'InstructionsItem',
    'OutputDataT_inv',
    'OutputValidator',
    'OutputValidatorFunc',
    'SystemPromptRunner',
    'call_user_function',
    'keyed_capability_instructions',
    'normalize_instructions',
    'system_prompt_parts',
)

OutputDataT_inv = TypeVar('OutputDataT_inv', default=str)
"""The output type of an output validator: invariant, since the validator takes the output and returns it."""

OutputValidatorFunc: TypeAlias = (
    Callable[[RunContext[AgentDepsT], OutputDataT_inv], OutputDataT_inv]
    | Callable[[RunContext[AgentDepsT], OutputDataT_inv], Awaitable[OutputDataT_inv]]
    | Callable[[OutputDataT_inv], OutputDataT_inv]
    | Callable[[OutputDataT_inv], Awaitable[OutputDataT_inv]]
)
"""An output validator (`@agent.output_validator`): takes the output (after the `RunContext` when it takes one) and
returns it, changed or not, or raises `ModelRetry`; sync or async."""


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
    context_id: str | None = None
    """For a system prompt registered with `on_change='append'`: the `<pyai:context>` id its parts carry."""
    takes_ctx: bool = field(init=False)

    def __post_init__(self) -> None:
        self.takes_ctx = _takes_ctx(self.function, 0)

    async def run(self, ctx: RunContext[Any]) -> str | None:
        """The function's text (`None` or empty for none)."""
        text: str | None = await call_user_function(self.function, *((ctx,) if self.takes_ctx else ()))
        return text


@dataclass
class NamedInstructionRunner(SystemPromptRunner):
    """An instructions function registered with a `name` or an `on_change` policy (`@agent.instructions(name=...)`,
    pydantic-ai 2.68): its text becomes an `InstructionPart` carrying them (one the function returns itself keeps
    what it sets)."""

    name: str | None = None
    """The block's name (the run keys it `agent:<name>`)."""
    on_change: InstructionChangePolicy = 'rewrite'
    """Whether a change of the block rewrites the instructions or is appended to the conversation."""

    async def run(self, ctx: RunContext[Any]) -> Any:
        """The function's result as an `InstructionPart` with the registration's name and policy (`None` for none)."""
        found = await call_user_function(self.function, *((ctx,) if self.takes_ctx else ()))
        if found is None:
            return None
        if isinstance(found, InstructionPart):
            return replace(
                found,
                name=found.name if found.name is not None else self.name,
                on_change=found.on_change if found.on_change != 'rewrite' else self.on_change,
            )
        return InstructionPart(str(found), dynamic=True, name=self.name, on_change=self.on_change)


@dataclass
class CapabilityInstructionRunner(SystemPromptRunner):
    """An instruction of an always-on capability that has an `id` (pydantic-ai 2.68): its text is the capability's
    own block, `capability:<id>` (`capability:<id>:<name>` for a part the function returns with a `name`), rather
    than part of the agent's."""

    capability_id: str = ''
    """The capability's id."""
    text: str | None = None
    """A literal text (the same every request; the function is not called), else `None`."""

    def literal_part(self) -> InstructionPart:
        """The literal text's block (`text` must be set)."""
        assert self.text is not None
        return InstructionPart(self.text.strip(), id=InstructionId(CapabilityInstructionSource(self.capability_id)))

    async def run(self, ctx: RunContext[Any]) -> Any:
        """The block: the literal text's, or the function's result keyed beneath the capability (`None` for none)."""
        if self.text is not None:
            return self.literal_part()
        found = await call_user_function(self.function, *((ctx,) if self.takes_ctx else ()))
        if found is None:
            return None
        source = CapabilityInstructionSource(self.capability_id)
        if isinstance(found, InstructionPart):
            return replace(found, id=InstructionId(source, name=found.name), dynamic=True)
        return InstructionPart(str(found), id=InstructionId(source), dynamic=True)


def keyed_capability_instructions(capability_id: str, items: Sequence[str | SystemPromptRunner]) -> list[Any]:
    """`items`, the instructions of the capability `capability_id`, as `CapabilityInstructionRunner`s (blank texts
    left out)."""
    keyed: list[Any] = []
    for item in items:
        if isinstance(item, str):
            if item.strip():
                keyed.append(CapabilityInstructionRunner(_no_function, capability_id=capability_id, text=item))
        else:
            keyed.append(CapabilityInstructionRunner(item.function, capability_id=capability_id))
    return keyed


def _no_function() -> None:
    return None


async def system_prompt_parts(
    prompts: Sequence[str | SystemPromptRunner], ctx: RunContext[Any]
) -> list[SystemPromptPart]:
    """The system prompt parts of a run's first request: the texts, and each function's text (a dynamic one's
    part is kept even when empty, so that a later run can fill it in)."""
    parts: list[SystemPromptPart] = []
    for prompt in prompts:
        if isinstance(prompt, str):
            parts.append(SystemPromptPart(prompt))
        elif prompt.dynamic:
            text = await prompt.run(ctx)
            parts.append(
                SystemPromptPart(text or '', dynamic_ref=prompt.function.__qualname__, context_id=prompt.context_id)
            )
        elif text := await prompt.run(ctx):
            parts.append(SystemPromptPart(text))
    return parts


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


InstructionsItem: TypeAlias = str | SystemPromptRunner


def normalize_instructions(instructions: Any) -> list[str | SystemPromptRunner]:
    """Instructions given as one text or function, or a sequence of them, as a list of texts and runners."""
    if instructions is None:
        return []
    if isinstance(instructions, str) or callable(instructions):
        instructions = [instructions]
    return [item if isinstance(item, str) else SystemPromptRunner(item) for item in instructions]
