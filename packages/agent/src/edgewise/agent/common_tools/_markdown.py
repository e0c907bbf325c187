"""HTML to markdown, for the `web_fetch` tool: headings, paragraphs, links, emphasis, code, lists, quotes and
tables, with scripts, styles and images left out.

The page comes from a server the model chose, so the work is bounded by construction: the standard library's
`HTMLParser` reads it in one pass, elements are kept on an explicit stack (no recursion), and past
`_MAX_DEPTH` open elements nested ones are read as plain text, which bounds the indentation that nested lists and
quotes repeat on every line.
"""

from __future__ import annotations as _annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

__all__ = ('html_to_markdown',)

_MAX_DEPTH = 64
_SKIPPED = frozenset({'script', 'style', 'noscript', 'template', 'svg', 'head', 'iframe', 'object'})
_VOID = frozenset(
    {'area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr'}
)
_BLOCKS = frozenset(
    {
        'address', 'article', 'aside', 'body', 'dd', 'details', 'div', 'dl', 'dt', 'fieldset', 'figcaption',
        'figure', 'footer', 'form', 'header', 'html', 'main', 'nav', 'p', 'section', 'summary',
    }
)  # fmt: skip
_FRAMED = frozenset(
    {
        'a', 'b', 'blockquote', 'code', 'em', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'i', 'li', 'ol', 'pre',
        'strong', 'table', 'td', 'th', 'tr', 'ul',
    }
)  # fmt: skip
_WHITESPACE = re.compile(r'[ \t\r\n\f]+')
_BLANK_LINES = re.compile(r'\n{3,}')
_NEWLINES = re.compile(r'\n{2,}')
_IMPLIED_ENDS = {'li': ('ul', 'ol'), 'tr': ('table',), 'td': ('tr', 'table'), 'th': ('tr', 'table')}
"""An element that closes an open one of the same kind (`<li>a<li>b`), unless one of these comes first."""


@dataclass
class _Element:
    tag: str
    href: str = ''
    parts: list[str] = field(default_factory=list)
    items: int = 0
    """For a list: the items rendered so far; for a table: the rows."""
    start: int = 1


def _indent(text: str, prefix: str, first: str) -> str:
    lines = text.split('\n')
    return '\n'.join([first + lines[0], *[prefix + line if line else '' for line in lines[1:]]])


class _Converter(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[_Element] = [_Element('')]
        self.skipping: list[str] = []
        self.in_pre = 0
        self.title: list[str] | None = None
        self.in_title = False

    @property
    def top(self) -> _Element:
        return self.stack[-1]

    def emit(self, text: str) -> None:
        self.top.parts.append(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == 'title' and self.title is None:
            self.title, self.in_title = [], True
        if self.skipping:
            if tag == self.skipping[-1] and tag not in _VOID:
                self.skipping.append(tag)
            return
        if tag in _SKIPPED:
            self.skipping.append(tag)
        elif tag == 'br':
            self.emit('\n')
        elif tag == 'hr':
            self.emit('\n\n---\n\n')
        elif tag in _FRAMED and len(self.stack) < _MAX_DEPTH:
            self.close_implied(tag)
            values = dict(attrs)
            element = _Element(tag, href=(values.get('href') or '').strip())
            start = values.get('start') or ''
            if tag == 'ol' and start.isdecimal():
                element.start = int(start)
            if tag == 'pre':
                self.in_pre += 1
            self.stack.append(element)
        elif tag in _BLOCKS:
            self.emit('\n\n')

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID:  # `<p/>` and the like open nothing
            self.handle_starttag(tag, attrs)

    def close_implied(self, tag: str) -> None:
        stops = _IMPLIED_ENDS.get(tag)
        if stops is None:
            return
        for element in reversed(self.stack[1:]):
            if element.tag in stops:
                return
            if element.tag == tag or (tag in ('td', 'th') and element.tag in ('td', 'th')):
                self.close_to(element.tag)
                return

    def close_to(self, tag: str) -> None:
        while True:
            element = self.stack.pop()
            self.close_element(element)
            if element.tag == tag:
                return

    def handle_endtag(self, tag: str) -> None:
        if tag == 'title':
            self.in_title = False
        if self.skipping:
            if tag == self.skipping[-1]:
                self.skipping.pop()
            return
        if any(element.tag == tag for element in self.stack[1:]):
            self.close_to(tag)
        elif tag in _BLOCKS:
            self.emit('\n\n')

    def handle_data(self, data: str) -> None:
        data = data.replace('\x00', '')
        if self.in_title and self.title is not None:
            self.title.append(data)
        if self.skipping:
            return
        if not self.in_pre:
            data = _WHITESPACE.sub(' ', data)
            previous = next((p for p in reversed(self.top.parts) if p), '')
            if not previous or previous.endswith('\n') or previous.endswith(' '):
                data = data.lstrip(' ')
        self.emit(data)

    def close_element(self, element: _Element) -> None:
        text = ''.join(element.parts)
        tag = element.tag
        if tag == 'pre':
            self.in_pre -= 1
        self.emit(self.render(element, text))

    def render(self, element: _Element, text: str) -> str:
        tag = element.tag
        if tag in ('b', 'strong', 'em', 'i'):
            mark = '**' if tag in ('b', 'strong') else '*'
            return f'{mark}{text.strip()}{mark}' if text.strip() and not self.in_pre else text
        if tag == 'code':
            return text if self.in_pre or not text.strip() else f'`{text}`'
        if tag == 'a':
            label = text.strip()
            if not element.href or element.href.startswith(('javascript:', '#')) or not label:
                return text
            return f'[{label}]({element.href})'
        if tag.startswith('h'):
            return f'\n\n{"#" * int(tag[1])} {" ".join(text.split())}\n\n'
        if tag == 'pre':
            return f'\n\n```\n{text.strip(chr(10))}\n```\n\n' if text.strip() else ''
        if tag == 'blockquote':
            body = _BLANK_LINES.sub('\n\n', text).strip()
            return '\n\n' + '\n'.join(f'> {line}' if line else '>' for line in body.split('\n')) + '\n\n'
        if tag == 'li':
            parent = self.top
            number = parent.start + parent.items
            parent.items += 1
            bullet = f'{number}. ' if parent.tag == 'ol' else '- '
            body = _NEWLINES.sub('\n', text).strip()
            previous = next((p for p in reversed(parent.parts) if p), '\n')
            return ('' if previous.endswith('\n') else '\n') + _indent(body, ' ' * len(bullet), bullet) + '\n'
        if tag in ('ul', 'ol'):
            return '\n\n' + _BLANK_LINES.sub('\n', text).strip('\n') + '\n\n'
        if tag in ('td', 'th'):
            return ' '.join(text.split()).replace('|', '\\|') + '\x00'
        if tag == 'tr':
            cells = text.split('\x00')[:-1]
            if not cells:
                return ''
            row = '| ' + ' | '.join(cells) + ' |\n'
            self.top.items += 1
            if self.top.items == 1:
                row += '| ' + ' | '.join('---' for _ in cells) + ' |\n'
            return row
        # table
        return '\n\n' + text.replace('\x00', ' ').strip() + '\n\n'

    def finish(self) -> str:
        self.close_all()
        text = ''.join(self.stack[0].parts).replace('\x00', ' ')
        return _BLANK_LINES.sub('\n\n', text).strip()

    def close_all(self) -> None:
        while len(self.stack) > 1:
            self.close_element(self.stack.pop())


def html_to_markdown(html: str) -> tuple[str, str]:
    """The text of the page's `<title>` (empty if none) and the page as markdown."""
    converter = _Converter()
    converter.feed(html)
    converter.close()
    return ' '.join(''.join(converter.title or ()).split()), converter.finish()
