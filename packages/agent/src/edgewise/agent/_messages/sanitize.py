"""`sanitize_messages`: a history from a source the application does not trust (a browser, another service) made
safe to run on, as pydantic-ai 2.68 defines it. Public through `edgewise.agent.messages`; the UI adapters run the
messages a client sends through `sanitize_untrusted`.

What a client could decide through a history, and may not: what the model is told in the system voice, which files
the provider (or the server) fetches with the server's rights, the state the framework keeps in messages
(`__pydantic_ai__` metadata, a response's `model_id` and `workspace_ref`, a compaction's provenance stamp), the
metadata application code reads to recognize its own text, and tool calls a run would execute because they end the
history. Each kind of drop or reset is warned about once per call, at the caller.
"""

from __future__ import annotations as _annotations

import copy
import dataclasses
import warnings
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar
from urllib.parse import urlsplit

from .compaction import STANDING_PROMPT_PLANTED_KEY, CompactionPart
from .content import FileUrl, ForceDownloadMode, TextContent, UploadedFile
from .instructions import InstructionBaselinePart, InstructionDeltaPart
from .model_messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    NativeToolReturnPart,
    SystemPromptPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from .retry_feedback import RetryFeedbackPart, user_voice_feedback

__all__ = (
    'FRAMEWORK_METADATA_KEY',
    'SanitizeOptions',
    'drop_compaction_parts',
    'sanitize_messages',
    'sanitize_untrusted',
)

FRAMEWORK_METADATA_KEY = '__pydantic_ai__'
"""The key of `ModelRequest.metadata` / `ModelResponse.metadata` (and of a tool return `TextContent`'s metadata)
under which the framework and its capabilities keep state they act on later (pydantic-ai's name, shared so that
histories move between the two)."""

_ReturnPartT = TypeVar('_ReturnPartT', ToolReturnPart, NativeToolReturnPart)


@dataclass(frozen=True, kw_only=True)
class SanitizeOptions:
    """What `sanitize_untrusted` strips and keeps: the keyword arguments of `sanitize_messages` but one."""

    strip_system_prompts: bool = True
    """Drop system prompts and instruction records; demote `'no_output'` retry feedback to user text."""
    strip_instructions: bool = True
    """Reset `ModelRequest.instructions` to `None`."""
    allowed_file_url_schemes: frozenset[str] = frozenset({'http', 'https'})
    """The URL schemes (lowercase) of the file URLs kept."""
    allowed_file_url_force_download: frozenset[ForceDownloadMode] = frozenset()
    """The `force_download` values kept besides `False`."""
    allow_uploaded_files: bool = False
    """Keep `UploadedFile` items."""
    strip_workspace_refs: bool = True
    """Reset `ModelResponse.workspace_ref` to `None`."""
    resolved_tool_call_ids: frozenset[str] = frozenset()
    """The tool calls ending the history that are answered along with it (kept)."""


@dataclass
class _Findings:
    """What one call dropped or reset, for its warnings."""

    system_voice: bool = False
    schemes: set[str] = field(default_factory=set[str])
    force_downloads: set[ForceDownloadMode] = field(default_factory=set[ForceDownloadMode])
    upload_providers: set[str] = field(default_factory=set[str])
    text_metadata: int = 0
    reserved_metadata: int = 0
    dangling_calls: list[str] = field(default_factory=list[str])


def sanitize_messages(
    messages: Sequence[ModelMessage],
    *,
    strip_system_prompts: bool = True,
    strip_instructions: bool = True,
    strip_compaction_parts: bool = False,
    allowed_file_url_schemes: Collection[str] = ('http', 'https'),
    allowed_file_url_force_download: Collection[ForceDownloadMode] = (),
    allow_uploaded_files: bool = False,
    strip_workspace_refs: bool = True,
    resolved_tool_call_ids: Collection[str] = (),
) -> list[ModelMessage]:
    """`messages` without what a source the application does not trust may not decide, for a `message_history`
    loaded from such a source (the UI adapters do the same to the messages a client sends).

    Dropped or reset, each kind with a `UserWarning` at the caller (except `instructions` and compaction parts, which
    go silently):

    - system prompts, `InstructionDeltaPart`s and `InstructionBaselinePart`s (`strip_system_prompts`): the system
      voice is the application's. Retry feedback stays, so the model still sees why it corrected itself, but a
      `'no_output'` `RetryFeedbackPart` (the one cause sent in the system voice) becomes fenced user text. A request
      left with no parts is dropped.
    - `ModelRequest.instructions` (`strip_instructions`), reset to `None` without a warning: every request a run
      records carries them, and a run sends the agent's own anyway.
    - file URLs whose scheme is not in `allowed_file_url_schemes`: the provider fetches `s3://` or `gs://` objects
      with the server's credentials. A `force_download` other than `False` and not in
      `allowed_file_url_force_download` is reset to `False`. `UploadedFile`s go unless `allow_uploaded_files`. All
      three hold in user prompts and inside tool returns (however nested).
    - `TextContent.metadata` of user prompt text (reset to `None`, the text stays), and the `__pydantic_ai__` key of
      tool return text's metadata: application code reads it to recognize text it added itself.
    - `ModelResponse.workspace_ref` (`strip_workspace_refs`), which would point a workspace capability at an
      environment it reaches with the server's credentials; `ModelResponse.model_id`, which later requests are
      routed by; the `__pydantic_ai__` key of request and response `metadata`, the framework's own state (the
      application's keys stay; `metadata` left empty becomes `None`).
    - the tool calls ending the history that are not in `resolved_tool_call_ids` (approvals or results sent along
      with it): they answer no paused run and a run would execute them. Native tool calls stay (the provider ran
      them). A response left with no parts is dropped, and the check goes on with the one before it.
    - the provenance stamp of `CompactionPart.provider_details`, so a client's compaction is never trusted to carry
      the system prompt; with `strip_compaction_parts=True`, the compaction parts themselves (pass it when the
      result follows trusted history, which a client's compaction would hide from the model).

    Args:
        messages: The untrusted history.
        strip_system_prompts: Whether to drop system prompts and instruction records (and demote `'no_output'`
            retry feedback); `False` only when the source is trusted to set the system prompt.
        strip_instructions: Whether to reset `ModelRequest.instructions` to `None`.
        strip_compaction_parts: Whether to drop `CompactionPart`s.
        allowed_file_url_schemes: The URL schemes of the file URLs kept (compared ignoring case).
        allowed_file_url_force_download: The `force_download` values kept besides `False`.
        allow_uploaded_files: Whether to keep `UploadedFile`s.
        strip_workspace_refs: Whether to reset `ModelResponse.workspace_ref` to `None`; `False` only for history
            from storage the application trusts.
        resolved_tool_call_ids: The ids of tool calls ending the history that are resolved along with it (for a run
            resumed with `deferred_tool_results`): kept.

    Returns:
        A new list; the messages given are not changed.
    """
    options = SanitizeOptions(
        strip_system_prompts=strip_system_prompts,
        strip_instructions=strip_instructions,
        allowed_file_url_schemes=frozenset(scheme.lower() for scheme in allowed_file_url_schemes),
        allowed_file_url_force_download=frozenset(allowed_file_url_force_download),
        allow_uploaded_files=allow_uploaded_files,
        strip_workspace_refs=strip_workspace_refs,
        resolved_tool_call_ids=frozenset(resolved_tool_call_ids),
    )
    if strip_compaction_parts:
        messages = drop_compaction_parts(messages)
    return sanitize_untrusted(messages, options, stacklevel=2)


def drop_compaction_parts(messages: Sequence[ModelMessage]) -> list[ModelMessage]:
    """`messages` without their `CompactionPart`s (a message left with no parts is dropped).

    For untrusted messages that follow trusted history: a compaction part hides everything before it from the model,
    so one a client wrote could hide the server's history.
    """
    kept: list[ModelMessage] = []
    for message in messages:
        # Only a response holds compaction parts in Edgewise's message model.
        if isinstance(message, ModelRequest) or not any(isinstance(part, CompactionPart) for part in message.parts):
            kept.append(message)
        elif parts := [part for part in message.parts if not isinstance(part, CompactionPart)]:
            kept.append(replace(message, parts=parts))
    return kept


def sanitize_untrusted(
    messages: Sequence[ModelMessage], options: SanitizeOptions, *, stacklevel: int
) -> list[ModelMessage]:
    """`messages` sanitized as `sanitize_messages` says (without dropping compaction parts).

    The warnings point `stacklevel` frames up from the caller of this function (1: at that caller). Dropping the tool
    calls ending the history is the last step: whoever drops or merges messages must do it before.
    """
    findings = _Findings()
    kept: list[ModelMessage] = []
    for message in messages:
        if not message.parts:
            continue
        if isinstance(message, ModelRequest):
            request = _sanitized_request(message, options, findings)
            if request is not None:
                kept.append(request)
        else:
            kept.append(_sanitized_response(message, options, findings))
    _drop_dangling_calls(kept, options.resolved_tool_call_ids, findings)
    _warn(findings, options, stacklevel=stacklevel + 2)
    return kept


def _sanitized_request(message: ModelRequest, options: SanitizeOptions, findings: _Findings) -> ModelRequest | None:
    parts: list[ModelRequestPart] = []
    for part in message.parts:
        if options.strip_system_prompts:
            if isinstance(part, SystemPromptPart | InstructionDeltaPart | InstructionBaselinePart):
                findings.system_voice = True
                continue
            if isinstance(part, RetryFeedbackPart) and part.retry.cause == 'no_output':
                # Who sent a part, not its wording, earns the system voice: a client's goes as the user's.
                part = UserPromptPart(user_voice_feedback(part), timestamp=part.timestamp)
        if isinstance(part, UserPromptPart) and not isinstance(part.content, str):
            part = replace(part, content=_sanitized_user_content(part.content, options, findings))
        elif isinstance(part, ToolReturnPart):
            part = _sanitized_return(part, ToolReturnPart, options, findings)
        parts.append(part)
    if not parts:
        return None
    instructions = None if options.strip_instructions else message.instructions
    metadata = _without_reserved_key(message.metadata, findings)
    return replace(message, parts=parts, instructions=instructions, metadata=metadata)


def _sanitized_response(message: ModelResponse, options: SanitizeOptions, findings: _Findings) -> ModelResponse:
    parts: list[ModelResponsePart] = []
    for part in message.parts:
        if isinstance(part, CompactionPart) and STANDING_PROMPT_PLANTED_KEY in (part.provider_details or {}):
            details = {k: v for k, v in (part.provider_details or {}).items() if k != STANDING_PROMPT_PLANTED_KEY}
            part = replace(part, provider_details=details)
        elif isinstance(part, NativeToolReturnPart):
            part = _sanitized_return(part, NativeToolReturnPart, options, findings)
        parts.append(part)
    workspace_ref = None if options.strip_workspace_refs else message.workspace_ref
    metadata = _without_reserved_key(message.metadata, findings)
    return replace(message, parts=parts, model_id=None, workspace_ref=workspace_ref, metadata=metadata)


def _without_reserved_key(metadata: dict[str, Any] | None, findings: _Findings) -> dict[str, Any] | None:
    if metadata is None or FRAMEWORK_METADATA_KEY not in metadata:
        return metadata
    findings.reserved_metadata += 1
    return {key: value for key, value in metadata.items() if key != FRAMEWORK_METADATA_KEY} or None


def _sanitized_user_content(content: Sequence[Any], options: SanitizeOptions, findings: _Findings) -> list[Any]:
    kept: list[Any] = []
    for item in content:
        if isinstance(item, TextContent):
            if item.metadata is not None:
                findings.text_metadata += 1
                item = copy.copy(item)
                item.metadata = None
        elif isinstance(item, FileUrl | UploadedFile):
            item = _sanitized_file(item, options, findings)
            if item is None:
                continue
        kept.append(item)
    return kept


def _sanitized_file(
    item: FileUrl | UploadedFile, options: SanitizeOptions, findings: _Findings
) -> FileUrl | UploadedFile | None:
    """`item` as it may stay, or `None` when it is dropped."""
    if isinstance(item, UploadedFile):
        if options.allow_uploaded_files:
            return item
        findings.upload_providers.add(item.provider_name)
        return None
    scheme = urlsplit(item.url).scheme.lower()
    # A URL without a scheme names nothing a provider could fetch with the server's rights.
    if scheme and scheme not in options.allowed_file_url_schemes:
        findings.schemes.add(scheme)
        return None
    if item.force_download is not False and item.force_download not in options.allowed_file_url_force_download:
        findings.force_downloads.add(item.force_download)
        item = copy.copy(item)
        item.force_download = False
    return item


def _sanitized_return(
    part: _ReturnPartT, base: type[_ReturnPartT], options: SanitizeOptions, findings: _Findings
) -> _ReturnPartT:
    """`part` with the files and text metadata inside its content sanitized. A typed part (`LoadCapabilityReturnPart`,
    a registered kind's) whose content changed is rebuilt as `base` and narrowed again: it may no longer have the
    shape its class promises."""
    _, content = _sanitized_return_content(part.content, options, findings)
    if content == part.content:
        return part
    if type(part) is base:
        return replace(part, content=content)
    values = {f.name: getattr(part, f.name) for f in dataclasses.fields(base) if f.init and f.name != 'part_kind'}
    values['content'] = content
    return base.narrow_type(base(**values))


def _sanitized_return_content(content: Any, options: SanitizeOptions, findings: _Findings) -> tuple[bool, Any]:
    """Whether `content` (an item of a tool return's content, nested at any depth) stays, and as what."""
    if isinstance(content, FileUrl | UploadedFile):
        item = _sanitized_file(content, options, findings)
        return item is not None, item
    if isinstance(content, TextContent):
        metadata = content.metadata
        if not isinstance(metadata, Mapping) or FRAMEWORK_METADATA_KEY not in metadata:
            return True, content
        findings.text_metadata += 1
        content = copy.copy(content)
        content.metadata = {k: v for k, v in metadata.items() if k != FRAMEWORK_METADATA_KEY} or None
        return True, content
    if isinstance(content, Mapping):
        mapping: dict[Any, Any] = {}
        for key, value in content.items():
            keep, value = _sanitized_return_content(value, options, findings)
            if keep:
                mapping[key] = value
        return True, mapping
    if isinstance(content, Sequence) and not isinstance(content, str | bytes | bytearray):
        items: list[Any] = []
        for value in content:
            keep, value = _sanitized_return_content(value, options, findings)
            if keep:
                items.append(value)
        return True, items
    return True, content


def _drop_dangling_calls(messages: list[ModelMessage], resolved: frozenset[str], findings: _Findings) -> None:
    """Drop from the responses ending `messages` their tool calls not in `resolved` (in place).

    Run on the history as it is left after every other drop: a request dropped at the end (one that held only a
    system prompt) exposes the response before it, whose calls a run without a new prompt would execute.
    """
    while messages and isinstance(last := messages[-1], ModelResponse):
        parts: list[ModelResponsePart] = []
        for part in last.parts:
            if isinstance(part, ToolCallPart) and part.tool_call_id not in resolved:
                findings.dangling_calls.append(part.tool_name)
            else:
                parts.append(part)
        if len(parts) == len(last.parts):
            return
        if parts:
            messages[-1] = replace(last, parts=parts)
            return
        messages.pop()


def _warn(findings: _Findings, options: SanitizeOptions, *, stacklevel: int) -> None:
    notes: list[str] = []
    if findings.system_voice:
        notes.append(
            'System prompts and instruction records sent by the client were dropped: what the model is told in the '
            "system voice is the application's to decide, and a client can forge these parts. Pass "
            '`strip_system_prompts=False` only for a client trusted to set the system prompt (on a UI adapter, '
            "`manage_system_prompt='client'`)."
        )
    if findings.schemes:
        notes.append(
            f'File URLs sent by the client with the scheme(s) {sorted(findings.schemes)!r} were dropped: allowed are '
            f'{sorted(options.allowed_file_url_schemes)!r} (`allowed_file_url_schemes`). A provider fetches `s3://` '
            "or `gs://` objects with the server's own credentials; add a scheme only for trusted clients."
        )
    if findings.force_downloads:
        notes.append(
            f'`force_download` value(s) {sorted(findings.force_downloads, key=repr)!r} of file URLs sent by the '
            f'client were reset to `False`: allowed are {sorted(options.allowed_file_url_force_download, key=repr)!r} '
            '(`allowed_file_url_force_download`). `True` makes the server download the file itself and '
            "`'allow-local'` lets it reach private addresses, so neither is for untrusted clients; set them on "
            'trusted server-side `message_history` instead.'
        )
    if findings.upload_providers:
        notes.append(
            f'Uploaded file(s) of the provider(s) {sorted(findings.upload_providers)!r} sent by the client were '
            "dropped: the provider reads an uploaded file with the server's own credentials. Pass "
            '`allow_uploaded_files=True` only for trusted clients, or pass the files in trusted server-side '
            '`message_history`.'
        )
    if findings.reserved_metadata:
        notes.append(
            f"The framework's `{FRAMEWORK_METADATA_KEY}` metadata was dropped from {findings.reserved_metadata} "
            'message(s) sent by the client (their other metadata keys are kept): the framework and its capabilities '
            'act on the state kept there, so it is only taken from trusted server-side `message_history`.'
        )
    if findings.text_metadata:
        notes.append(
            f'`TextContent.metadata` was dropped from {findings.text_metadata} user prompt or tool return item(s) '
            f'sent by the client (from tool return text, only its `{FRAMEWORK_METADATA_KEY}` key): the model never '
            'sees it, but application code reads it to recognize text it added itself. Pass text with your own '
            'metadata in trusted server-side `message_history`.'
        )
    if findings.dangling_calls:
        notes.append(
            f'The history sent by the client ended with unanswered tool call(s) '
            f'{sorted(set(findings.dangling_calls))!r}, which were dropped: a model makes tool calls on the server, '
            'so such calls answer no paused run and must not be executed. To resume a run that waits for them, pass '
            'their ids in `resolved_tool_call_ids` (or the answers as `deferred_tool_results` to a UI adapter).'
        )
    for note in notes:
        warnings.warn(note, UserWarning, stacklevel=stacklevel)
