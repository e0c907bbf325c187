"""A document review workflow: the example drawn in the README, docs/diagrams.md and docs/cli.md.

Run it with `python -m examples.graph.review_workflow`: it prints the workflow's mermaid code, then runs it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from edgewise.graph import BaseNode, Edge, End, Graph, GraphRunContext


@dataclass
class Document:
    """The state of a review: the document and its history of comments."""

    title: str
    body: str = ''
    revisions: int = 0
    comments: list[str] = field(default_factory=list)


@dataclass
class Draft(BaseNode[Document, None, str]):
    async def run(self, ctx: GraphRunContext[Document]) -> Review:
        ctx.state.body = f'First draft of {ctx.state.title}.'
        return Review()


@dataclass
class Review(BaseNode[Document, None, str]):
    """Approve the document, or send it back with a comment."""

    docstring_notes = True

    async def run(
        self, ctx: GraphRunContext[Document]
    ) -> Annotated[Publish, Edge(label='approve')] | Annotated[Revise, Edge(label='request changes')]:
        if ctx.state.revisions < 2:
            return Revise(comment=f'round {ctx.state.revisions + 1}: tighten the wording')
        return Publish()


@dataclass
class Revise(BaseNode[Document, None, str]):
    comment: str

    async def run(self, ctx: GraphRunContext[Document]) -> Review:
        ctx.state.revisions += 1
        ctx.state.comments.append(self.comment)
        return Review()


@dataclass
class Publish(BaseNode[Document, None, str]):
    async def run(self, ctx: GraphRunContext[Document]) -> Annotated[End[str], Edge(label='published')]:
        return End(f'{ctx.state.title}, revision {ctx.state.revisions}')


review_graph = Graph[Document, None, str](nodes=[Draft, Review, Revise, Publish])


def main() -> None:
    print(review_graph.mermaid_code(start_node=Draft))
    result = review_graph.run_sync(Draft(), state=Document(title='Release notes'))
    print(result.output)


if __name__ == '__main__':
    main()
