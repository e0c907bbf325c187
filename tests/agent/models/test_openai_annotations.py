"""`edgewise.agent.models.openai`'s validators of OpenAI's text annotations (pydantic-ai 2.68's
`responses_output_text_annotation(s)_ta` and `chat_annotation(s)_ta`)."""

from __future__ import annotations

import subprocess
import sys

import pydantic
import pytest

from edgewise.agent.models import openai


def test_responses_annotations_validate_by_their_type() -> None:
    annotations = openai.responses_output_text_annotations_ta.validate_json(
        b"""[
            {"type": "url_citation", "url": "https://example.com/a", "title": "A", "start_index": 3, "end_index": 9},
            {"type": "file_citation", "file_id": "file-1", "filename": "notes.pdf", "index": 12},
            {"type": "container_file_citation", "container_id": "cntr-1", "file_id": "cfile-1",
             "filename": "plot.png", "start_index": 0, "end_index": 4},
            {"type": "file_path", "file_id": "file-2", "index": 20}
        ]"""
    )
    assert [type(a).__name__ for a in annotations] == [
        'AnnotationURLCitation',
        'AnnotationFileCitation',
        'AnnotationContainerFileCitation',
        'AnnotationFilePath',
    ]
    url = annotations[0]
    assert (url.type, url.url, url.title, url.start_index, url.end_index) == (  # type: ignore[union-attr]
        'url_citation',
        'https://example.com/a',
        'A',
        3,
        9,
    )
    dumped = openai.responses_output_text_annotations_ta.dump_python(annotations)
    assert dumped[3] == {'type': 'file_path', 'file_id': 'file-2', 'index': 20}
    one = openai.responses_output_text_annotation_ta.validate_python(dumped[1])
    assert one == annotations[1]


def test_an_annotation_missing_a_field_or_of_another_type_is_refused() -> None:
    with pytest.raises(pydantic.ValidationError, match='title'):
        openai.responses_output_text_annotation_ta.validate_python(
            {'type': 'url_citation', 'url': 'https://example.com', 'start_index': 0, 'end_index': 1}
        )
    with pytest.raises(pydantic.ValidationError, match='does not match any of the expected tags'):
        openai.responses_output_text_annotation_ta.validate_python({'type': 'quote', 'text': 'x'})


def test_chat_annotations_validate_and_keep_fields_they_do_not_know() -> None:
    raw = {
        'type': 'url_citation',
        'url_citation': {
            'url': 'https://example.com/b',
            'title': 'B',
            'start_index': 0,
            'end_index': 5,
            'content': 'an excerpt',  # OpenRouter's addition
        },
    }
    [annotation] = openai.chat_annotations_ta.validate_python([raw])
    assert annotation.url_citation.url == 'https://example.com/b'
    assert openai.chat_annotation_ta.dump_python(annotation) == raw
    with pytest.raises(pydantic.ValidationError):
        openai.chat_annotation_ta.validate_python({'type': 'file', 'file': {}})


def test_the_adapters_are_built_only_when_asked_for() -> None:
    code = (
        'import sys, edgewise.agent.models.openai as m; '
        "print('edgewise.agent.models._openai_annotations' in sys.modules); "
        'm.chat_annotation_ta; '
        "print('edgewise.agent.models._openai_annotations' in sys.modules)"
    )
    shown = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True).stdout
    assert shown.split() == ['False', 'True']
