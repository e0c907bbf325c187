"""The annotations OpenAI attaches to a model's text, as data validated by pydantic: pydantic-ai 2.68's
`responses_output_text_annotation(s)_ta` and `chat_annotation(s)_ta`, whose values there are the OpenAI SDK's
classes. Edgewise speaks the HTTP API itself, so these are models of its own with the API's fields (unknown fields
are kept, as the SDK keeps them)."""

from __future__ import annotations as _annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

__all__ = (
    'AnnotationContainerFileCitation',
    'AnnotationFileCitation',
    'AnnotationFilePath',
    'AnnotationURLCitation',
    'ChatAnnotation',
    'ChatAnnotationURLCitation',
    'ResponsesAnnotation',
    'chat_annotation_ta',
    'chat_annotations_ta',
    'responses_output_text_annotation_ta',
    'responses_output_text_annotations_ta',
)


class _Annotation(BaseModel):
    model_config = ConfigDict(extra='allow')


class AnnotationFileCitation(_Annotation):
    """A Responses text's citation of a file (file search)."""

    type: Literal['file_citation']
    file_id: str
    filename: str
    index: int
    """Where in the text the file is cited."""


class AnnotationURLCitation(_Annotation):
    """A Responses text's citation of a web page (web search)."""

    type: Literal['url_citation']
    url: str
    title: str
    start_index: int
    """Where the link to the page starts in the text."""
    end_index: int


class AnnotationContainerFileCitation(_Annotation):
    """A Responses text's citation of a file of a code interpreter container."""

    type: Literal['container_file_citation']
    container_id: str
    file_id: str
    filename: str
    start_index: int
    end_index: int


class AnnotationFilePath(_Annotation):
    """A Responses text's path to a file the model made (code interpreter)."""

    type: Literal['file_path']
    file_id: str
    index: int


ResponsesAnnotation = Annotated[
    AnnotationFileCitation | AnnotationURLCitation | AnnotationContainerFileCitation | AnnotationFilePath,
    Field(discriminator='type'),
]
"""One annotation of a Responses `output_text` item, by its `type`."""


class ChatAnnotationURLCitation(_Annotation):
    """The cited web page of a Chat Completions annotation."""

    url: str
    title: str
    start_index: int
    end_index: int


class ChatAnnotation(_Annotation):
    """One annotation of a Chat Completions message: a web page it cites (web search)."""

    type: Literal['url_citation']
    url_citation: ChatAnnotationURLCitation


responses_output_text_annotations_ta: TypeAdapter[list[ResponsesAnnotation]] = TypeAdapter(list[ResponsesAnnotation])
"""Validates the `annotations` of a Responses `output_text` item."""

responses_output_text_annotation_ta: TypeAdapter[ResponsesAnnotation] = TypeAdapter(ResponsesAnnotation)
"""Validates one annotation of a Responses `output_text` item."""

chat_annotations_ta: TypeAdapter[list[ChatAnnotation]] = TypeAdapter(list[ChatAnnotation])
"""Validates the `annotations` of a Chat Completions message."""

chat_annotation_ta: TypeAdapter[ChatAnnotation] = TypeAdapter(ChatAnnotation)
"""Validates one annotation of a Chat Completions message."""
