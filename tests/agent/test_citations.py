"""Citations (pydantic-ai 2.68): the sources and anchors of `TextPart.citations`, their checks and reprs, their
JSON round trip (and old histories without them), `TextPartDelta.citations_delta` in streams, and the `Citations`
capability that asks for them."""

from __future__ import annotations

from typing import Any

import pytest
from inline_snapshot import snapshot

from edgewise.agent import (
    Agent,
    Citation,
    ContentCitationAnchor,
    DocumentCitationSource,
    MarkerCitationAnchor,
    WebCitationSource,
)
from edgewise.agent._message_flow.streamed_parts import PartsManager
from edgewise.agent.capabilities import CAPABILITY_TYPES, Citations
from edgewise.agent.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    PartDeltaEvent,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    UserPromptPart,
)
from edgewise.agent.models.function import AgentInfo, FunctionModel

pytestmark = pytest.mark.anyio

CITED = TextPart(
    'Paris [1] is the capital.',
    provider_name='openai',
    provider_details={'citations': [{'type': 'url_citation'}]},
    citations=[
        Citation(
            [WebCitationSource('https://a.example', title='A', excerpts=['Paris is the capital of France.'])],
            anchor=MarkerCitationAnchor(start=6, end=9),
        ),
        Citation(
            [DocumentCitationSource(document_id='file-1'), DocumentCitationSource(title='Atlas', excerpts=['Paris'])],
            anchor=ContentCitationAnchor(start=0, end=5),
        ),
        Citation([WebCitationSource('https://b.example')]),
    ],
)


def test_citations_round_trip_through_json() -> None:
    history: list[ModelMessage] = [ModelRequest([UserPromptPart('Capital?')]), ModelResponse([CITED])]
    data = ModelMessagesTypeAdapter.dump_json(history)
    loaded = ModelMessagesTypeAdapter.validate_json(data)
    assert loaded[1].parts[0] == CITED
    assert ModelMessagesTypeAdapter.dump_json(loaded) == data
    dumped = ModelMessagesTypeAdapter.dump_python(history, mode='json')
    assert dumped[1]['parts'][0]['citations'][0] == snapshot(
        {
            'sources': [
                {
                    'url': 'https://a.example',
                    'title': 'A',
                    'excerpts': ['Paris is the capital of France.'],
                    'kind': 'web',
                }
            ],
            'anchor': {'start': 6, 'end': 9, 'kind': 'marker'},
        }
    )


def test_a_stored_text_part_without_citations_still_loads() -> None:
    stored = b'[{"parts":[{"content":"Hi","part_kind":"text"}],"kind":"response"}]'
    (response,) = ModelMessagesTypeAdapter.validate_json(stored)
    assert response.parts[0] == TextPart('Hi')
    assert TextPart('Hi').citations is None


def test_reprs_leave_out_what_is_not_set() -> None:
    assert CITED.citations is not None
    assert [repr(citation) for citation in CITED.citations] == snapshot(
        [
            "Citation(sources=[WebCitationSource(url='https://a.example', title='A', "
            "excerpts=['Paris is the capital of France.'])], anchor=MarkerCitationAnchor(start=6, end=9))",
            "Citation(sources=[DocumentCitationSource(document_id='file-1'), DocumentCitationSource(title='Atlas', "
            "excerpts=['Paris'])], anchor=ContentCitationAnchor(start=0, end=5))",
            "Citation(sources=[WebCitationSource(url='https://b.example')])",
        ]
    )
    assert 'citations=' in repr(CITED)
    assert 'citations' not in repr(TextPart('x'))


def test_empty_or_backwards_parts_are_refused() -> None:
    with pytest.raises(ValueError, match='at least one source'):
        Citation([])
    with pytest.raises(ValueError, match='at least one source field'):
        DocumentCitationSource()
    for anchor in (ContentCitationAnchor, MarkerCitationAnchor):
        with pytest.raises(ValueError, match='0 <= start < end'):
            anchor(start=3, end=3)
        with pytest.raises(ValueError, match='0 <= start < end'):
            anchor(start=-1, end=2)


def test_a_citations_delta_replaces_the_parts_citations() -> None:
    citations = CITED.citations
    assert citations is not None
    part = TextPart('Paris', citations=citations[:1])
    replaced = TextPartDelta('', citations_delta=citations[1:]).apply(part)
    assert replaced.citations == citations[1:]
    kept = TextPartDelta(' is the capital.').apply(part)
    assert kept.content == 'Paris is the capital.'
    assert kept.citations == citations[:1]


def test_the_parts_manager_carries_citations_of_streamed_text() -> None:
    citations = [Citation([WebCitationSource('https://a.example')])]
    manager = PartsManager()
    list(manager.handle_text_delta(vendor_part_id='t', content='Started cited.', citations=citations))
    assert manager.get_parts() == [TextPart('Started cited.', citations=citations)]
    (event,) = manager.handle_text_delta(vendor_part_id='t', content='', citations=[])
    assert isinstance(event, PartDeltaEvent)
    assert event.delta == TextPartDelta('', citations_delta=[])
    assert manager.get_parts() == [TextPart('Started cited.', citations=[])]
    replay = PartsManager()
    replay.handle_part(vendor_part_id=0, part=TextPart('Paris', citations=citations))
    replay.apply_event(PartDeltaEvent(index=0, delta=TextPartDelta('!')))
    assert replay.get_parts() == [TextPart('Paris!', citations=citations)]


async def test_the_citations_capability_asks_for_citations() -> None:
    seen: list[Any] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info.model_settings)
        return ModelResponse([TextPart('ok')])

    agent = Agent(FunctionModel(answer), capabilities=[Citations()])
    await agent.run('Cite it')
    assert seen[0]['citations'] is True
    assert Citations().id == 'citations'
    assert Citations(id=None).id is None
    assert CAPABILITY_TYPES['Citations'] is Citations


async def test_an_agent_spec_can_name_the_citations_capability() -> None:
    from edgewise.agent.agent.spec import AgentSpec

    spec = AgentSpec.model_validate({'model': 'test', 'capabilities': ['Citations']})
    agent = Agent.from_spec(spec)
    assert any(isinstance(capability, Citations) for capability in agent.root_capability.capabilities)


def test_thinking_parts_have_no_citations() -> None:
    assert not hasattr(ThinkingPart('x'), 'citations')
