"""`FileUnderstanding` (pydantic-ai 2.68): files the model's profile says it does not read are sent as descriptions
another model writes (once per conversation, kept in the history), text documents inlined (a URL downloaded from a
real server on 127.0.0.1), usage counted and limited."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from edgewise.agent import Agent, RunContext
from edgewise.agent.capabilities import CAPABILITY_TYPES, AbstractCapability, FileUnderstanding
from edgewise.agent.capabilities.file_understanding import _str_dict
from edgewise.agent.exceptions import UsageLimitExceeded
from edgewise.agent.messages import (
    BinaryContent,
    DocumentUrl,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturn,
    UserPromptPart,
)
from edgewise.agent.models import ModelRequestContext
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.profiles import ModelProfile
from edgewise.agent.usage import RequestUsage, UsageLimits

from ..models.conftest import LocalServer

pytestmark = pytest.mark.anyio

PNG = BinaryContent(b'\x89PNG\r\n\x1a\nsquare', media_type='image/png', identifier='square')
OTHER_PNG = BinaryContent(b'\x89PNG\r\n\x1a\ncircle', media_type='image/png', identifier='circle')


@dataclass
class Seen:
    """What each request of the agent's model was sent: the items of its last request's user prompts and tool
    returns."""

    sent: list[list[Any]] = field(default_factory=list)


def blind_model(seen: Seen, profile: ModelProfile, *, calls_tool: bool = False) -> FunctionModel:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        items: list[Any] = []
        for part in last.parts:
            content = getattr(part, 'content', None)
            items.extend(content if isinstance(content, list) else [content])
        seen.sent.append(items)
        if calls_tool and len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart('snapshot', {})])
        return ModelResponse(parts=[TextPart('done')])

    return FunctionModel(answer, profile=profile)


class Describer(FunctionModel):
    """A model describing each file it is sent, counting its calls and what instructions it got."""

    def __init__(self) -> None:
        self.described: list[str] = []
        self.instructions: list[str | None] = []

        def describe(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            request = messages[-1]
            assert isinstance(request, ModelRequest)
            [part] = request.parts
            assert isinstance(part, UserPromptPart)
            assert not isinstance(part.content, str)
            [item] = part.content
            name = str(getattr(item, 'identifier', '?'))
            self.described.append(name)
            self.instructions.append(request.instructions)
            return ModelResponse(parts=[TextPart(f'a picture of a {name}')], usage=RequestUsage(input_tokens=100))

        super().__init__(describe, model_name='describer')


def framed(text: str, identifier: str, media_type: str = 'text/plain') -> str:
    return f'-----BEGIN FILE id="{identifier}" type="{media_type}"-----\n{text}\n-----END FILE id="{identifier}"-----'


async def test_an_image_the_model_cannot_see_is_sent_as_its_description_once_per_conversation() -> None:
    seen, describer = Seen(), Describer()
    agent = Agent(
        blind_model(seen, {'supports_image_input': False}),
        capabilities=[FileUnderstanding(describer, instructions='Say what shape it is.')],
    )
    result = await agent.run(['What is this?', PNG, PNG])
    assert seen.sent == [
        ['What is this?', framed('a picture of a square', 'square'), framed('a picture of a square', 'square')]
    ]
    assert describer.described == ['square']
    assert describer.instructions == ['Say what shape it is.']
    first = result.all_messages()[0]
    assert isinstance(first, ModelRequest)
    assert first.parts[0].content == ['What is this?', PNG, PNG]  # type: ignore[union-attr]  # the history keeps the file
    [(identity, description)] = first.metadata['__pydantic_ai__']['file_understanding']['file_understanding'].items()  # type: ignore[index]
    assert description == 'a picture of a square'
    assert result.usage.requests == 2  # the description, then the agent's own request
    assert result.usage.input_tokens >= 100

    again = await agent.run('And now?', message_history=result.all_messages())
    assert describer.described == ['square']  # read back from the history
    assert again.output == 'done'
    assert len(identity) == 64


async def test_distinct_files_are_described_concurrently_and_a_tool_returning_one_too() -> None:
    seen, describer = Seen(), Describer()
    agent = Agent(
        blind_model(seen, {'supports_image_input': False}, calls_tool=True),
        capabilities=[FileUnderstanding(describer, id=None)],
    )

    @agent.tool_plain
    def snapshot() -> ToolReturn:
        return ToolReturn(return_value=OTHER_PNG)

    await agent.run(['Compare', PNG])
    assert sorted(describer.described) == ['circle', 'square']
    assert describer.instructions[0] is not None
    assert describer.instructions[0].startswith('Describe this file in detail')
    assert seen.sent[-1] == [framed('a picture of a circle', 'circle')]


async def test_files_the_model_reads_are_sent_as_they_are() -> None:
    seen, describer = Seen(), Describer()
    agent = Agent(blind_model(seen, {}), capabilities=[FileUnderstanding(describer)])
    await agent.run(['What is this?', PNG, 'text'])
    assert seen.sent == [['What is this?', PNG, 'text']]
    assert describer.described == []


async def test_text_documents_are_inlined_not_described(local_server: LocalServer) -> None:
    local_server.files['/notes.txt'] = (200, 'text/plain', b'remember the milk')
    seen, describer = Seen(), Describer()
    agent = Agent(blind_model(seen, {'supports_document_input': False}), capabilities=[FileUnderstanding(describer)])
    csv = BinaryContent(b'a,b\n1,2', media_type='text/csv', identifier='table')
    url = DocumentUrl(local_server.url.removesuffix('/v1') + '/notes.txt', force_download='allow-local')
    result = await agent.run(['Read these', csv, url])
    assert seen.sent == [
        ['Read these', framed('a,b\n1,2', 'table', 'text/csv'), framed('remember the milk', url.identifier)]
    ]
    assert describer.described == []
    assert local_server.downloads == ['/notes.txt']
    assert result.usage.requests == 1
    await agent.run('More?', message_history=result.all_messages())
    assert local_server.downloads == ['/notes.txt']  # the downloaded text was kept too


async def test_a_document_type_the_model_does_not_take_is_described() -> None:
    seen, describer = Seen(), Describer()
    profile: ModelProfile = {'supported_document_media_types': frozenset({'text/plain'})}
    agent = Agent(blind_model(seen, profile), capabilities=[FileUnderstanding(describer)])
    pdf = DocumentUrl('https://example.com/report.pdf')
    unknown = DocumentUrl('https://example.com/report')  # no media type to judge: sent as it is
    await agent.run(['Summarize', pdf, unknown, ImageUrl('https://example.com/a.png')])
    assert describer.described == [pdf.identifier]
    assert seen.sent[0][1] == framed(f'a picture of a {pdf.identifier}', pdf.identifier)
    assert seen.sent[0][2:] == [unknown, ImageUrl('https://example.com/a.png')]


async def test_audio_and_video_follow_their_flags() -> None:
    seen, describer = Seen(), Describer()
    profile: ModelProfile = {'supports_audio_file_input': False, 'supports_video_input': False}
    agent = Agent(blind_model(seen, profile), capabilities=[FileUnderstanding(describer)])
    wav = BinaryContent(b'RIFF', media_type='audio/wav', identifier='sound')
    mp4 = BinaryContent(b'\x00\x00', media_type='video/mp4', identifier='clip')
    zipped = BinaryContent(b'PK', media_type='application/zip', identifier='archive')  # no flag covers it
    await agent.run(['Listen', wav, mp4, PNG, zipped])
    assert sorted(describer.described) == ['clip', 'sound']
    assert seen.sent[0][3:] == [PNG, zipped]


async def test_the_usage_limits_are_checked_before_any_file_is_described() -> None:
    seen, describer = Seen(), Describer()
    agent = Agent(blind_model(seen, {'supports_image_input': False}), capabilities=[FileUnderstanding(describer)])
    with pytest.raises(UsageLimitExceeded, match='request_limit of 1'):
        await agent.run(['What is this?', PNG], usage_limits=UsageLimits(request_limit=1))
    assert describer.described == []
    assert (await agent.run(['What is this?', PNG], usage_limits=UsageLimits(request_limit=2))).output == 'done'


async def test_a_file_only_the_request_holds_is_recorded_on_the_last_request() -> None:
    @dataclass
    class AddsFile(AbstractCapability[Any]):
        async def wrap_model_request(
            self, ctx: RunContext[Any], *, request_context: ModelRequestContext, handler: Any
        ) -> Any:
            last = request_context.messages[-1]
            assert isinstance(last, ModelRequest)
            added = replace(last, parts=[*last.parts, UserPromptPart([OTHER_PNG])])
            return await handler(replace(request_context, messages=[*request_context.messages[:-1], added]))

    seen, describer = Seen(), Describer()
    agent = Agent(
        blind_model(seen, {'supports_image_input': False}), capabilities=[AddsFile(), FileUnderstanding(describer)]
    )
    result = await agent.run('hi')
    assert describer.described == ['circle']
    last = result.all_messages()[0]
    assert isinstance(last, ModelRequest)
    assert last.metadata is not None
    assert list(last.metadata['__pydantic_ai__']['file_understanding']) == ['file_understanding']


def test_kept_descriptions_are_read_leniently_and_specs_name_it() -> None:
    assert _str_dict({'a': 'b'}) == {'a': 'b'}
    assert _str_dict(['not', 'a', 'dict']) == {}
    assert CAPABILITY_TYPES['FileUnderstanding'] is FileUnderstanding
    capability = FileUnderstanding('openai:gpt-5')
    capability._record([], {'x': 'y'})  # no request to keep it on: nothing happens
    assert capability.id == 'file_understanding'


async def test_other_metadata_is_kept_when_a_description_is_recorded() -> None:
    seen, describer = Seen(), Describer()
    agent = Agent(blind_model(seen, {'supports_image_input': False}), capabilities=[FileUnderstanding(describer)])
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart(['Look', PNG])], metadata={'app': 1, '__pydantic_ai__': {'other': 2}}),
        ModelResponse(parts=[TextPart('ok')]),
    ]
    await agent.run('again', message_history=history)
    metadata = history[0].metadata
    assert metadata is not None
    assert metadata['app'] == 1
    assert metadata['__pydantic_ai__']['other'] == 2
    assert describer.described == ['square']
