"""Descriptions from docstrings (google, numpy or sphinx style, parsed with griffe), as pydantic-ai reads them.

griffe is imported only when a function actually has a docstring: it is the heaviest import of the package.
"""

from __future__ import annotations as _annotations

import logging
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal

__all__ = ('DocstringFormat', 'doc_descriptions', 'infer_docstring_style')

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
