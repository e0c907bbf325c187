"""What an adapter drops from the messages a client sent before they reach the agent."""

from __future__ import annotations as _annotations

import copy
import dataclasses
import warnings
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from ..messages import (
    FileUrl,
    ForceDownloadMode,
    ModelMessage,
    ModelRequest,
    SystemPromptPart,
    ToolReturnPart,
    UploadedFile,
    UserPromptPart,
)

__all__ = ('sanitize_client_messages',)


def sanitize_client_messages(
    messages: Sequence[ModelMessage],
    *,
    strip_system_prompts: bool,
    allowed_file_url_schemes: frozenset[str],
    allowed_file_url_force_download: frozenset[ForceDownloadMode],
    allow_uploaded_files: bool,
    strip_workspace_refs: bool = True,
) -> list[ModelMessage]:
    """`messages` without what a client may not decide (each drop or change is warned about).

    Dropped: system prompts when the server owns them (`strip_system_prompts`), file URLs of other schemes
    than `allowed_file_url_schemes` (`s3://` would make the provider read with the server's rights), uploaded
    file references unless `allow_uploaded_files`; a `force_download` not in `allowed_file_url_force_download`
    is reset to `False`. This holds in user prompts and in tool returns alike. A response's `workspace_ref` is
    reset to `None` (`strip_workspace_refs`): the run would offer it to its workspace capabilities.
    """
    check = _Checker(allowed_file_url_schemes, allowed_file_url_force_download, allow_uploaded_files)
    kept: list[ModelMessage] = []
    for message in messages:
        if not isinstance(message, ModelRequest):
            if strip_workspace_refs and message.workspace_ref is not None:
                message = dataclasses.replace(message, workspace_ref=None)
            kept.append(message)
            continue
        parts: list[Any] = []
        for part in message.parts:
            if isinstance(part, SystemPromptPart) and strip_system_prompts:
                warnings.warn(
                    "A system prompt sent by the client was dropped: the agent's own system prompt stands "
                    "(pass `manage_system_prompt='client'` to let the client set it).",
                    UserWarning,
                    stacklevel=4,
                )
                continue
            content: Any = getattr(part, 'content', None)
            if isinstance(part, UserPromptPart | ToolReturnPart) and isinstance(content, list | tuple):
                part = dataclasses.replace(part, content=check.items(content))
            parts.append(part)
        if parts:
            kept.append(dataclasses.replace(message, parts=parts))
    return kept


@dataclasses.dataclass
class _Checker:
    schemes: frozenset[str]
    force_download: frozenset[ForceDownloadMode]
    uploads: bool

    def items(self, items: Sequence[Any]) -> list[Any]:
        kept: list[Any] = []
        for item in items:
            if isinstance(item, UploadedFile) and not self.uploads:
                warnings.warn(
                    f'An uploaded file reference from the client ({item.file_id!r}) was dropped: pass '
                    '`allow_uploaded_files=True` to accept them from a trusted frontend.',
                    UserWarning,
                    stacklevel=5,
                )
                continue
            if isinstance(item, FileUrl):
                scheme = urlsplit(item.url).scheme.lower()
                if scheme not in self.schemes:
                    warnings.warn(
                        f'A file URL of scheme {scheme!r} from the client was dropped: allowed are '
                        f'{sorted(self.schemes)} (`allowed_file_url_schemes`).',
                        UserWarning,
                        stacklevel=5,
                    )
                    continue
                if item.force_download is not False and item.force_download not in self.force_download:
                    warnings.warn(
                        f'`force_download={item.force_download!r}` from the client was reset to False '
                        '(`allowed_file_url_force_download` allows it).',
                        UserWarning,
                        stacklevel=5,
                    )
                    item = copy.copy(item)
                    item.force_download = False
            kept.append(item)
        return kept
