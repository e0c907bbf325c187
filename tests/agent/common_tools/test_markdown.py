"""The HTML to markdown converter of the `web_fetch` tool."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from edgewise.agent.common_tools._markdown import html_to_markdown


def markdown(html: str) -> str:
    return html_to_markdown(html)[1]


def test_inline_formatting_links_and_breaks() -> None:
    html = (
        '<p>a<br/>b<br>c <strong></strong><i>it</i> <code>x = 1</code> <a href="javascript:go()">js</a> '
        '<a href="#top">top</a> <a href="https://x.example"> </a><a>no href</a></p><hr/><p>after</p>'
    )
    assert markdown(html) == 'a\nb\nc *it* `x = 1` js top no href\n\n---\n\nafter'


def test_headings_code_blocks_and_quotes() -> None:
    html = (
        '<h2>Two\n  lines</h2><h6>six</h6><pre><code>  indented\n<b>bold</b></code></pre><pre>  </pre>'
        '<blockquote>one<blockquote>two</blockquote></blockquote>'
    )
    assert markdown(html) == '## Two lines\n\n###### six\n\n```\n  indented\nbold\n```\n\n> one\n>\n> > two'


def test_lists_number_from_their_start_and_close_items_left_open() -> None:
    html = '<ol start="9"><li>nine<li>ten<ol><li>inner</ol></ol><ol start="x"><li></li><li>one</li></ol>'
    assert markdown(html) == '9. nine\n10. ten\n    1. inner\n\n1. \n2. one'


def test_tables_become_pipe_tables() -> None:
    html = '<table><tr><th>h|1<th>h2<tr><td>a<td>b</table><table><tr></tr></table><td>loose</td>'
    assert markdown(html) == '| h\\|1 | h2 |\n| --- | --- |\n| a | b |\n\nloose'


def test_scripts_styles_and_the_head_are_left_out_but_the_title_is_kept() -> None:
    html = (
        '<html><head><title>T <b>1</b></title><title>second</title><meta charset="utf-8"></head>'
        '<body><svg><svg><text>drawn</text></svg><g/></svg><script>let a = "<p>";</script>text\x00'
        '<noscript>hidden</noscript></body></html>'
    )
    assert html_to_markdown(html) == ('T 1', 'text')


def test_elements_left_open_at_the_end_are_closed() -> None:
    assert markdown('<ul><li><a href="https://x.example">link') == '- [link](https://x.example)'


def test_nesting_past_the_depth_limit_is_read_as_plain_text() -> None:
    html = '<blockquote>' * 200 + 'deep' + '</blockquote>' * 200
    converted = markdown(html)
    assert converted.endswith('deep')
    assert converted.count('>') < 70


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(['<p>', '</p>', '<li>', '<ol>', '</ul>', '<td>', '<tr>', '</table>', '<pre>', '</pre>',
                                 '<a href="u">', '</a>', '<b>', '<br>', 'text', ' ', '\n', '&amp;', '<script>', '|',
                                 '</script>', '<title>', '<blockquote>', '</li>', '<h1>', '</h1>'])))  # fmt: skip
def test_any_mix_of_tags_converts_without_error_or_markers(pieces: list[str]) -> None:
    _title, converted = html_to_markdown(''.join(pieces))
    assert '\x00' not in converted
    assert '\n\n\n' not in converted
    assert converted == converted.strip()
