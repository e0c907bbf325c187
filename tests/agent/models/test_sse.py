"""The SSE parser: events as the standard defines them, whatever the chunking of the body."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from edgewise.agent.models._sse import ServerSentEvent, SSEDecoder, aiter_sse


def parse(*pieces: str) -> list[ServerSentEvent]:
    decoder = SSEDecoder()
    events = [e for piece in pieces for e in decoder.feed(piece)]
    return events + decoder.flush()


def test_data_lines_events_ids_and_retry() -> None:
    body = 'event: delta\nid: 7\nretry: 1500\ndata: {"a":\ndata: 1}\n\ndata:no space\n\n'
    assert parse(body) == [
        ServerSentEvent(event='delta', data='{"a":\n1}', id='7', retry=1500),
        ServerSentEvent(event='message', data='no space', id='7'),
    ]


def test_comments_and_events_without_data_are_skipped() -> None:
    assert parse(': keep-alive\n\nevent: ping\n\ndata: x\n\n') == [ServerSentEvent(data='x')]


def test_crlf_and_cr_line_breaks() -> None:
    assert parse('data: a\r\n\r\ndata: b\r\rdata: c\n\n') == [
        ServerSentEvent(data='a'),
        ServerSentEvent(data='b'),
        ServerSentEvent(data='c'),
    ]


def test_a_crlf_split_between_chunks_is_one_line_break() -> None:
    assert parse('data: a\r', '\n\r', '\n') == [ServerSentEvent(data='a')]


def test_an_event_without_its_blank_line_is_flushed_at_the_end() -> None:
    assert parse('data: {"last": true}') == [ServerSentEvent(data='{"last": true}')]
    assert parse('data: {"last": true}\n') == [ServerSentEvent(data='{"last": true}')]


def test_unicode_line_separators_inside_data_are_data() -> None:
    assert parse('data: a\u2028b\x0cc\n\n') == [ServerSentEvent(data='a\u2028b\x0cc')]


def test_unknown_fields_and_bad_retry_are_ignored() -> None:
    assert parse('foo: bar\nretry: soon\ndata\n\n') == [ServerSentEvent(data='')]


_lines = st.lists(
    st.one_of(
        st.builds(lambda t: f'data: {t}', st.text(alphabet=st.characters(blacklist_characters='\r\n'), max_size=20)),
        st.sampled_from(['event: delta', ': comment', 'id: 3', '', 'retry: 10']),
    ),
    max_size=30,
)


@given(lines=_lines, newline=st.sampled_from(['\n', '\r\n', '\r']), cuts=st.lists(st.integers(0, 400), max_size=12))
def test_any_chunking_gives_the_same_events(lines: list[str], newline: str, cuts: list[int]) -> None:
    body = newline.join(lines) + newline
    whole = parse(body)
    bounds = sorted({min(c, len(body)) for c in cuts})
    pieces = [body[a:b] for a, b in zip([0, *bounds], [*bounds, len(body)], strict=True)]
    assert parse(*pieces) == whole


@pytest.mark.anyio
async def test_aiter_sse_reads_an_async_body() -> None:
    async def body() -> AsyncIterator[str]:
        for piece in ('data: 1\n', '\ndata: 2', '\n\n'):
            yield piece

    assert [e.data async for e in aiter_sse(body())] == ['1', '2']
