"""The review workflow example prints its diagram and reaches the end after two revisions."""

from __future__ import annotations

import pytest
from examples.graph import review_workflow
from inline_snapshot import snapshot


def test_example_prints_its_diagram_and_output(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(review_workflow.review_graph, 'auto_instrument', False)
    review_workflow.main()
    assert capsys.readouterr().out == snapshot("""\
---
title: review_graph
---
stateDiagram-v2
  [*] --> Draft
  Draft --> Review
  Review --> Publish: approve
  Review --> Revise: request changes
  note right of Review
    Approve the document, or send it back with a comment.
  end note
  Revise --> Review
  Publish --> [*]: published
Release notes, revision 2
""")
