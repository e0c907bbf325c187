"""Anthropic Messages API: messages to a request body, and a response body or its events to a `ModelResponse`.

Pure data mapping, no I/O. Thinking blocks keep their signature on `ThinkingPart.signature` with
`provider_name='anthropic'` and are sent back only to Anthropic; reasoning from other providers goes back as
text between `<thinking>` tags. Usage counts cached input as input (`cache_read_tokens`,
`cache_write_tokens` say how much), and stream usage is cumulative, so each report replaces the last.
"""

from __future__ import annotations as _annotations

from collections.abc import AsyncIterable, Callable, Iterator, Sequence
from datetime import datetime, timezone
from typing import Any, Literal, cast

from .._messages.history import trim_before_compaction
from .._tools.definition import ToolDefinition
from ..exceptions import UserError
from ..messages import (
    BinaryContent,
    CachePoint,
    CompactionPart,
    DocumentUrl,
    FilePart,
    FileUrl,
    FinishReason,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    ModelResponseStreamEvent,
    NativeToolCallPart,
    NativeToolReturnPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolAvailabilityDeltaPart,
    ToolCallPart,
    ToolReturnPart,
    UploadedFile,
)
from ..native_tools import AdvisorTool
from ..native_tools._tool_search import ToolSearchTool
from ..profiles import ModelProfile
from ..profiles.anthropic import AnthropicModelProfile
from ..settings import ModelSettings
from ..usage import RequestUsage
from ._anthropic_native_tools import (
    anthropic_native_tools,
    container_param,
    mcp_call_args_prefix,
    native_part_block,
    server_block_part,
    tool_search_call_part,
    without_advisor_blocks,
)
from ._anthropic_system_entries import last_cacheable_message, place_system_entries, self_clearing_entry
from ._citations import anthropic_citations
from ._compaction_mapping import anthropic_compaction_block, anthropic_compaction_part, anthropic_context_management
from ._error_categories import anthropic_stream_error
from ._mapping import (
    EventStreamedResponse,
    StatelessArtifactCheck,
    by_provider_name,
    replayed_thinking,
    settings_fields,
    unsupported_file,
    uploaded_file_id,
    user_turn_items,
)
from ._prompt_cache import snap_cache_setting, split_cache_setting
from ._request_parameters import ModelRequestParameters, request_instructions
from ._thinking import anthropic_settings
from ._tool_additions import ToolAdditions, tool_addition_blocks
from ._tool_choice import explicitly_forced, resolve_tool_choice

__all__ = (
    'AnthropicModelSettings',
    'anthropic_request_body',
    'anthropic_model_response',
    'anthropic_usage',
    'AnthropicStreamedResponse',
    'DEFAULT_MAX_TOKENS',
)

DEFAULT_MAX_TOKENS = 4096
"""`max_tokens` when the settings give none (the Messages API requires it)."""

_FINISH_REASONS: dict[str, FinishReason] = {
    'end_turn': 'stop',
    'stop_sequence': 'stop',
    'pause_turn': 'stop',
    'compaction': 'stop',
    'max_tokens': 'length',
    'model_context_window_exceeded': 'length',
    'tool_use': 'tool_call',
    'refusal': 'content_filter',
}

CacheTTL = Literal['5m', '1h']


class AnthropicModelSettings(ModelSettings, total=False):
    """Settings of requests to Anthropic models: the common ones plus Anthropic's own (prefixed `anthropic_`)."""

    anthropic_metadata: dict[str, Any]
    """The request's `metadata` (e.g. `{'user_id': ...}`)."""
    anthropic_thinking: dict[str, Any]
    """Extended thinking: `{'type': 'enabled', 'budget_tokens': 2048}`, `{'type': 'adaptive'}` or
    `{'type': 'disabled'}`."""
    anthropic_effort: Literal['low', 'medium', 'high', 'xhigh', 'max']
    """`output_config.effort`, on models that take it."""
    anthropic_cache_instructions: bool | CacheTTL
    """Cache the system prompt (`True` for the default 5 minutes, or a TTL)."""
    anthropic_cache_tool_definitions: bool | CacheTTL
    """Cache the tool definitions (a cache point after the last tool)."""
    anthropic_cache_messages: bool | CacheTTL
    """Cache the conversation (a cache point on the last block of the last message), for gateways that do not take
    `anthropic_cache`'s top-level parameter; not with `anthropic_cache`."""
    anthropic_cache: bool | CacheTTL
    """Cache the conversation with the request's top-level `cache_control` (`True` for 5 minutes, or a TTL): the API
    places the breakpoint and moves it as the conversation grows. Where the profile lacks `supports_auto_cache`, the
    last block of the last message is marked instead."""
    anthropic_service_tier: Literal['auto', 'standard_only']
    """The request's `service_tier`."""
    anthropic_code_execution_tool_version: Literal['auto', '20250825', '20260120']
    """The version of the code execution tool a `CodeExecutionTool` asks for (`'auto'`: the newest the model
    takes)."""
    anthropic_context_management: dict[str, Any]
    """The request's `context_management`, e.g. compaction past an input token count (see
    `AnthropicCompaction`): `{'edits': [{'type': 'compact_20260112', 'trigger': {...}}]}`."""
    anthropic_container: dict[str, Any] | str | Literal[False]
    """The code execution container to run in: an id, `{'id': ..., 'skills': [...]}`, or `False` for a new one.
    By default the container of the last response in the history made at this endpoint is reused."""
    anthropic_cache_diagnostics: bool
    """Ask Anthropic where the prompt stopped matching the previous request's, for the prompt cache (default `False`).

    Each request then carries `diagnostics: {'previous_message_id': ...}`, naming the latest response of this
    endpoint in the history (`null` when there is none, or when its id is not one Anthropic issued: `msg_...`), so
    that the next request has something to be compared with. The answer's `diagnostics` object lands in
    `ModelResponse.provider_details['cache_diagnostics']` as Anthropic sends it, for streamed responses too:
    `{'cache_miss_reason': {'type': ..., 'cache_missed_input_tokens': ...}}`, or `{'cache_miss_reason': None}` when
    the comparison had not finished; there is no such key when nothing diverged. Anthropic keeps a short-lived
    fingerprint of each such request (hashes and token counts, not content) and refuses them for HIPAA-enabled
    organizations. The id is read from the history as given, so leave this off when the history comes from a
    client."""


CACHE_SETTINGS = (
    'anthropic_cache',
    'anthropic_cache_instructions',
    'anthropic_cache_tool_definitions',
    'anthropic_cache_messages',
)
"""Anthropic's own cache settings: any of them given, the unified `cache` setting is ignored."""


def unified_cache_settings(settings: AnthropicModelSettings, profile: ModelProfile) -> AnthropicModelSettings:
    """The settings with the unified `cache` setting turned into Anthropic's: a cache point on the instructions and
    on the tool definitions (what new conversations share), and the conversation cached unless `messages=False`, at
    the retention snapped to the profile's `supported_cache_retentions`. The conversation is cached by the top-level
    `cache_control` parameter (the API then moves the breakpoint itself) when the profile has `supports_auto_cache`,
    else by a cache point on its last block. Ignored when the profile lacks `supports_cache`, and when any
    `anthropic_cache_*` setting is given, even `False`."""
    cache = settings.get('cache')
    if cache is None or cache is False or any(key in settings for key in CACHE_SETTINGS):
        return settings
    if not profile.get('supports_cache', False):
        return settings
    tiers = profile.get('supported_cache_retentions', ())
    retention, messages = split_cache_setting(snap_cache_setting(cache, tiers))
    ttl: CacheTTL = '1h' if retention == '1h' else '5m'
    translated = AnthropicModelSettings(**settings)
    translated['anthropic_cache_instructions'] = translated['anthropic_cache_tool_definitions'] = ttl
    if messages:
        translated['anthropic_cache'] = ttl
    return translated


def _cache_control(ttl: bool | CacheTTL) -> dict[str, Any]:
    return {'type': 'ephemeral'} if ttl is True else {'type': 'ephemeral', 'ttl': ttl}


def _user_blocks(part: Any, model_name: str) -> list[dict[str, Any]]:
    return user_turn_items(
        part,
        text=lambda text: {'type': 'text', 'text': text},
        file=lambda item: _file_block(item, model_name, 'user prompts'),
        tool_return=lambda p: _tool_result(p.tool_call_id, _tool_return_content(p, model_name), p.outcome == 'failed'),
        tool_error=lambda p: _tool_result(p.tool_call_id, p.model_response(), True),
        cache_point=_mark_cache_point,
        skip_empty=True,
    )


def _tool_return_content(part: ToolReturnPart, model_name: str) -> list[dict[str, Any]]:
    # A tool result holds images and documents next to its text; a failed one is flagged with `is_error`.
    text = part.model_response_str(wrap_if_error=False)
    blocks = [{'type': 'text', 'text': text}] if text or not part.files else []
    return blocks + [_file_block(item, model_name, 'tool returns') for item in part.files]


def _mark_cache_point(blocks: list[dict[str, Any]], point: CachePoint) -> None:
    # The block before a cache point ends the cached prefix (a cache point first in a prompt marks nothing).
    if blocks:
        blocks[-1]['cache_control'] = _cache_control(point.ttl)


def _file_block(item: Any, model_name: str, where: str) -> dict[str, Any]:
    # Downloads happened before: URLs left are images and PDFs, which Anthropic fetches itself.
    if isinstance(item, BinaryContent):
        if item.is_image:
            return {'type': 'image', 'source': {'type': 'base64', 'media_type': item.media_type, 'data': item.base64}}
        if item.media_type == 'application/pdf':
            return {
                'type': 'document',
                'source': {'type': 'base64', 'media_type': item.media_type, 'data': item.base64},
            }
        if item.media_type == 'text/plain':
            text = item.data.decode('utf-8', errors='replace')
            return {'type': 'document', 'source': {'type': 'text', 'media_type': 'text/plain', 'data': text}}
    elif isinstance(item, ImageUrl):
        return {'type': 'image', 'source': {'type': 'url', 'url': item.url}}
    elif isinstance(item, UploadedFile):
        stored = {'type': 'file', 'file_id': uploaded_file_id(item, 'AnthropicModel', ('anthropic',))}
        if item.media_type.startswith('image/'):
            return {'type': 'image', 'source': stored}
        if item.media_type.startswith(('text/', 'application/')):
            return {'type': 'document', 'source': stored}
    elif isinstance(item, DocumentUrl) and item.media_type == 'application/pdf':
        return {'type': 'document', 'source': {'type': 'url', 'url': item.url}}
    raise unsupported_file(model_name, item, where)


def takes_url(file: FileUrl) -> bool:
    """Whether Anthropic fetches this URL itself (images and PDFs); other documents are sent as data."""
    return isinstance(file, ImageUrl) or (isinstance(file, DocumentUrl) and file.media_type == 'application/pdf')


def _tool_result(tool_use_id: str, content: Any, is_error: bool) -> dict[str, Any]:
    return {'type': 'tool_result', 'tool_use_id': tool_use_id, 'content': content, 'is_error': is_error}


def _assistant_blocks(
    message: ModelResponse,
    profile: ModelProfile,
    provider_name: str,
    carried: list[dict[str, Any]],
    accepts: StatelessArtifactCheck,
) -> list[dict[str, Any]]:
    """The blocks of `message`'s assistant turn; reasoning carried into a user turn ahead of it goes to `carried`.
    Signed thinking and compaction blocks go back where `accepts` says the API verifies them."""
    blocks: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            if part.content:
                blocks.append({'type': 'text', 'text': part.content})
        elif isinstance(part, ToolCallPart):
            blocks.append(
                {'type': 'tool_use', 'id': part.tool_call_id, 'name': part.tool_name, 'input': part.args_as_dict()}
            )
        elif isinstance(part, FilePart):
            continue  # Anthropic models make no files, and an assistant turn cannot hold one
        elif isinstance(part, CompactionPart):
            if accepts(message, part):
                blocks.append(anthropic_compaction_block(part))
        elif isinstance(part, NativeToolCallPart | NativeToolReturnPart):
            # Another provider's server tools mean nothing to Anthropic.
            if part.provider_name == provider_name and (block := native_part_block(part)) is not None:
                blocks.append(block)
        elif not isinstance(part, ThinkingPart):
            continue  # a spoken turn: `Model.prepare_messages` turns it into text first (the model refuses it)
        elif part.signature and accepts(message, part):
            if part.id == 'redacted_thinking':
                blocks.append({'type': 'redacted_thinking', 'data': part.signature})
            else:
                blocks.append({'type': 'thinking', 'thinking': part.content, 'signature': part.signature})
        elif part.content:
            text, in_user_turn = replayed_thinking(part, profile)
            (carried if in_user_turn else blocks).append({'type': 'text', 'text': text})
    return blocks


def map_messages(
    messages: Sequence[ModelMessage],
    profile: ModelProfile,
    provider_name: str = 'anthropic',
    model_name: str = '',
    *,
    instructions: str | None,
    accepts: StatelessArtifactCheck | None = None,
    additions: ToolAdditions | None = None,
) -> tuple[str, list[dict[str, Any]]]:
    """The system prompt (`instructions` first, then system prompt parts) and the `messages` of a request. On a
    profile with `supports_request_scoped_system_prompts`, a request's request-scoped system prompts go in a
    self-clearing `system` entry after its user turn instead (see `_anthropic_system_entries`). `accepts` says whose
    signed thinking and compaction blocks are sent back (by default those of `provider_name`). `additions`: the tools
    revealed mid-run that `tool_addition` blocks name, in a `system` entry after the user turn of the request
    revealing them (see `_tool_additions`)."""
    accepts = accepts or by_provider_name(provider_name)
    system: list[str] = []
    if instructions:
        system.append(instructions)
    self_clearing = profile.get('supports_request_scoped_system_prompts', False)
    mapped: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            blocks: list[dict[str, Any]] = []
            scoped: list[str] = []
            added: list[dict[str, Any]] = []
            for part in message.parts:
                if isinstance(part, SystemPromptPart):
                    (scoped if self_clearing and part.scope == 'request' else system).append(part.content)
                elif additions is not None and isinstance(part, ToolAvailabilityDeltaPart):
                    added.extend(tool_addition_blocks(additions.revealed_by(part)))
                elif additions is not None and (result := additions.search_result(part)) is not None:
                    blocks.append(result)
                else:
                    blocks.extend(_user_blocks(part, model_name))
            if blocks:
                mapped.append({'role': 'user', 'content': blocks})
            if added:
                mapped.append({'role': 'system', 'content': added})
            if scoped:
                mapped.append(self_clearing_entry(scoped))
        else:
            carried: list[dict[str, Any]] = []
            blocks = _assistant_blocks(message, profile, provider_name, carried, accepts)
            if carried:  # `mimics_assistant_message_formatting`: the reasoning goes in a user turn before the reply
                mapped.append({'role': 'user', 'content': carried})
            if blocks:
                mapped.append({'role': 'assistant', 'content': blocks})
    return '\n\n'.join(system), place_system_entries(mapped)


def _tool(definition: ToolDefinition, profile: ModelProfile, *, deferred: bool = False) -> dict[str, Any]:
    # `deferred`: the model resolved the tool `'deferred'`, kept out of the model's context until a search finds it
    tool: dict[str, Any] = {'name': definition.name, 'input_schema': definition.parameters_json_schema}
    if definition.description:
        tool['description'] = definition.description
    if definition.strict and profile.get('supports_json_schema_output', False):
        tool['strict'] = True
    if deferred:
        tool['defer_loading'] = True
    return tool


def _thinking_type(settings: AnthropicModelSettings) -> str | None:
    thinking = settings.get('anthropic_thinking')
    kind = None if thinking is None else thinking.get('type')
    return kind if kind in ('enabled', 'adaptive') else None


def _forcing_supported(settings: AnthropicModelSettings, profile: AnthropicModelProfile, what: str) -> bool:
    """Whether a tool call can be forced: not on models that refuse it, nor with extended thinking. Adaptive thinking
    takes a forced call but answers it without thinking, so where the profile says so
    (`forced_tool_choice_disables_thinking`) only a forced choice asked for explicitly is sent. Asked for explicitly
    where it cannot be, forcing is an error; needed only for the output, the model is told to use a tool instead. A
    request saying nothing of thinking thinks (adaptively) on a model with `thinking_enabled_by_default`."""
    thinking = _thinking_type(settings)
    if thinking is None and 'anthropic_thinking' not in settings and profile.get('thinking_enabled_by_default', False):
        thinking = 'adaptive'  # a model that thinks when the request says nothing of thinking
    explicit = explicitly_forced(settings)
    if not profile.get('supports_forced_tool_choice', True):
        if explicit:
            raise UserError(f"Anthropic does not support {what} for this model. Use `tool_choice='auto'`.")
        return False
    if thinking == 'enabled':
        if explicit:
            raise UserError(
                f"Anthropic does not support {what} with thinking mode. Disable thinking or use `tool_choice='auto'`."
            )
        return False
    if thinking == 'adaptive':
        return explicit or not profile.get('forced_tool_choice_disables_thinking', False)
    return True


def _tool_choice(
    settings: AnthropicModelSettings, params: ModelRequestParameters, profile: AnthropicModelProfile
) -> tuple[dict[str, ToolDefinition], dict[str, Any]]:
    """The tools to send and the `tool_choice`; the API cannot limit the tools in `tool_choice`, so a choice
    among some tools sends only those."""
    tools = params.declared_tool_defs
    resolved = resolve_tool_choice(settings, params)
    if resolved == 'auto' or resolved == 'none':
        return tools, {'type': resolved}
    if resolved == 'required':
        return tools, {'type': 'any' if _forcing_supported(settings, profile, "tool_choice='required'") else 'auto'}
    mode, names = resolved
    supported = _forcing_supported(settings, profile, 'forcing specific tools')
    if mode == 'required' and len(names) == 1 and supported:
        return tools, {'type': 'tool', 'name': next(iter(names))}
    kept = {name: tool for name, tool in tools.items() if name in names}
    return kept, {'type': 'any' if mode == 'required' and supported else 'auto'}


_CITATIONS_WITH_FORCED_TOOL = (
    "`Citations()` can't be used with a `tool_choice` that forces a tool call on Anthropic models: "
    "the model writes its citation markup into the tool's arguments. "
    'Remove `Citations()`, or let the model choose whether to call the tool.'
)


def _cite_documents(value: Any) -> bool:
    """Turn citations on for every document block in `value` (the mapped messages, tool results included);
    whether there was one."""
    found = False
    if isinstance(value, list):
        for item in value:
            found = _cite_documents(item) or found
    elif isinstance(value, dict):
        if value.get('type') == 'document':
            value['citations'] = {'enabled': True}
            return True
        for item in value.values():
            found = _cite_documents(item) or found
    return found


def anthropic_request_body(
    model_name: str,
    messages: Sequence[ModelMessage],
    model_settings: AnthropicModelSettings | None,
    params: ModelRequestParameters,
    profile: ModelProfile,
    *,
    stream: bool = False,
    provider_name: str = 'anthropic',
    accepts: StatelessArtifactCheck | None = None,
    ours: Callable[[ModelResponse], bool] | None = None,
    tool_additions: bool = False,
) -> dict[str, Any]:
    """The JSON body of a `POST /v1/messages` request.

    Args:
        model_name: The model to ask.
        messages: The conversation, ending with the request to answer.
        model_settings: The merged settings of the request.
        params: Tools and output kind, already customized for the profile.
        profile: The model's profile.
        stream: Ask for server-sent events.
        provider_name: The `provider_name` of parts this API made (their server tools' blocks are sent back).
        accepts: Whose signed thinking and compaction blocks are sent back (`Model.accepts_stateless_artifacts`); by
            default the parts of `provider_name`.
        ours: Whether a response of the history was made at this endpoint (`Model.accepts_server_state`), for the
            message `anthropic_cache_diagnostics` compares with and the code execution container reused; by default a
            response of `provider_name`.
        tool_additions: Whether the tools revealed mid-run are named by `tool_addition` blocks (the model's
            `tool_addition_mode` is `'by_reference'`), see `_tool_additions`.
    """
    accepts = accepts or by_provider_name(provider_name)
    settings: AnthropicModelSettings = anthropic_settings(model_settings or {}, params, profile, model_name)
    settings = unified_cache_settings(settings, profile)
    ours = ours or (lambda response: response.provider_name == provider_name)
    diagnostics = (
        {'previous_message_id': _previous_message_id(messages, ours)}
        if settings.get('anthropic_cache_diagnostics')
        else None
    )
    anthropic_profile = cast(AnthropicModelProfile, profile)
    # Blocks before a compaction are ignored (and not billed): they are not sent. The system prompt, sent apart from
    # the messages, is kept.
    messages = trim_before_compaction(list(messages), provider_name, accepts=accepts)
    instructions = request_instructions(messages, params)
    additions: ToolAdditions | None = None
    if tool_additions:  # a block may name only a tool the request declares (held back), after `tool_choice`'s cut
        tool_defs, tool_choice = _tool_choice(settings, params, anthropic_profile)
        additions = ToolAdditions.of(params, ('deferred',), declared=tool_defs)
    system, mapped = map_messages(
        messages, profile, provider_name, model_name, instructions=instructions, accepts=accepts, additions=additions
    )
    if not any(isinstance(tool, AdvisorTool) for tool in params.native_tools):
        mapped = without_advisor_blocks(mapped)
    body: dict[str, Any] = {
        'model': model_name,
        'max_tokens': settings.get('max_tokens', DEFAULT_MAX_TOKENS),
        'messages': mapped,
    }
    if system:
        if cache := settings.get('anthropic_cache_instructions'):
            body['system'] = [{'type': 'text', 'text': system, 'cache_control': _cache_control(cache)}]
        else:
            body['system'] = system
    # A breakpoint goes on the last block later requests read again: not in a self-clearing entry (which refuses it).
    cached = last_cacheable_message(mapped)
    if (cache := settings.get('anthropic_cache_messages')) and cached:
        cached['content'][-1]['cache_control'] = _cache_control(cache)
    if auto := settings.get('anthropic_cache'):
        if cache:
            raise UserError('`anthropic_cache` and `anthropic_cache_messages` cannot both be enabled.')
        control = _cache_control('5m' if auto is True else auto)
        if profile.get('supports_auto_cache', False):
            body['cache_control'] = control
        elif cached:  # no automatic breakpoint here: the conversation's last block is marked instead
            cached['content'][-1]['cache_control'] = control
    # Anthropic refuses citations with native output and writes its citation markup into tool and prompted output.
    if settings.get('citations', False) and params.output_mode == 'text' and _cite_documents(mapped):
        resolved = resolve_tool_choice(settings, params)
        if resolved == 'required' or (isinstance(resolved, tuple) and resolved[0] == 'required'):
            raise UserError(_CITATIONS_WITH_FORCED_TOOL)
    if additions is None:
        tool_defs, tool_choice = _tool_choice(settings, params, anthropic_profile)
    tools = [_tool(t, profile, deferred=params.visibility_of(t.name) == 'deferred') for t in tool_defs.values()]
    if params.native_tools:
        tools, mcp_servers, _ = anthropic_native_tools(params, tools, model_name, settings)
        if mcp_servers:
            body['mcp_servers'] = mcp_servers
    if (container := container_param(messages, settings, ours)) is not None:
        body['container'] = container
    if tools:
        # On the last tool not held back: the API refuses `cache_control` on a `defer_loading` tool.
        if (cache := settings.get('anthropic_cache_tool_definitions')) and (
            shown := [tool for tool in tools if tool.get('defer_loading') is not True]
        ):
            shown[-1]['cache_control'] = _cache_control(cache)
        body['tools'] = tools
        if 'parallel_tool_calls' in settings and tool_choice['type'] != 'none':
            tool_choice['disable_parallel_tool_use'] = not settings['parallel_tool_calls']
        body['tool_choice'] = tool_choice
    if stream:
        body['stream'] = True
    if (context_management := anthropic_context_management(messages, settings)) is not None:
        body['context_management'] = context_management
    if not anthropic_profile.get('anthropic_disallows_sampling_settings', False):
        body.update(settings_fields(settings, (('temperature', 'temperature'), ('top_p', 'top_p'), ('top_k', 'top_k'))))
    body.update(
        settings_fields(
            settings,
            (
                ('stop_sequences', 'stop_sequences'),
                ('anthropic_thinking', 'thinking'),
                ('anthropic_metadata', 'metadata'),
                ('anthropic_service_tier', 'service_tier'),
            ),
        )
    )
    output_config: dict[str, Any] = {}
    if params.output_mode == 'native' and params.output_object is not None:
        output_config['format'] = {'type': 'json_schema', 'schema': params.output_object.json_schema}
    if 'anthropic_effort' in settings:
        output_config['effort'] = settings['anthropic_effort']
    if output_config:
        body['output_config'] = output_config
    if diagnostics is not None:
        body['diagnostics'] = diagnostics
    if isinstance(extra := settings.get('extra_body'), dict):
        body.update(extra)
    return body


def _previous_message_id(messages: Sequence[ModelMessage], ours: Callable[[ModelResponse], bool]) -> str | None:
    """The id of the latest response `ours` accepts, when Anthropic issued it (others, such as a gateway's, are
    refused by the API)."""
    latest = next((m for m in reversed(messages) if isinstance(m, ModelResponse) and ours(m)), None)
    response_id = latest.provider_response_id if latest is not None else None
    return response_id if response_id is not None and response_id.startswith('msg_') else None


def anthropic_usage(usage: dict[str, Any] | None) -> RequestUsage:
    """A `RequestUsage` from the API's `usage` object (cached input counts as input)."""
    if not usage:
        return RequestUsage()
    details = {k: v for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)}
    cache_write = details.get('cache_creation_input_tokens', 0)
    cache_read = details.get('cache_read_input_tokens', 0)
    return RequestUsage(
        input_tokens=details.get('input_tokens', 0) + cache_write + cache_read,
        cache_write_tokens=cache_write,
        cache_read_tokens=cache_read,
        output_tokens=details.get('output_tokens', 0),
        details=details,
    )


def _finish(stop_reason: str | None) -> tuple[FinishReason | None, dict[str, Any] | None]:
    if stop_reason is None:
        return None, None
    return _FINISH_REASONS.get(stop_reason), {'finish_reason': stop_reason}


def _block_part(block: dict[str, Any], provider_name: str, mcp_calls: dict[str, str]) -> ModelResponsePart | None:
    kind = block.get('type')
    if kind == 'text':
        text = block['text']
        if (citations := anthropic_citations(block.get('citations'), text)) is not None:
            details = {'citations': block['citations']}
            return TextPart(text, provider_name=provider_name, provider_details=details, citations=citations)
        return TextPart(text)
    if kind == 'thinking':
        return ThinkingPart(block.get('thinking', ''), signature=block.get('signature'), provider_name=provider_name)
    if kind == 'redacted_thinking':
        return ThinkingPart('', id='redacted_thinking', signature=block['data'], provider_name=provider_name)
    if kind == 'tool_use':
        return ToolCallPart(block['name'], block.get('input'), block['id'])
    if kind == 'compaction':
        return anthropic_compaction_part(block, provider_name)
    return server_block_part(block, provider_name, mcp_calls)


def _cache_diagnostics(diagnostics: Any) -> Any:
    """The `diagnostics` object as kept in `provider_details`: as sent, with `cache_miss_reason` filled in as `None`
    when left out (as pydantic-ai keeps it)."""
    if isinstance(diagnostics, dict):
        return {**diagnostics, 'cache_miss_reason': diagnostics.get('cache_miss_reason')}
    return diagnostics


def anthropic_model_response(body: dict[str, Any], *, provider_name: str = 'anthropic') -> ModelResponse:
    """The `ModelResponse` of a Messages API response body."""
    mcp_calls: dict[str, str] = {}
    blocks = body.get('content') or ()
    parts = [p for block in blocks if (p := _block_part(block, provider_name, mcp_calls)) is not None]
    finish_reason, details = _finish(body.get('stop_reason'))
    if container := body.get('container'):
        details = {**(details or {}), 'container_id': container['id']}
    if (diagnostics := body.get('diagnostics')) is not None:
        details = {**(details or {}), 'cache_diagnostics': _cache_diagnostics(diagnostics)}
    return ModelResponse(
        parts=parts,
        usage=anthropic_usage(body.get('usage')),
        model_name=body.get('model'),
        timestamp=datetime.now(tz=timezone.utc),
        provider_name=provider_name,
        provider_details=details,
        provider_response_id=body.get('id'),
        finish_reason=finish_reason,
    )


class AnthropicStreamedResponse(EventStreamedResponse):
    """A streamed Messages API response, fed its events (`message_start`, `content_block_delta`, ...)."""

    def __init__(
        self,
        model_request_parameters: ModelRequestParameters,
        events: AsyncIterable[dict[str, Any]],
        *,
        model_name: str,
        provider_name: str,
    ) -> None:
        """A response read from `events`, for the model `model_name` of the provider `provider_name`."""
        super().__init__(model_request_parameters, events, model_name=model_name, provider_name=provider_name)
        self._mcp_calls: dict[str, str] = {}
        self._open_mcp_calls: dict[int, bool] = {}  # streamed MCP calls by block index: whether input came
        # Streamed tool searches by block index: the call's id, the server tool's name and the input text so far.
        self._open_searches: dict[int, tuple[str, str, list[str]]] = {}
        self._block_citations: dict[int, list[Any]] = {}  # the citations of each text block so far, by index

    def _map_event(self, data: dict[str, Any]) -> Iterator[ModelResponseStreamEvent]:
        kind = data.get('type')
        manager = self._parts_manager
        if kind == 'message_start':
            message = data.get('message') or {}
            self.provider_response_id = message.get('id')
            self._model_name = message.get('model') or self._model_name
            self._usage = anthropic_usage(message.get('usage'))
            if container := message.get('container'):
                self._set_provider_detail('container_id', container['id'])
            # Only the opening message reports the diagnostics.
            if (diagnostics := message.get('diagnostics')) is not None:
                self._set_provider_detail('cache_diagnostics', _cache_diagnostics(diagnostics))
        elif kind == 'content_block_start':
            index, block = data['index'], data.get('content_block') or {}
            block_kind = block.get('type')
            event: Any = None
            if block_kind == 'text':
                event = manager.text_delta(index, block.get('text', ''))
            elif block_kind == 'thinking':
                # The signature comes in a later delta; the part starts with what the block holds.
                event = manager.thinking_delta(index, block.get('thinking') or '', block.get('signature') or None)
                if event is None:
                    event = manager.thinking_delta(index, None, '')
                self._set_part_fields(event, provider_name=self._provider_name)
            elif block_kind == 'redacted_thinking':
                event = manager.thinking_delta(index, None, block['data'])
                self._set_part_fields(event, id='redacted_thinking', provider_name=self._provider_name)
            elif block_kind == 'tool_use':
                args = block.get('input') or None
                event = manager.tool_call_delta(index, block['name'], args, block['id'])
            elif block_kind == 'compaction':
                event = manager.handle_part(
                    vendor_part_id=index, part=anthropic_compaction_part(block, self._provider_name)
                )
            elif (part := server_block_part(block, self._provider_name, self._mcp_calls)) is not None:
                if block_kind == 'mcp_tool_use' and isinstance(part, NativeToolCallPart):
                    # The input streams as JSON text: the arguments are built around it, closed at the block's end.
                    part.args = mcp_call_args_prefix(block)
                    self._open_mcp_calls[index] = False
                elif isinstance(part, NativeToolCallPart) and part.tool_name == ToolSearchTool.kind:
                    # The query follows in deltas: the part is made again from the whole input at the block's end.
                    self._open_searches[index] = (block['id'], str(block['name']), [])
                elif block_kind == 'server_tool_use' and isinstance(part, NativeToolCallPart) and part.args == {}:
                    part.args = None  # the input follows in deltas
                event = manager.whole_part(index, part)
            if event is not None:
                yield event
        elif kind == 'content_block_stop':
            index = data['index']
            raw = self._block_citations.pop(index, None)
            block = manager.get_part_by_vendor_id(index)
            if isinstance(block, TextPart) and (citations := anthropic_citations(raw, block.content)) is not None:
                yield from manager.handle_text_delta(
                    vendor_part_id=index, content='', provider_name=self._provider_name,
                    provider_details={'citations': raw}, citations=citations,
                )  # fmt: skip
            if (had_input := self._open_mcp_calls.pop(index, None)) is not None:
                yield from _some(manager.tool_call_delta(index, None, '}' if had_input else '{}}'))
            if (search := self._open_searches.pop(index, None)) is not None and search[2]:
                call_id, server_tool_name, text = search
                part = tool_search_call_part(call_id, server_tool_name, ''.join(text), self._provider_name)
                yield from _some(manager.handle_part(vendor_part_id=index, part=part))
        elif kind == 'content_block_delta':
            index, delta = data['index'], data.get('delta') or {}
            delta_kind = delta.get('type')
            event = None
            if delta_kind == 'text_delta':
                event = manager.text_delta(index, delta['text'])
            elif delta_kind == 'thinking_delta':
                event = manager.thinking_delta(index, delta['thinking'])
            elif delta_kind == 'citations_delta':  # they go on the text part once its block is done
                self._block_citations.setdefault(index, []).append(delta.get('citation'))
            elif delta_kind == 'signature_delta':
                event = manager.thinking_delta(index, None, delta['signature'])
            elif delta_kind == 'compaction_delta' and delta.get('content'):
                # The summary comes whole: it replaces the part its block started.
                event = manager.handle_part(
                    vendor_part_id=index, part=anthropic_compaction_part(delta, self._provider_name)
                )
            elif delta_kind == 'input_json_delta' and index in self._open_searches:
                self._open_searches[index][2].append(delta.get('partial_json') or '')
            elif delta_kind == 'input_json_delta':
                if delta.get('partial_json') and index in self._open_mcp_calls:
                    self._open_mcp_calls[index] = True
                event = manager.tool_call_delta(index, None, delta.get('partial_json') or None)
            if event is not None:
                yield event
        elif kind == 'message_delta':
            if container := (data.get('delta') or {}).get('container'):
                self._set_provider_detail('container_id', container['id'])
            finish_reason, details = _finish((data.get('delta') or {}).get('stop_reason'))
            if details is not None:
                self.finish_reason = finish_reason
                self._set_provider_detail('finish_reason', details['finish_reason'])
            if usage := data.get('usage'):
                # Counts are cumulative: the latest report holds the totals (input counts may be left out).
                merged = {**self._usage.details, **{k: v for k, v in usage.items() if v is not None}}
                self._usage = anthropic_usage(merged)
        elif kind == 'error':
            # The status the error's type has outside a stream (`overloaded_error`: 529), and its category.
            raise anthropic_stream_error(self._model_name, data)
        # `ping` and `message_stop` carry nothing to map.


def _some(event: ModelResponseStreamEvent | None) -> Iterator[ModelResponseStreamEvent]:
    if event is not None:
        yield event
