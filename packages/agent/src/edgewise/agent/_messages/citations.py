"""Citations: which sources back which part of a model's text answer (`TextPart.citations`), as pydantic-ai 2.68
records them. What a provider says beyond these fields (page numbers, confidence scores) stays in the part's
`provider_details['citations']`.
"""

from __future__ import annotations as _annotations

from dataclasses import KW_ONLY, dataclass, field, fields
from typing import Annotated, Literal, TypeAlias

import pydantic

__all__ = (
    'Citation',
    'CitationAnchor',
    'CitationSource',
    'ContentCitationAnchor',
    'DocumentCitationSource',
    'MarkerCitationAnchor',
    'WebCitationSource',
)


def _repr(obj: object) -> str:
    # The dataclass repr without the fields left at their default, as pydantic-ai shows them.
    shown = ', '.join(
        f'{f.name}={value!r}'
        for f in fields(obj)  # type: ignore[arg-type]
        if f.name != 'kind' and (value := getattr(obj, f.name)) is not None and value != []
    )
    return f'{type(obj).__name__}({shown})'


@dataclass(repr=False)
class WebCitationSource:
    """A web page a citation points to."""

    url: str
    """The page's URL."""
    _: KW_ONLY
    title: str | None = None
    """The page's title, when the provider gives one."""
    excerpts: list[str] = field(default_factory=list[str])
    """Passages of the source backing the cited text: the exact text cited or a longer chunk, as the provider
    gives it (it may quote your own documents: mind where you log or show it)."""
    kind: Literal['web'] = 'web'
    """Tag of this source kind in serialized messages."""

    __repr__ = _repr


@dataclass(repr=False)
class DocumentCitationSource:
    """Another source a citation points to: a document sent with the request, a file in the provider's store.

    Raises:
        ValueError: none of `document_id`, `title` and `excerpts` is given.
    """

    _: KW_ONLY
    document_id: str | None = None
    """The provider's id of the document or file (not a local path)."""
    title: str | None = None
    """The document's title or file name, when the provider gives one."""
    excerpts: list[str] = field(default_factory=list[str])
    """Passages of the source backing the cited text (as `WebCitationSource.excerpts`)."""
    kind: Literal['document'] = 'document'
    """Tag of this source kind in serialized messages."""

    def __post_init__(self) -> None:
        if not (self.document_id or self.title or self.excerpts):
            raise ValueError('A document citation source must have at least one source field')

    __repr__ = _repr


CitationSource: TypeAlias = Annotated[WebCitationSource | DocumentCitationSource, pydantic.Discriminator('kind')]
"""Where a citation's information comes from."""


def _check_range(start: int, end: int) -> None:
    if start < 0 or end <= start:
        raise ValueError('Citation anchor must satisfy 0 <= start < end')


@dataclass(repr=False, kw_only=True)
class ContentCitationAnchor:
    """The text the sources back, as positions in the part's `content` (`content[start:end]`).

    Raises:
        ValueError: the range is empty or starts before 0.
    """

    start: int
    """The position of the first character (from 0)."""
    end: int
    """The position after the last character."""
    kind: Literal['content'] = 'content'
    """Tag of this anchor kind in serialized messages."""

    def __post_init__(self) -> None:
        _check_range(self.start, self.end)

    __repr__ = _repr


@dataclass(repr=False, kw_only=True)
class MarkerCitationAnchor:
    """A marker the model wrote (`[1]`, a link), as positions in the part's `content` (`content[start:end]`).

    Raises:
        ValueError: the range is empty or starts before 0.
    """

    start: int
    """The position of the first character (from 0)."""
    end: int
    """The position after the last character."""
    kind: Literal['marker'] = 'marker'
    """Tag of this anchor kind in serialized messages."""

    def __post_init__(self) -> None:
        _check_range(self.start, self.end)

    __repr__ = _repr


CitationAnchor: TypeAlias = Annotated[ContentCitationAnchor | MarkerCitationAnchor, pydantic.Discriminator('kind')]
"""Which part of a `TextPart`'s `content` a citation is about."""


@dataclass(repr=False)
class Citation:
    """Links part of a model's answer to the sources backing it.

    Raises:
        ValueError: `sources` is empty.
    """

    sources: list[CitationSource]
    """Where the information comes from."""
    _: KW_ONLY
    anchor: CitationAnchor | None = None
    """Which part of the text the citation is about; `None` when the provider does not say."""

    def __post_init__(self) -> None:
        if not self.sources:
            raise ValueError('A citation must have at least one source')

    __repr__ = _repr
