"""Gemini API (`generateContent`, `streamGenerateContent`): messages to a request body, and back.

Pure data mapping, no I/O; the body uses the REST API's camelCase names. Gemini marks reasoning as
`thought` text parts, and signs its reasoning with a `thoughtSignature` on the part that follows it; the
signature is kept in that part's `provider_details['thought_signature']` (with `provider_name`) and sent
back only to the API that verifies it (`Model.accepts_stateless_artifacts`). Gemini often gives function calls
no id: one is generated, as in pydantic-ai.
"""

from __future__ import annotations as _annotations

import base64
from collections.abc import AsyncIterable, Iterator, Sequence
from datetime import datetime, timezone
from typing import Any, cast

from ..exceptions import UserError
from ..messages import (
    BinaryContent,
    Citation,
    FilePart,
    FileUrl,
    FinishReason,
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
    ToolCallPart,
    ToolReturnPart,
    UploadedFile,
    VideoUrl,
    generate_tool_call_id,
)
from ..profiles import ModelProfile
from ..profiles.google import GoogleModelProfile
from ..settings import ModelSettings
from ..usage import RequestUsage
from ._citations import google_citations
from ._error_categories import google_http_error
from ._google_native_tools import code_execution_part, google_native_tools, metadata_parts, native_part_dict
from ._mapping import (
    EventStreamedResponse,
    StatelessArtifactCheck,
    by_provider_name,
    settings_fields,
    uploaded_file_id,
    user_turn_items,
)
from ._request_parameters import ModelRequestParameters, request_instructions
from ._thinking import google_service_tier, google_settings
from ._tool_choice import resolve_tool_choice

__all__ = (
    'GoogleModelSettings',
    'google_request_body',
    'google_model_response',
    'google_usage',
    'GoogleStreamedResponse',
)

_FINISH_REASONS: dict[str, FinishReason | None] = {
    'FINISH_REASON_UNSPECIFIED': None,
    'STOP': 'stop',
    'MAX_TOKENS': 'length',
    'SAFETY': 'content_filter',
    'RECITATION': 'content_filter',
    'LANGUAGE': 'error',
    'OTHER': None,
    'BLOCKLIST': 'content_filter',
    'PROHIBITED_CONTENT': 'content_filter',
    'SPII': 'content_filter',
    'MALFORMED_FUNCTION_CALL': 'error',
    'IMAGE_SAFETY': 'content_filter',
    'UNEXPECTED_TOOL_CALL': 'error',
    'IMAGE_PROHIBITED_CONTENT': 'content_filter',
    'NO_IMAGE': 'error',
}

_FILES_API = 'https://generativelanguage.googleapis.com/v1beta/files'

# Gemini wants a signature on the first function call of a turn; this documented value skips the check.
_SKIP_SIGNATURE = base64.b64encode(b'skip_thought_signature_validator').decode()


class GoogleModelSettings(ModelSettings, total=False):
    """Settings of requests to Gemini models: the common ones plus Google's own (prefixed `google_`)."""

    google_safety_settings: list[dict[str, Any]]
    """`safetySettings`: a list of `{'category': ..., 'threshold': ...}`."""
    google_thinking_config: dict[str, Any]
    """`generationConfig.thinkingConfig`, e.g. `{'thinking_budget': 0}` or `{'include_thoughts': True}`."""
    google_labels: dict[str, str]
    """`labels` attached to the request (billing)."""
    google_cached_content: str
    """The name of a cached content to use (`cachedContent`)."""


def _camel(name: str) -> str:
    head, *rest = name.split('_')
    return head + ''.join(word.title() for word in rest)


def _user_parts(part: Any) -> list[dict[str, Any]]:
    items = user_turn_items(
        part,
        text=lambda text: {'text': text},
        file=_file_part,
        tool_return=lambda p: _function_response(p.tool_name, p.model_response_object(), p.tool_call_id),
        tool_error=lambda p: _function_response(p.tool_name, {'call_error': p.model_response()}, p.tool_call_id),
    )
    if isinstance(part, ToolReturnPart) and part.files:
        # The files a tool returned follow its response in the same turn, each introduced by its identifier.
        _, extra = part.model_response_str_and_user_content()
        items += [{'text': item} if isinstance(item, str) else _file_part(item) for item in extra]
    return items


def _file_part(item: Any) -> dict[str, Any]:
    # After the downloads, URLs left are those Gemini fetches itself (YouTube, its Files API).
    if isinstance(item, BinaryContent):
        part: dict[str, Any] = {'inlineData': {'mimeType': item.media_type, 'data': item.base64}}
    elif isinstance(item, UploadedFile):
        uri = uploaded_file_id(item, 'GoogleModel', ('google', 'google-gla'))
        if not uri.startswith('https://'):
            raise UserError(
                'UploadedFile for GoogleModel (Gemini API) must use a file URI from the Google Files API '
                f'(https://generativelanguage.googleapis.com/...), got: {uri}'
            )
        part = {'fileData': {'mimeType': item.media_type, 'fileUri': uri}}
    else:
        part = {'fileData': {'mimeType': item.media_type, 'fileUri': item.url}}
    if isinstance(item, BinaryContent | VideoUrl | UploadedFile) and item.vendor_metadata:
        part['videoMetadata'] = item.vendor_metadata
    return part


def takes_url(file: FileUrl) -> bool:
    """Whether the Gemini API fetches this URL itself (YouTube videos, files of its Files API)."""
    return (isinstance(file, VideoUrl) and file.is_youtube) or file.url.startswith(_FILES_API)


def _function_response(name: str | None, response: Any, call_id: str) -> dict[str, Any]:
    return {'functionResponse': {'name': name, 'response': response, 'id': call_id}}


def _model_parts(message: ModelResponse, accepts: StatelessArtifactCheck) -> list[dict[str, Any]]:
    # Signatures and native tool parts go back only to the API that verifies them: the Gemini API and Google Cloud
    # refuse each other's, though both are named `google` in some histories. A part without a provider of its own
    # goes with its response.
    response_accepted = accepts(message, None)
    parts: list[dict[str, Any]] = []
    pending: str | None = None  # a ThinkingPart's signature, which belongs to the part after it
    first_call = True
    for item in message.parts:
        signature = pending
        pending = None
        details = item.provider_details or {}
        if details.get('thought_signature') and (response_accepted or accepts(message, item)):
            signature = details['thought_signature']
        part: dict[str, Any] | None = None
        if isinstance(item, ToolCallPart):
            part = {'functionCall': {'name': item.tool_name, 'args': item.args_as_dict(), 'id': item.tool_call_id}}
            if signature is None and first_call:  # also in place of a signature the API would refuse
                signature = _SKIP_SIGNATURE
            first_call = False
        elif isinstance(item, TextPart):
            part = {'text': item.content}
        elif isinstance(item, FilePart):
            part = {'inlineData': {'mimeType': item.content.media_type, 'data': item.content.base64}}
        elif isinstance(item, NativeToolCallPart | NativeToolReturnPart):
            if accepts(message, item):  # another API's tool steps mean nothing to this one
                part = native_part_dict(item)
        elif isinstance(item, ThinkingPart):
            if item.signature and accepts(message, item):
                pending = item.signature
            if item.content:
                part = {'text': item.content, 'thought': True}
        # Another provider's compaction means nothing to Gemini; spoken turns are converted before.
        if part is not None:
            if signature is not None:
                part['thoughtSignature'] = signature
            parts.append(part)
    return parts


def map_messages(
    messages: Sequence[ModelMessage],
    provider_name: str = 'google-gla',
    *,
    instructions: str | None,
    accepts: StatelessArtifactCheck | None = None,
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The `systemInstruction` (`instructions` first, then system prompts) and the `contents` of a request.

    Thought signatures and native tool parts go back where `accepts` (`Model.accepts_stateless_artifacts`) says
    this API verifies them, by default for the parts of `provider_name`."""
    accepts = accepts or by_provider_name(provider_name)
    system: list[dict[str, Any]] = []
    if instructions:
        system.append({'text': instructions})
    contents: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            parts: list[dict[str, Any]] = []
            for part in message.parts:
                if isinstance(part, SystemPromptPart):
                    system.append({'text': part.content})
                else:
                    parts.extend(_user_parts(part))
            if parts:
                contents.append({'role': 'user', 'parts': parts})
        elif parts := _model_parts(message, accepts):
            contents.append({'role': 'model', 'parts': parts})
    return ({'role': 'user', 'parts': system} if system else None), contents


_MODES = {'auto': 'AUTO', 'none': 'NONE', 'required': 'ANY'}


def _tool_choice(settings: GoogleModelSettings, params: ModelRequestParameters) -> tuple[list[Any], dict[str, Any]]:
    """The tools to declare and the `functionCallingConfig`. `ANY` can be limited to some functions; `AUTO`
    cannot, so an `auto` choice among some tools declares only those."""
    tools = [*params.declared_function_tools, *params.output_tools]
    resolved = resolve_tool_choice(settings, params)
    if isinstance(resolved, str):
        return tools, {'mode': _MODES[resolved]}
    mode, names = resolved
    if mode == 'auto':
        return [t for t in tools if t.name in names], {'mode': 'AUTO'}
    return tools, {'mode': 'ANY', 'allowedFunctionNames': sorted(names)}


def google_request_body(
    messages: Sequence[ModelMessage],
    model_settings: GoogleModelSettings | None,
    params: ModelRequestParameters,
    profile: ModelProfile,
    *,
    provider_name: str = 'google-gla',
    accepts: StatelessArtifactCheck | None = None,
) -> dict[str, Any]:
    """The JSON body of a `models/{model}:generateContent` (or `:streamGenerateContent`) request.

    Args:
        messages: The conversation, ending with the request to answer.
        model_settings: The merged settings of the request.
        params: Tools and output kind, already customized for the profile.
        profile: The model's profile.
        provider_name: The `provider_name` of parts this API made.
        accepts: Whose thought signatures and native tool parts are sent back (`Model.accepts_stateless_artifacts`);
            by default the parts of `provider_name`.
    """
    settings: GoogleModelSettings = google_settings(model_settings or {}, params, profile)
    instructions = request_instructions(messages, params)
    system, contents = map_messages(messages, provider_name, instructions=instructions, accepts=accepts)
    body: dict[str, Any] = {'contents': contents}
    if system is not None:
        body['systemInstruction'] = system
    tools, calling = _tool_choice(settings, params)
    declarations: list[dict[str, Any]] = []
    for tool in tools:
        declaration: dict[str, Any] = {'name': tool.name, 'parametersJsonSchema': tool.parameters_json_schema}
        if tool.description:
            declaration['description'] = tool.description
        declarations.append(declaration)
    if declarations:
        if not profile.get('supports_tools', True):
            raise UserError('Tools are not supported by this model.')
        body['tools'] = [{'functionDeclarations': declarations}]
        body['toolConfig'] = {'functionCallingConfig': calling}
    if native := google_native_tools(params):
        body['tools'] = [*body.get('tools', ()), *native]
    config = settings_fields(
        settings,
        (
            ('max_tokens', 'maxOutputTokens'),
            ('temperature', 'temperature'),
            ('top_p', 'topP'),
            ('seed', 'seed'),
            ('top_k', 'topK'),
            ('stop_sequences', 'stopSequences'),
            ('presence_penalty', 'presencePenalty'),
            ('frequency_penalty', 'frequencyPenalty'),
        ),
    )
    if (thinking := settings.get('google_thinking_config')) is not None:
        config['thinkingConfig'] = {_camel(k): v for k, v in thinking.items()}
    if params.output_mode == 'native' and params.output_object is not None:
        if params.declared_function_tools and not cast(GoogleModelProfile, profile).get(
            'google_supports_tool_combination', False
        ):
            raise UserError(
                'This model does not support `NativeOutput` and function tools at the same time. '
                'Use `output_type=ToolOutput(...)` instead.'
            )
        config['responseMimeType'] = 'application/json'
        config['responseJsonSchema'] = params.output_object.json_schema
    elif params.output_mode == 'prompted' and not declarations:
        if not profile.get('supports_json_object_output', False):
            raise UserError('JSON output is not supported by this model.')
        config['responseMimeType'] = 'application/json'
    if profile.get(
        'supports_image_output', False
    ):  # an image model: it draws when asked, and only draws when text is no output
        config['responseModalities'] = ['TEXT', 'IMAGE'] if params.allow_text_output else ['IMAGE']
    if config:
        body['generationConfig'] = config
    body.update(
        settings_fields(
            settings,
            (
                ('google_safety_settings', 'safetySettings'),
                ('google_labels', 'labels'),
                ('google_cached_content', 'cachedContent'),
            ),
        )
    )
    if (tier := google_service_tier(settings)) is not None:
        body['serviceTier'] = tier
    if isinstance(extra := settings.get('extra_body'), dict):
        body.update(extra)
    return body


def google_usage(metadata: dict[str, Any] | None) -> RequestUsage:
    """A `RequestUsage` from `usageMetadata` (reasoning tokens count as output, as Google bills them)."""
    if not metadata:
        return RequestUsage()
    details: dict[str, int] = {}
    for key, name in (
        ('cachedContentTokenCount', 'cached_content_tokens'),
        ('thoughtsTokenCount', 'thoughts_tokens'),
        ('toolUsePromptTokenCount', 'tool_use_prompt_tokens'),
    ):
        if value := metadata.get(key):
            details[name] = value
    for prefix, key in (
        ('prompt', 'promptTokensDetails'),
        ('cache', 'cacheTokensDetails'),
        ('candidates', 'candidatesTokensDetails'),
        ('tool_use_prompt', 'toolUsePromptTokensDetails'),
    ):
        for detail in metadata.get(key) or ():
            if detail.get('modality') and detail.get('tokenCount'):
                details[f'{detail["modality"].lower()}_{prefix}_tokens'] = detail['tokenCount']
    return RequestUsage(
        input_tokens=metadata.get('promptTokenCount', 0),
        cache_read_tokens=metadata.get('cachedContentTokenCount', 0),
        output_tokens=metadata.get('candidatesTokenCount', 0) + metadata.get('thoughtsTokenCount', 0),
        details=details,
    )


def _response_part(
    part: dict[str, Any], provider_name: str, code_call_id: list[str] | None = None
) -> ModelResponsePart | None:
    signature = part.get('thoughtSignature')
    item: ModelResponsePart
    if (native := code_execution_part(part, provider_name, [] if code_call_id is None else code_call_id)) is not None:
        item = native
    elif 'text' in part:
        if not part['text'] and not signature:
            return None  # Gemini sometimes sends empty text parts
        item = ThinkingPart(part['text']) if part.get('thought') else TextPart(part['text'])
    elif call := part.get('functionCall'):
        item = ToolCallPart(call['name'], call.get('args'), call.get('id') or generate_tool_call_id())
    elif blob := part.get('inlineData'):
        # An image (or other file) the model made.
        content = BinaryContent(base64.b64decode(blob.get('data', '')), media_type=blob.get('mimeType', ''))
        item = FilePart(BinaryContent.narrow_type(content), provider_name=provider_name)
    else:
        return None
    if signature:
        item.provider_details = {'thought_signature': signature}
        item.provider_name = provider_name
    return item


def _cite(part: TextPart, citations: list[Citation], raw: list[dict[str, Any]], provider_name: str) -> None:
    part.citations = citations
    part.provider_name = provider_name
    part.provider_details = {**(part.provider_details or {}), 'citations': raw}


def _finish(candidate: dict[str, Any] | None, body: dict[str, Any]) -> tuple[FinishReason | None, dict[str, Any]]:
    details: dict[str, Any] = {}
    if candidate is not None:
        if raw := candidate.get('finishReason'):
            details['finish_reason'] = raw
            return _FINISH_REASONS.get(raw), details
        return None, details
    feedback = body.get('promptFeedback') or {}
    if reason := feedback.get('blockReason'):
        details['block_reason'] = reason
        if message := feedback.get('blockReasonMessage'):
            details['block_reason_message'] = message
        return 'content_filter', details
    return None, details


def google_model_response(body: dict[str, Any], *, model_name: str, provider_name: str = 'google-gla') -> ModelResponse:
    """The `ModelResponse` of a `generateContent` body; `model_name` (the model asked) if the body names none."""
    candidates = body.get('candidates') or []
    candidate = candidates[0] if candidates else None
    raw_parts = ((candidate or {}).get('content') or {}).get('parts') or []
    code_call_id: list[str] = []
    parts: list[ModelResponsePart] = [*metadata_parts(candidate or {}, provider_name)]
    texts: dict[int, TextPart] = {}  # the answer's text parts, by the index of the part they come from
    for index, raw in enumerate(raw_parts):
        if (part := _response_part(raw, provider_name, code_call_id)) is not None:
            parts.append(part)
            if isinstance(part, TextPart):
                texts[index] = part
    grounding = (candidate or {}).get('groundingMetadata')
    cited = google_citations([(i, part.content) for i, part in texts.items()], grounding)
    for index, (citations, raw_citations) in cited.items():
        _cite(texts[index], citations, raw_citations, provider_name)
    finish_reason, details = _finish(candidate, body)
    return ModelResponse(
        parts=parts,
        usage=google_usage(body.get('usageMetadata')),
        model_name=body.get('modelVersion') or model_name,
        timestamp=datetime.now(tz=timezone.utc),
        provider_name=provider_name,
        provider_details=details or None,
        provider_response_id=body.get('responseId'),
        finish_reason=finish_reason,
    )


class GoogleStreamedResponse(EventStreamedResponse):
    """A streamed Gemini response, fed its chunks (each a partial `generateContent` response; no terminator)."""

    _last_index: int | None = None
    _segment = 0  # bumped whenever the kind of part changes, so that text after a call starts a new part
    _segment_kind = ''

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
        self._code_call_id: list[str] = []  # the id of the last code execution call, for its result
        self._fetches_seen = False
        self._text_segments: list[int] = []  # the segments of the answer's text parts, in order

    def _map_event(self, data: dict[str, Any]) -> Iterator[ModelResponseStreamEvent]:
        if isinstance(error := data.get('error'), dict) and isinstance(status_code := error.get('code'), int):
            # An error chunk after the stream opened with 200: its `code` is the status the error has.
            raise google_http_error(status_code, self._model_name, data, None, in_stream=True)
        self.provider_response_id = data.get('responseId') or self.provider_response_id
        self._model_name = data.get('modelVersion') or self._model_name
        if 'usageMetadata' in data:
            self._usage = google_usage(data['usageMetadata'])
        candidates = data.get('candidates') or []
        candidate = candidates[0] if candidates else None
        finish_reason, details = _finish(candidate, data)
        if details:
            self.finish_reason = finish_reason
            for key, value in details.items():
                self._set_provider_detail(key, value)
        if candidate is not None and candidate.get('urlContextMetadata') and not self._fetches_seen:
            self._fetches_seen = True
            # As pydantic-ai, streams report URL fetches (not searches: their metadata comes piecemeal).
            for native in metadata_parts(candidate, self._provider_name, web_search=False):
                self._segment += 1
                yield self._parts_manager.whole_part(('whole', self._segment), native)
        for part in ((candidate or {}).get('content') or {}).get('parts') or ():
            event: Any = None
            kind = (
                'call'
                if 'functionCall' in part
                else 'file'
                if 'inlineData' in part or 'executableCode' in part or 'codeExecutionResult' in part
                else 'thinking'
                if part.get('thought')
                else 'text'
            )
            if kind != self._segment_kind or kind == 'call':
                self._segment += 1
                self._segment_kind = kind
            if part.get('text'):
                # Consecutive text (or thought) chunks continue one part.
                if kind == 'thinking':
                    event = self._parts_manager.thinking_delta(self._segment, part['text'])
                else:
                    event = self._parts_manager.text_delta(self._segment, part['text'])
                    if not self._text_segments or self._text_segments[-1] != self._segment:
                        self._text_segments.append(self._segment)
            elif call := part.get('functionCall'):
                call_id = call.get('id') or generate_tool_call_id()
                event = self._parts_manager.tool_call_delta(
                    self._segment, call['name'], call.get('args') or {}, call_id
                )
            elif (whole := _response_part(part, self._provider_name, self._code_call_id)) is not None and isinstance(
                whole, FilePart | NativeToolCallPart | NativeToolReturnPart
            ):
                self._segment += 1
                event = self._parts_manager.whole_part(('whole', self._segment), whole)
            if event is not None:
                self._last_index = event.index
                yield event
            if signature := part.get('thoughtSignature'):
                target = event.index if event is not None else self._last_index
                if target is not None:
                    fields = self._part_fields.setdefault(target, {})
                    fields.update(provider_details={'thought_signature': signature}, provider_name=self._provider_name)
        grounding = (candidate or {}).get('groundingMetadata')
        if grounding and grounding.get('groundingSupports') and self._text_segments:
            # Gemini grounds the answer once, on the last chunk, with offsets counted over all its text.
            manager = self._parts_manager
            runs = [manager.get_part_by_vendor_id(segment) for segment in self._text_segments]
            texts = [(i, run.content) for i, run in enumerate(runs) if isinstance(run, TextPart)]
            for i, (citations, raw) in google_citations(texts, grounding).items():
                yield from manager.handle_text_delta(
                    vendor_part_id=self._text_segments[i], content='', provider_name=self._provider_name,
                    provider_details={'citations': raw}, citations=citations,
                )  # fmt: skip
