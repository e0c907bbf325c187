"""OpenAI's hosted tools, both ways.

Responses API: `native_tools` as request `tools` (`web_search`, `code_interpreter`, `image_generation`, `mcp`,
`file_search`, `tool_search`), and the `web_search_call`, `code_interpreter_call`, `image_generation_call`,
`file_search_call`, `mcp_list_tools` and `mcp_call` output items as `NativeToolCallPart` / `NativeToolReturnPart`
pairs (sent back as references to the same items). Chat Completions: a `WebSearchTool` as `web_search_options`
(search models).

Tool search (`ToolSearchTool`, OpenAI's server-run `tool_search`): its `tool_search_call` and `tool_search_output`
items are parts of `tool_name='tool_search'` and `tool_kind='tool-search'`, the arguments as `ToolSearchArgs`
(`{'queries': [...]}`, from the item's `queries` or `paths`), the answer as `ToolSearchReturnContent` (the names of
the function tools it loaded); the items' ids, `call_id`, `execution` and `status` are kept in `provider_details`.
They go back as the same items, the output with the definitions of the tools it loaded.
"""

from __future__ import annotations as _annotations

import base64
from collections.abc import Iterator, Mapping
from typing import Any, Literal

import pydantic_core

from .._messages.model_messages import TOOL_SEARCH_TOOL_KIND
from ..exceptions import UnexpectedModelBehavior, UserError
from ..messages import BinaryImage, FilePart, ModelResponsePart, NativeToolCallPart, NativeToolReturnPart
from ..native_tools import (
    AbstractNativeTool,
    CodeExecutionTool,
    FileSearchTool,
    ImageGenerationTool,
    MCPServerTool,
    WebSearchTool,
    provider_setting,
)
from ..native_tools._tool_search import ToolSearchArgs, ToolSearchMatch, ToolSearchTool
from ._request_parameters import ModelRequestParameters

__all__ = (
    'MCP_SERVER_TOOL_CONNECTOR_URI_SCHEME',
    'RESPONSES_NATIVE_TOOLS',
    'responses_native_tools',
    'responses_include',
    'native_output_parts',
    'native_item',
    'chat_web_search_options',
    'NATIVE_ITEM_TYPES',
    'TOOL_SEARCH_ITEM_TYPES',
    'tool_search_parts',
    'tool_search_item',
)

RESPONSES_NATIVE_TOOLS: frozenset[type[AbstractNativeTool]] = frozenset(
    {WebSearchTool, CodeExecutionTool, FileSearchTool, MCPServerTool, ImageGenerationTool, ToolSearchTool}
)
"""The native tools `OpenAIResponsesModel` maps."""

NATIVE_ITEM_TYPES = frozenset(
    {
        'web_search_call',
        'code_interpreter_call',
        'image_generation_call',
        'file_search_call',
        'mcp_list_tools',
        'mcp_call',
    }
)
"""The output item types of hosted tools."""

TOOL_SEARCH_ITEM_TYPES = frozenset({'tool_search_call', 'tool_search_output'})
"""The output item types of the `tool_search` tool."""

MCP_SERVER_TOOL_CONNECTOR_URI_SCHEME: Literal['x-openai-connector'] = 'x-openai-connector'
"""The scheme of an `MCPServerTool` URL naming one of OpenAI's connectors: `x-openai-connector:<connector_id>`."""
_IMAGE_SIZES = ('auto', '1024x1024', '1024x1536', '1536x1024')
_SIZE_OF_ASPECT_RATIO = {'1:1': '1024x1024', '2:3': '1024x1536', '3:2': '1536x1024'}


def _image_size(tool: ImageGenerationTool) -> str:
    if tool.aspect_ratio is None:
        if tool.size is None:
            return 'auto'
        if tool.size not in _IMAGE_SIZES:
            raise UserError(
                f'OpenAI image generation only supports `size` values: {_IMAGE_SIZES}. '
                f'Got: {tool.size}. Omit `size` to use the default (auto).'
            )
        return tool.size
    size = _SIZE_OF_ASPECT_RATIO.get(tool.aspect_ratio)
    if size is None:
        raise UserError(
            'OpenAI image generation only supports `aspect_ratio` values: '
            f'{", ".join(_SIZE_OF_ASPECT_RATIO)}. Specify one of those values or omit `aspect_ratio`.'
        )
    if tool.size not in (None, 'auto', size):
        raise UserError(
            '`ImageGenerationTool` cannot combine `aspect_ratio` with a conflicting `size` when using OpenAI.'
        )
    return size


def _image_generation_tool(tool: ImageGenerationTool) -> dict[str, Any]:
    def option(name: str) -> Any:  # the tool's `provider_settings['openai']` over the field it moved from
        return provider_setting(tool, 'openai', name, getattr(tool, name))

    mapped: dict[str, Any] = {
        'type': 'image_generation',
        'action': option('action'),
        'background': option('background'),
        'moderation': option('moderation'),
        'output_compression': 100 if tool.output_compression is None else tool.output_compression,
        'output_format': tool.output_format or 'png',
        'partial_images': option('partial_images'),
        'quality': option('quality'),
        'size': _image_size(tool),
    }
    if (model := option('model')) is not None:
        mapped['model'] = model
    if (fidelity := option('input_fidelity')) is not None:
        mapped['input_fidelity'] = fidelity
    return mapped


def _mcp_tool(tool: MCPServerTool) -> dict[str, Any]:
    mapped: dict[str, Any] = {'type': 'mcp', 'server_label': tool.id, 'require_approval': 'never'}
    if tool.authorization_token:
        mapped['authorization'] = tool.authorization_token
    if tool.allowed_tools is not None:
        mapped['allowed_tools'] = tool.allowed_tools
    if tool.description:
        mapped['server_description'] = tool.description
    if tool.headers:
        mapped['headers'] = tool.headers
    scheme, _, connector = tool.url.partition(':')
    if scheme == MCP_SERVER_TOOL_CONNECTOR_URI_SCHEME and connector:
        mapped['connector_id'] = connector
    else:
        mapped['server_url'] = tool.url
    return mapped


def _tool_search_tool(tool: ToolSearchTool) -> dict[str, Any]:
    if tool.strategy is None:
        return {'type': 'tool_search'}
    if tool.strategy == 'custom':
        raise UserError(
            "`ToolSearchTool(strategy='custom')` (a search function run through OpenAI's client-executed tool search) "
            "is not supported by Edgewise's `OpenAIResponsesModel`: use `strategy=None` (OpenAI's own search), or "
            "`ToolSearch(strategy='keywords')` or a search function, which run in the agent."
        )
    raise UserError(
        f'`ToolSearch(strategy={tool.strategy!r})` is an Anthropic-native strategy and is not supported by OpenAI '
        "Responses. Use `strategy=None` (default, provider-managed), `strategy='keywords'` (local keyword "
        'matching), or a callable strategy.'
    )


def responses_native_tools(params: ModelRequestParameters) -> list[dict[str, Any]]:
    """The hosted tools of a Responses request.

    Raises:
        UserError: an `ImageGenerationTool` size or aspect ratio OpenAI does not take, or a `ToolSearchTool` with a
            strategy OpenAI does not run (`'bm25'`, `'regex'`, `'custom'`).
    """
    tools: list[dict[str, Any]] = []
    for tool in params.native_tools:
        if isinstance(tool, WebSearchTool):
            search: dict[str, Any] = {'type': 'web_search', 'search_context_size': tool.search_context_size}
            if tool.user_location:
                search['user_location'] = {'type': 'approximate', **tool.user_location}
            if tool.allowed_domains:
                search['filters'] = {'allowed_domains': tool.allowed_domains}
            if tool.external_web_access is not None:
                search['external_web_access'] = tool.external_web_access
            tools.append(search)
        elif isinstance(tool, FileSearchTool):
            tools.append({'type': 'file_search', 'vector_store_ids': list(tool.file_store_ids)})
        elif isinstance(tool, CodeExecutionTool):
            tools.append({'type': 'code_interpreter', 'container': {'type': 'auto'}})
        elif isinstance(tool, MCPServerTool):
            tools.append(_mcp_tool(tool))
        elif isinstance(tool, ImageGenerationTool):
            tools.append(_image_generation_tool(tool))
        elif isinstance(tool, ToolSearchTool):  # pragma: no branch (the model's check left only these kinds)
            tools.append(_tool_search_tool(tool))
    if params.allow_image_output and not any(tool['type'] == 'image_generation' for tool in tools):
        tools.append({'type': 'image_generation'})  # an image is an output: the model needs the tool that draws
    return tools


def responses_include(settings: Mapping[str, Any]) -> list[str]:
    """The `include` entries the `openai_include_*` settings ask for (outputs of hosted tools)."""
    wanted = (
        ('openai_include_code_execution_outputs', 'code_interpreter_call.outputs'),
        ('openai_include_web_search_sources', 'web_search_call.action.sources'),
        ('openai_include_file_search_results', 'file_search_call.results'),
    )
    return [value for key, value in wanted if settings.get(key)]


def _pair(
    kind: str, item: Mapping[str, Any], args: Any, content: Any, provider_name: str, *, with_id: bool = True
) -> tuple[NativeToolCallPart, NativeToolReturnPart]:
    call_id = item['id']
    call = NativeToolCallPart(kind, args, call_id, provider_name=provider_name, id=call_id if with_id else None)
    return call, NativeToolReturnPart(kind, content, call_id, provider_name=provider_name)


def native_output_parts(item: Mapping[str, Any], provider_name: str) -> Iterator[ModelResponsePart]:
    """The parts of a hosted tool's output item: its call, its result, and any image it made."""
    kind = item.get('type')
    result: dict[str, Any] = {'status': item.get('status')}
    files: list[FilePart] = []
    if kind == 'web_search_call':
        args = {k: v for k, v in (item.get('action') or {}).items() if v is not None} or None
        if args and (sources := args.pop('sources', None)):
            result['sources'] = sources
        parts = _pair(WebSearchTool.kind, item, args, result, provider_name)
    elif kind == 'code_interpreter_call':
        logs: list[str] = []
        for output in item.get('outputs') or ():
            if output.get('type') == 'image':
                files.append(FilePart(BinaryImage.from_data_uri(output['url']), id=item['id']))
            elif output.get('type') == 'logs':
                logs.append(output.get('logs', ''))
        if logs:
            result['logs'] = logs
        args = {'container_id': item.get('container_id'), 'code': item.get('code') or ''}
        parts = _pair(CodeExecutionTool.kind, item, args, result, provider_name, with_id=False)
    elif kind == 'image_generation_call':
        for key in ('background', 'quality', 'size', 'revised_prompt'):
            if item.get(key):
                result[key] = item[key]
        if item.get('result'):
            media_type = f'image/{item.get("output_format") or "png"}'
            image = BinaryImage(base64.b64decode(item['result']), media_type=media_type)
            files.append(FilePart(image, id=item['id'], provider_name=provider_name))
            result['status'] = 'completed'  # streams leave it at `generating`
        parts = _pair(ImageGenerationTool.kind, item, None, result, provider_name, with_id=False)
    elif kind == 'file_search_call':
        if item.get('results') is not None:
            result['results'] = item['results']
        parts = _pair(FileSearchTool.kind, item, {'queries': item.get('queries') or []}, result, provider_name)
    elif kind == 'mcp_list_tools':
        name = f'{MCPServerTool.kind}:{item["server_label"]}'
        content = {'tools': item.get('tools') or [], 'error': item.get('error')}
        parts = _pair(name, item, {'action': 'list_tools'}, content, provider_name, with_id=False)
    elif kind == 'mcp_call':
        name = f'{MCPServerTool.kind}:{item["server_label"]}'
        tool_args = pydantic_core.from_json(item['arguments']) if item.get('arguments') else {}
        args = {'action': 'call_tool', 'tool_name': item.get('name'), 'tool_args': tool_args}
        content = {'output': item.get('output'), 'error': item.get('error')}
        parts = _pair(name, item, args, content, provider_name, with_id=False)
    else:
        return
    yield parts[0]
    yield from files
    yield parts[1]


def native_item(part: NativeToolCallPart) -> dict[str, Any] | None:
    """The input item that refers back to a hosted tool call OpenAI made (its result is kept server-side), or
    `None` for a call that has none."""
    args = part.args_as_dict()
    if part.tool_name == CodeExecutionTool.kind and args.get('container_id'):
        return {'type': 'code_interpreter_call', 'id': part.tool_call_id, 'code': args.get('code'),
                'container_id': args['container_id'], 'outputs': None, 'status': 'completed'}  # fmt: skip
    if part.tool_name == WebSearchTool.kind and args:
        action = {k: v for k, v in args.items() if v is not None}
        return {'type': 'web_search_call', 'id': part.id or part.tool_call_id, 'action': action, 'status': 'completed'}
    if part.tool_name == FileSearchTool.kind and args:
        return {'type': 'file_search_call', 'id': part.id or part.tool_call_id, 'queries': args.get('queries', []),
                'status': 'completed'}  # fmt: skip
    if part.tool_name == ImageGenerationTool.kind:
        # `result` and `status` as the API's input type has them (the image itself stays on OpenAI's side).
        return {'type': 'image_generation_call', 'id': part.tool_call_id, 'result': None, 'status': 'completed'}
    server = part.tool_name.partition(':')[2] if part.tool_name.startswith(MCPServerTool.kind) else ''
    if server and args.get('action') == 'list_tools':
        return {'type': 'mcp_list_tools', 'id': part.tool_call_id, 'server_label': server, 'tools': []}
    if server and args.get('action') == 'call_tool' and args.get('tool_name') and args.get('tool_args') is not None:
        return {'type': 'mcp_call', 'id': part.tool_call_id, 'server_label': server, 'name': args['tool_name'],
                'arguments': pydantic_core.to_json(args['tool_args']).decode()}  # fmt: skip
    return None


def _search_args(raw: Any) -> ToolSearchArgs:
    # A server-run search gives the `paths` of what it loaded, or `queries`; a stream's first event gives `{}`.
    if isinstance(raw, str):
        raw = pydantic_core.from_json(raw) if raw else {}
    if isinstance(raw, dict):
        for key in ('queries', 'paths'):
            if isinstance(values := raw.get(key), list):
                return {'queries': [v for v in values if isinstance(v, str)]}
        if not raw:
            return {'queries': []}
    raise UnexpectedModelBehavior(f'Unrecognized tool_search arguments shape: {raw!r}')


def tool_search_parts(item: Mapping[str, Any], provider_name: str, call_id: str | None = None) -> ModelResponsePart:
    """The part of a `tool_search_call` (a `NativeToolCallPart`) or `tool_search_output` item (a
    `NativeToolReturnPart` answering `call_id`, by default the item's own `call_id`, else its id).

    Raises:
        UnexpectedModelBehavior: the call's arguments are of an unknown shape.
    """
    details = {key: item.get(key) for key in ('call_id', 'execution', 'status')}
    if item.get('type') == 'tool_search_call':
        return NativeToolCallPart(
            ToolSearchTool.kind,
            dict(_search_args(item.get('arguments'))),
            item.get('call_id') or item['id'],
            id=item['id'],
            provider_name=provider_name,
            provider_details=details,
            tool_kind=TOOL_SEARCH_TOOL_KIND,
        )
    found: list[ToolSearchMatch] = [
        {'name': tool['name']} for tool in item.get('tools') or () if tool.get('type') == 'function'
    ]
    return NativeToolReturnPart(
        ToolSearchTool.kind,
        {'discovered_tools': found},
        call_id or item.get('call_id') or item['id'],
        provider_name=provider_name,
        provider_details={'id': item['id'], **details},
        tool_kind=TOOL_SEARCH_TOOL_KIND,
    )


def tool_search_item(
    part: NativeToolCallPart | NativeToolReturnPart, send_ids: bool, tools: Mapping[str, dict[str, Any]]
) -> dict[str, Any] | None:
    """The `tool_search_call` or `tool_search_output` input item of a search OpenAI ran (the output with the
    definitions in `tools` of the tools it loaded), or `None` for an output without its item's id (it cannot be
    told from one OpenAI did not make)."""
    details = part.provider_details or {}
    status = details.get('status') if details.get('status') in ('in_progress', 'completed', 'incomplete') else None
    item: dict[str, Any] = {'call_id': details.get('call_id', part.tool_call_id), 'execution': 'server'}
    item['status'] = status or 'completed'
    if isinstance(part, NativeToolCallPart):
        item = {'type': 'tool_search_call', **item, 'arguments': part.args_as_dict()}
        if send_ids and part.id:
            item['id'] = part.id
        return item
    output_id = details.get('id')
    if not (isinstance(output_id, str) and output_id):
        return None
    content = part.content if isinstance(part.content, dict) else {}
    names = [m.get('name') for m in content.get('discovered_tools') or () if isinstance(m, dict)]
    loaded = [tools[name] for name in names if isinstance(name, str) and name in tools]
    item = {'type': 'tool_search_output', **item, 'tools': loaded}
    if send_ids:
        item['id'] = output_id
    return item


def chat_web_search_options(params: ModelRequestParameters) -> dict[str, Any] | None:
    """The `web_search_options` of a Chat Completions request with a `WebSearchTool`, else `None`."""
    for tool in params.native_tools:
        if isinstance(tool, WebSearchTool):
            options: dict[str, Any] = {'search_context_size': tool.search_context_size}
            if tool.user_location:
                options['user_location'] = {'type': 'approximate', 'approximate': dict(tool.user_location)}
            return options
    return None
