"""Which files a model reads, as its profile's file-input flags say (`supports_image_input`, ...), as pydantic-ai
2.68's `_file_input`."""

from __future__ import annotations as _annotations

from ..messages import AudioUrl, BinaryContent, DocumentUrl, FileUrl, ImageUrl, VideoUrl
from . import KNOWN_DOCUMENT_MEDIA_TYPES, ModelProfile

__all__ = ('SendableFile', 'inferred_media_type', 'unsupported_file_input')

SendableFile = ImageUrl | AudioUrl | DocumentUrl | VideoUrl | BinaryContent
"""A file the flags judge (an `UploadedFile` only its provider reads, so the flags say nothing of it)."""


def unsupported_file_input(item: SendableFile, profile: ModelProfile) -> str | None:
    """What `item` is that the model does not read (`'images'`, `'text/csv documents'`), or `None` when it reads it.
    Binary content of another kind is left to the model's mapping."""
    if isinstance(item, ImageUrl) or (isinstance(item, BinaryContent) and item.is_image):
        return None if profile.get('supports_image_input', True) else 'images'
    if isinstance(item, AudioUrl) or (isinstance(item, BinaryContent) and item.is_audio):
        return None if profile.get('supports_audio_file_input', True) else 'audio files'
    if isinstance(item, VideoUrl) or (isinstance(item, BinaryContent) and item.is_video):
        return None if profile.get('supports_video_input', True) else 'video'
    if isinstance(item, DocumentUrl) or (isinstance(item, BinaryContent) and item.is_document):
        if not profile.get('supports_document_input', True):
            return 'documents'
        media_type = inferred_media_type(item)
        supported = profile.get('supported_document_media_types', KNOWN_DOCUMENT_MEDIA_TYPES)
        if media_type in KNOWN_DOCUMENT_MEDIA_TYPES and media_type not in supported:
            return f'{media_type} documents'
    return None


def inferred_media_type(item: SendableFile) -> str | None:
    """The media type of `item`; `None` for a URL whose media type was not given and cannot be inferred."""
    if isinstance(item, FileUrl):
        try:
            return item.media_type
        except ValueError:
            return None
    return item.media_type
