"""Bedrock's Converse API: messages to a request body, and a response body or its stream events to a `ModelResponse`.

Pure data mapping, no I/O. Bytes travel base64-encoded (the API's JSON form of a blob). Consecutive turns of one role
are merged (Converse wants them alternating), and a conversation that starts with the assistant gets a `.` user turn
first for the families that refuse that. Reasoning keeps its signature on `ThinkingPart.signature` and goes back as
`reasoningContent` only to the same provider and only for families whose profile asks for it; other reasoning goes
back as text between thinking tags. Usage counts cache reads and writes as input (`cache_read_tokens` and
`cache_write_tokens` say how much).
"""

from __future__ import annotations as _annotations

import base64
from collections.abc import AsyncIterable, Iterator, Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Literal, cast

import pydantic_core

from .._tools.definition import ToolDefinition
from ..exceptions import ModelAPIError, UserError
from ..messages import (
    BinaryContent,
    CachePoint,
    DocumentUrl,
    FinishReason,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    ModelResponseStreamEvent,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    VideoUrl,
)
from ..output import DEFAULT_OUTPUT_TOOL_NAME
from ..profiles import ModelProfile
from ..profiles.anthropic import ANTHROPIC_THINKING_BUDGET_MAP, resolve_anthropic_effort
from ..settings import ModelSettings
from ..usage import RequestUsage
from ._mapping import (
    EventStreamedResponse,
    StatelessArtifactCheck,
    by_provider_name,
    file_label,
    replayed_thinking,
    unsupported_file,
    user_turn_items,
)
from ._request_parameters import ModelRequestParameters, request_instructions
from ._thinking import openai_effort
from ._tool_choice import resolve_tool_choice

if TYPE_CHECKING:
    from ..profiles.openai import OpenAIModelProfile
    from ..settings import ThinkingEffort

__all__ = (
    'BedrockModelSettings',
    'BedrockStreamedResponse',
    'bedrock_model_response',
    'bedrock_request_body',
    'bedrock_usage',
)

CacheTTL = Literal['5m', '1h']


class BedrockModelSettings(ModelSettings, total=False):
    """Settings of a Converse request: the common ones, and Bedrock's own (all `bedrock_`-prefixed)."""

    bedrock_guardrail_config: Mapping[str, Any]
    """A guardrail to apply (`guardrailConfig`: `guardrailIdentifier`, `guardrailVersion`, `trace`)."""
    bedrock_performance_configuration: Mapping[str, Any]
    """Latency-optimized inference (`performanceConfig`: `{'latency': 'standard' | 'optimized'}`)."""
    bedrock_request_metadata: dict[str, str]
    """Key-value pairs recorded with the request in invocation logs (`requestMetadata`)."""
    bedrock_additional_model_response_fields_paths: list[str]
    """JSON pointers of model-specific response fields to return (`additionalModelResponseFieldPaths`)."""
    bedrock_prompt_variables: Mapping[str, Any]
    """Values of a prompt-management prompt's variables (`promptVariables`)."""
    bedrock_additional_model_requests_fields: Mapping[str, Any]
    """Model-specific request fields (`additionalModelRequestFields`); they win over the ones made from settings."""
    bedrock_cache_tool_definitions: bool | CacheTTL
    """A cache point after the tool definitions (`True` or `'5m'`: five minutes, `'1h'`: an hour)."""
    bedrock_cache_instructions: bool | CacheTTL
    """A cache point after the system prompt."""
    bedrock_cache_messages: bool | CacheTTL
    """A cache point at the end of the last user message."""
    bedrock_service_tier: Mapping[str, Any]
    """The service tier (`{'type': 'default' | 'flex' | 'priority' | 'reserved'}`); wins over `service_tier`."""
    bedrock_inference_profile: str
    """An inference profile (ARN or id) to call instead of the model's id; the model name still picks the profile."""


_FINISH_REASONS: dict[str, FinishReason] = {
    'end_turn': 'stop',
    'stop_sequence': 'stop',
    'tool_use': 'tool_call',
    'max_tokens': 'length',
    'model_context_window_exceeded': 'length',
    'content_filtered': 'content_filter',
    'guardrail_intervened': 'content_filter',
    'malformed_model_output': 'error',
    'malformed_tool_use': 'error',
}

_IMAGE_FORMATS = {'image/png': 'png', 'image/jpeg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp'}
_DOCUMENT_FORMATS = {
    'application/pdf': 'pdf',
    'text/plain': 'txt',
    'text/csv': 'csv',
    'text/html': 'html',
    'text/markdown': 'md',
    'application/msword': 'doc',
    'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
    'application/vnd.ms-excel': 'xls',
    'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
}
_VIDEO_FORMATS = {
    'video/mp4': 'mp4', 'video/quicktime': 'mov', 'video/x-matroska': 'mkv', 'video/webm': 'webm',
    'video/x-flv': 'flv', 'video/mpeg': 'mpeg', 'video/x-ms-wmv': 'wmv', 'video/3gpp': 'three_gp',
}  # fmt: skip

_EFFORT_MAPS: dict[str, dict[bool | str, str]] = {
    'openai': {False: 'low', True: 'medium', 'minimal': 'low', 'low': 'low', 'medium': 'medium', 'high': 'high',
               'xhigh': 'high', 'max': 'high'},
    'deepseek': {False: 'none', True: 'high', 'minimal': 'high', 'low': 'high', 'medium': 'high', 'high': 'high',
                 'xhigh': 'high', 'max': 'high'},
    'zai_effort': {False: 'low', True: 'medium', 'minimal': 'low', 'low': 'low', 'medium': 'medium', 'high': 'high',
                   'xhigh': 'xhigh', 'max': 'max'},
}  # fmt: skip
_EFFORT_MAPS['zai'] = _EFFORT_MAPS['deepseek']
_QWEN_CONFIG: dict[bool | str, str] = {
    False: 'none', True: 'high', 'minimal': 'low', 'low': 'low', 'medium': 'high', 'high': 'high', 'xhigh': 'high',
    'max': 'high',
}  # fmt: skip


def _cache_point(ttl: bool | str) -> dict[str, Any]:
    point: dict[str, Any] = {'type': 'default'}
    if isinstance(ttl, str):
        point['ttl'] = ttl
    return {'cachePoint': point}


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode('ascii')


def _source(item: Any, data: bytes | None) -> dict[str, Any]:
    if data is not None:
        return {'bytes': _b64(data)}
    return {'s3Location': {'uri': item.url}}


def file_block(item: Any, model_name: str, where: str, document_number: int) -> dict[str, Any]:
    """The block of a file: an image, a document or a video, as bytes or an `s3://` location.

    Raises:
        UserError: the API takes no file of this kind or format.
    """
    if isinstance(item, BinaryContent):
        data: bytes | None = item.data
        media_type = item.media_type
    elif isinstance(item, ImageUrl | DocumentUrl | VideoUrl) and item.url.startswith('s3://'):
        data, media_type = None, item.media_type
    else:
        raise unsupported_file(model_name, item, where)
    if (image_format := _IMAGE_FORMATS.get(media_type)) is not None:
        return {'image': {'format': image_format, 'source': _source(item, data)}}
    if (document_format := _DOCUMENT_FORMATS.get(media_type)) is not None:
        name = f'Document {document_number}'
        return {'document': {'format': document_format, 'name': name, 'source': _source(item, data)}}
    if (video_format := _VIDEO_FORMATS.get(media_type)) is not None:
        return {'video': {'format': video_format, 'source': _source(item, data)}}
    raise UserError(f'Model {model_name!r} cannot take {file_label(item)} in {where}: an unsupported media type.')


def takes_url(url: str) -> bool:
    """Whether Bedrock reads a file's URL itself (only `s3://` locations); others are downloaded first."""
    return url.startswith('s3://')


class _Mapper:
    """Maps one request's messages, counting documents (each needs a distinct name)."""

    def __init__(
        self, model_name: str, profile: ModelProfile, provider_name: str, accepts: StatelessArtifactCheck
    ) -> None:
        self.model_name = model_name
        self.profile = cast(Mapping[str, Any], profile)
        self.provider_name = provider_name
        self.accepts = accepts
        self.documents = 0

    def file(self, item: Any, where: str) -> dict[str, Any]:
        block = file_block(item, self.model_name, where, self.documents + 1)
        if 'document' in block:
            self.documents += 1
        return block

    def tool_result(self, tool_call_id: str, content: list[dict[str, Any]], failed: bool) -> dict[str, Any]:
        result: dict[str, Any] = {'toolUseId': tool_call_id, 'content': content}
        if self.profile.get('bedrock_supports_tool_result_status', True):
            result['status'] = 'error' if failed else 'success'
        return {'toolResult': result}

    def tool_return(self, part: ToolReturnPart) -> dict[str, Any]:
        if self.profile.get('bedrock_tool_result_format', 'text') == 'json':
            value = part.model_response_object()
            content: list[dict[str, Any]] = [{'json': value}]
        else:
            content = [{'text': part.model_response_str(wrap_if_error=False)}]
        allowed = self.profile.get('bedrock_supported_media_kinds_in_tool_returns', frozenset({'image'}))
        for item in part.files:
            block = self.file(item, 'tool returns')
            if next(iter(block)) not in allowed:
                raise unsupported_file(self.model_name, item, 'tool returns')
            content.append(block)
        return self.tool_result(part.tool_call_id, content, part.outcome == 'failed')

    def user_blocks(self, part: Any) -> list[dict[str, Any]]:
        return user_turn_items(
            part,
            text=lambda text: {'text': text},
            file=lambda item: self.file(item, 'user prompts'),
            tool_return=self.tool_return,
            tool_error=lambda p: self.tool_result(p.tool_call_id, [{'text': p.model_response()}], True),
            cache_point=self.cache_point,
            skip_empty=True,
        )

    def cache_point(self, blocks: list[dict[str, Any]], point: CachePoint) -> None:
        if blocks and self.profile.get('bedrock_supports_prompt_caching', False):
            blocks.append(_cache_point(point.ttl))

    def assistant_blocks(self, message: ModelResponse, carried: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The blocks of `message`'s assistant turn; reasoning carried into the user turn before it goes to `carried`.

        (`mimics_assistant_message_formatting`)
        """
        blocks: list[dict[str, Any]] = []
        for part in message.parts:
            if isinstance(part, TextPart):
                if part.content:
                    blocks.append({'text': part.content})
            elif isinstance(part, ToolCallPart):
                call = {'toolUseId': part.tool_call_id, 'name': part.tool_name, 'input': part.args_as_dict()}
                blocks.append({'toolUse': call})
            elif isinstance(part, ThinkingPart):
                if (
                    part.signature
                    and self.profile.get('bedrock_send_back_thinking_parts', False)
                    and self.accepts(message, part)
                ):
                    if part.id in ('redacted_content', 'redacted_thinking'):
                        blocks.append({'reasoningContent': {'redactedContent': _b64(part.signature.encode())}})
                    else:
                        text = {'text': part.content, 'signature': part.signature}
                        blocks.append({'reasoningContent': {'reasoningText': text}})
                elif part.content:
                    rendered, in_user_turn = replayed_thinking(part, cast(ModelProfile, self.profile))
                    (carried if in_user_turn else blocks).append({'text': rendered})
            # Files, native tool calls and compaction parts of other providers mean nothing to Converse.
        return blocks


def _append(messages: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]]) -> None:
    if not blocks:
        return
    if messages and messages[-1]['role'] == role:
        messages[-1]['content'].extend(blocks)
    else:
        messages.append({'role': role, 'content': blocks})


def _append_carried(messages: list[dict[str, Any]], carried: list[dict[str, Any]]) -> None:
    """Add reasoning carried out of an assistant turn to the user turn before it.

    A cache point the user put at the end of that turn stays last, so the cache points stay as they were placed.
    """
    if carried and messages and messages[-1]['role'] == 'user' and 'cachePoint' in messages[-1]['content'][-1]:
        messages[-1]['content'][-1:-1] = carried
    else:
        _append(messages, 'user', carried)


def map_messages(
    messages: Sequence[ModelMessage],
    profile: ModelProfile,
    provider_name: str,
    model_name: str,
    *,
    instructions: str | None,
    accepts: StatelessArtifactCheck | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The `system` blocks (instructions first, then system prompts) and the alternating `messages` of a request;
    signed reasoning goes back where `accepts` (`Model.accepts_stateless_artifacts`) says it is verified, by default
    that of `provider_name`."""
    mapper = _Mapper(model_name, profile, provider_name, accepts or by_provider_name(provider_name))
    system: list[dict[str, Any]] = [{'text': instructions}] if instructions else []
    mapped: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            blocks: list[dict[str, Any]] = []
            for part in message.parts:
                if isinstance(part, SystemPromptPart):
                    if part.content:
                        system.append({'text': part.content})
                else:
                    blocks.extend(mapper.user_blocks(part))
            _append(mapped, 'user', blocks)
        else:
            carried: list[dict[str, Any]] = []
            blocks = mapper.assistant_blocks(message, carried)
            _append_carried(mapped, carried)
            _append(mapped, 'assistant', blocks)
    if not mapped or (
        mapped[0]['role'] != 'user' and not profile.get('bedrock_supports_leading_assistant_message', False)
    ):
        mapped.insert(0, {'role': 'user', 'content': [{'text': '.'}]})  # blank text is refused
    return system, mapped


def _tool_spec(definition: ToolDefinition, profile: Mapping[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {'name': definition.name, 'inputSchema': {'json': definition.parameters_json_schema}}
    if definition.description:
        spec['description'] = definition.description
    if definition.strict and profile.get('bedrock_supports_strict_tool_definition', False):
        spec['strict'] = True
    return {'toolSpec': spec}


def _has_tool_blocks(messages: Sequence[Mapping[str, Any]]) -> bool:
    return any('toolUse' in block or 'toolResult' in block for m in messages for block in m['content'])


def _tool_config(
    settings: Mapping[str, Any], params: ModelRequestParameters, profile: Mapping[str, Any], messages: list[Any]
) -> tuple[dict[str, Any] | None, bool]:
    """The `toolConfig` (if any tools go out), and whether `tool_choice='none'` must be said in model fields."""
    choice = resolve_tool_choice(settings, params)
    definitions = params.declared_tool_defs
    say_none = False
    tool_choice: dict[str, Any] | None
    if choice == 'none':
        # Converse has no `none` tool choice: the tools stay out, unless the history holds tool blocks (which
        # Converse refuses without a `toolConfig`).
        if not _has_tool_blocks(messages):
            return None, False
        tool_choice = None
        say_none = profile.get('bedrock_tool_choice_none_variant') == 'anthropic'
    elif choice == 'auto':
        tool_choice = {'auto': {}}
    elif choice == 'required':
        tool_choice = {'any': {}}
    else:
        mode, names = choice
        definitions = {name: d for name, d in definitions.items() if name in names}
        if mode == 'required' and len(names) == 1:
            tool_choice = {'tool': {'name': next(iter(names))}}
        else:
            tool_choice = {'auto': {}} if mode == 'auto' else {'any': {}}
    tools = [_tool_spec(d, profile) for d in definitions.values()]
    if not tools:
        return None, False
    if (cache := settings.get('bedrock_cache_tool_definitions')) and profile.get('bedrock_supports_tool_caching'):
        tools.append(_cache_point(cache))
    config: dict[str, Any] = {'tools': tools}
    if tool_choice is not None and profile.get('bedrock_supports_tool_choice', False):
        config['toolChoice'] = tool_choice
    return config, say_none


def _thinking_fields(fields: dict[str, Any], thinking: bool | str, profile: Mapping[str, Any]) -> None:
    variant = profile.get('bedrock_thinking_variant')
    if variant == 'anthropic' and 'thinking' not in fields:
        if not profile.get('bedrock_supports_adaptive_thinking', False):
            if thinking is False:
                fields['thinking'] = {'type': 'disabled'}
            else:
                fields['thinking'] = {'type': 'enabled', 'budget_tokens': ANTHROPIC_THINKING_BUDGET_MAP[thinking]}
        elif thinking is not False:
            fields['thinking'] = {'type': 'adaptive'}
            if profile.get('bedrock_supports_effort', False) and isinstance(thinking, str):
                supports_xhigh = bool(profile.get('anthropic_supports_xhigh_effort', False))
                supports_max = bool(profile.get('anthropic_supports_max_effort', True))
                fields.setdefault(
                    'output_config',
                    {
                        'effort': resolve_anthropic_effort(
                            thinking, supports_xhigh=supports_xhigh, supports_max=supports_max
                        )
                    },
                )
    elif variant in _EFFORT_MAPS and 'reasoning_effort' not in fields:
        fields['reasoning_effort'] = _EFFORT_MAPS[variant][thinking]
    elif variant == 'openai_responses' and 'reasoning' not in fields:
        # GPT-5.6 and later: the effort OpenAI's Responses API is sent for the level (`max` not known to be taken).
        effort = openai_effort(
            cast('bool | ThinkingEffort', thinking), cast('OpenAIModelProfile', profile), 'responses'
        )
        if effort is not None:
            fields['reasoning'] = {'effort': effort}
    elif variant == 'qwen' and 'reasoning_config' not in fields:
        fields['reasoning_config'] = _QWEN_CONFIG[thinking]


def _model_fields(
    settings: Mapping[str, Any], params: ModelRequestParameters, profile: Mapping[str, Any], *, say_none: bool
) -> dict[str, Any]:
    fields = dict(settings.get('bedrock_additional_model_requests_fields') or {})
    if params.thinking is not None:
        _thinking_fields(fields, params.thinking, profile)
    top_k = settings.get('top_k')
    if top_k is not None and not profile.get('bedrock_disallows_sampling_settings', False):
        if profile.get('bedrock_top_k_variant') == 'anthropic':
            fields.setdefault('top_k', top_k)
        elif profile.get('bedrock_top_k_variant') == 'nova':
            nested = dict(fields.get('inferenceConfig') or {})
            nested.setdefault('topK', top_k)
            fields['inferenceConfig'] = nested
    if say_none:
        fields.setdefault('tool_choice', {'type': 'none'})
    return fields


def _inference_config(settings: Mapping[str, Any], profile: Mapping[str, Any]) -> dict[str, Any]:
    config: dict[str, Any] = {}
    if max_tokens := settings.get('max_tokens'):
        config['maxTokens'] = max_tokens
    if not profile.get('bedrock_disallows_sampling_settings', False):
        if (temperature := settings.get('temperature')) is not None:
            config['temperature'] = temperature
        if (top_p := settings.get('top_p')) is not None:
            config['topP'] = top_p
    if stop := settings.get('stop_sequences'):
        config['stopSequences'] = list(stop)
    return config


_PLAIN_SETTINGS = (
    ('bedrock_guardrail_config', 'guardrailConfig'),
    ('bedrock_performance_configuration', 'performanceConfig'),
    ('bedrock_request_metadata', 'requestMetadata'),
    ('bedrock_additional_model_response_fields_paths', 'additionalModelResponseFieldPaths'),
    ('bedrock_prompt_variables', 'promptVariables'),
)


def bedrock_request_body(
    model_name: str,
    messages: list[ModelMessage],
    settings: Mapping[str, Any],
    params: ModelRequestParameters,
    profile: ModelProfile,
    *,
    provider_name: str,
    accepts: StatelessArtifactCheck | None = None,
) -> dict[str, Any]:
    """The JSON body of a Converse (or ConverseStream) request; the model id goes in the URL. `accepts` says whose
    signed reasoning is sent back (see `map_messages`)."""
    view = cast(Mapping[str, Any], profile)
    instructions = request_instructions(messages, params)
    system, mapped = map_messages(
        messages, profile, provider_name, model_name, instructions=instructions, accepts=accepts
    )
    supports_caching = view.get('bedrock_supports_prompt_caching', False)
    if system and supports_caching and (cache := settings.get('bedrock_cache_instructions')):
        system.append(_cache_point(cache))
    last = mapped[-1]
    cache = settings.get('bedrock_cache_messages') if supports_caching else None
    if cache and last['role'] == 'user' and 'cachePoint' not in last['content'][-1]:
        last['content'].append(_cache_point(cache))  # unless the prompt already ends with one
    body: dict[str, Any] = {'messages': mapped}
    if system:
        body['system'] = system
    if inference := _inference_config(settings, view):
        body['inferenceConfig'] = inference
    tool_config, say_none = _tool_config(settings, params, view, mapped)
    if tool_config is not None:
        body['toolConfig'] = tool_config
    output_object = params.output_object
    if params.output_mode == 'native' and output_object is not None:
        schema: dict[str, Any] = {
            'name': output_object.name or DEFAULT_OUTPUT_TOOL_NAME,
            'schema': pydantic_core.to_json(output_object.json_schema).decode(),
        }
        if output_object.description:
            schema['description'] = output_object.description
        body['outputConfig'] = {'textFormat': {'type': 'json_schema', 'structure': {'jsonSchema': schema}}}
    for key, field in _PLAIN_SETTINGS:
        if value := settings.get(key):
            body[field] = value
    if tier := settings.get('bedrock_service_tier'):
        body['serviceTier'] = tier
    elif (tier := settings.get('service_tier')) and tier != 'auto':
        body['serviceTier'] = {'type': tier}
    if fields := _model_fields(settings, params, view, say_none=say_none):
        body['additionalModelRequestFields'] = fields
    return body


def bedrock_usage(usage: Mapping[str, Any] | None) -> RequestUsage:
    """A `RequestUsage` of a Converse `usage` object (cache reads and writes count as input)."""
    if not usage:
        return RequestUsage()
    details = {k: v for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)}
    cache_read = details.get('cacheReadInputTokens', 0)
    cache_write = details.get('cacheWriteInputTokens', 0)
    return RequestUsage(
        input_tokens=details.get('inputTokens', 0) + cache_read + cache_write,
        output_tokens=details.get('outputTokens', 0),
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
        details={k: v for k, v in details.items() if k not in ('inputTokens', 'outputTokens', 'totalTokens')},
    )


def _reasoning_part(reasoning: Mapping[str, Any], provider_name: str) -> ThinkingPart | None:
    if (redacted := reasoning.get('redactedContent')) is not None:
        signature = base64.b64decode(redacted).decode('utf-8', errors='replace')
        return ThinkingPart('', id='redacted_content', signature=signature, provider_name=provider_name)
    if (text := reasoning.get('reasoningText')) is not None:
        signature = text.get('signature')
        return ThinkingPart(
            text.get('text', ''), signature=signature, provider_name=provider_name if signature else None
        )
    return None


def _block_parts(block: Mapping[str, Any], provider_name: str) -> Iterator[ModelResponsePart]:
    reasoning = block.get('reasoningContent')
    if reasoning is not None and (thinking := _reasoning_part(reasoning, provider_name)) is not None:
        yield thinking
    if text := block.get('text'):
        yield TextPart(text)
    elif (tool_use := block.get('toolUse')) is not None:
        yield ToolCallPart(tool_use['name'], tool_use.get('input'), tool_use['toolUseId'])
    elif (cited := block.get('citationsContent')) is not None and (
        text := ''.join(piece.get('text', '') for piece in cited.get('content') or ())
    ):
        yield TextPart(text, provider_name=provider_name, provider_details={'citations': cited.get('citations')})


def _finish(stop_reason: object) -> tuple[FinishReason | None, dict[str, Any]]:
    return (_FINISH_REASONS.get(stop_reason) if isinstance(stop_reason, str) else None), {'finish_reason': stop_reason}


def bedrock_model_response(body: Mapping[str, Any], *, model_name: str, provider_name: str) -> ModelResponse:
    """The `ModelResponse` of a Converse response body.

    Raises:
        ModelAPIError: the body is not a Converse response (it has no `output`).
    """
    if not isinstance(body, Mapping) or not isinstance(body.get('output'), Mapping):
        raise ModelAPIError(model_name, "Response has no 'output' field")
    message = body['output'].get('message') or {}
    parts = [part for block in message.get('content') or () for part in _block_parts(block, provider_name)]
    finish_reason, details = _finish(body.get('stopReason'))
    if 'trace' in body:
        details['trace'] = body['trace']
    if 'additionalModelResponseFields' in body:
        details['additional_model_response_fields'] = body['additionalModelResponseFields']
    return ModelResponse(
        parts=parts,
        usage=bedrock_usage(body.get('usage')),
        model_name=model_name,
        timestamp=datetime.now(tz=timezone.utc),
        provider_name=provider_name,
        provider_details=details,
        finish_reason=finish_reason,
    )


class BedrockStreamedResponse(EventStreamedResponse):
    """A streamed Converse response, fed its events as `{event type: payload}` (`contentBlockDelta`, ...)."""

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
        self._tool_ids: dict[int, str] = {}

    def _map_event(self, data: dict[str, Any]) -> Iterator[ModelResponseStreamEvent]:
        manager = self._parts_manager
        if (start := data.get('contentBlockStart')) is not None:
            index = start.get('contentBlockIndex', 0)
            if (tool_use := (start.get('start') or {}).get('toolUse')) is not None:
                self._tool_ids[index] = tool_use['toolUseId']
                # A tool call's start always makes a part (its arguments follow in deltas).
                yield cast(
                    ModelResponseStreamEvent,
                    manager.tool_call_delta(index, tool_use['name'], None, tool_use['toolUseId']),
                )
        elif (delta_event := data.get('contentBlockDelta')) is not None:
            index = delta_event.get('contentBlockIndex', 0)
            delta = delta_event.get('delta') or {}
            event: Any = None
            if (reasoning := delta.get('reasoningContent')) is not None:
                if (redacted := reasoning.get('redactedContent')) is not None:
                    signature = base64.b64decode(redacted).decode('utf-8', errors='replace')
                    event = manager.thinking_delta(index, None, signature)
                    self._set_part_fields(event, id='redacted_content', provider_name=self._provider_name)
                else:
                    event = manager.thinking_delta(index, reasoning.get('text'), reasoning.get('signature'))
                    if reasoning.get('signature'):
                        self._set_part_fields(event, provider_name=self._provider_name)
            elif text := delta.get('text'):
                event = manager.text_delta(index, text)
            elif (tool_use := delta.get('toolUse')) is not None:
                event = manager.tool_call_delta(index, None, tool_use.get('input') or None, self._tool_ids.get(index))
            if event is not None:
                yield event
        elif (stop := data.get('messageStop')) is not None:
            self.finish_reason, details = _finish(stop.get('stopReason'))
            self._set_provider_detail('finish_reason', details['finish_reason'])
        elif (metadata := data.get('metadata')) is not None:
            if (usage := metadata.get('usage')) is not None:
                self._usage = bedrock_usage(usage)
            if (trace := metadata.get('trace')) is not None:
                self._set_provider_detail('trace', trace)
        # `messageStart` and `contentBlockStop` carry nothing to map.
