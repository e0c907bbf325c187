"""`CombinedToolset`: several toolsets as one, with name clashes reported naming both sources."""

from __future__ import annotations as _annotations

from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field, replace
from operator import is_
from typing import Any, Self

import anyio

from .._messages.instructions import InstructionId, ToolsetInstructionSource
from .._messages.model_messages import InstructionPart
from ..exceptions import UserError
from ..models._model import AgentDepsT, RunContext
from .abstract import AbstractToolset, ToolsetTool
from .function import FunctionToolset

__all__ = ('CombinedToolset',)


@dataclass(kw_only=True)
class _SourcedTool(ToolsetTool[AgentDepsT]):
    """A tool of a combined toolset, with the member toolset that listed it and that toolset's own tool."""

    source_toolset: AbstractToolset[AgentDepsT]
    source_tool: ToolsetTool[AgentDepsT]


async def _gather(toolsets: Sequence[Any], method: str, ctx: Any) -> list[Any]:
    """`await toolset.<method>(ctx)` for each toolset, run concurrently; the results in order.

    The first failure cancels the other calls; it is raised as it is when it is the only one, and in an
    `ExceptionGroup` with the others when more failed before they were cancelled.
    """
    if len(toolsets) == 1:
        return [await getattr(toolsets[0], method)(ctx)]
    results: list[Any] = [None] * len(toolsets)

    async def run(i: int) -> None:
        results[i] = await getattr(toolsets[i], method)(ctx)

    try:
        async with anyio.create_task_group() as tg:
            for i in range(len(toolsets)):
                tg.start_soon(run, i)
    except BaseExceptionGroup as group:
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise
    return results


class _ListingMemo:
    """The last listing a combination gave, with the members and member listings it was made from: shared by a
    combination and its copies for runs and steps, so that members listing the very same tools again cost no new
    combined listing, run after run. Kept only when every member is a function toolset, whose listing of the same
    tools is the same dict, never changed (adding a tool makes a new one); another toolset may fill in a dict it
    gave before."""

    __slots__ = ('last',)

    def __init__(self) -> None:
        self.last: tuple[tuple[Any, ...], tuple[Any, ...], dict[str, Any]] | None = None


def _has_default_lifetime(toolset: AbstractToolset[Any]) -> bool:
    """Whether entering and leaving `toolset` does nothing (it keeps `AbstractToolset`'s own methods)."""
    kind = type(toolset)
    return kind.__aenter__ is AbstractToolset.__aenter__ and kind.__aexit__ is AbstractToolset.__aexit__


@dataclass
class CombinedToolset(AbstractToolset[AgentDepsT]):
    """The tools of several toolsets together; entering it enters each of them."""

    toolsets: Sequence[AbstractToolset[AgentDepsT]]
    """The member toolsets, in order."""
    _exit_stack: AsyncExitStack | None = field(init=False, default=None, repr=False)
    _listings: _ListingMemo = field(init=False, default_factory=_ListingMemo, repr=False, compare=False)

    def _copy_with(self, members: list[AbstractToolset[AgentDepsT]]) -> CombinedToolset[AgentDepsT]:
        """A copy with `members` (its own entering state), sharing this combination's listing memo."""
        if type(self) is not CombinedToolset:  # a subclass may have an `__init__` of its own
            copy = replace(self, toolsets=members)
            copy._listings = self._listings
            return copy
        # `replace`, without its `__init__` (the class has no `__post_init__`): once per run.
        copy = object.__new__(CombinedToolset)
        copy.__dict__ = {**self.__dict__, 'toolsets': members, '_exit_stack': None}
        return copy

    @property
    def id(self) -> str | None:
        """None: a combination is named by its members."""
        return None

    @property
    def label(self) -> str:
        """The class and its members' labels."""
        return f'{type(self).__name__}({", ".join(toolset.label for toolset in self.toolsets)})'

    async def for_run(self, ctx: RunContext[AgentDepsT]) -> AbstractToolset[AgentDepsT]:
        """A new combination (its own entering state) of the members' toolsets for the run."""
        members = await _gather(self.toolsets, 'for_run', ctx) if self.toolsets else []
        return self._copy_with(members)

    async def for_run_step(self, ctx: RunContext[AgentDepsT]) -> AbstractToolset[AgentDepsT]:
        """The combination of the members' toolsets for the step (`self` if none changed)."""
        members = await _gather(self.toolsets, 'for_run_step', ctx) if self.toolsets else []
        if all(new is old for new, old in zip(members, self.toolsets, strict=True)):
            return self
        return self._copy_with(members)

    async def __aenter__(self) -> Self:
        """Enter every member in order; if one fails, those entered are left again."""
        # Members whose entering and leaving do nothing (function toolsets) are not entered: a run enters its
        # combination every time, most often of such members only.
        entering = [toolset for toolset in self.toolsets if not _has_default_lifetime(toolset)]
        if entering:
            async with AsyncExitStack() as stack:
                for toolset in entering:
                    await stack.enter_async_context(toolset)
                self._exit_stack = stack.pop_all()
        return self

    async def __aexit__(self, *args: Any) -> bool | None:
        """Leave the members in reverse order."""
        if self._exit_stack is not None:
            stack, self._exit_stack = self._exit_stack, None
            await stack.aclose()
        return None

    async def get_instructions(self, ctx: RunContext[AgentDepsT]) -> list[str | InstructionPart] | None:
        """The members' instructions (texts and blocks), in order. A block of a member that has an `id` is keyed
        under it (pydantic-ai 2.68): `toolset:<id>`, or `toolset:<id>:<name>` for a named block."""
        found: list[str | InstructionPart] = []
        for toolset in self.toolsets:
            instructions = await toolset.get_instructions(ctx)
            blocks = [instructions] if isinstance(instructions, str | InstructionPart) else instructions or []
            source = _instruction_source(toolset)
            found.extend(
                replace(block, id=InstructionId(source, name=block.name))
                if source is not None and isinstance(block, InstructionPart) and _keyed_elsewhere(block, source)
                else block
                for block in blocks
            )
        return found or None

    async def get_tools(self, ctx: RunContext[AgentDepsT]) -> dict[str, ToolsetTool[AgentDepsT]]:
        """The members' tools.

        Raises:
            UserError: two members list a tool of the same name (the error names both toolsets).
        """
        listed = await _gather(self.toolsets, 'get_tools', ctx) if self.toolsets else []
        last = self._listings.last
        if (
            last is not None
            and len(last[1]) == len(listed)
            and all(map(is_, last[0], self.toolsets))
            and all(map(is_, last[1], listed))
        ):
            return last[2]
        tools: dict[str, ToolsetTool[AgentDepsT]] = {}
        for toolset, member_tools in zip(self.toolsets, listed, strict=True):
            for name, tool in member_tools.items():
                if (existing := tools.get(name)) is not None:
                    label = tool.toolset.label
                    raise UserError(
                        f'{label[:1].upper()}{label[1:]} defines a tool whose name conflicts with existing tool from '
                        f'{existing.toolset.label}: {name!r}. {toolset.tool_name_conflict_hint}'
                    )
                tool_def = tool.tool_def
                if tool_def.toolset_id is None and (toolset_id := tool.toolset.id) is not None:
                    tool_def = replace(tool_def, toolset_id=toolset_id)
                tools[name] = _SourcedTool(
                    toolset=tool.toolset, tool_def=tool_def, max_retries=tool.max_retries,
                    args_validator=tool.args_validator, args_validator_func=tool.args_validator_func,
                    source_toolset=toolset, source_tool=tool,
                )  # fmt: skip
        if all(
            type(toolset).get_tools is FunctionToolset.get_tools or getattr(toolset, 'lists_statically', False)
            for toolset in self.toolsets
        ):
            self._listings.last = (tuple(self.toolsets), tuple(listed), tools)
        return tools

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDepsT], tool: ToolsetTool[AgentDepsT]
    ) -> Any:
        """Call the tool through the member that listed it."""
        assert isinstance(tool, _SourcedTool)
        return await tool.source_toolset.call_tool(name, tool_args, ctx, tool.source_tool)

    def apply(self, visitor: Callable[[AbstractToolset[AgentDepsT]], None]) -> None:
        """Visit the members' leaf toolsets."""
        for toolset in self.toolsets:
            toolset.apply(visitor)

    def visit_and_replace(
        self, visitor: Callable[[AbstractToolset[AgentDepsT]], AbstractToolset[AgentDepsT]]
    ) -> AbstractToolset[AgentDepsT]:
        """A combination of the members with their leaves replaced."""
        return replace(self, toolsets=[toolset.visit_and_replace(visitor) for toolset in self.toolsets])


def _instruction_source(toolset: AbstractToolset[Any]) -> ToolsetInstructionSource | None:
    """The source a member's instruction blocks are keyed under: its `id`, unless it is itself a combination (whose
    members key their own) or its id cannot be a segment of a key (it holds `:`)."""
    toolset_id = toolset.id
    if toolset_id is None or ':' in toolset_id or isinstance(toolset, CombinedToolset):
        return None
    return ToolsetInstructionSource(toolset_id)


def _keyed_elsewhere(block: InstructionPart, source: ToolsetInstructionSource) -> bool:
    return block.id is None or block.id.source != source
