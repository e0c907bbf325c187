"""Citations read from each API over a real local HTTP server (pydantic-ai 2.68's mapping): OpenAI's URL and file
annotations (Responses and Chat Completions, streamed or not), Anthropic's text block citations (and the documents it
is asked to cite with the `citations` setting), and Gemini's grounding supports."""

from __future__ import annotations

import json
from typing import Any

import pytest

from edgewise.agent.exceptions import UserError
from edgewise.agent.messages import (
    BinaryContent,
    Citation,
    ContentCitationAnchor,
    DocumentCitationSource,
    MarkerCitationAnchor,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponseStreamEvent,
    PartDeltaEvent,
    TextPart,
    TextPartDelta,
    UserPromptPart,
    WebCitationSource,
)
from edgewise.agent.models import Model, ModelRequestParameters
from edgewise.agent.models.anthropic import AnthropicModel
from edgewise.agent.models.google import GoogleModel
from edgewise.agent.models.openai import OpenAIChatModel, OpenAIResponsesModel
from edgewise.agent.providers.anthropic import AnthropicProvider
from edgewise.agent.providers.google import GoogleProvider
from edgewise.agent.providers.openai import OpenAIProvider
from edgewise.agent.settings import ModelSettings
from edgewise.agent.tools import ToolDefinition

from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

PARAMS = ModelRequestParameters(allow_text_output=True)
ASK: list[ModelMessage] = [ModelRequest([UserPromptPart('Where is it?')])]
SSE = {'content-type': 'text/event-stream'}


def _chat(server: LocalServer) -> OpenAIChatModel:
    return OpenAIChatModel('gpt-4o', provider=OpenAIProvider(api_key='sk-test', base_url=server.url, max_retries=0))


def _responses(server: LocalServer) -> OpenAIResponsesModel:
    return OpenAIResponsesModel('gpt-5', provider=OpenAIProvider(api_key='sk-test', base_url=server.url, max_retries=0))


def _anthropic(server: LocalServer) -> AnthropicModel:
    provider = AnthropicProvider(api_key='sk-test', base_url=server.url.removesuffix('/v1'), max_retries=0)
    return AnthropicModel('claude-sonnet-4-5', provider=provider)


def _google(server: LocalServer) -> GoogleModel:
    provider = GoogleProvider(api_key='sk-test', base_url=server.url.removesuffix('/v1'), max_retries=0)
    return GoogleModel('gemini-2.5-flash', provider=provider)


def _sse(*events: dict[str, Any], named: bool = True) -> list[bytes]:
    if named:
        return [f'event: {e["type"]}\ndata: {json.dumps(e)}\n\n'.encode() for e in events]
    return [f'data: {json.dumps(e)}\n\n'.encode() for e in events]


async def _stream(
    model: Model, messages: list[ModelMessage] = ASK, settings: ModelSettings | None = None
) -> tuple[ModelResponse, list[ModelResponseStreamEvent]]:
    async with model:
        async with model.request_stream(messages, settings, PARAMS) as stream:
            events = [event async for event in stream]
        return stream.get(), events


async def _request(
    model: Model, messages: list[ModelMessage] = ASK, settings: ModelSettings | None = None
) -> ModelResponse:
    async with model:
        return await model.request(messages, settings, PARAMS)


def _texts(response: ModelResponse) -> list[TextPart]:
    return [part for part in response.parts if isinstance(part, TextPart)]


def _citation_deltas(events: list[ModelResponseStreamEvent]) -> list[TextPartDelta]:
    return [
        event.delta
        for event in events
        if isinstance(event, PartDeltaEvent)
        and isinstance(event.delta, TextPartDelta)
        and event.delta.citations_delta is not None
    ]


# --- OpenAI Responses -----------------------------------------------------------------------------------------------

TEXT = 'See [the docs](https://a.example/docs) and the file.'
URL_CITATION = {
    'type': 'url_citation',
    'url': 'https://a.example/docs',
    'title': 'Docs',
    'start_index': 4,
    'end_index': 38,
}
FILE_CITATION = {'type': 'file_citation', 'file_id': 'file-1', 'filename': 'notes.pdf', 'index': 50}


def _responses_answer(text: str, annotations: list[Any]) -> dict[str, Any]:
    item = {
        'type': 'message',
        'id': 'msg_1',
        'role': 'assistant',
        'status': 'completed',
        'content': [{'type': 'output_text', 'text': text, 'annotations': annotations}],
    }
    return {'id': 'resp_1', 'object': 'response', 'model': 'gpt-5', 'status': 'completed', 'output': [item]}


async def test_responses_annotations_become_citations(local_server: LocalServer) -> None:
    annotations = [
        URL_CITATION,
        FILE_CITATION,
        {'type': 'file_citation', 'index': 1},  # names no file: no source to show
        {'type': 'container_file_citation', 'container_id': 'c', 'file_id': 'f', 'start_index': 0, 'end_index': 1},
        {'type': 'url_citation', 'url': 'https://b.example', 'start_index': 40, 'end_index': 400},  # runs past the text
        'not an annotation',
    ]
    local_server.script(Reply(body=_responses_answer(TEXT, annotations)))
    (part,) = _texts(await _request(_responses(local_server)))
    assert part.citations == [
        Citation(
            [WebCitationSource('https://a.example/docs', title='Docs')], anchor=MarkerCitationAnchor(start=4, end=38)
        ),
        Citation([DocumentCitationSource(document_id='file-1', title='notes.pdf')]),
        Citation([WebCitationSource('https://b.example')]),
    ]
    assert part.provider_name == 'openai'
    assert part.provider_details == {'citations': [annotations[0], annotations[1], annotations[4]]}


async def test_responses_text_without_citations_stays_plain(local_server: LocalServer) -> None:
    local_server.script(Reply(body=_responses_answer('Plain.', [])))
    (part,) = _texts(await _request(_responses(local_server)))
    assert part == TextPart('Plain.', id='msg_1', provider_name='openai')


def _text_events(item_id: str, text: str, annotations: list[Any]) -> list[dict[str, Any]]:
    added = [
        {'type': 'response.output_text.annotation.added', 'item_id': item_id, 'annotation': annotation}
        for annotation in annotations
    ]
    return [
        {'type': 'response.output_text.delta', 'item_id': item_id, 'delta': text[:10]},
        {'type': 'response.output_text.delta', 'item_id': item_id, 'delta': text[10:]},
        *added,
        {'type': 'response.output_text.done', 'item_id': item_id, 'text': text},
    ]


async def test_streamed_responses_annotations_go_on_once_the_text_is_done(local_server: LocalServer) -> None:
    events = _sse(
        {'type': 'response.created', 'response': {'id': 'resp_1', 'model': 'gpt-5'}},
        *_text_events('msg_1', TEXT, [URL_CITATION, {'type': 'unknown'}]),
        *_text_events('msg_2', 'Second.', []),  # no annotations: nothing to add
        *_text_events('msg_3', 'Third text.', [{'type': 'unknown'}]),  # none of them a citation
        {'type': 'response.completed', 'response': {'status': 'completed', 'usage': {}}},
    )
    local_server.script(Reply(chunks=events, headers=SSE))
    response, stream_events = await _stream(_responses(local_server))
    first, second, third = _texts(response)
    assert first.content == TEXT
    assert first.citations == [
        Citation(
            [WebCitationSource('https://a.example/docs', title='Docs')], anchor=MarkerCitationAnchor(start=4, end=38)
        )
    ]
    assert first.provider_details == {'citations': [URL_CITATION]}
    assert second.citations is None
    assert third.citations is None
    (delta,) = _citation_deltas(stream_events)
    assert delta.content_delta == ''
    assert delta.citations_delta == first.citations


async def test_streamed_responses_citations_of_text_that_differs_are_left_out(local_server: LocalServer) -> None:
    events = _sse(
        {'type': 'response.output_text.delta', 'item_id': 'msg_1', 'delta': 'Streamed'},
        {'type': 'response.output_text.annotation.added', 'item_id': 'msg_1', 'annotation': URL_CITATION},
        {'type': 'response.output_text.done', 'item_id': 'msg_1', 'text': TEXT},
        {'type': 'response.completed', 'response': {'status': 'completed'}},
    )
    local_server.script(Reply(chunks=events, headers=SSE))
    response, stream_events = await _stream(_responses(local_server))
    assert _texts(response)[0].citations is None
    assert _citation_deltas(stream_events) == []


# --- OpenAI Chat Completions ----------------------------------------------------------------------------------------

CHAT_CITATION = {
    'type': 'url_citation',
    'url_citation': {
        'url': 'https://a.example/docs',
        'title': 'Docs',
        'start_index': 4,
        'end_index': 38,
        'content': 'Excerpt.',
    },
}
OPENROUTER_FILE = {'type': 'file', 'file': {'hash': 'h', 'name': 'a.pdf'}}


def _completion(content: str, annotations: list[Any]) -> dict[str, Any]:
    message = {'role': 'assistant', 'content': content, 'annotations': annotations}
    return {'id': 'c1', 'model': 'gpt-4o', 'choices': [{'index': 0, 'message': message, 'finish_reason': 'stop'}]}


async def test_chat_annotations_become_citations(local_server: LocalServer) -> None:
    annotations = [CHAT_CITATION, OPENROUTER_FILE, {'type': 'url_citation', 'url_citation': 'broken'}, 'junk']
    local_server.script(Reply(body=_completion(TEXT, annotations)))
    (part,) = _texts(await _request(_chat(local_server)))
    assert part.citations == [
        Citation(
            [WebCitationSource('https://a.example/docs', title='Docs', excerpts=['Excerpt.'])],
            anchor=MarkerCitationAnchor(start=4, end=38),
        )
    ]
    assert part.provider_details == {'citations': [CHAT_CITATION]}


async def test_chat_citations_of_text_split_by_thinking_are_left_out(local_server: LocalServer) -> None:
    local_server.script(
        Reply(body=_completion(f'<think>hmm</think>{TEXT}', [CHAT_CITATION])),
        Reply(body=_completion(TEXT, [OPENROUTER_FILE])),
    )
    model = _chat(local_server)
    response = await _request(model)
    assert [part.citations for part in _texts(response)] == [None]
    assert _texts(await _request(_chat(local_server)))[0].citations is None


def _chunk(**delta: Any) -> dict[str, Any]:
    return {'id': 'c1', 'model': 'gpt-4o', 'choices': [{'index': 0, 'delta': delta, 'finish_reason': None}]}


async def test_streamed_chat_annotations_go_on_at_the_end(local_server: LocalServer) -> None:
    first, last = _chunk(role='assistant', content=TEXT[:12]), _chunk(content=TEXT[12:], annotations=[CHAT_CITATION])
    chunks = [*_sse(first, last, named=False), b'data: [DONE]\n\n']
    local_server.script(Reply(chunks=chunks, headers=SSE))
    response, events = await _stream(_chat(local_server))
    (part,) = _texts(response)
    assert part.citations is not None
    assert part.citations[0].anchor == MarkerCitationAnchor(start=4, end=38)
    assert part.provider_details == {'citations': [CHAT_CITATION]}
    assert len(_citation_deltas(events)) == 1


@pytest.mark.parametrize(
    'contents',
    [
        ['<think>hmm</think>', TEXT],  # the text is no longer the content as sent
        ['  '],  # no text part at all
    ],
)
async def test_streamed_chat_annotations_without_a_single_plain_text_part_are_left_out(
    local_server: LocalServer, contents: list[str]
) -> None:
    chunks = _sse(
        *[_chunk(content=content) for content in contents],
        _chunk(annotations=[CHAT_CITATION]),
        named=False,
    )
    local_server.script(Reply(chunks=chunks, headers=SSE))
    provider = OpenAIProvider(api_key='sk-test', base_url=local_server.url, max_retries=0)
    model = OpenAIChatModel('gpt-4o', provider=provider, profile={'ignore_streamed_leading_whitespace': True})
    response, events = await _stream(model)
    assert all(part.citations is None for part in _texts(response))
    assert _citation_deltas(events) == []


async def test_streamed_chat_annotations_that_are_no_citations_are_left_out(local_server: LocalServer) -> None:
    chunks = _sse(_chunk(content=TEXT, annotations=[OPENROUTER_FILE]), named=False)
    local_server.script(Reply(chunks=chunks, headers=SSE))
    response, events = await _stream(_chat(local_server))
    assert _texts(response)[0].citations is None
    assert _citation_deltas(events) == []


# --- Anthropic ------------------------------------------------------------------------------------------------------

WEB_RESULT = {
    'type': 'web_search_result_location',
    'url': 'https://a.example',
    'title': 'A',
    'cited_text': 'It is here.',
    'encrypted_index': 'enc',
}
CHAR_LOCATION = {
    'type': 'char_location',
    'cited_text': 'Page text.',
    'document_index': 0,
    'document_title': 'Manual',
    'start_char_index': 0,
    'end_char_index': 10,
    'file_id': None,
}


def _anthropic_answer(*content: dict[str, Any]) -> dict[str, Any]:
    return {
        'id': 'msg_1',
        'type': 'message',
        'role': 'assistant',
        'model': 'claude-sonnet-4-5',
        'content': list(content),
        'stop_reason': 'end_turn',
        'usage': {'input_tokens': 10, 'output_tokens': 2},
    }


async def test_anthropic_text_block_citations_cover_the_whole_block(local_server: LocalServer) -> None:
    raw = [
        WEB_RESULT,
        CHAR_LOCATION,
        {'type': 'page_location', 'cited_text': '', 'document_index': 0},  # nothing to name the source by
        {'type': 'search_result_location', 'cited_text': 'x'},  # a kind not mapped
        'junk',
    ]
    local_server.script(
        Reply(
            body=_anthropic_answer(
                {'type': 'text', 'text': 'It is here.', 'citations': raw},
                {'type': 'text', 'text': ' Plain.'},
                {'type': 'text', 'text': ' Odd.', 'citations': [{'type': 'search_result_location'}]},
            )
        )
    )
    cited, plain, odd = _texts(await _request(_anthropic(local_server)))
    assert cited.citations == [
        Citation(
            [
                WebCitationSource('https://a.example', title='A', excerpts=['It is here.']),
                DocumentCitationSource(title='Manual', excerpts=['Page text.']),
            ],
            anchor=ContentCitationAnchor(start=0, end=11),
        )
    ]
    assert cited.provider_name == 'anthropic'
    assert cited.provider_details == {'citations': raw}
    assert plain == TextPart(' Plain.')
    assert odd == TextPart(' Odd.')


async def test_anthropic_streamed_citations_go_on_when_the_block_stops(local_server: LocalServer) -> None:
    events = _sse(
        {'type': 'message_start', 'message': {'id': 'msg_1', 'model': 'claude-sonnet-4-5', 'usage': {}}},
        {'type': 'content_block_start', 'index': 0, 'content_block': {'type': 'text', 'text': ''}},
        {'type': 'content_block_delta', 'index': 0, 'delta': {'type': 'citations_delta', 'citation': WEB_RESULT}},
        {'type': 'content_block_delta', 'index': 0, 'delta': {'type': 'text_delta', 'text': 'It is here.'}},
        {'type': 'content_block_stop', 'index': 0},
        {'type': 'content_block_start', 'index': 1, 'content_block': {'type': 'text', 'text': ' More.'}},
        {'type': 'content_block_stop', 'index': 1},
        {'type': 'message_stop'},
    )
    local_server.script(Reply(chunks=events, headers=SSE))
    response, stream_events = await _stream(_anthropic(local_server))
    cited, plain = _texts(response)
    assert cited.citations == [
        Citation(
            [WebCitationSource('https://a.example', title='A', excerpts=['It is here.'])],
            anchor=ContentCitationAnchor(start=0, end=11),
        )
    ]
    assert cited.provider_details == {'citations': [WEB_RESULT]}
    assert plain.citations is None
    assert len(_citation_deltas(stream_events)) == 1


def _document_request() -> list[ModelMessage]:
    pdf = BinaryContent(b'%PDF-1.4', media_type='application/pdf')
    text = BinaryContent(b'Plain notes.', media_type='text/plain')
    return [ModelRequest([UserPromptPart(['Summarize these', pdf, text])])]


async def test_anthropic_documents_are_cited_when_citations_are_asked_for(local_server: LocalServer) -> None:
    local_server.script(*[Reply(body=_anthropic_answer({'type': 'text', 'text': 'ok'}))] * 3)
    await _request(_anthropic(local_server), _document_request(), {'citations': True})
    await _request(_anthropic(local_server), _document_request())
    async with _anthropic(local_server) as model:  # tool output: the citation markup would land in the arguments
        tool_params = ModelRequestParameters(output_mode='tool', output_tools=[ToolDefinition(name='final_result')])
        await model.request(_document_request(), {'citations': True}, tool_params)
    cited, uncited, tool_output = (received['body']['messages'][0]['content'] for received in local_server.received)
    assert [block.get('citations') for block in cited if block['type'] == 'document'] == [{'enabled': True}] * 2
    assert all('citations' not in block for block in uncited + tool_output)


async def test_anthropic_citations_with_a_forced_tool_call_are_refused(local_server: LocalServer) -> None:
    tool = ToolDefinition(name='lookup', parameters_json_schema={'type': 'object', 'properties': {}})
    params = ModelRequestParameters(function_tools=[tool], allow_text_output=True)
    async with _anthropic(local_server) as model:
        with pytest.raises(UserError, match="can't be used with a `tool_choice` that forces a tool call"):
            await model.request(_document_request(), {'citations': True, 'tool_choice': 'required'}, params)
        with pytest.raises(UserError, match='forces a tool call'):
            await model.request(_document_request(), {'citations': True, 'tool_choice': ['lookup']}, params)
    assert local_server.received == []


# --- Gemini ---------------------------------------------------------------------------------------------------------

GROUNDED = 'Paris is the capital. It is in France.'


def _gemini(parts: list[dict[str, Any]], grounding: dict[str, Any] | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {'content': {'role': 'model', 'parts': parts}, 'finishReason': 'STOP'}
    if grounding is not None:
        candidate['groundingMetadata'] = grounding
    return {'candidates': [candidate], 'modelVersion': 'gemini-2.5-flash', 'responseId': 'r1'}


CHUNKS = [
    {'web': {'uri': 'https://w.example', 'title': 'W'}},
    {'maps': {'uri': 'https://m.example', 'title': 'M', 'text': 'A place.'}},
    {'image': {'sourceUri': 'https://i.example/p.png', 'title': 'I'}},
    {
        'retrievedContext': {
            'documentName': 'corpora/1/documents/2',
            'title': 'Doc',
            'text': 'Chunk.',
            'ragChunk': {'text': 'Chunk.'},
        }
    },
    {'retrievedContext': {}},  # names nothing
    {'web': {}},
]


async def test_gemini_grounding_supports_become_citations(local_server: LocalServer) -> None:
    supports = [
        # offsets across the joined text (no part index), in UTF-8 bytes
        {
            'segment': {'startIndex': 0, 'endIndex': 21, 'text': 'Paris is the capital.'},
            'groundingChunkIndices': [0, 1],
        },
        # a byte off: anchored by its text, which occurs once
        {'segment': {'startIndex': 23, 'endIndex': 39, 'text': 'It is in France.'}, 'groundingChunkIndices': [2, 3, 9]},
        # sources that name nothing
        {'segment': {'startIndex': 0, 'endIndex': 5, 'text': 'Paris'}, 'groundingChunkIndices': [4, 5]},
        {'segment': {'startIndex': 0}, 'groundingChunkIndices': [0]},  # no end
        {'groundingChunkIndices': [0]},  # no segment
    ]
    grounding = {'groundingChunks': CHUNKS, 'groundingSupports': supports}
    local_server.script(
        Reply(body=_gemini([{'text': 'Let me think.', 'thought': True}, {'text': GROUNDED}], grounding))
    )
    (part,) = _texts(await _request(_google(local_server)))
    assert part.citations == [
        Citation(
            [
                WebCitationSource('https://w.example', title='W'),
                WebCitationSource('https://m.example', title='M', excerpts=['A place.']),
            ],
            anchor=ContentCitationAnchor(start=0, end=21),
        ),
        Citation(
            [
                WebCitationSource('https://i.example/p.png', title='I'),
                DocumentCitationSource(document_id='corpora/1/documents/2', title='Doc', excerpts=['Chunk.']),
            ],
            anchor=ContentCitationAnchor(start=22, end=38),
        ),
    ]
    assert part.provider_name == 'google'
    raw = part.provider_details['citations']  # type: ignore[index]
    assert raw[0]['groundingChunks'] == [CHUNKS[0], CHUNKS[1]]
    assert raw[1]['groundingChunks'] == [CHUNKS[2], CHUNKS[3], None]


async def test_gemini_supports_find_their_part_by_index_or_text(local_server: LocalServer) -> None:
    parts: list[dict[str, Any]] = [
        {'text': 'Alpha beta.'},
        {'functionCall': {'name': 'f', 'args': {}}},
        {'text': 'Gamma beta. Gamma.'},
    ]
    supports = [
        {'segment': {'partIndex': 2, 'startIndex': 0, 'endIndex': 5, 'text': 'Gamma'}, 'groundingChunkIndices': [0]},
        # the part index, with offsets that select other text: the text occurs twice, so no anchor
        {'segment': {'partIndex': 2, 'startIndex': 1, 'endIndex': 3, 'text': 'Gamma'}, 'groundingChunkIndices': [0]},
        # no part index and offsets off: the only part holding the text
        {'segment': {'startIndex': 90, 'endIndex': 95, 'text': 'Alpha'}, 'groundingChunkIndices': [0]},
        # in both parts, and offsets off: no part
        {'segment': {'startIndex': 90, 'endIndex': 95, 'text': 'beta'}, 'groundingChunkIndices': [0]},
        # a part index that is no text part, and no segment text
        {'segment': {'partIndex': 1, 'startIndex': 90, 'endIndex': 95}, 'groundingChunkIndices': [0]},
    ]
    grounding = {'groundingChunks': CHUNKS[:1], 'groundingSupports': supports}
    local_server.script(Reply(body=_gemini(parts, grounding)))
    alpha, gamma = _texts(await _request(_google(local_server)))
    assert [c.anchor for c in alpha.citations or []] == [ContentCitationAnchor(start=0, end=5)]
    assert [c.anchor for c in gamma.citations or []] == [ContentCitationAnchor(start=0, end=5), None]


async def test_gemini_without_grounding_cites_nothing(local_server: LocalServer) -> None:
    local_server.script(
        Reply(body=_gemini([{'text': 'Plain.'}])),
        Reply(body=_gemini([{'text': 'Plain.'}], {'groundingChunks': CHUNKS})),
    )
    assert _texts(await _request(_google(local_server)))[0].citations is None
    assert _texts(await _request(_google(local_server)))[0].citations is None


async def test_gemini_streamed_grounding_comes_with_the_last_chunk(local_server: LocalServer) -> None:
    supports = [
        {'segment': {'startIndex': 0, 'endIndex': 21, 'text': 'Paris is the capital.'}, 'groundingChunkIndices': [0]},
        {'segment': {'startIndex': 39, 'endIndex': 45, 'text': 'Later.'}, 'groundingChunkIndices': [0]},
    ]
    chunks = _sse(
        _gemini([{'text': GROUNDED[:10]}]),
        _gemini([{'text': GROUNDED[10:]}]),
        _gemini([{'functionCall': {'name': 'f', 'args': {}}}]),
        _gemini([{'text': 'Later.'}], {'groundingChunks': CHUNKS[:1], 'groundingSupports': supports}),
        named=False,
    )
    local_server.script(Reply(chunks=chunks, headers=SSE))
    response, events = await _stream(_google(local_server))
    first, later = _texts(response)
    assert first.content == GROUNDED
    assert first.citations == [
        Citation([WebCitationSource('https://w.example', title='W')], anchor=ContentCitationAnchor(start=0, end=21))
    ]
    assert later.citations == [
        Citation([WebCitationSource('https://w.example', title='W')], anchor=ContentCitationAnchor(start=0, end=6))
    ]
    assert len(_citation_deltas(events)) == 2


def test_gemini_byte_offsets_that_split_a_character_or_name_no_text_anchor_nothing() -> None:
    from edgewise.agent.models._citations import google_citations

    text = 'Café au lait.'  # `é` is two bytes: offset 4 falls inside it
    supports = [
        {'segment': {'startIndex': 4, 'endIndex': 6, 'text': 'é'}, 'groundingChunkIndices': [0]},
        {'segment': {'startIndex': 0, 'endIndex': 3, 'text': 'not in the text'}, 'groundingChunkIndices': [0]},
    ]
    grounding = {'groundingChunks': CHUNKS[:1], 'groundingSupports': supports}
    ((citations, _),) = google_citations([(0, text)], grounding).values()
    # The first is anchored by its text, found once; the second belongs to the only part, unanchored.
    assert [citation.anchor for citation in citations] == [ContentCitationAnchor(start=3, end=4), None]
