"""Gemini's built-in tools, both ways: `native_tools` as request `tools` (`googleSearch`, `urlContext`,
`codeExecution`, `fileSearch`), and what a response says they did as `NativeToolCallPart` / `NativeToolReturnPart`:
`executableCode` / `codeExecutionResult` parts (sent back as the same parts), and the searches and fetches that
the candidate's `groundingMetadata` and `urlContextMetadata` report (which Gemini does not take back).
Contents use pydantic-ai's (snake_case) keys, so histories are the same whichever library stored them."""

from __future__ import annotations as _annotations

import re
from collections.abc import Mapping
from typing import Any

from ..messages import NativeToolCallPart, NativeToolReturnPart, generate_tool_call_id
from ..native_tools import AbstractNativeTool, CodeExecutionTool, FileSearchTool, WebFetchTool, WebSearchTool
from ._request_parameters import ModelRequestParameters

__all__ = (
    'GOOGLE_NATIVE_TOOLS',
    'google_native_tools',
    'code_execution_part',
    'metadata_parts',
    'native_part_dict',
)

GOOGLE_NATIVE_TOOLS: frozenset[type[AbstractNativeTool]] = frozenset(
    {WebSearchTool, CodeExecutionTool, FileSearchTool, WebFetchTool}
)
"""The native tools `GoogleModel` maps."""

_CAMEL_HUMP = re.compile(r'(?<!^)(?=[A-Z])')


def _snake(value: Any) -> Any:
    if isinstance(value, dict):
        return {_CAMEL_HUMP.sub('_', k).lower(): _snake(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType,reportUnknownArgumentType]
    if isinstance(value, list):
        return [_snake(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return value


def google_native_tools(params: ModelRequestParameters) -> list[dict[str, Any]]:
    """The built-in tools of a `generateContent` request."""
    tools: list[dict[str, Any]] = []
    for tool in params.native_tools:
        if isinstance(tool, WebSearchTool):
            tools.append({'googleSearch': {}})
        elif isinstance(tool, WebFetchTool):
            tools.append({'urlContext': {}})
        elif isinstance(tool, CodeExecutionTool):
            tools.append({'codeExecution': {}})
        elif isinstance(tool, FileSearchTool):
            tools.append({'fileSearch': {'fileSearchStoreNames': list(tool.file_store_ids)}})
    return tools


def code_execution_part(
    part: Mapping[str, Any], provider_name: str, last_call_id: list[str]
) -> NativeToolCallPart | NativeToolReturnPart | None:
    """The native part of an `executableCode` or `codeExecutionResult` part, else `None`.

    Gemini gives them no ids: each code part gets a new one, which `last_call_id` (one item, or empty) keeps for
    the result that follows.
    """
    if (code := part.get('executableCode')) is not None:
        call_id = generate_tool_call_id()
        last_call_id[:] = [call_id]
        return NativeToolCallPart(CodeExecutionTool.kind, _snake(code), call_id, provider_name=provider_name)
    if (result := part.get('codeExecutionResult')) is not None:
        call_id = last_call_id[0] if last_call_id else generate_tool_call_id()
        return NativeToolReturnPart(CodeExecutionTool.kind, _snake(result), call_id, provider_name=provider_name)
    return None


def metadata_parts(
    candidate: Mapping[str, Any], provider_name: str, *, web_search: bool = True
) -> list[NativeToolCallPart | NativeToolReturnPart]:
    """The searches (`groundingMetadata.webSearchQueries`, unless `web_search` is false), file searches and URL
    fetches (`urlContextMetadata`) a candidate reports, each as a call and its result."""
    parts: list[NativeToolCallPart | NativeToolReturnPart] = []

    def pair(kind: str, args: Any, content: Any) -> None:
        call_id = generate_tool_call_id()
        parts.append(NativeToolCallPart(kind, args, call_id, provider_name=provider_name))
        parts.append(NativeToolReturnPart(kind, content, call_id, provider_name=provider_name))

    grounding = candidate.get('groundingMetadata') or {}
    chunks = grounding.get('groundingChunks') or []
    if web_search and (queries := grounding.get('webSearchQueries')):
        pair(WebSearchTool.kind, {'queries': queries}, [_snake(c['web']) for c in chunks if c.get('web')] or None)
    if contexts := [_snake(c['retrievedContext']) for c in chunks if c.get('retrievedContext')]:
        pair(FileSearchTool.kind, {}, contexts)
    if urls := (candidate.get('urlContextMetadata') or {}).get('urlMetadata'):
        retrieved = [u['retrievedUrl'] for u in urls if u.get('retrievedUrl')]
        pair(WebFetchTool.kind, {'urls': retrieved} if retrieved else None, _snake(urls))
    return parts


def native_part_dict(part: NativeToolCallPart | NativeToolReturnPart) -> dict[str, Any] | None:
    """The Gemini part of a code execution call or result (other native parts cannot go back), or `None`."""
    if part.tool_name != CodeExecutionTool.kind:
        return None
    if isinstance(part, NativeToolCallPart):
        return {'executableCode': part.args_as_dict()}
    if isinstance(part.content, dict):
        return {'codeExecutionResult': part.content}
    return None
