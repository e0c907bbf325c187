"""The function tools of an OpenAI Responses request: each as a `tools` entry (or an `additional_tools` item's), and
the request's `tool_choice`."""

from __future__ import annotations as _annotations

from collections.abc import Mapping
from typing import Any

from .._tools.definition import ToolDefinition
from ..profiles.openai import OpenAIModelProfile
from ._request_parameters import ModelRequestParameters
from ._tool_choice import forcing_supported, request_thinks, resolve_tool_choice

__all__ = ('function_tools', 'tool_choice', 'tool_param')


def function_tools(
    params: ModelRequestParameters, profile: OpenAIModelProfile, *, output: bool = False
) -> dict[str, dict[str, Any]]:
    """The request's function tools (or, with `output`, its output tools) as `tools` entries, by name."""
    # Each function tool as the model resolved it (`tool_visibility`): a `'deferred'` one goes with its schema held
    # back (`defer_loading`, next to the `tool_search` tool); output tools always go as they are.
    return {
        t.name: tool_param(t, profile, deferred=not output and params.visibility_of(t.name) == 'deferred')
        for t in (params.output_tools if output else params.declared_function_tools)
    }


def tool_param(tool: ToolDefinition, profile: OpenAIModelProfile, *, deferred: bool = False) -> dict[str, Any]:
    """`tool` as a function tool entry (`deferred`: with its schema held back, `defer_loading`)."""
    return {
        'type': 'function',
        'name': tool.name,
        'parameters': tool.parameters_json_schema,
        'strict': bool(tool.strict and profile.get('openai_supports_strict_tool_definition', True)),
        **({'description': tool.description} if tool.description else {}),
        **({'defer_loading': True} if deferred else {}),
    }


def tool_choice(settings: Mapping[str, Any], params: Any, profile: OpenAIModelProfile, model_name: str) -> Any:
    """The `tool_choice` of a Responses request: a choice among some tools is an `allowed_tools` list, so the
    tools sent stay the same from request to request (and the prompt cache holds)."""
    resolved = resolve_tool_choice(settings, params)
    if resolved == 'auto' or resolved == 'none':
        return resolved
    supported = forcing_supported(settings, profile, model_name, thinking=request_thinks(settings, profile))
    if resolved == 'required':
        return 'required' if supported else 'auto'
    mode, names = resolved
    if mode == 'required' and len(names) == 1 and supported:
        return {'type': 'function', 'name': next(iter(names))}
    return {
        'type': 'allowed_tools',
        'mode': mode if supported else 'auto',
        'tools': [{'type': 'function', 'name': name} for name in sorted(names)],
    }
