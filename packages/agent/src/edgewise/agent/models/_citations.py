"""The citations of each API's responses as `Citation`s (pydantic-ai 2.68's mapping): OpenAI's URL and file
annotations (Responses and Chat Completions), Anthropic's text block citations, and Gemini's grounding supports.
The raw citation data a provider sends goes in the text part's `provider_details['citations']`.
"""

from __future__ import annotations as _annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._messages.citations import (
    Citation,
    CitationSource,
    ContentCitationAnchor,
    DocumentCitationSource,
    MarkerCitationAnchor,
    WebCitationSource,
)

__all__ = (
    'anthropic_citations',
    'google_citations',
    'openai_chat_citations',
    'openai_responses_citations',
)


def _marker(start: Any, end: Any, text: str) -> MarkerCitationAnchor | None:
    # OpenAI's offsets select the link the model wrote into its answer, not the claim it backs.
    if isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(text):
        return MarkerCitationAnchor(start=start, end=end)
    return None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def openai_responses_citations(annotations: Any, text: str) -> tuple[list[Citation], list[dict[str, Any]]] | None:
    """The citations of an `output_text` item's `annotations` (URL and file citations; other kinds are left out),
    with the raw annotations they come from; `None` when there are none."""
    citations: list[Citation] = []
    raw: list[dict[str, Any]] = []
    for annotation in annotations if isinstance(annotations, list) else ():
        if not isinstance(annotation, Mapping):
            continue
        kind = annotation.get('type')
        if kind == 'url_citation' and (url := _str(annotation.get('url'))):
            source = WebCitationSource(url=url, title=_str(annotation.get('title')))
            anchor = _marker(annotation.get('start_index'), annotation.get('end_index'), text)
            citations.append(Citation([source], anchor=anchor))
        elif kind == 'file_citation':
            file_id, filename = _str(annotation.get('file_id')), _str(annotation.get('filename'))
            if not (file_id or filename):  # a file citation naming no file has no source to show
                continue
            citations.append(Citation([DocumentCitationSource(document_id=file_id, title=filename)]))
        else:
            continue
        raw.append(dict(annotation))
    return (citations, raw) if citations else None


def openai_chat_citations(annotations: Any, text: str) -> tuple[list[Citation], list[dict[str, Any]]] | None:
    """The citations of a chat message's `annotations` (`url_citation`s; OpenRouter's own file annotations are
    no citations), with the raw annotations they come from; `None` when there are none."""
    citations: list[Citation] = []
    raw: list[dict[str, Any]] = []
    for annotation in annotations if isinstance(annotations, list) else ():
        if not isinstance(annotation, Mapping) or annotation.get('type') != 'url_citation':
            continue
        cited = annotation.get('url_citation')
        if not isinstance(cited, Mapping) or not (url := _str(cited.get('url'))):
            continue
        content = _str(cited.get('content'))  # OpenRouter's excerpt of the page
        source = WebCitationSource(url=url, title=_str(cited.get('title')), excerpts=[content] if content else [])
        citations.append(Citation([source], anchor=_marker(cited.get('start_index'), cited.get('end_index'), text)))
        raw.append(dict(annotation))
    return (citations, raw) if citations else None


_ANTHROPIC_LOCATIONS = frozenset(('char_location', 'page_location', 'content_block_location'))


def anthropic_citations(raw: Any, text: str) -> list[Citation] | None:
    """The citation of a text block's `citations` (web search results and document locations; other kinds are
    left out): Anthropic cites whole blocks, so one citation of all the sources covers the whole text."""
    sources: list[CitationSource] = []
    for citation in raw if isinstance(raw, list) else ():
        if not isinstance(citation, Mapping):
            continue
        kind = citation.get('type')
        cited_text = _str(citation.get('cited_text'))
        excerpts = [cited_text] if cited_text else []
        if kind == 'web_search_result_location' and (url := _str(citation.get('url'))):
            sources.append(WebCitationSource(url=url, title=_str(citation.get('title')), excerpts=excerpts))
        elif kind in _ANTHROPIC_LOCATIONS:
            file_id, title = _str(citation.get('file_id')), _str(citation.get('document_title'))
            if file_id or title or excerpts:
                sources.append(DocumentCitationSource(document_id=file_id, title=title, excerpts=excerpts))
    if not sources:
        return None
    return [Citation(sources, anchor=ContentCitationAnchor(start=0, end=len(text)) if text else None)]


def _char_index(text: str, byte_index: int) -> int | None:
    # Gemini counts UTF-8 bytes; a Python string counts characters.
    encoded = text.encode()
    if not 0 <= byte_index <= len(encoded):
        return None
    try:
        return len(encoded[:byte_index].decode())
    except UnicodeDecodeError:
        return None


def _segment_anchor(text: str, segment: Mapping[str, Any], byte_offset: int = 0) -> ContentCitationAnchor | None:
    start = _char_index(text, (segment.get('startIndex') or 0) - byte_offset)
    end = _char_index(text, (segment.get('endIndex') or 0) - byte_offset)
    if start is not None and end is not None and start < end and text[start:end] == segment.get('text'):
        return ContentCitationAnchor(start=start, end=end)
    return None


def _locate(texts: dict[int, str], segment: Mapping[str, Any]) -> tuple[int | None, ContentCitationAnchor | None]:
    """The text part a grounding segment belongs to, and where in it (offsets first, then the segment's text)."""
    index = segment.get('partIndex')
    if isinstance(index, int) and index in texts:
        if anchor := _segment_anchor(texts[index], segment):
            return index, anchor
    else:  # offsets count across the text parts joined
        offset = 0
        for at, text in texts.items():
            if anchor := _segment_anchor(text, segment, offset):
                return at, anchor
            offset += len(text.encode())
    segment_text = segment.get('text')
    part_index: int | None = None
    if isinstance(index, int) and index in texts and (segment_text is None or segment_text in texts[index]):
        part_index = index
    elif isinstance(segment_text, str) and len(found := [i for i, t in texts.items() if segment_text in t]) == 1:
        part_index = found[0]
    elif len(texts) == 1:
        part_index = next(iter(texts))
    if part_index is None or not isinstance(segment_text, str) or not segment_text:
        return part_index, None
    # Offsets Gemini sends a byte off: the segment's text still anchors it when it occurs once in the part.
    text = texts[part_index]
    start = text.find(segment_text)
    if start != -1 and text.find(segment_text, start + 1) == -1:
        return part_index, ContentCitationAnchor(start=start, end=start + len(segment_text))
    return part_index, None


def _grounding_source(chunk: Any) -> CitationSource | None:
    if not isinstance(chunk, Mapping):
        return None
    for key in ('web', 'maps'):
        if isinstance(found := chunk.get(key), Mapping) and (url := _str(found.get('uri'))):
            text = _str(found.get('text'))
            return WebCitationSource(url=url, title=_str(found.get('title')), excerpts=[text] if text else [])
    if isinstance(image := chunk.get('image'), Mapping) and (url := _str(image.get('sourceUri'))):
        return WebCitationSource(url=url, title=_str(image.get('title')))
    if isinstance(context := chunk.get('retrievedContext'), Mapping):
        rag = context.get('ragChunk')
        texts = (_str(context.get('text')), _str(rag.get('text')) if isinstance(rag, Mapping) else None)
        excerpts = list(dict.fromkeys(text for text in texts if text))
        document_id, title = _str(context.get('documentName')), _str(context.get('title'))
        if document_id or title or excerpts:
            return DocumentCitationSource(document_id=document_id, title=title, excerpts=excerpts)
    return None


def google_citations(
    texts: Sequence[tuple[int, str]], grounding: Any
) -> dict[int, tuple[list[Citation], list[dict[str, Any]]]]:
    """The citations of a candidate's `groundingMetadata`, by the index of the text part each belongs to (`texts`:
    the index and text of each answer part, thoughts left out), with each support's raw data and the chunks it
    names, in its order."""
    if not isinstance(grounding, Mapping) or not isinstance(supports := grounding.get('groundingSupports'), list):
        return {}
    chunks = grounding.get('groundingChunks') or []
    by_index = dict(texts)
    found: dict[int, tuple[list[Citation], list[dict[str, Any]]]] = {}
    for support in supports:
        segment = support.get('segment') if isinstance(support, Mapping) else None
        if not isinstance(segment, Mapping) or segment.get('endIndex') is None:
            continue
        part_index, anchor = _locate(by_index, segment)
        if part_index is None:
            continue
        indices = [i for i in support.get('groundingChunkIndices') or () if isinstance(i, int)]
        named = [chunks[i] if 0 <= i < len(chunks) else None for i in indices]
        sources = [source for chunk in named if (source := _grounding_source(chunk)) is not None]
        if not sources:
            continue
        citations, raw = found.setdefault(part_index, ([], []))
        citations.append(Citation(sources, anchor=anchor))
        raw.append({**support, 'groundingChunks': named})
    return found
