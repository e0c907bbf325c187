"""`FileUnderstanding`: files the model cannot read are sent to it as text descriptions written by another model (as
pydantic-ai 2.68's)."""

from __future__ import annotations as _annotations

import hashlib
from collections.abc import Iterator
from dataclasses import KW_ONLY, dataclass, replace
from typing import Any, TypeGuard

import anyio
import httpx
from pydantic import TypeAdapter, ValidationError

from ..messages import (
    BinaryContent,
    DocumentUrl,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ToolReturnPart,
    UserPromptPart,
)
from ..models import KnownModelName, Model, ModelRequestContext, ModelRequestParameters, infer_model
from ..models._downloads import download
from ..models._mapping import inline_text_file, is_text_like
from ..profiles import ModelProfile
from ..profiles._file_input import SendableFile, inferred_media_type, unsupported_file_input
from ..tools import AgentDepsT, RunContext
from ..usage import RunUsage
from .abstract import AbstractCapability, WrapModelRequestHandler

__all__ = ('FileUnderstanding',)

_DESCRIPTIONS = TypeAdapter(dict[str, str])
_FRAMEWORK_KEY = '__pydantic_ai__'
"""The namespace of `ModelRequest.metadata` that pydantic-ai keeps for its own state (shared, so histories move
between the two)."""
_NAMESPACE_KEY = 'file_understanding'
_DEFAULT_INSTRUCTIONS = (
    'Describe this file in detail, so that someone who cannot see it can answer questions about it. '
    'Reply with the description only.'
)


@dataclass
class FileUnderstanding(AbstractCapability[AgentDepsT]):
    """Describes the files the model cannot read with a model that can.

    Before each request, every image, document, audio file or video of a user prompt or a tool result that the
    model's `ModelProfile` says it does not read (`supports_image_input`, `supports_document_input`,
    `supported_document_media_types`, ...) is replaced, in what the model is sent, by a description written by
    `fallback_subagent_model`. A text document (plain text, CSV, JSON, XML, YAML) is inlined as it is instead; an
    `UploadedFile` is left alone.

    A file is described once per conversation (a URL is known by itself, bytes by their content and media type): the
    description is kept in the `metadata` of the request holding the file (under `'__pydantic_ai__'`, which is not
    sent), so later requests, runs continuing the history and resumed runs use it again. The distinct files of a
    request are described concurrently; each description is one request to `fallback_subagent_model`, counted in the
    run's usage and checked against its usage limits before any is sent.
    """

    fallback_subagent_model: Model | KnownModelName | str
    """The model that describes the files (`'openai:gpt-5'`, or a `Model`)."""

    _: KW_ONLY

    instructions: str | None = None
    """What to write about each file; by default, a description someone who cannot see it could answer from."""

    id: str | None = 'file_understanding'
    """An agent describes files one way, hence a fixed id (also the key its descriptions are kept under)."""

    async def wrap_model_request(
        self, ctx: RunContext[AgentDepsT], *, request_context: ModelRequestContext, handler: WrapModelRequestHandler
    ) -> Any:
        """The request, with the files the model does not read sent as their descriptions."""
        return await handler(await self._prepared(ctx, request_context))

    async def _prepared(self, ctx: RunContext[AgentDepsT], request_context: ModelRequestContext) -> ModelRequestContext:
        profile = request_context.model.profile
        recorded = self._recorded([*ctx.messages, *request_context.messages])
        descriptions: dict[str, str] = {}
        pending: dict[str, SendableFile] = {}
        unread = False
        for content in _file_content(request_context.messages):
            if (item := _unread_file(content, profile)) is None:
                continue
            unread = True
            if _is_text_bytes(item):  # decoded where it is inlined: nothing to describe
                continue
            identity = _identity(item)
            if identity in descriptions or identity in pending:
                continue
            if (found := recorded.get(identity)) is not None:
                descriptions[identity] = found
            else:
                pending[identity] = item
        if not unread:
            return request_context
        if pending:
            await self._describe_all(ctx, pending, descriptions)
            self._record(ctx.messages, {identity: descriptions[identity] for identity in pending})
        messages = [_substituted(message, profile, descriptions) for message in request_context.messages]
        return _with_messages(request_context, messages)

    def _recorded(self, messages: list[ModelMessage]) -> dict[str, str]:
        found: dict[str, str] = {}
        for message in messages:
            if isinstance(message, ModelRequest) and message.metadata:
                found.update(_str_dict(_own_namespace(message.metadata).get(self._key)))
        return found

    @property
    def _key(self) -> str:
        return self.id or 'default'

    def _record(self, history: list[ModelMessage], described: dict[str, str]) -> None:
        """Keep `described` in the `metadata` of the history's request holding each file (the last request for a
        file only this request's messages hold)."""
        requests = [i for i, message in enumerate(history) if isinstance(message, ModelRequest)]
        if not requests:
            return
        by_index: dict[int, dict[str, str]] = {}
        for identity, description in described.items():
            holder = next((i for i in requests if identity in _identities(history[i])), requests[-1])
            by_index.setdefault(holder, {})[identity] = description
        for index, new in by_index.items():
            message = history[index]
            assert isinstance(message, ModelRequest)
            metadata = message.metadata or {}
            framework = metadata.get(_FRAMEWORK_KEY)
            framework = framework if isinstance(framework, dict) else {}
            own = _own_namespace(metadata)
            own = {**own, self._key: {**_str_dict(own.get(self._key)), **new}}
            # Set on the message itself: the run knows its requests by identity.
            message.metadata = {**metadata, _FRAMEWORK_KEY: {**framework, _NAMESPACE_KEY: own}}

    async def _describe_all(
        self, ctx: RunContext[AgentDepsT], pending: dict[str, SendableFile], descriptions: dict[str, str]
    ) -> None:
        if ctx.usage_limits is not None and (requests := sum(1 for i in pending.values() if _text_type(i) is None)):
            # Before any is sent: the describing requests come before the step's own, already counted in.
            ctx.usage_limits.check_before_request(ctx.usage + RunUsage(requests=requests), ctx.messages)
        results: dict[str, tuple[str, RunUsage]] = {}

        async def describe(identity: str, item: SendableFile) -> None:
            results[identity] = await self._describe(item)

        async with anyio.create_task_group() as tg:
            for identity, item in pending.items():
                tg.start_soon(describe, identity, item)
        for identity in pending:
            description, usage = results[identity]
            ctx.usage.incr(usage)
            descriptions[identity] = description

    async def _describe(self, item: SendableFile) -> tuple[str, RunUsage]:
        """The file as text, and the usage that cost: a text document's own text (downloaded), else a description."""
        if isinstance(item, DocumentUrl) and _text_type(item) is not None:
            async with httpx.AsyncClient() as client:
                data = await download(item, client)
            return data.data.decode('utf-8', errors='replace'), RunUsage()
        model = infer_model(self.fallback_subagent_model)
        params = model.customize_request_parameters(ModelRequestParameters(output_mode='text', allow_text_output=True))
        request = ModelRequest(parts=[UserPromptPart([item])], instructions=self.instructions or _DEFAULT_INSTRUCTIONS)
        response = await model.request([request], None, params)
        usage = RunUsage()
        usage.incr(response.usage)
        return response.text or '', usage


def _with_messages(request_context: ModelRequestContext, messages: list[ModelMessage]) -> ModelRequestContext:
    found = replace(request_context, messages=messages)
    found.model_id, found.streaming = request_context.model_id, request_context.streaming
    return found


def _file_content(messages: list[ModelMessage]) -> Iterator[object]:
    """The items of every user prompt, and of every tool result holding files."""
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and not isinstance(part.content, str):
                    yield from part.content
                elif isinstance(part, ToolReturnPart) and part.files:
                    yield from part.content_items()


def _own_namespace(metadata: dict[str, Any]) -> dict[str, Any]:
    framework = metadata.get(_FRAMEWORK_KEY)
    own = framework.get(_NAMESPACE_KEY) if isinstance(framework, dict) else None
    return own if isinstance(own, dict) else {}


def _str_dict(value: object) -> dict[str, str]:
    """`value` as kept descriptions, or none (`metadata` is the application's too, and holds any JSON)."""
    try:
        return _DESCRIPTIONS.validate_python(value)
    except ValidationError:
        return {}


def _identities(message: ModelMessage) -> set[str]:
    return {_identity(item) for item in _file_content([message]) if isinstance(item, SendableFile)}


def _substituted(message: ModelMessage, profile: ModelProfile, descriptions: dict[str, str]) -> ModelMessage:
    if not isinstance(message, ModelRequest):
        return message

    def text_for(content: Any) -> Any:
        if (item := _unread_file(content, profile)) is None:
            return content
        media_type = _text_type(item) or 'text/plain'  # a description is prose, whatever the file was
        text = item.data.decode('utf-8', errors='replace') if _is_text_bytes(item) else descriptions[_identity(item)]
        return inline_text_file(text, media_type=media_type, identifier=item.identifier)

    parts: list[ModelRequestPart] = []
    for part in message.parts:
        if isinstance(part, UserPromptPart) and not isinstance(part.content, str):
            part = replace(part, content=[text_for(item) for item in part.content])
        elif isinstance(part, ToolReturnPart) and part.files:
            items = [text_for(item) for item in part.content_items()]
            part = replace(part, content=items if isinstance(part.content, list) else items[0])
        parts.append(part)
    return replace(message, parts=parts)


def _identity(item: SendableFile) -> str:
    """A URL is known by itself; bytes by their content and media type (the same bytes as an image are described,
    as CSV decoded)."""
    if isinstance(item, BinaryContent):
        return hashlib.sha256(item.media_type.encode() + b'\0' + item.data).hexdigest()
    return f'url:{item.url}'


def _unread_file(item: object, profile: ModelProfile) -> SendableFile | None:
    if isinstance(item, SendableFile) and unsupported_file_input(item, profile) is not None:
        return item
    return None


def _text_type(item: SendableFile) -> str | None:
    """The media type of a text file; `None` for any other (and for a URL whose media type is unknown)."""
    media_type = inferred_media_type(item)
    return media_type if media_type is not None and is_text_like(media_type) else None


def _is_text_bytes(item: SendableFile) -> TypeGuard[BinaryContent]:
    return isinstance(item, BinaryContent) and is_text_like(item.media_type)
