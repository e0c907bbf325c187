"""Anthropic's server tools, both ways: `native_tools` as request `tools` / `mcp_servers` (with the beta flags they
need), and the `server_tool_use`, `*_tool_result`, `mcp_tool_use` and `mcp_tool_result` blocks of a response as
`NativeToolCallPart` / `NativeToolReturnPart` (sent back as the same blocks to Anthropic, left out elsewhere).

Tool search (`ToolSearchTool`) is read as parts of `tool_name='tool_search'` in the provider-neutral shapes of
`ToolSearchArgs` / `ToolSearchReturnContent`, the variant (`bm25` or `regex`) kept in `provider_details`."""

from __future__ import annotations as _annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pydantic_core

from .._messages.model_messages import TOOL_SEARCH_TOOL_KIND
from ..exceptions import UserError
from ..messages import ModelMessage, ModelResponse, ModelResponsePart, NativeToolCallPart, NativeToolReturnPart
from ..native_tools import (
    AbstractNativeTool,
    AdvisorTool,
    CodeExecutionTool,
    MCPServerTool,
    MemoryTool,
    WebFetchTool,
    WebSearchTool,
    provider_setting,
)
from ..native_tools._tool_search import ToolSearchArgs, ToolSearchReturnContent, ToolSearchTool
from ._request_parameters import ModelRequestParameters

__all__ = (
    'ANTHROPIC_NATIVE_TOOLS',
    'anthropic_native_tools',
    'code_execution_version',
    'server_block_part',
    'native_part_block',
    'mcp_call_args_prefix',
    'container_param',
    'tool_search_call_part',
)

ANTHROPIC_NATIVE_TOOLS: frozenset[type[AbstractNativeTool]] = frozenset(
    {WebSearchTool, CodeExecutionTool, WebFetchTool, MemoryTool, MCPServerTool, ToolSearchTool, AdvisorTool}
)
"""The native tools `AnthropicModel` maps."""

# Server tool names in `server_tool_use` blocks, and the native tool kind each belongs to.
_KIND_OF_SERVER_TOOL = {
    'web_search': WebSearchTool.kind,
    'web_fetch': WebFetchTool.kind,
    'code_execution': CodeExecutionTool.kind,
    'bash_code_execution': CodeExecutionTool.kind,
    'text_editor_code_execution': CodeExecutionTool.kind,
    'advisor': AdvisorTool.kind,
}
# Result block types, and the server tool whose result each is.
_RESULT_BLOCKS = {
    'web_search_tool_result': 'web_search',
    'web_fetch_tool_result': 'web_fetch',
    'code_execution_tool_result': 'code_execution',
    'bash_code_execution_tool_result': 'bash_code_execution',
    'text_editor_code_execution_tool_result': 'text_editor_code_execution',
    'advisor_tool_result': 'advisor',
}
# The server tool names of the tool search variants, by strategy, and the input key each takes its query in.
_TOOL_SEARCH_NAMES = {'bm25': 'tool_search_tool_bm25', 'regex': 'tool_search_tool_regex'}
_TOOL_SEARCH_QUERY_KEYS = {'bm25': 'query', 'regex': 'pattern'}
_TOOL_SEARCH_STRATEGY_OF = {name: strategy for strategy, name in _TOOL_SEARCH_NAMES.items()}
# Where the Anthropic name of a code execution sub-tool is kept (the part's `tool_name` is the native kind).
_TOOL_NAME_DETAIL = 'anthropic_tool_name'
_CODE_EXECUTION_20260120_MODELS = (
    'claude-fable-5',
    'claude-mythos-5',
    'claude-opus-4-5',
    'claude-opus-4-6',
    'claude-opus-4-7',
    'claude-opus-4-8',
    'claude-sonnet-4-5',
    'claude-sonnet-4-6',
)


def code_execution_version(model_name: str, setting: str | None) -> str:
    """The `code_execution` tool version for the model: the setting's (`anthropic_code_execution_tool_version`),
    else the newest the model takes.

    Raises:
        UserError: the setting names a version the model does not take.
    """
    versions = ('20250825', '20260120') if model_name.startswith(_CODE_EXECUTION_20260120_MODELS) else ('20250825',)
    if setting is None or setting == 'auto':
        return versions[-1]
    if setting not in versions:
        supported = ', '.join(repr(v) for v in versions)
        raise UserError(
            f'`anthropic_code_execution_tool_version={setting!r}` is not supported by model {model_name!r}. '
            f'Supported versions are: {supported}.'
        )
    return setting


def _without_none(**fields: Any) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


def anthropic_native_tools(
    params: ModelRequestParameters, tools: list[dict[str, Any]], model_name: str, settings: Mapping[str, Any]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], set[str]]:
    """The request's `tools` with the server tools added, its `mcp_servers`, and the beta flags they need.

    A `MemoryTool` replaces the function tool named `memory` (which answers the model's memory calls).

    Raises:
        UserError: a `MemoryTool` without a `memory` function tool.
    """
    mcp_servers: list[dict[str, Any]] = []
    betas: set[str] = set()
    code_execution = any(isinstance(tool, CodeExecutionTool) for tool in params.native_tools)
    for tool in params.native_tools:
        if isinstance(tool, WebSearchTool):
            location = {'type': 'approximate', **tool.user_location} if tool.user_location else None
            # `response_inclusion` only changes results that code execution consumes: it needs the 20260318 version,
            # used only then.
            inclusion = provider_setting(tool, 'anthropic', 'response_inclusion')
            search_type = 'web_search_20260318' if inclusion is not None and code_execution else 'web_search_20250305'
            tools.append(
                {'name': 'web_search', 'type': search_type}
                | _without_none(
                    response_inclusion=inclusion if search_type == 'web_search_20260318' else None,
                    max_uses=tool.max_uses,
                    allowed_domains=tool.allowed_domains,
                    blocked_domains=tool.blocked_domains,
                    user_location=location,
                )
            )
        elif isinstance(tool, CodeExecutionTool):
            version = code_execution_version(model_name, settings.get('anthropic_code_execution_tool_version'))
            tools.append({'name': 'code_execution', 'type': f'code_execution_{version}'})
        elif isinstance(tool, WebFetchTool):
            citations = (
                {'enabled': True}
                if provider_setting(tool, 'anthropic', 'enable_citations', tool.enable_citations)
                else None
            )
            use_cache = provider_setting(tool, 'anthropic', 'use_cache')
            inclusion = provider_setting(tool, 'anthropic', 'response_inclusion')
            if inclusion is not None and not code_execution:
                inclusion = None  # it only changes what code execution consumes
            # `use_cache` and `response_inclusion` need the 20260318 version.
            fetch_type = (
                'web_fetch_20260318' if use_cache is not None or inclusion is not None else 'web_fetch_20250910'
            )
            tools.append(
                {'name': 'web_fetch', 'type': fetch_type}
                | _without_none(
                    max_uses=tool.max_uses,
                    allowed_domains=tool.allowed_domains,
                    blocked_domains=tool.blocked_domains,
                    citations=citations,
                    max_content_tokens=provider_setting(
                        tool, 'anthropic', 'max_content_tokens', tool.max_content_tokens
                    ),
                    use_cache=use_cache,
                    response_inclusion=inclusion,
                )
            )
            betas.add('web-fetch-2025-09-10')
        elif isinstance(tool, MemoryTool):
            if 'memory' not in params.declared_tool_defs:
                raise UserError("Native `MemoryTool` requires a 'memory' tool to be defined.")
            tools = [t for t in tools if t.get('name') != 'memory']
            tools.append({'name': 'memory', 'type': 'memory_20250818'})
            betas.add('context-management-2025-06-27')
        elif isinstance(tool, MCPServerTool):
            server: dict[str, Any] = {'type': 'url', 'name': tool.id, 'url': tool.url}
            if tool.allowed_tools is not None:
                server['tool_configuration'] = {
                    'enabled': bool(tool.allowed_tools),
                    'allowed_tools': tool.allowed_tools,
                }
            if tool.authorization_token:
                server['authorization_token'] = tool.authorization_token
            mcp_servers.append(server)
            betas.add('mcp-client-2025-04-04')
        elif isinstance(tool, AdvisorTool):
            advisor: dict[str, Any] = {'type': 'advisor_20260301', 'name': 'advisor', 'model': tool.model}
            advisor |= _without_none(max_uses=tool.max_uses, max_tokens=tool.max_tokens)
            if (caching := provider_setting(tool, 'anthropic', 'caching', tool.caching)) is not None:
                advisor['caching'] = {'type': 'ephemeral', 'ttl': caching}
            tools.append(advisor)
            betas.add('advisor-tool-2026-03-01')
        elif isinstance(tool, ToolSearchTool):  # pragma: no branch (the model's check left only these kinds)
            tools = _with_tool_search(tool, tools)
    return tools, mcp_servers, betas


def _with_tool_search(tool: ToolSearchTool, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`tools` with Anthropic's tool search added (the function tools it covers are in `tools` already, marked
    `defer_loading: true` as the model resolved them `'deferred'`)."""
    if tool.strategy == 'custom':
        raise UserError(
            "`ToolSearchTool(strategy='custom')` (a search function run through Anthropic's client-side tool search) "
            "is not supported by Edgewise's `AnthropicModel`: use `strategy='bm25'`, `'regex'` or `None`."
        )
    strategy = tool.strategy or 'bm25'
    return [*tools, {'name': _TOOL_SEARCH_NAMES[strategy], 'type': f'{_TOOL_SEARCH_NAMES[strategy]}_20251119'}]


def tool_search_call_part(
    tool_call_id: str, server_tool_name: str, tool_input: Any, provider_name: str
) -> NativeToolCallPart:
    """The call part of a tool search the model made: its input (`{'query': ...}` for BM25, `{'pattern': ...}` for
    regex, as a dict or the JSON text a stream gave) as `ToolSearchArgs`, the variant in `provider_details`."""
    strategy = _TOOL_SEARCH_STRATEGY_OF[server_tool_name]
    if isinstance(tool_input, str):
        try:
            tool_input = pydantic_core.from_json(tool_input or '{}')
        except ValueError:
            tool_input = {}
    query = tool_input.get(_TOOL_SEARCH_QUERY_KEYS[strategy]) if isinstance(tool_input, dict) else None
    args: ToolSearchArgs = {'queries': [query] if isinstance(query, str) else []}
    return NativeToolCallPart(
        ToolSearchTool.kind,
        dict(args),
        tool_call_id,
        provider_name=provider_name,
        provider_details={'strategy': strategy},
        tool_kind=TOOL_SEARCH_TOOL_KIND,
    )


def _tool_search_return_part(block: Mapping[str, Any], provider_name: str) -> NativeToolReturnPart:
    result: Mapping[str, Any] = block.get('content') or {}
    content: ToolSearchReturnContent = {'discovered_tools': []}
    details = None
    if result.get('type') == 'tool_search_tool_search_result':
        refs = result.get('tool_references') or ()
        content['discovered_tools'] = [{'name': str(ref['tool_name'])} for ref in refs]
    else:  # `tool_search_tool_result_error`
        details = {'error_code': result.get('error_code'), 'error_message': result.get('error_message')}
    return NativeToolReturnPart(
        ToolSearchTool.kind,
        dict(content),
        block['tool_use_id'],
        provider_name=provider_name,
        provider_details=details,
        tool_kind=TOOL_SEARCH_TOOL_KIND,
    )


def _tool_search_block(part: NativeToolCallPart | NativeToolReturnPart) -> dict[str, Any] | None:
    strategy = (part.provider_details or {}).get('strategy', 'bm25')
    if isinstance(part, NativeToolCallPart):
        strategy = strategy if strategy in _TOOL_SEARCH_NAMES else 'bm25'
        queries = part.args_as_dict().get('queries') or ['']
        return {'type': 'server_tool_use', 'id': part.tool_call_id, 'name': _TOOL_SEARCH_NAMES[strategy],
                'input': {_TOOL_SEARCH_QUERY_KEYS[strategy]: queries[0]}}  # fmt: skip
    if not isinstance(part.content, dict):
        return None
    details = part.provider_details or {}
    if error_code := details.get('error_code'):
        result: dict[str, Any] = {'type': 'tool_search_tool_result_error', 'error_code': error_code}
        if details.get('error_message') is not None:
            result['error_message'] = details['error_message']
    else:
        found = part.content.get('discovered_tools') or ()
        refs = [{'type': 'tool_reference', 'tool_name': match['name']} for match in found]
        result = {'type': 'tool_search_tool_search_result', 'tool_references': refs}
    return {'type': 'tool_search_tool_result', 'tool_use_id': part.tool_call_id, 'content': result}


def mcp_call_args_prefix(block: Mapping[str, Any]) -> str:
    """The JSON text a streamed `mcp_tool_use` call's arguments start with (its input follows, then `}`)."""
    return (
        '{"action":"call_tool","tool_name":' + pydantic_core.to_json(block.get('name', '')).decode() + ',"tool_args":'
    )


def server_block_part(
    block: Mapping[str, Any], provider_name: str, mcp_calls: dict[str, str]
) -> ModelResponsePart | None:
    """The part of a server tool block of a response, or `None` if `block` is not one.

    `mcp_calls` maps the ids of the response's MCP calls to their tool names (`mcp_server:<server>`), filled in
    as calls are read so that their results get the same name.
    """
    kind = block.get('type')
    if kind == 'server_tool_use' and block.get('name') in _TOOL_SEARCH_STRATEGY_OF:
        return tool_search_call_part(block['id'], str(block['name']), block.get('input'), provider_name)
    if kind == 'tool_search_tool_result':
        return _tool_search_return_part(block, provider_name)
    if kind == 'server_tool_use':
        name = str(block.get('name'))
        details = {_TOOL_NAME_DETAIL: name} if name in ('bash_code_execution', 'text_editor_code_execution') else None
        return NativeToolCallPart(
            _KIND_OF_SERVER_TOOL.get(name, name), block.get('input') or None, block['id'],
            provider_name=provider_name, provider_details=details,
        )  # fmt: skip
    if kind in _RESULT_BLOCKS:
        name = _RESULT_BLOCKS[str(kind)]
        details = {_TOOL_NAME_DETAIL: name} if name in ('bash_code_execution', 'text_editor_code_execution') else None
        return NativeToolReturnPart(
            _KIND_OF_SERVER_TOOL[name], block.get('content'), block['tool_use_id'],
            provider_name=provider_name, provider_details=details,
        )  # fmt: skip
    if kind == 'mcp_tool_use':
        tool_name = f'{MCPServerTool.kind}:{block["server_name"]}'
        mcp_calls[block['id']] = tool_name
        args = {'action': 'call_tool', 'tool_name': block['name'], 'tool_args': block.get('input') or {}}
        return NativeToolCallPart(tool_name, args, block['id'], provider_name=provider_name)
    if kind == 'mcp_tool_result':
        content = {'content': block.get('content'), 'is_error': block.get('is_error', False)}
        name = mcp_calls.get(block['tool_use_id'], MCPServerTool.kind)
        return NativeToolReturnPart(name, content, block['tool_use_id'], provider_name=provider_name)
    return None


def _anthropic_tool_name(part: NativeToolCallPart | NativeToolReturnPart) -> str:
    detail = (part.provider_details or {}).get(_TOOL_NAME_DETAIL)
    if isinstance(detail, str):
        return detail
    if part.tool_name in _KIND_OF_SERVER_TOOL:  # parts stored with the Anthropic name
        return part.tool_name
    return {WebSearchTool.kind: 'web_search', WebFetchTool.kind: 'web_fetch'}.get(part.tool_name, 'code_execution')


def without_advisor_blocks(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`messages` without the advisor's blocks: the API refuses them in a request that has no advisor tool."""
    kept: list[dict[str, Any]] = []
    for message in messages:
        content = message.get('content')
        if message.get('role') == 'assistant' and isinstance(content, list):
            content = [
                block
                for block in content
                if not (block.get('type') == 'server_tool_use' and block.get('name') == 'advisor')
                and block.get('type') != 'advisor_tool_result'
            ]
            if not content:
                continue
            message = {**message, 'content': content}
        kept.append(message)
    return kept


def native_part_block(part: NativeToolCallPart | NativeToolReturnPart) -> dict[str, Any] | None:
    """The assistant content block of a native tool part that Anthropic made, or `None` if it has none."""
    if part.tool_name.startswith(MCPServerTool.kind):
        if isinstance(part, NativeToolCallPart):
            args = part.args_as_dict()
            server = part.tool_name.partition(':')[2]
            if not server or 'tool_name' not in args:
                return None
            return {'type': 'mcp_tool_use', 'id': part.tool_call_id, 'server_name': server,
                    'name': args['tool_name'], 'input': args.get('tool_args') or {}}  # fmt: skip
        if not isinstance(part.content, dict):
            return None
        return {'type': 'mcp_tool_result', 'tool_use_id': part.tool_call_id, **part.content}
    if part.tool_name == ToolSearchTool.kind:
        return _tool_search_block(part)
    name = _anthropic_tool_name(part)
    if isinstance(part, NativeToolCallPart):
        return {'type': 'server_tool_use', 'id': part.tool_call_id, 'name': name, 'input': part.args_as_dict()}
    if not isinstance(part.content, dict | list):
        return None
    return {'type': f'{name}_tool_result', 'tool_use_id': part.tool_call_id, 'content': part.content}


def container_param(
    messages: Sequence[ModelMessage], settings: Mapping[str, Any], ours: Callable[[ModelResponse], bool]
) -> dict[str, Any] | str | None:
    """The request's code execution `container`: the `anthropic_container` setting, else the container of the last
    response in the history that `ours` accepts (one made at this endpoint, where the container lives: files made
    there are still there), else `None`."""
    container: dict[str, Any] | str | bool | None = settings.get('anthropic_container')
    if container is not None:
        if container is False:
            return None
        if isinstance(container, dict) and set(container) == {'id'}:
            return str(container['id'])  # the API takes a bare id only as a string
        if container is not True:
            return container
    responses = (m for m in reversed(messages) if isinstance(m, ModelResponse) and ours(m))
    for response in responses:
        if container_id := (response.provider_details or {}).get('container_id'):
            return str(container_id)
    return None
