"""Descriptions from docstrings (google, numpy or sphinx style, parsed with griffe), as pydantic-ai reads them.

griffe is imported only when a function actually has a docstring: it is the heaviest import of the package.
"""

from __future__ import annotations as _annotations

import ast
import inspect
import re
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import Enum
from typing import Any, Literal

__all__ = (
    'DocstringFormat',
    'UseEnumMemberDocstrings',
    'described_enum_schema',
    'doc_descriptions',
    'enum_member_docstrings',
    'infer_docstring_style',
)

DocstringFormat = Literal['google', 'numpy', 'sphinx', 'auto']
"""How a function's docstring is written; `'auto'` infers it from the text."""

_SECTION_WORDS: list[tuple[Literal['google', 'numpy', 'sphinx'], str, tuple[str, ...]]] = [
    # (style, regex with `{}` for a section word, the words); tried in this order, google is the fallback
    ('sphinx', r'\n[ \t]*:{}([ \t]+\w+)*:([ \t]+.+)?\n',
     ('param', 'parameter', 'arg', 'argument', 'key', 'keyword', 'type', 'var', 'ivar', 'cvar', 'vartype',
      'returns', 'return', 'rtype', 'raises', 'raise', 'except', 'exception')),
    ('google', r'\n[ \t]*{}:([ \t]+.+)?\n[ \t]+.+',
     ('args', 'arguments', 'params', 'parameters', 'keyword args', 'keyword arguments', 'other args',
      'other arguments', 'other params', 'other parameters', 'raises', 'exceptions', 'returns', 'yields',
      'receives', 'examples', 'attributes', 'functions', 'methods', 'classes', 'modules', 'warns', 'warnings')),
    ('numpy', r'\n[ \t]*{}\n[ \t]*---+\n',
     ('deprecated', 'parameters', 'other parameters', 'returns', 'yields', 'receives', 'raises', 'warns',
      'attributes', 'functions', 'methods', 'classes', 'modules')),
]  # fmt: skip


def infer_docstring_style(doc: str) -> Literal['google', 'numpy', 'sphinx']:
    """The style of a docstring, from the section markers it uses (google when none is recognised)."""
    for style, pattern, words in _SECTION_WORDS:
        if any(re.search(pattern.format(word), doc, re.IGNORECASE | re.MULTILINE) for word in words):
            return style
    return 'google'


@contextmanager
def _quiet_griffe() -> Iterator[None]:
    # griffe logs a warning for every parameter or return documented without a type; tools rarely have one.
    import logging  # (griffe loads it anyway; the agent's import does not)

    logger = logging.getLogger('griffe')
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def doc_descriptions(
    function: Callable[..., Any], docstring_format: DocstringFormat
) -> tuple[str | None, dict[str, str]]:
    """The description of `function` and of each of its parameters, from its docstring.

    The description is `None` without a docstring. When the docstring has a returns section, the description
    is `<summary>...</summary>` (if there is text) followed by `<returns>` with the return's `<type>` (if
    given) and `<description>`, as pydantic-ai sends it.
    """
    doc = function.__doc__
    if doc is None:
        return None, {}
    import griffe

    style = infer_docstring_style(doc) if docstring_format == 'auto' else docstring_format
    options = None
    if style == 'google':  # a returns section is one value, its first line the description (not a name)
        options = griffe.GoogleOptions(returns_named_value=False, returns_multiple_items=False)
    docstring = griffe.Docstring(doc, lineno=1, parser=style, parser_options=options)
    with _quiet_griffe():
        sections = docstring.parse()
    params: dict[str, str] = {}
    text = ''
    returns: Any = None
    for section in sections:
        if section.kind is griffe.DocstringSectionKind.parameters and not params:
            params = {p.name: p.description for p in section.value}
        elif section.kind is griffe.DocstringSectionKind.text and not text:
            text = section.value
        elif section.kind is griffe.DocstringSectionKind.returns and returns is None:
            returns = section.value[0]
    if returns is not None:
        type_tag = f'<type>{returns.annotation}</type>\n' if returns.annotation else ''
        block = f'<returns>\n{type_tag}<description>{returns.description}</description>\n</returns>'
        text = f'<summary>{text}</summary>\n{block}' if text else block
    return text, params


class UseEnumMemberDocstrings:
    """Mix into an `Enum` (ahead of `str`, `int` or `Enum`) to describe each member to the model by the docstring
    written under it: `class Urgency(UseEnumMemberDocstrings, str, Enum)`.

    The enum's schema is then `anyOf` one `const` per member, each with its docstring as description, instead of a
    bare `enum` list. Nothing else about the enum changes. (An enum has no `model_config` to carry a flag, and any
    class attribute would become a member, so a base class is the marker.)
    """


def enum_member_docstrings(cls: type[Enum]) -> dict[str, str]:
    """The docstring written under each member of `cls`, by the name it is declared under (empty when the class's
    source cannot be read, as for a class made in a REPL)."""
    try:
        source = inspect.getsource(cls)
    except (OSError, TypeError):
        return {}
    class_def = ast.parse(textwrap.dedent(source)).body[0]
    if not isinstance(class_def, ast.ClassDef):  # pragma: no cover - `getsource` of a class gives its `class`
        return {}
    found: dict[str, str] = {}
    for before, node in zip(class_def.body, class_def.body[1:], strict=False):
        if not (
            isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        ):
            continue
        if isinstance(before, ast.Assign):
            targets = before.targets
        elif isinstance(before, ast.AnnAssign):
            targets = [before.target]
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Name) and target.id in cls.__members__:
                found[target.id] = inspect.cleandoc(node.value.value)
    return found


def described_enum_schema(enum_cls: type[Enum], members: list[Any], json_schema: dict[str, Any]) -> dict[str, Any]:
    """`json_schema` (pydantic's schema of `enum_cls`, whose `members` are given in order) with each member
    described by its docstring, when the enum mixes in `UseEnumMemberDocstrings`; else as it is."""
    if not issubclass(enum_cls, UseEnumMemberDocstrings):
        return json_schema
    declared = enum_member_docstrings(enum_cls)
    # An alias is the member it names: its docstring describes that member, unless the member has its own.
    docstrings: dict[str, str] = {}
    for name, member in enum_cls.__members__.items():
        if (doc := declared.get(name)) is not None:
            docstrings.setdefault(member.name, doc)
    values = json_schema.get('enum', ())
    # A `None` value has no `const` that reads as one, so such an enum keeps its `enum` list.
    if docstrings and all(value is not None for value in values):
        json_schema = dict(json_schema)
        json_schema['anyOf'] = [
            {'const': value, **({'description': docstrings[member.name]} if member.name in docstrings else {})}
            for member, value in zip(members, json_schema.pop('enum'), strict=True)
        ]
    return json_schema
