"""Instructions as data (pydantic-ai 2.68): the blocks a request's instructions are made of, who contributed each
(`InstructionId`), and the records a history keeps of them: `InstructionBaselinePart` (the blocks a run of
`on_change='append'` requests was opened with) and `InstructionDeltaPart` (a later replacement or withdrawal of
one block, which the model reads as a `<pyai:context>` element instead of a changed, cache-breaking prefix).

An id travels as the string it renders to (`'agent'`, `'toolset:weather'`, `'capability:budget:remaining'`), so a
stored history reads the same in pydantic-ai and here.
"""

from __future__ import annotations as _annotations

import hashlib
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, replace
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

import pydantic

from .framing import CONTEXT_DIFF_TAG, CONTEXT_TAG, frame
from .tool_parts import _repr

if TYPE_CHECKING:
    from .otel import OtelMessagePart, TraceContentOptions

__all__ = (
    'AgentInstructionSource',
    'ToolsetInstructionSource',
    'CapabilityInstructionSource',
    'RunInstructionSource',
    'InstructionSource',
    'InstructionId',
    'SerializedInstructionId',
    'InstructionChangePolicy',
    'InstructionPart',
    'InstructionDeltaPart',
    'InstructionDigest',
    'InstructionBaselinePart',
    'CONTEXT_TAG',
    'CONTEXT_DIFF_TAG',
    'SUPERSESSION_SENTENCE',
    'instruction_text_hash',
    'render_append_parts',
    'render_system_prompt_statement',
    'tag_window_prefix',
)


SUPERSESSION_SENTENCE = (
    f'A later <{CONTEXT_TAG}> element with the same id replaces the earlier one '
    'and stays in effect until replaced again.'
)
"""Told once after the prefix's append-mode blocks, so the model keeps following a later change."""


@dataclass(frozen=True, repr=False)
class AgentInstructionSource:
    """The agent's own instructions (one agent per run, so no id)."""

    def __str__(self) -> str:
        return 'agent'

    def __repr__(self) -> str:
        return 'AgentInstructionSource()'


@dataclass(frozen=True, repr=False)
class ToolsetInstructionSource:
    """A toolset that has an `id`."""

    id: str
    """The toolset's id."""

    def __str__(self) -> str:
        return f'toolset:{self.id}'

    def __repr__(self) -> str:
        return _repr(self, ('id',))


@dataclass(frozen=True, repr=False)
class CapabilityInstructionSource:
    """A capability that has an `id`."""

    id: str
    """The capability's id."""

    def __str__(self) -> str:
        return f'capability:{self.id}'

    def __repr__(self) -> str:
        return _repr(self, ('id',))


@dataclass(frozen=True, repr=False)
class RunInstructionSource:
    """The `instructions` argument of a run method: a named block of it is `'run:<name>'`, which is how a later run
    of the same conversation says that its value is the same block."""

    def __str__(self) -> str:
        return 'run'

    def __repr__(self) -> str:
        return 'RunInstructionSource()'


InstructionSource: TypeAlias = (
    AgentInstructionSource | ToolsetInstructionSource | CapabilityInstructionSource | RunInstructionSource
)
"""Who contributed an instruction block."""


@dataclass(frozen=True, repr=False)
class InstructionId:
    """The key of an instruction block: its source, and which of the source's blocks it is."""

    source: InstructionSource
    """The agent, a toolset or capability with an `id`, or the run."""
    _: KW_ONLY
    name: str | None = None
    """The block's name within its source; `None` for everything the source contributes."""

    def __str__(self) -> str:
        return str(self.source) if self.name is None else f'{self.source}:{self.name}'

    def __repr__(self) -> str:
        return _repr(self, ('source', 'name'))


def _parse_instruction_id(value: Any) -> Any:
    # A namespace this version does not know comes from a newer one: the key loads as unaddressable (`None`)
    # rather than failing the whole history.
    if not isinstance(value, str):
        return value
    head, colon, rest = value.partition(':')
    if value == 'agent' or (head == 'agent' and colon):
        return InstructionId(AgentInstructionSource(), name=rest if colon else None)
    if head == 'run' and colon:
        # A run's block is addressed by name only.
        return InstructionId(RunInstructionSource(), name=rest)
    if head in ('toolset', 'capability') and colon:
        source_id, colon, name = rest.partition(':')
        kind = ToolsetInstructionSource if head == 'toolset' else CapabilityInstructionSource
        return InstructionId(kind(source_id), name=name if colon else None)
    return None


def _dump_instruction_id(value: InstructionId | None) -> str | None:
    return None if value is None else str(value)


SerializedInstructionId: TypeAlias = Annotated[
    InstructionId | None,
    pydantic.BeforeValidator(_parse_instruction_id),
    pydantic.PlainSerializer(_dump_instruction_id, return_type=str | None, when_used='json'),
]
"""An `InstructionId` kept in JSON as the string it renders to."""

InstructionChangePolicy: TypeAlias = Literal['rewrite', 'append']
"""How a change of a block reaches the model: `'rewrite'` changes the instruction prefix; `'append'` keeps the
prefix and records the change later in the history (`InstructionDeltaPart`)."""


@dataclass(repr=False)
class InstructionPart:
    """One block of a request's instructions: its text, whether a function wrote it, how a change of it is
    delivered, and the key it is addressed by."""

    content: str
    """The block's text."""
    _: KW_ONLY
    dynamic: bool = False
    """Whether a function, a template or a toolset wrote it (rather than a literal string)."""
    on_change: InstructionChangePolicy = 'rewrite'
    """`'rewrite'` (the prefix changes with the block) or `'append'`: the prefix keeps the block's first value and
    each change (or withdrawal) is recorded as an `InstructionDeltaPart`. `'append'` needs an `id`; a block
    without one is sent as `'rewrite'`."""
    name: str | None = None
    """The block's name within what contributes it (no `:`, not `'agent'`); the run qualifies it into `id`."""
    id: SerializedInstructionId = None
    """The block's key, issued by the run from `name` and the source; `None` when nothing addresses it."""
    part_kind: Literal['instruction'] = 'instruction'
    """Tag of this part kind in serialized messages."""

    @staticmethod
    def join(parts: Sequence[InstructionPart]) -> str | None:
        """The blocks' text separated by blank lines, or `None` when that is empty."""
        return '\n\n'.join(part.content for part in parts).strip() or None

    @staticmethod
    def sorted(parts: Sequence[InstructionPart]) -> list[InstructionPart]:
        """The blocks ordered by how much they can change the prefix, each group in its order: literal blocks,
        then append-mode blocks (their first value stays), then dynamic blocks that rewrite the prefix."""
        return sorted(parts, key=_prefix_rank)

    def __repr__(self) -> str:
        shown = _repr(self, ('content', 'name', 'id'))
        extra = ''.join(
            f', {name}={value!r}'
            for name, value, default in (('dynamic', self.dynamic, False), ('on_change', self.on_change, 'rewrite'))
            if value != default
        )
        return f'{shown[:-1]}{extra})'


def _varies_in_prefix(part: InstructionPart) -> bool:
    return part.dynamic and (part.on_change == 'rewrite' or part.id is None)


def _prefix_rank(part: InstructionPart) -> int:
    if not part.dynamic:
        return 0
    return 2 if _varies_in_prefix(part) else 1


def instruction_text_hash(text: str) -> str:
    """The SHA-256 hex digest recorded for a block's text (`InstructionDeltaPart.base_hash`, `InstructionDigest`)."""
    return hashlib.sha256(text.encode()).hexdigest()


def _element(tag: str, body: str, instruction_id: InstructionId | None) -> str:
    return frame(tag, f'\n{body}\n', id=None if instruction_id is None else str(instruction_id))


def _withdrawn(*, inline_system: bool) -> str:
    if inline_system:
        return 'This context has been withdrawn.'
    return 'This context has been withdrawn, and the withdrawal stays in effect until replaced again.'


@dataclass(repr=False, kw_only=True)
class InstructionDeltaPart:
    """A later statement of an `on_change='append'` block: its whole new text, or its withdrawal (`content=None`).
    Earlier statements stay in the history; the latest one of an id is in effect. Operator content, like a system
    prompt."""

    id: SerializedInstructionId
    """The block's id (`None` when a newer version wrote a key this one cannot address: the change is then not
    applied, and the next request opens a new window)."""
    content: str | None
    """The block's new text, or `None` to withdraw it."""
    base_hash: str | None = None
    """The digest of the text this change replaces (`instruction_text_hash`), or `None`: when the model last got
    that very text, the change can go as a diff."""
    part_kind: Literal['instruction-delta'] = 'instruction-delta'
    """Tag of this part kind in serialized messages."""

    def render(self, *, inline_system: bool = True, previous: str | None = None) -> str:
        """The change as the model reads it: a `<pyai:context id=...>` element with the new text (or a note of the
        withdrawal), or a `<pyai:context_diff>` element with a unified diff from `previous` when `previous` is the
        text `base_hash` names and the diff is the shorter.

        Args:
            inline_system: Whether the model takes system messages mid-conversation; without, a withdrawal says
                that it stays in effect.
            previous: The block's text as the model last received it, if known.
        """
        if self.content is None:
            return _element(CONTEXT_TAG, _withdrawn(inline_system=inline_system), self.id)
        full = _element(CONTEXT_TAG, self.content, self.id)
        if previous is not None and self.base_hash is not None and instruction_text_hash(previous) == self.base_hash:
            import difflib  # on first use: only a changed instruction block needs it

            lines = difflib.unified_diff(
                previous.split('\n'), self.content.split('\n'), 'before', 'after', lineterm='', n=2
            )
            diff = _element(CONTEXT_DIFF_TAG, '\n'.join(lines), self.id)
            if len(diff) < len(full):
                return diff
        return full

    def otel_message_parts(self, settings: TraceContentOptions) -> list[OtelMessagePart]:
        """The change as trace text, only where `settings` let content be recorded."""
        from .otel import OtelTextPart  # (loaded by the first traced run)

        return [OtelTextPart(type='text', content=self.render())] if settings.include_content else []

    def __repr__(self) -> str:
        return _repr(self, ('id', 'content', 'base_hash'))


@dataclass(repr=False, kw_only=True)
class InstructionDigest:
    """A rewrite-mode block as an `InstructionBaselinePart` keeps it: enough to tell whether it changed."""

    id: SerializedInstructionId = None
    """The block's id, if it has one."""
    dynamic: bool = False
    """The block's `dynamic` flag (which decides where it sits in the prefix)."""
    content_hash: str
    """The digest of the block's text (`instruction_text_hash`)."""
    part_kind: Literal['instruction-digest'] = 'instruction-digest'
    """Tag of this kind in serialized messages."""

    @classmethod
    def of(cls, part: InstructionPart) -> InstructionDigest:
        """The digest of the rewrite-mode block `part`."""
        return cls(id=part.id, dynamic=part.dynamic, content_hash=instruction_text_hash(part.content))

    def matches(self, part: InstructionPart) -> bool:
        """Whether `part` is a rewrite-mode block this digest records unchanged."""
        return part.on_change != 'append' and self == InstructionDigest.of(part)

    def __repr__(self) -> str:
        shown = _repr(self, ('id', 'content_hash'))
        return shown if not self.dynamic else f'{shown[:-1]}, dynamic=True)'


def _baseline_block_kind(value: Any) -> str:
    # An `InstructionPart` may have been stored without its `part_kind`.
    kind = value.get('part_kind') if isinstance(value, dict) else getattr(value, 'part_kind', None)
    return 'instruction-digest' if kind == 'instruction-digest' else 'instruction'


BaselineBlock: TypeAlias = Annotated[
    Annotated[InstructionPart, pydantic.Tag('instruction')]
    | Annotated[InstructionDigest, pydantic.Tag('instruction-digest')],
    pydantic.Discriminator(_baseline_block_kind),
]


@dataclass(repr=False, kw_only=True)
class InstructionBaselinePart:
    """The instruction blocks a request was sent with, recorded where a window of `on_change='append'` requests
    opens; every request of the window is sent the same prefix, and the `InstructionDeltaPart`s since apply on top.
    An empty list ends the window. Never sent to a model."""

    instructions: list[BaselineBlock]
    """The request's blocks in order: append-mode ones in full (changes are computed against them), rewrite-mode
    ones as an `InstructionDigest`."""
    part_kind: Literal['instruction-baseline'] = 'instruction-baseline'
    """Tag of this part kind in serialized messages."""

    def otel_message_parts(self, settings: TraceContentOptions) -> list[OtelMessagePart]:
        """Nothing: the instructions it records are traced with the request itself."""
        return []

    def __repr__(self) -> str:
        return _repr(self, ('instructions',))


def render_append_parts(parts: Sequence[InstructionPart]) -> list[InstructionPart]:
    """`parts` as a prefix sends them: each addressable append-mode block in a `<pyai:context id=...>` element, the
    last of them followed by `SUPERSESSION_SENTENCE`; the other blocks as written."""
    tagged = [index for index, part in enumerate(parts) if part.on_change == 'append' and part.id is not None]
    rendered = list(parts)
    for index in tagged:
        content = _element(CONTEXT_TAG, parts[index].content, parts[index].id)
        if index == tagged[-1]:
            content = f'{content}\n{SUPERSESSION_SENTENCE}'
        rendered[index] = replace(parts[index], content=content)
    return rendered


def render_system_prompt_statement(content: str, context_id: str, *, inline_system: bool, states_rule: bool) -> str:
    """A statement of an appending system prompt (`SystemPromptPart.context_id`) as the model reads it: its text (or,
    when empty, a note of the withdrawal) in a `<pyai:context id=...>` element, followed by `SUPERSESSION_SENTENCE`
    when `states_rule`."""
    element = frame(CONTEXT_TAG, f'\n{content or _withdrawn(inline_system=inline_system)}\n', id=context_id)
    return f'{element}\n{SUPERSESSION_SENTENCE}' if states_rule else element


def tag_window_prefix(instructions: str, baseline: InstructionBaselinePart) -> str:
    """`instructions` (a window's prefix, its blocks joined) with the window's addressable append-mode blocks in
    `<pyai:context id=...>` elements, the last followed by `SUPERSESSION_SENTENCE`, as `render_append_parts` sends
    them; `instructions` itself when it holds none of them in order."""
    blocks = [
        block
        for block in baseline.instructions
        if isinstance(block, InstructionPart) and block.on_change == 'append' and block.id is not None and block.content
    ]
    pieces: list[str] = []
    cursor = 0
    for index, block in enumerate(blocks):
        at = instructions.find(block.content, cursor)
        if at < 0:
            return instructions
        element = _element(CONTEXT_TAG, block.content, block.id)
        if index == len(blocks) - 1:
            element = f'{element}\n{SUPERSESSION_SENTENCE}'
        pieces += [instructions[cursor:at], element]
        cursor = at + len(block.content)
    return ''.join([*pieces, instructions[cursor:]])
