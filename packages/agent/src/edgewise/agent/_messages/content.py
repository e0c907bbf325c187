"""Files in a conversation: URLs of images, audio, video and documents, inline binary data, and the other
items a user prompt may hold besides text (`TextContent`, `CachePoint`); `ToolReturn` for tools that send
files or extra content along with their result.

The public home of these classes is `edgewise.agent.messages`. Names, fields, `kind` tags and the JSON shape
(binary data as base64) match pydantic-ai 1.x, so histories with files load in either library.
"""

from __future__ import annotations as _annotations

import base64
import functools
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, InitVar, dataclass, field
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Generic, Literal, TypeAlias, TypeGuard
from urllib.parse import urlparse

import pydantic
import pydantic_core
from pydantic.dataclasses import dataclass as pydantic_dataclass
from pydantic_core import core_schema
from typing_extensions import TypeAliasType, TypeVar

from .media_types import (
    _DOCUMENT_TYPES,
    _FORMATS,
    AudioFormat,
    AudioMediaType,
    DocumentFormat,
    DocumentMediaType,
    ForceDownloadMode,
    ImageFormat,
    ImageMediaType,
    VideoFormat,
    VideoMediaType,
    _format_of,
    _short_id,
    guess_media_type,
)

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
    'FileUrl',
    'VideoUrl',
    'AudioUrl',
    'ImageUrl',
    'DocumentUrl',
    'TextContent',
    'StructuredContent',
    'StructuredContentFormat',
    'BinaryContent',
    'BinaryImage',
    'BinaryAudio',
    'CachePoint',
    'UploadedFileProviderName',
    'UploadedFile',
    'MultiModalContent',
    'MULTI_MODAL_CONTENT_TYPES',
    'is_multi_modal_content',
    'UserContent',
    'ToolReturnContent',
    'ToolReturn',
)


_URL_CONFIG = pydantic.ConfigDict(validate_by_name=True, defer_build=True)
_BINARY_CONFIG = pydantic.ConfigDict(ser_json_bytes='base64', val_json_bytes='base64', defer_build=True)


@pydantic_dataclass(repr=False, config=_URL_CONFIG)
class FileUrl(ABC):
    """A file given by its URL (the base of `ImageUrl`, `AudioUrl`, `VideoUrl` and `DocumentUrl`)."""

    url: str
    """The URL of the file."""
    _: KW_ONLY
    force_download: ForceDownloadMode = False
    """Download the file and send its data, even to a model that takes the URL."""
    vendor_metadata: dict[str, Any] | None = None
    """Provider-specific settings of the file (OpenAI: `{'detail': ...}` of an image; Gemini: a video's
    `video_metadata`)."""
    _media_type: Annotated[str | None, pydantic.Field(alias='media_type', default=None, exclude=True)] = field(
        default=None, compare=False
    )
    _identifier: Annotated[str | None, pydantic.Field(alias='identifier', default=None, exclude=True)] = field(
        default=None, compare=False
    )

    if TYPE_CHECKING:

        def __init__(
            self,
            url: str,
            *,
            media_type: str | None = None,
            identifier: str | None = None,
            force_download: ForceDownloadMode = False,
            vendor_metadata: dict[str, Any] | None = None,
        ) -> None: ...

    @pydantic.computed_field  # type: ignore[prop-decorator]
    @property
    def media_type(self) -> str:
        """The media type given, or else the one the URL's extension implies.

        Raises:
            ValueError: none was given and the URL does not tell.
        """
        return self._media_type or self._infer_media_type()

    @pydantic.computed_field  # type: ignore[prop-decorator]
    @property
    def identifier(self) -> str:
        """The identifier given, or else a short hash of the URL; a tool that returns the file shows it to the
        model, so that the model can name the file in later tool calls."""
        return self._identifier or _short_id(self.url)

    def _infer_media_type(self) -> str:
        # From the path's extension: a query string or fragment says nothing about the type.
        media_type = guess_media_type(urlparse(self.url).path if '://' in self.url else self.url)
        if media_type is None:
            raise ValueError(
                f'Could not infer media type from {self._what} URL: {self.url}. '
                'Explicitly provide a `media_type` instead.'
            )
        return media_type

    @property
    @abstractmethod
    def _what(self) -> str:
        raise NotImplementedError

    @property
    def format(self) -> str:
        """The short name of the file's format (`'png'`, `'mp3'`, `'pdf'`, ...).

        Raises:
            ValueError: the media type has no short name.
        """
        return _format_of(self.media_type)

    def __repr__(self) -> str:
        return _repr_set(self)


# Exact hosts, not every `*.youtube.com`: the model APIs that take YouTube links refuse `music.youtube.com`.
_YOUTUBE_HOSTS = frozenset({'youtu.be', 'youtube.com', 'www.youtube.com', 'm.youtube.com'})


@pydantic_dataclass(repr=False, config=_URL_CONFIG)
class VideoUrl(FileUrl):
    """The URL of a video (YouTube links included)."""

    url: str
    """The URL of the video."""
    _: KW_ONLY
    kind: Literal['video-url'] = 'video-url'
    """Tag of this content kind in serialized messages."""

    if TYPE_CHECKING:

        def __init__(
            self,
            url: str,
            *,
            media_type: str | None = None,
            identifier: str | None = None,
            force_download: ForceDownloadMode = False,
            vendor_metadata: dict[str, Any] | None = None,
            kind: Literal['video-url'] = 'video-url',
        ) -> None: ...

    @property
    def _what(self) -> str:
        return 'video'

    def _infer_media_type(self) -> str:
        # A YouTube link has no extension; the APIs that take such links ignore its media type.
        return 'video/mp4' if self.is_youtube else super()._infer_media_type()

    @property
    def is_youtube(self) -> bool:
        """Whether the URL is on one of the YouTube hosts that models take links from directly (`youtu.be`,
        `youtube.com`, `www.youtube.com`, `m.youtube.com`; not every YouTube domain: `music.youtube.com` is not)."""
        return urlparse(self.url).hostname in _YOUTUBE_HOSTS


@pydantic_dataclass(repr=False, config=_URL_CONFIG)
class AudioUrl(FileUrl):
    """The URL of an audio file."""

    url: str
    """The URL of the audio file."""
    _: KW_ONLY
    kind: Literal['audio-url'] = 'audio-url'
    """Tag of this content kind in serialized messages."""

    if TYPE_CHECKING:

        def __init__(
            self,
            url: str,
            *,
            media_type: str | None = None,
            identifier: str | None = None,
            force_download: ForceDownloadMode = False,
            vendor_metadata: dict[str, Any] | None = None,
            kind: Literal['audio-url'] = 'audio-url',
        ) -> None: ...

    @property
    def _what(self) -> str:
        return 'audio'


@pydantic_dataclass(repr=False, config=_URL_CONFIG)
class ImageUrl(FileUrl):
    """The URL of an image."""

    url: str
    """The URL of the image."""
    _: KW_ONLY
    kind: Literal['image-url'] = 'image-url'
    """Tag of this content kind in serialized messages."""

    if TYPE_CHECKING:

        def __init__(
            self,
            url: str,
            *,
            media_type: str | None = None,
            identifier: str | None = None,
            force_download: ForceDownloadMode = False,
            vendor_metadata: dict[str, Any] | None = None,
            kind: Literal['image-url'] = 'image-url',
        ) -> None: ...

    @property
    def _what(self) -> str:
        return 'image'


@pydantic_dataclass(repr=False, config=_URL_CONFIG)
class DocumentUrl(FileUrl):
    """The URL of a document (PDF, text, spreadsheet, ...)."""

    url: str
    """The URL of the document."""
    _: KW_ONLY
    kind: Literal['document-url'] = 'document-url'
    """Tag of this content kind in serialized messages."""

    if TYPE_CHECKING:

        def __init__(
            self,
            url: str,
            *,
            media_type: str | None = None,
            identifier: str | None = None,
            force_download: ForceDownloadMode = False,
            vendor_metadata: dict[str, Any] | None = None,
            kind: Literal['document-url'] = 'document-url',
        ) -> None: ...

    @property
    def _what(self) -> str:
        return 'document'

    @property
    def format(self) -> str:
        """The short name of the document's format (`'pdf'`, `'csv'`, ...).

        Raises:
            ValueError: the media type is not a known document type.
        """
        if self.media_type not in _DOCUMENT_TYPES:
            raise ValueError(f'Unknown document media type: {self.media_type}')
        return _FORMATS[self.media_type]


@dataclass(repr=False)
class TextContent:
    """Prompt text with data for the application: the model sees only `content`."""

    content: str
    """The text sent to the model."""
    _: KW_ONLY
    metadata: Any = None
    """Data kept for the application and not sent to the model."""
    kind: Literal['text-content'] = 'text-content'
    """Tag of this content kind in serialized messages."""

    def __repr__(self) -> str:
        return _repr_set(self)


StructuredContentFormat: TypeAlias = Literal['json', 'xml']
"""A built-in way `StructuredContent` renders its value as text."""

_TAG_NAME = re.compile(r'[a-z][a-z0-9]*(?:_[a-z0-9]+)*')
# The tags pydantic-ai 2.x frames its own text in: a user's value in one would read as the framework speaking.
_FRAMING_TAGS = frozenset(
    ('system', 'tool_result', 'assistant_thinking', 'context', 'context_diff', 'validation_errors', 'retry_feedback',
     'conversation_summary')
)  # fmt: skip


@dataclass(repr=False)
class StructuredContent(TextContent):
    """A structured value in a user prompt (the state of the screen the user looks at, a record): kept as a value
    in the history, and sent to models as `content`, its text rendered once when the item is made and stored with it,
    so that a history sent again (also after storing and loading it) shows the model the same text.

    Code that reads `content` of text items handles it as it is. Subclass and override `render` to render a kind of
    value one way everywhere (a history loaded from JSON gives back a `StructuredContent` with the stored text).
    """

    value: Any
    """The value (anything pydantic can serialize); after loading from JSON, its JSON form (a dict for a model)."""
    _: KW_ONLY
    content: str = ''
    """The text models are sent: rendered when the item is made, unless given (as when loading). Not rendered
    again when `value`, `tag` or `description` change: make a new item instead."""
    format: InitVar[StructuredContentFormat | Callable[[Any], str] | None] = None
    """How to render the value instead of `render`: `'json'` (compact, `<`, `>` and `&` escaped, in `tag` when
    given), `'xml'` (`format_as_xml`, with `tag` as root), or a function of the value giving the text as it is.
    Not stored."""
    tag: str | None = None
    """The tag the rendered value is wrapped in (`'ui_state'` gives `<ui_state>...</ui_state>`): lowercase
    snake_case, and none of the tags pydantic-ai frames its own text in (checked when the text is rendered)."""
    description: str | None = None
    """What the value is, written on the line before it by the built-in formats."""
    kind: Literal['structured-content'] = 'structured-content'  # type: ignore[assignment]
    """Tag of this content kind in serialized messages."""

    def __post_init__(self, format: StructuredContentFormat | Callable[[Any], str] | None) -> None:
        """Render `content` unless given.

        Raises:
            ValueError: `tag` is no lowercase snake_case name, or a framing tag; or the text rendered is empty.
        """
        if self.content:  # given, as when loading: `tag` is data then (a later framing tag must not break a load)
            return
        if self.tag is not None:
            if not _TAG_NAME.fullmatch(self.tag):
                raise ValueError(
                    f'`StructuredContent.tag` must be lowercase snake_case, like `ui_state`; got {self.tag!r}.'
                )
            if self.tag in _FRAMING_TAGS:
                raise ValueError(f'`StructuredContent.tag` cannot be {self.tag!r}, a built-in framing tag.')
        if format is None:
            text = self.render()
        elif callable(format):
            text = format(self.value)
        else:
            text = self._render_as(format)
        if not text:  # an empty `content` is what makes a loaded item render: it would change the text
            raise ValueError(
                '`StructuredContent` rendered to empty text, which a model cannot be sent; give it a `tag` or a '
                '`format` that renders the value as text.'
            )
        self.content = text

    def render(self) -> str:
        """The value as text for the model, compact JSON by default (called once, when the item is made without
        `content` or `format`)."""
        return self._render_as('json')

    def _render_as(self, format: StructuredContentFormat) -> str:
        if format == 'json':
            text = pydantic_core.to_json(self.value).decode()
            text = text.replace('<', r'\u003c').replace('>', r'\u003e').replace('&', r'\u0026')
            if self.tag is not None:
                text = f'<{self.tag}>{text}</{self.tag}>'
        else:
            from ..format_prompt import format_as_xml  # on first use: it brings xml.etree

            text = format_as_xml(self.value, root_tag=self.tag)
        return text if self.description is None else f'{self.description}\n{text}'


@pydantic_dataclass(repr=False, config=_BINARY_CONFIG)
class BinaryContent:
    """A file given by its data (image, audio, video, document); serialized to JSON as base64."""

    data: bytes
    """The file's bytes."""
    _: KW_ONLY
    media_type: AudioMediaType | ImageMediaType | DocumentMediaType | str
    """The media type of the data."""
    vendor_metadata: dict[str, Any] | None = None
    """Provider-specific settings of the file (as `FileUrl.vendor_metadata`)."""
    _identifier: Annotated[str | None, pydantic.Field(alias='identifier', default=None, exclude=True)] = field(
        default=None, compare=False
    )
    kind: Literal['binary'] = 'binary'
    """Tag of this content kind in serialized messages."""

    if TYPE_CHECKING:

        def __init__(
            self,
            data: bytes,
            *,
            media_type: str,
            identifier: str | None = None,
            vendor_metadata: dict[str, Any] | None = None,
            kind: Literal['binary'] = 'binary',
        ) -> None: ...

    @staticmethod
    def narrow_type(content: BinaryContent) -> BinaryContent:
        """`content` as a `BinaryImage` when it holds an image, else unchanged."""
        if content.is_image and not isinstance(content, BinaryImage):
            return BinaryImage(
                content.data,
                media_type=content.media_type,
                identifier=content.identifier,
                vendor_metadata=content.vendor_metadata,
            )
        return content

    @classmethod
    def from_data_uri(cls, data_uri: str) -> BinaryContent:
        """The content of a `data:<media type>;base64,<data>` URI (a `BinaryImage` for an image).

        Raises:
            ValueError: the text is not a base64 data URI.
        """
        if not data_uri.startswith('data:'):
            raise ValueError('Data URI must start with "data:"')
        media_type, sep, encoded = data_uri[5:].partition(';base64,')
        if not sep:
            raise ValueError('Data URI must be base64-encoded (expected ";base64," marker)')
        return cls.narrow_type(cls(base64.b64decode(encoded), media_type=media_type))

    @classmethod
    def from_path(cls, path: PathLike[str] | str) -> BinaryContent:
        """The content of a file, its media type from its extension (`application/octet-stream` if unknown).

        Raises:
            FileNotFoundError: there is no such file.
        """
        file = Path(path)
        if not file.exists():
            raise FileNotFoundError(f'File not found: {file}')
        media_type = guess_media_type(str(file)) or 'application/octet-stream'
        return cls.narrow_type(cls(file.read_bytes(), media_type=media_type))

    @pydantic.computed_field  # type: ignore[prop-decorator]
    @property
    def identifier(self) -> str:
        """The identifier given, or else a short hash of the data (see `FileUrl.identifier`)."""
        return self._identifier or _short_id(self.data)

    @property
    def data_uri(self) -> str:
        """The data as a `data:` URI."""
        return f'data:{self.media_type};base64,{self.base64}'

    @property
    def base64(self) -> str:
        """The data, base64-encoded."""
        return base64.b64encode(self.data).decode()

    @property
    def is_audio(self) -> bool:
        """Whether the data is audio."""
        return self.media_type.startswith('audio/')

    @property
    def is_image(self) -> bool:
        """Whether the data is an image."""
        return self.media_type.startswith('image/')

    @property
    def is_video(self) -> bool:
        """Whether the data is a video."""
        return self.media_type.startswith('video/')

    @property
    def is_document(self) -> bool:
        """Whether the data is a document of a known type (PDF, text, CSV, HTML, Markdown, Office)."""
        return self.media_type in _DOCUMENT_TYPES

    @property
    def format(self) -> str:
        """The short name of the data's format (`'png'`, `'mp3'`, `'pdf'`, ...).

        Raises:
            ValueError: the media type has no short name.
        """
        return _format_of(self.media_type)

    def __repr__(self) -> str:
        return _repr_set(self)


@pydantic_dataclass(repr=False, config=_BINARY_CONFIG)
class BinaryImage(BinaryContent):
    """Binary data that is an image (what models that draw return, in a `FilePart`)."""

    if TYPE_CHECKING:

        def __init__(
            self,
            data: bytes,
            *,
            media_type: str,
            identifier: str | None = None,
            vendor_metadata: dict[str, Any] | None = None,
            kind: Literal['binary'] = 'binary',
        ) -> None: ...

    def __post_init__(self) -> None:
        if not self.is_image:
            raise ValueError('`BinaryImage` must have a media type that starts with "image/"')


@pydantic_dataclass(repr=False, config=_BINARY_CONFIG)
class BinaryAudio(BinaryContent):
    """Binary data that is audio (what a spoken turn is sent as)."""

    if TYPE_CHECKING:

        def __init__(
            self,
            data: bytes,
            *,
            media_type: str,
            identifier: str | None = None,
            vendor_metadata: dict[str, Any] | None = None,
            kind: Literal['binary'] = 'binary',
        ) -> None: ...

    def __post_init__(self) -> None:
        if not self.is_audio:
            raise ValueError('`BinaryAudio` must have a media type that starts with "audio/"')


@dataclass
class CachePoint:
    """Marks the end of a cacheable prefix of the prompt (Anthropic prompt caching); other models ignore it."""

    kind: Literal['cache-point'] = 'cache-point'
    """Tag of this content kind in serialized messages."""
    ttl: Literal['5m', '1h'] = '5m'
    """How long the provider keeps the cached prefix."""


UploadedFileProviderName: TypeAlias = Literal[
    'anthropic', 'openai', 'google', 'google-cloud', 'google-gla', 'google-vertex', 'bedrock', 'xai'
]
"""The providers whose file storage an `UploadedFile` can be in."""


@pydantic_dataclass(repr=False, config=_URL_CONFIG)
class UploadedFile:
    """A file already uploaded to a provider's file storage, given by its id there (OpenAI and Anthropic file ids,
    Gemini Files API URIs)."""

    file_id: str
    """The provider's id of the file (for Gemini, its `https://generativelanguage.googleapis.com/...` URI)."""
    provider_name: UploadedFileProviderName
    """The provider that stores the file: ids do not carry over between providers."""
    _: KW_ONLY
    vendor_metadata: dict[str, Any] | None = None
    """Provider-specific settings of the file (Gemini: a video's `video_metadata`)."""
    _media_type: Annotated[str | None, pydantic.Field(alias='media_type', default=None, exclude=True)] = field(
        default=None, compare=False
    )
    _identifier: Annotated[str | None, pydantic.Field(alias='identifier', default=None, exclude=True)] = field(
        default=None, compare=False
    )
    kind: Literal['uploaded-file'] = 'uploaded-file'
    """Tag of this content kind in serialized messages."""

    if TYPE_CHECKING:

        def __init__(
            self,
            file_id: str,
            provider_name: UploadedFileProviderName,
            *,
            media_type: str | None = None,
            vendor_metadata: dict[str, Any] | None = None,
            identifier: str | None = None,
            kind: Literal['uploaded-file'] = 'uploaded-file',
        ) -> None: ...

    @pydantic.computed_field  # type: ignore[prop-decorator]
    @property
    def media_type(self) -> str:
        """The media type given, or else the one the id's extension implies (`application/octet-stream` if none)."""
        if self._media_type is not None:
            return self._media_type
        return guess_media_type(urlparse(self.file_id).path) or 'application/octet-stream'

    @pydantic.computed_field  # type: ignore[prop-decorator]
    @property
    def identifier(self) -> str:
        """The identifier given, or else a short hash of the file id (see `FileUrl.identifier`)."""
        return self._identifier or _short_id(self.file_id)

    @property
    def format(self) -> str:
        """The short name of the file's format (`'png'`, `'pdf'`, ...).

        Raises:
            ValueError: the media type has no short name.
        """
        return _format_of(self.media_type)

    def __repr__(self) -> str:
        return _repr_set(self)


MultiModalContent = Annotated[
    ImageUrl
    | AudioUrl
    | DocumentUrl
    | VideoUrl
    | Annotated[BinaryContent, pydantic.AfterValidator(BinaryContent.narrow_type)]
    | UploadedFile,
    pydantic.Discriminator('kind'),
]
"""A file in a prompt or a tool's return value (binary image data loads as a `BinaryImage`)."""

MULTI_MODAL_CONTENT_TYPES: tuple[type, ...] = (ImageUrl, AudioUrl, DocumentUrl, VideoUrl, BinaryContent, UploadedFile)
"""The classes of `MultiModalContent`, for `isinstance`."""


def is_multi_modal_content(obj: Any) -> TypeGuard[MultiModalContent]:
    """Whether `obj` is a file (`ImageUrl`, `AudioUrl`, `DocumentUrl`, `VideoUrl`, `BinaryContent`, `UploadedFile`)."""
    return isinstance(obj, MULTI_MODAL_CONTENT_TYPES)


UserContent: TypeAlias = str | StructuredContent | TextContent | MultiModalContent | CachePoint
"""An item of a user prompt: text, tagged text, a structured value, a file, or a cache point."""


class _SerializedByType:
    """Serializes a value by its runtime type, whatever schema validates it.

    `ToolReturnContent` is a union ending in `Any` for validation; serialized through that union, a plain value (a
    string, a number, a dict) is first tried against each file class and against the `Sequence` member (a Python
    function), microseconds per tool return in every snapshot of a durable run. Every file class is a pydantic
    dataclass that serializes itself, so serializing by type gives the same JSON.
    """

    def __get_pydantic_core_schema__(self, source: Any, handler: pydantic.GetCoreSchemaHandler) -> Any:
        schema: dict[str, Any] = dict(handler(source))
        schema['serialization'] = core_schema.simple_ser_schema('any')
        return schema


_FILE_KINDS = frozenset(('image-url', 'audio-url', 'document-url', 'video-url', 'binary', 'uploaded-file'))


@functools.cache
def _file_adapter() -> pydantic.TypeAdapter[MultiModalContent]:
    return pydantic.TypeAdapter(MultiModalContent)


def _file_of_dict(value: Any) -> Any:
    # A file dumped as Python data (`mode='json'`: binary data as base64 text) is not an exact match for its class,
    # so the union's smart mode would keep it as a plain dict; a dict tagged with a file's `kind` that loads as that
    # file is the file. Anything else is left to the union.
    if type(value) is dict and isinstance(kind := value.get('kind'), str) and kind in _FILE_KINDS:
        try:
            return _file_adapter().validate_python(value)
        except pydantic.ValidationError:
            return value
    return value


if TYPE_CHECKING:
    ToolReturnContent: TypeAlias = MultiModalContent | Sequence[Any] | Mapping[str, Any] | Any
else:
    # Recursive for validation: files nested in a tool's returned lists and dicts load back as files.
    ToolReturnContent = TypeAliasType(
        'ToolReturnContent',
        Annotated[
            MultiModalContent | Sequence['ToolReturnContent'] | Mapping[str, 'ToolReturnContent'] | Any,
            pydantic.BeforeValidator(_file_of_dict),
            _SerializedByType(),
        ],
    )
"""What a tool may return: any value, with files anywhere in its lists and dicts."""

ReturnValueT = TypeVar('ReturnValueT', default=Any)


@dataclass(repr=False)
class ToolReturn(Generic[ReturnValueT]):
    """What a tool returns when the model should get more than its result: the result, content sent after
    the tool results in a user prompt, data kept for the application, and deferred tools it reveals."""

    return_value: ToolReturnContent
    """The tool's result, sent to the model as the tool return."""
    _: KW_ONLY
    content: str | Sequence[UserContent] | None = None
    """Content sent to the model in a user prompt after the tool results (files, text)."""
    metadata: Any = None
    """Data kept in the `ToolReturnPart` for the application and not sent to the model."""
    tools: list[str] | None = None
    """Names of deferred tools (`defer_loading=True`) this call makes available to the model from the next request
    on. The run records them in a `ToolAvailabilityDeltaPart` after the tool's return (leaving out those already
    revealed); a name that is not a deferred tool of the run changes nothing."""
    kind: Literal['tool-return'] = 'tool-return'
    """Tag of this kind of return value."""

    def __repr__(self) -> str:
        return _repr_set(self)


def _repr_set(obj: Any) -> str:
    # The dataclass repr without fields left at their default (as pydantic-ai shows these classes).
    shown: list[str] = []
    for name, spec in obj.__dataclass_fields__.items():
        value = getattr(obj, name)
        if spec.default is not value and spec.default != value:
            shown.append(f'{name.lstrip("_")}={value!r}')
    return f'{type(obj).__name__}({", ".join(shown)})'
