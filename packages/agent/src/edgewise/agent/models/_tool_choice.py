"""The `tool_choice` setting resolved against a request's tools, in one form every provider maps to its API."""

from __future__ import annotations as _annotations

import warnings
from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

from ..exceptions import UserError
from ..settings import ToolOrOutput
from ._request_parameters import ModelRequestParameters

__all__ = ('ResolvedToolChoice', 'explicitly_forced', 'forcing_supported', 'request_thinks', 'resolve_tool_choice')

ResolvedToolChoice: TypeAlias = Literal['none', 'auto', 'required'] | tuple[Literal['auto', 'required'], frozenset[str]]
"""`'none'` (no tool), `'auto'` (any tool, or direct output), `'required'` (some tool must be called), or a mode
with the only tools the model may call."""


def explicitly_forced(settings: Mapping[str, Any] | None) -> bool:
    """Whether the user asked for a forced tool call (`'required'` or a list of names)."""
    choice = (settings or {}).get('tool_choice')
    return choice == 'required' or isinstance(choice, list)


def forcing_supported(
    settings: Mapping[str, Any] | None, profile: Mapping[str, Any], model_name: str, *, thinking: bool
) -> bool:
    """Whether this request may force a tool call, by the profile's `supports_forced_tool_choice` (and
    `supports_forced_tool_choice_with_thinking` when the request thinks).

    Where it may not, a forced choice the run made itself (an output tool's) falls back to `'auto'`, and one the
    user asked for in `tool_choice` is a `UserError` saying why.
    """
    if not profile.get('supports_forced_tool_choice', True):
        reason = "This model does not support forcing tool use. Use `tool_choice='auto'` instead."
    elif thinking and not profile.get('supports_forced_tool_choice_with_thinking', True):
        reason = (
            'This model does not support forcing tool use while thinking is enabled. Disable thinking with '
            "`thinking=False`, or use `tool_choice='auto'`."
        )
    else:
        return True
    if explicitly_forced(settings):
        raise UserError(
            f'tool_choice={(settings or {}).get("tool_choice")!r} is not supported by model {model_name!r}. {reason}'
        )
    return False


def request_thinks(settings: Mapping[str, Any] | None, profile: Mapping[str, Any]) -> bool:
    """Whether a request to an OpenAI-style API has the model think: it always does, the unified `thinking` or a
    reasoning effort other than `'none'` asks for it, or neither is given and the profile has
    `thinking_enabled_by_default`."""
    settings = settings or {}
    if profile.get('thinking_always_enabled', False):
        return True
    thinking = settings.get('thinking')
    if thinking is not None:
        return thinking is not False and thinking != 'none'
    effort = settings.get('openai_reasoning_effort')
    if effort is not None:
        return bool(effort != 'none')
    return bool(profile.get('thinking_enabled_by_default', False))


def _check_names(chosen: set[str], available: set[str], label: str) -> None:
    unknown = chosen - available
    if not unknown:
        return
    if unknown == chosen:
        raise UserError(f'Invalid tool names in `tool_choice`: {unknown}. {label}: {available or "none"}')
    # Some names may be of tools a toolset offers only on some steps: warn, so that a typo does not pass silently.
    warnings.warn(
        f'Some tools in `tool_choice` are not currently available and will be ignored: {sorted(unknown)}. '
        f'{label}: {sorted(available)}',
        UserWarning,
        stacklevel=4,
    )


def _without_withheld(chosen: set[str], params: ModelRequestParameters, *, output_fallback: bool = False) -> set[str]:
    """`chosen` without the names of the tools the request withholds (`'withheld'`: not sent at all; a `'deferred'`
    or `'via_history'` tool reaches the model and may be chosen). Unknown names pass (see `_check_names`), but
    one name the request sends must be left, unless the choice falls back on the output tools.

    Raises:
        UserError: every chosen tool is withheld or unknown.
    """
    if params.tool_visibility is None and not any(t.defer_loading for t in params.function_tools):
        return chosen  # parameters as authored, nothing hidden (the common case costs one scan)
    withheld = {t.name for t in params.function_tools if params.visibility_of(t.name) == 'withheld'}
    kept = chosen - withheld
    if chosen and not (kept & params.tool_defs.keys()) and not output_fallback:
        raise UserError(
            f'No tool in `tool_choice` is currently available: {sorted(chosen)}. A hidden tool can be forced only '
            'once it is revealed (by a tool search, `load_capability` or `ToolReturn(tools=...)`).'
        )
    return kept


def resolve_tool_choice(settings: Mapping[str, Any] | None, params: ModelRequestParameters) -> ResolvedToolChoice:
    """The request's `tool_choice`, with the output tools the run needs folded in.

    The setting speaks of function tools only; output tools are how a run ends, so they are kept available
    unless the setting forces a function tool call. Tool names are checked against every tool of the request,
    the hidden ones too, and a choice leaves out those the request withholds (`'withheld'`).

    Raises:
        UserError: the setting names no tool that exists, or only hidden ones, or asks for `'required'` with no
            function tools (or only hidden ones).
    """
    choice = (settings or {}).get('tool_choice')
    direct_output = params.allow_text_output or params.allow_image_output  # an answer without a tool call
    output_names = {t.name for t in params.output_tools}
    if choice is None or choice == 'auto':
        return 'auto' if direct_output else 'required'
    if choice == 'none' or choice == []:
        if output_names:
            if direct_output:
                return ('auto', frozenset(output_names))
            return ('required', frozenset(output_names)) if params.function_tools else 'required'
        return 'none'
    if choice == 'required':
        if not params.function_tools:
            raise UserError(
                '`tool_choice` was set to "required", but no function tools are defined. '
                'Please define function tools or change `tool_choice` to "auto" or "none".'
            )
        if all(params.visibility_of(t.name) == 'withheld' for t in params.function_tools):
            raise UserError(
                '`tool_choice` was set to "required", but every function tool is hidden until it is revealed (by a '
                'tool search, `load_capability` or `ToolReturn(tools=...)`). Reveal one or change `tool_choice`.'
            )
        return 'required'
    if isinstance(choice, list):
        chosen = set(choice)
        available = set(params.tool_defs)
        _check_names(chosen, available, 'Available tools')
        chosen = _without_withheld(chosen, params)
        return 'required' if chosen == available else ('required', frozenset(chosen))
    if isinstance(choice, ToolOrOutput):
        mode: Literal['auto', 'required'] = 'auto' if direct_output else 'required'
        if not choice.function_tools:
            return (mode, frozenset(output_names)) if output_names else 'none'
        chosen = set(choice.function_tools)
        _check_names(chosen, {t.name for t in params.function_tools}, 'Available function tools')
        allowed = _without_withheld(chosen, params, output_fallback=bool(output_names)) | output_names
        return mode if allowed == set(params.tool_defs) else (mode, frozenset(allowed))
    raise UserError(
        f'`tool_choice` must be "auto", "none", "required", a list of tool names or a `ToolOrOutput`, not {choice!r}.'
    )
