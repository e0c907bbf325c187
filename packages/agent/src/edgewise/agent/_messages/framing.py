"""The tags the framework writes into prompt text, and how they are rendered (pydantic-ai 2.68's `_framing`).

Where an API has no channel for something, the framework says it in text and frames it in a tag: a system prompt
in the middle of a conversation, on a model with no system role there, goes as a `<system>` block in a user turn;
a file a tool returned, on an API whose tool results hold only text, follows in the user turn inside
`<pyai:tool_result ...>`. `<system>` is the one voice tag (the application speaking); the others are data tags that
say where content came from. The tags only the framework writes carry the reserved `pyai:` prefix, so an
application's own `<tool_result>` is ordinary text with nothing to imitate.

The framework's own frames (`frame`, `frame_tags`, `system_frame`) hold their body exactly as written. The public
`edgewise.agent.framing` module renders data tags for extensions and escapes their bodies (`neutralize_tags`);
it raises the package's errors, so the checks here only say what is wrong (`model_visible_name_error`), and this
module stays on the floor of the package.
"""

from __future__ import annotations as _annotations

import functools
import re
import threading
from typing import Final, Literal, NewType, get_args

__all__ = (
    'DataTag',
    'FramingTag',
    'RegisteredTag',
    'FrameworkTag',
    'FRAMEWORK_TAG_PREFIX',
    'SYSTEM_TAG',
    'TOOL_RESULT_TAG',
    'ASSISTANT_THINKING_TAG',
    'CONTEXT_TAG',
    'CONTEXT_DIFF_TAG',
    'VALIDATION_ERRORS_TAG',
    'RETRY_FEEDBACK_TAG',
    'CONVERSATION_SUMMARY_TAG',
    'SEALED_SYSTEM_OPEN',
    'framework_tag',
    'model_visible_name_error',
    'is_known_tag',
    'is_builtin_tag',
    'add_registered_tag',
    'render_attributes',
    'neutralize_tags',
    'frame',
    'frame_tags',
    'system_frame',
)

DataTag = Literal[
    'tool_result',
    'assistant_thinking',
    'context',
    'context_diff',
    'validation_errors',
    'retry_feedback',
    'conversation_summary',
]
"""The unprefixed data tags `edgewise.agent.framing.wrap` takes without registering them."""

FramingTag = Literal['system', DataTag]
"""The `'system'` voice tag and the unprefixed data tags."""

RegisteredTag = NewType('RegisteredTag', str)
"""A data tag an extension registered with `edgewise.agent.framing.register_tag`."""

FrameworkTag = NewType('FrameworkTag', str)
"""A tag only the framework writes: its name starts with `FRAMEWORK_TAG_PREFIX`."""

FRAMEWORK_TAG_PREFIX: Final = 'pyai:'
"""The prefix of the framework's own tags; no registered tag or attribute name may start with it."""


def framework_tag(name: str) -> FrameworkTag:
    """The framework's tag for `name`: `name` behind the reserved prefix."""
    return FrameworkTag(f'{FRAMEWORK_TAG_PREFIX}{name}')


SYSTEM_TAG: Final = 'system'
"""The voice tag: the application speaking, on a channel with no system role."""
TOOL_RESULT_TAG: Final = framework_tag('tool_result')
"""Frames a file a tool returned that travels on the user channel, naming the call it came from."""
ASSISTANT_THINKING_TAG: Final = 'assistant_thinking'
"""Frames another model's reasoning carried into a user turn (unprefixed, as in pydantic-ai)."""
CONTEXT_TAG: Final = framework_tag('context')
"""Frames an append-mode instruction block's statement, with its id."""
CONTEXT_DIFF_TAG: Final = framework_tag('context_diff')
"""Frames a change of an append-mode instruction block as a unified diff."""
VALIDATION_ERRORS_TAG: Final = framework_tag('validation_errors')
"""Frames validation errors fed back to the model in the user voice."""
RETRY_FEEDBACK_TAG: Final = framework_tag('retry_feedback')
"""Frames a `ModelRetry` message fed back to the model in the user voice."""
CONVERSATION_SUMMARY_TAG: Final = framework_tag('conversation_summary')
"""Frames a summary standing in for the earlier conversation."""

SEALED_SYSTEM_OPEN: Final = '<system verified>'
"""The opening tag of `<system>` blocks on a profile with `needs_sealed_system_blocks`. The bare `verified`
attribute is a fixed public marker some models follow better; it proves nothing."""

_BUILTIN_TAGS: Final[tuple[str, ...]] = (
    *get_args(FramingTag),
    TOOL_RESULT_TAG,
    VALIDATION_ERRORS_TAG,
    RETRY_FEEDBACK_TAG,
    CONVERSATION_SUMMARY_TAG,
    CONTEXT_TAG,
    CONTEXT_DIFF_TAG,
)

_MODEL_VISIBLE_NAME: Final = re.compile(r'[a-z][a-z0-9]*(?:_[a-z0-9]+)*')
# The rule attribute names followed before 2.68; such names still pass, with a deprecation warning.
_LEGACY_NAME: Final = re.compile(r'[a-z_][a-z0-9_]*')


def model_visible_name_error(name: str, *, what: str) -> tuple[str, bool] | None:
    """What is wrong with `name` as a tag or attribute name a model reads, or `None` when it is lowercase snake_case.

    Returns the message and whether the name followed the looser earlier rule (`[a-z_][a-z0-9_]*`), which callers
    that took such names before only warn about.
    """
    if name.lower().startswith(FRAMEWORK_TAG_PREFIX):
        reserved = f"the prefix of the framework's own tags; got {name!r}."
        return f'{what} may not start with {FRAMEWORK_TAG_PREFIX!r}, {reserved}', False
    if _MODEL_VISIBLE_NAME.fullmatch(name):
        return None
    message = (
        f'{what} must be lowercase snake_case (letters and digits, single underscores), such as `judge_feedback`; '
        f'got {name!r}.'
    )
    return message, _LEGACY_NAME.fullmatch(name) is not None


def _tag_openers(tags: tuple[str, ...]) -> re.Pattern[str]:
    # The `<` of an opening or closing tag among `tags`, in any case, with whitespace before or around the `/`, with
    # attributes, self-closing, or cut off at the end of the text; not a longer name that merely starts with one.
    names = '|'.join(re.escape(tag) for tag in tags)
    return re.compile(rf'<(?=\s*(?:/\s*)?(?:{names})(?=[\s/>]|$))', re.IGNORECASE)


_lock: Final = threading.Lock()
_registered: tuple[RegisteredTag, ...] = ()


@functools.cache
def _builtin_openers() -> re.Pattern[str]:
    # Compiled by the first text neutralized, not when the agent is imported.
    return _tag_openers(_BUILTIN_TAGS)


_openers: re.Pattern[str] | None = None  # the built-in and registered tags' (`None` until a tag is registered)
_escaped_any = False


def is_builtin_tag(name: str) -> bool:
    """Whether `name` is one of the framework's tags (unprefixed or prefixed)."""
    return name in _BUILTIN_TAGS


def is_known_tag(name: str) -> bool:
    """Whether `name` is a built-in or registered tag."""
    return name in _BUILTIN_TAGS or name in _registered


def add_registered_tag(name: str) -> tuple[RegisteredTag, bool]:
    """Register `name` (already checked) as a data tag; returns it and whether text was escaped before it was new."""
    global _registered, _openers
    tag = RegisteredTag(name)
    with _lock:
        if tag in _registered:
            return tag, False
        tags = (*_registered, tag)
        _openers = _tag_openers((*_BUILTIN_TAGS, *tags))
        _registered = tags
    return tag, _escaped_any


def render_attributes(attrs: dict[str, str | None]) -> str:
    """` name="value"` for each attribute with a value, in the given order, values HTML-escaped."""
    import html  # (loaded by the first attribute framed, not with the agent)

    return ''.join(f' {name}="{html.escape(value)}"' for name, value in attrs.items() if value is not None)


def neutralize_tags(text: str) -> str:
    """`text` with the `<` of every opening or closing framing tag (built-in or registered) escaped as `&lt;`."""
    global _escaped_any
    _escaped_any = True
    return (_openers or _builtin_openers()).sub('&lt;', text)


def frame_tags(tag: str, /, **attrs: str | None) -> tuple[str, str]:
    """The opening and closing tags of a framework frame around a body that is not a string, such as a file."""
    return f'<{tag}{render_attributes(attrs)}>', f'</{tag}>'


def frame(tag: str, body: str, /, **attrs: str | None) -> str:
    """`body` in the framework frame `tag`, exactly as written (the framework's own frames are not escaped)."""
    opening, closing = frame_tags(tag, **attrs)
    return f'{opening}{body}{closing}'


def system_frame(body: str, *, sealed: bool) -> str:
    """`body` as a `<system>` block, as written; opened with `SEALED_SYSTEM_OPEN` when `sealed`."""
    if sealed:
        return f'{SEALED_SYSTEM_OPEN}{body}</{SYSTEM_TAG}>'
    return frame(SYSTEM_TAG, body)
