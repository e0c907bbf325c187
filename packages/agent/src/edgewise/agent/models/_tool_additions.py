"""Tools revealed mid-run, as an API that takes them natively is told of them (pydantic-ai 2.68's
`tool_addition_mode`); `_tool_announcements` is the way of the models that take none.

Each `ToolAvailabilityDeltaPart` left in a request's history (`Model.prepare_messages` leaves them for a model with a
`tool_addition_mode`) becomes, where it stands:

- `'with_definitions'` (OpenAI's Responses API): an `additional_tools` input item holding the definitions of the tools
  it names. Only tools the request sends `'via_history'` (the item is the one place their definitions travel) or
  `'deferred'` (declared with their schema held back) are written; a `'visible'` tool is declared in full already and
  a `'withheld'` one is not to be shown. A tool the agent's own `search_tools` found gets such an item after the
  search's result, when the request sends no provider-run search.
- `'by_reference'` (Anthropic's Messages API, its `mid-conversation-tool-changes-2026-07-01` beta): `tool_addition`
  blocks, each a `tool_reference` to a tool the request declares with its schema held back (`defer_loading`), in a
  `system` entry after the request's user turn. A block naming a tool the request does not declare (the API refuses
  it), or a tool declared in full, is left out. A result of the agent's own tool search holds `tool_reference`
  blocks to the tools it found (the request declares them held back: the references reveal them).

A tool is written once per request, by the first part naming it. A `'via_history'` tool no item of the sent input
holds (its reveal fell before a compaction, or the history reached the model already announced) is declared in the
request's tools instead, and so is one a `tool_choice` names on a model that takes no such choice
(`openai_responses_tool_choice_accepts_additional_tools`), as 2.68 does.
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._messages.model_messages import ToolAvailabilityDeltaPart, ToolReturnPart
from .._messages.tool_parts import TOOL_SEARCH_TOOL_KIND
from .._tools.definition import ToolDefinition
from ._request_parameters import ModelRequestParameters, ToolVisibility
from ._tool_choice import ResolvedToolChoice

__all__ = (
    'TOOL_ADDITION_BETA',
    'ToolAdditions',
    'has_tool_addition',
    'redeclared_for_choice',
    'tool_addition_blocks',
    'with_visible',
)

TOOL_ADDITION_BETA = 'mid-conversation-tool-changes-2026-07-01'
"""The `anthropic-beta` flag of a request holding `tool_addition` blocks."""


@dataclass
class ToolAdditions:
    """The tools one request writes where their reveals stand: those it may write (`writable`) and, as it maps the
    history, those written so far (each once)."""

    tools: Mapping[str, ToolDefinition]
    """The tools that may be written, by name (the request's function tools of the right visibility)."""
    searches: bool = False
    """Whether the results of the agent's own tool search (`search_tools`) reveal the tools they found too."""
    declared: Collection[str] | None = None
    """The names of the tools the request declares, when known."""
    written: set[str] = field(default_factory=set[str])

    @classmethod
    def of(
        cls,
        params: ModelRequestParameters,
        visibilities: Collection[str],
        *,
        declared: Collection[str] | None = None,
        searches: bool = False,
    ) -> ToolAdditions:
        """The additions of a request whose function tools of these `visibilities` are written (of those among
        `declared`, when given: the tools the request declares)."""
        tools = {
            t.name: t
            for t in params.function_tools
            if params.visibility_of(t.name) in visibilities and (declared is None or t.name in declared)
        }
        return cls(tools, searches, declared)

    def take(self, names: Iterable[str]) -> list[ToolDefinition]:
        """The tools of `names` to write now: writable, and not written before in this request."""
        taken: list[ToolDefinition] = []
        for name in names:
            if name not in self.written and (tool := self.tools.get(name)) is not None:
                self.written.add(name)
                taken.append(tool)
        return taken

    def revealed_by(self, part: Any) -> list[ToolDefinition]:
        """The tools to write for a request part: those of a `ToolAvailabilityDeltaPart`, or, with `searches`, those
        a result of the agent's own tool search found."""
        if isinstance(part, ToolAvailabilityDeltaPart):
            return self.take(part.tools_added)
        if self.searches and (found := _found_by_search(part)) is not None:
            return self.take(found)
        return []

    def search_result(self, part: Any) -> dict[str, Any] | None:
        """Anthropic's `tool_result` of a result of the agent's own tool search: `tool_reference` blocks to the tools
        it found that the request declares (what reveals them), or, with none, the search's message (or a line naming
        what it found); `None` for any other part."""
        found = _found_by_search(part)
        if found is None:
            return None
        declared = self.tools if self.declared is None else self.declared
        refs = [{'type': 'tool_reference', 'tool_name': name} for name in found if name in declared]
        if refs:
            return {'type': 'tool_result', 'tool_use_id': part.tool_call_id, 'content': refs, 'is_error': False}
        text = part.content.get('message') if not found else None
        if not text:
            text = (
                f'Discovered tools: {", ".join(found)}. None is declared as a top-level tool in this request.'
                if found
                else part.model_response_str()
            )
        content = [{'type': 'text', 'text': text}]
        return {'type': 'tool_result', 'tool_use_id': part.tool_call_id, 'content': content, 'is_error': False}


def _found_by_search(part: Any) -> list[str] | None:
    """The names of the tools a result of the agent's own tool search found; `None` for any other part."""
    if not isinstance(part, ToolReturnPart) or part.tool_kind != TOOL_SEARCH_TOOL_KIND:
        return None
    found = part.content.get('discovered_tools') if isinstance(part.content, dict) else None
    if not isinstance(found, list):
        return None
    return [m['name'] for m in found if isinstance(m, dict) and isinstance(m.get('name'), str)]


def tool_addition_blocks(tools: list[ToolDefinition]) -> list[dict[str, Any]]:
    """Anthropic's `tool_addition` blocks revealing `tools`, declared with their schemas held back."""
    return [{'type': 'tool_addition', 'tool': {'type': 'tool_reference', 'name': t.name}} for t in tools]


def has_tool_addition(mapped: list[dict[str, Any]]) -> bool:
    """Whether Anthropic's mapped messages hold a `tool_addition` block (then the request needs the beta flag)."""
    return any(
        isinstance(block, dict) and block.get('type') == 'tool_addition'
        for message in mapped
        if message.get('role') == 'system'
        for block in message.get('content') or ()
    )


def redeclared_for_choice(
    resolved: ResolvedToolChoice, params: ModelRequestParameters, *, choice_takes_items: bool, server_state: bool
) -> set[str]:
    """The `'via_history'` tools a Responses request declares in its tools instead, because its `tool_choice` names
    them and the model takes no choice of a tool only an item declares (`choice_takes_items` false). Not under
    server-side state (`server_state`): the stored input keeps the item, and a stored response without it would hide
    the tool from every request continuing it."""
    if choice_takes_items or server_state or not isinstance(resolved, tuple):
        return set()
    return {name for name in resolved[1] if params.visibility_of(name) == 'via_history'}


def with_visible(params: ModelRequestParameters, names: Collection[str]) -> ModelRequestParameters:
    """`params` with the tools of `names` declared in full (`'visible'`); `params` itself when there are none."""
    if not names:
        return params
    visibility: dict[str, ToolVisibility] = {
        **(params.tool_visibility or {}),
        **dict.fromkeys(sorted(names), 'visible'),
    }
    return dataclasses.replace(params, tool_visibility=visibility)
