"""Media types and formats of the files in a conversation: the `*MediaType` and `*Format` literals, the table between
them, and the guess of a file's media type from its name. `edgewise.agent.messages` re-exports the public names."""

from __future__ import annotations as _annotations

import functools
import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeAlias

if TYPE_CHECKING:
    import mimetypes

__all__ = (
    'AudioMediaType',
    'ImageMediaType',
    'DocumentMediaType',
    'VideoMediaType',
    'AudioFormat',
    'ImageFormat',
    'DocumentFormat',
    'VideoFormat',
    'ForceDownloadMode',
    'guess_media_type',
)

AudioMediaType: TypeAlias = Literal['audio/wav', 'audio/mpeg', 'audio/ogg', 'audio/flac', 'audio/aiff', 'audio/aac']
"""Audio media types the model APIs know."""
ImageMediaType: TypeAlias = Literal['image/jpeg', 'image/png', 'image/gif', 'image/webp']
"""Image media types the model APIs know."""
DocumentMediaType: TypeAlias = Literal[
    'application/pdf',
    'text/plain',
    'text/csv',
    'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    'text/html',
    'text/markdown',
    'application/msword',
    'application/vnd.ms-excel',
]
"""Document media types the model APIs know."""
VideoMediaType: TypeAlias = Literal[
    'video/x-matroska',
    'video/quicktime',
    'video/mp4',
    'video/webm',
    'video/x-flv',
    'video/mpeg',
    'video/x-ms-wmv',
    'video/3gpp',
]
"""Video media types the model APIs know."""

AudioFormat: TypeAlias = Literal['wav', 'mp3', 'oga', 'flac', 'aiff', 'aac']
"""Short name of an audio format."""
ImageFormat: TypeAlias = Literal['jpeg', 'png', 'gif', 'webp']
"""Short name of an image format."""
DocumentFormat: TypeAlias = Literal['csv', 'doc', 'docx', 'html', 'md', 'pdf', 'txt', 'xls', 'xlsx']
"""Short name of a document format."""
VideoFormat: TypeAlias = Literal['mkv', 'mov', 'mp4', 'webm', 'flv', 'mpeg', 'mpg', 'wmv', 'three_gp']
"""Short name of a video format."""

ForceDownloadMode: TypeAlias = bool | Literal['allow-local']
"""Whether a `FileUrl` is downloaded and sent as data rather than sent as a URL (`'allow-local'`: downloaded,
also from a private address)."""

_FORMATS: dict[str, str] = {
    # audio
    'audio/mpeg': 'mp3',
    'audio/wav': 'wav',
    'audio/flac': 'flac',
    'audio/ogg': 'oga',
    'audio/aiff': 'aiff',
    'audio/aac': 'aac',
    # image
    'image/jpeg': 'jpeg',
    'image/png': 'png',
    'image/gif': 'gif',
    'image/webp': 'webp',
    # video
    'video/x-matroska': 'mkv',
    'video/quicktime': 'mov',
    'video/mp4': 'mp4',
    'video/webm': 'webm',
    'video/x-flv': 'flv',
    'video/mpeg': 'mpeg',
    'video/x-ms-wmv': 'wmv',
    'video/3gpp': 'three_gp',
    # documents
    'application/pdf': 'pdf',
    'text/plain': 'txt',
    'text/csv': 'csv',
    'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
    'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
    'text/html': 'html',
    'text/markdown': 'md',
    'application/msword': 'doc',
    'application/vnd.ms-excel': 'xls',
}
_DOCUMENT_TYPES = frozenset(t for t in _FORMATS if not t.startswith(('audio/', 'image/', 'video/')))

# The types the model APIs use that some systems' tables lack or name differently.
_EXTRA_TYPES = (
    ('application/rtf', '.rtf'),
    ('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', '.xlsx'),
    ('application/vnd.openxmlformats-officedocument.wordprocessingml.document', '.docx'),
    ('text/markdown', '.md'),
    ('text/markdown', '.mdx'),
    ('text/x-asciidoc', '.asciidoc'),
    ('image/webp', '.webp'),
    ('video/3gpp', '.three_gp'),
    ('video/x-matroska', '.mkv'),
    ('video/x-ms-wmv', '.wmv'),
    ('video/x-flv', '.flv'),
    ('audio/aac', '.aac'),
    ('audio/aiff', '.aiff'),
    ('audio/flac', '.flac'),
    ('audio/ogg', '.oga'),
    ('audio/wav', '.wav'),
    ('application/yaml', '.yaml'),
    ('application/yaml', '.yml'),
    ('application/toml', '.toml'),
    ('application/xml', '.xml'),
)


@functools.cache
def _mime_table() -> mimetypes.MimeTypes:
    # The system's table plus `_EXTRA_TYPES`, read on first use: reading the system's files at import would cost
    # every `import edgewise.agent` tens of milliseconds (and the module itself loads here, for the same reason).
    import mimetypes

    table = mimetypes.MimeTypes()
    for known in mimetypes.knownfiles:
        if Path(known).is_file():
            table.read(known)
    for media_type, extension in _EXTRA_TYPES:
        table.add_type(media_type, extension)
    return table


def guess_media_type(path: str) -> str | None:
    """The media type of a file name or URL path, from its extension."""
    return _mime_table().guess_type(path)[0]


def _short_id(data: str | bytes) -> str:
    # A short stable name for a file, which a model can quote back in a tool call.
    raw = data.encode() if isinstance(data, str) else data
    return hashlib.sha1(raw).hexdigest()[:6]


def _format_of(media_type: str) -> str:
    try:
        return _FORMATS[media_type]
    except KeyError:
        raise ValueError(f'Unknown media type: {media_type}') from None
