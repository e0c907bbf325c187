"""Spoken turns in histories (pydantic-ai 2.x's realtime vocabulary): `SpeechPart`, `SpeechPartDelta`,
`BinaryAudio`, `RealtimeSessionErrorEvent`, their serialization, and how a history holding them reaches a model
(`Model.prepare_messages`) and ends a run."""

from __future__ import annotations

import re
from typing import Any

import pydantic
import pytest

from edgewise.agent import Agent, BinaryAudio, BinaryContent, SpeechPart, SpeechPartDelta, SpeechTimestamp
from edgewise.agent.messages import (
    AgentStreamEvent,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    PartDeltaEvent,
    RealtimeSessionErrorEvent,
    SystemPromptPart,
    TextPart,
    UserPromptPart,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models.function import AgentInfo, FunctionModel, _estimate_usage
from edgewise.agent.models.instrumented import InstrumentationSettings
from edgewise.agent.models.test import TestModel
from edgewise.agent.models.wrapper import WrapperModel
from edgewise.agent.profiles import ModelProfile
from edgewise.agent.realtime import RealtimeModelSettings, TurnDetection
from edgewise.agent.usage import RequestUsage

pytestmark = pytest.mark.anyio

AUDIO = BinaryContent(b'\x01\x02', media_type='audio/pcm')


def _prompts(message: ModelMessage) -> list[Any]:
    """The contents of a request's prompt parts."""
    return [part.content for part in message.parts if isinstance(part, UserPromptPart | SystemPromptPart)]


def test_a_spoken_part_reads_as_text_through_its_transcript() -> None:
    assert SpeechPart(speaker='user', transcript='Hello').content == 'Hello'
    assert SpeechPart(speaker='user').content == ''
    assert SpeechPart(speaker='user', transcript='Hello').has_content()
    assert SpeechPart(speaker='user', audio=AUDIO).has_content()
    assert not SpeechPart(speaker='assistant', transcript='').has_content()
    response = ModelResponse(parts=[SpeechPart(speaker='assistant', transcript='Hello'), TextPart(' world')])
    assert response.text == 'Hello world'
    # A spoken part without a transcript is no text: it separates the runs around it.
    response = ModelResponse(parts=[TextPart('a'), SpeechPart(speaker='assistant', audio=AUDIO), TextPart('b')])
    assert response.text == 'a\n\nb'
    assert repr(SpeechPart(speaker='user', transcript='Hi')) == "SpeechPart(speaker='user', transcript='Hi')"


def test_a_spoken_part_must_be_the_users_in_a_request_and_the_models_in_a_response() -> None:
    user, assistant = SpeechPart(speaker='user'), SpeechPart(speaker='assistant')
    assert ModelRequest(parts=[user]).parts == [user]
    assert ModelResponse(parts=[assistant]).parts == [assistant]
    message = "`SpeechPart` in `ModelRequest.parts` must have `speaker='user'`, got 'assistant'"
    with pytest.raises(ValueError, match=re.escape(message)):
        ModelRequest(parts=[assistant])
    with pytest.raises(ValueError, match=re.escape("must have `speaker='assistant'`, got 'user'")):
        ModelResponse(parts=[user])
    # Loading a history checks it too, and says where.
    with pytest.raises(pydantic.ValidationError, match=re.escape(message)):
        ModelMessagesTypeAdapter.validate_python(
            [{'kind': 'request', 'parts': [{'part_kind': 'speech', 'speaker': 'assistant'}]}]
        )


def test_spoken_parts_survive_serialization() -> None:
    messages: list[ModelMessage] = [
        ModelRequest(
            parts=[SpeechPart(speaker='user', transcript='Hello', audio=AUDIO, id='item-1', provider_name='openai')]
        ),
        ModelResponse(parts=[SpeechPart(speaker='assistant', transcript='Hi!', interrupted_at_ms=420)]),
    ]
    dumped = ModelMessagesTypeAdapter.dump_python(messages, mode='json')
    assert dumped[0]['parts'] == [
        {
            'speaker': 'user',
            'transcript': 'Hello',
            'audio': {
                'data': 'AQI=',
                'media_type': 'audio/pcm',
                'vendor_metadata': None,
                'kind': 'binary',
                'identifier': '0ca623',
            },
            'interrupted_at_ms': None,
            'timestamps': None,
            'id': 'item-1',
            'provider_name': 'openai',
            'provider_details': None,
            'part_kind': 'speech',
        }
    ]
    assert dumped[1]['parts'][0]['interrupted_at_ms'] == 420
    assert ModelMessagesTypeAdapter.validate_python(dumped) == messages
    assert ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(messages)) == messages


def test_a_speech_delta_replaces_or_extends_the_transcript_and_grows_kept_audio() -> None:
    part = SpeechPart(speaker='assistant', transcript='Hello', audio=BinaryContent(b'\x01', media_type='audio/pcm'))
    grown = SpeechPartDelta(transcript_delta=' there', audio_chunk=b'\x02').apply(part)
    assert grown == SpeechPart(
        speaker='assistant', transcript='Hello there', audio=BinaryContent(b'\x01\x02', media_type='audio/pcm')
    )
    assert part.transcript == 'Hello'
    assert part.audio is not None
    assert part.audio.data == b'\x01'
    # A whole transcript replaces (a provider revised what it heard); a delta starts a missing transcript.
    assert SpeechPartDelta(transcript='Hello, my name is').apply(part).transcript == 'Hello, my name is'
    assert SpeechPartDelta(transcript_delta='Hi').apply(SpeechPart(speaker='user')).transcript == 'Hi'
    # A part that keeps no audio gets none from a chunk.
    assert SpeechPartDelta(audio_chunk=b'\x01').apply(SpeechPart(speaker='user', transcript='x')).audio is None
    with pytest.raises(ValueError, match='Cannot apply SpeechPartDeltas to non-SpeechParts'):
        SpeechPartDelta(transcript_delta='x').apply(TextPart('Hi'))
    assert repr(SpeechPartDelta(speaker='user', transcript='x')) == "SpeechPartDelta(speaker='user', transcript='x')"


def test_speech_deltas_and_realtime_errors_serialize_as_stream_events() -> None:
    adapter: pydantic.TypeAdapter[AgentStreamEvent] = pydantic.TypeAdapter(AgentStreamEvent)
    error = RealtimeSessionErrorEvent('Connection dropped', recoverable=False)
    dumped = adapter.dump_python(error, mode='json')
    assert dumped == {
        'message': 'Connection dropped',
        'type': None,
        'code': None,
        'recoverable': False,
        'event_kind': 'realtime_session_error',
    }
    assert adapter.validate_python(dumped) == error
    delta = PartDeltaEvent(index=0, delta=SpeechPartDelta(speaker='user', transcript_delta='Hi', audio_chunk=b'\x00'))
    assert adapter.validate_json(adapter.dump_json(delta)) == delta


def test_binary_audio_holds_only_audio() -> None:
    assert BinaryAudio(b'x', media_type='audio/wav').is_audio
    with pytest.raises(ValueError, match='`BinaryAudio` must have a media type that starts with "audio/"'):
        BinaryAudio(b'x', media_type='text/plain')


def test_spoken_parts_as_opentelemetry_parts() -> None:
    part = SpeechPart(speaker='user', transcript='Hello', audio=BinaryContent(b'\x01', media_type='audio/pcm'))
    assert part.otel_message_parts(InstrumentationSettings(version=5)) == [
        {'type': 'text', 'content': 'Hello'},
        {'type': 'blob', 'mime_type': 'audio/pcm', 'modality': 'audio', 'content': 'AQ=='},
    ]
    assert part.otel_message_parts(InstrumentationSettings(version=5, include_content=False)) == [
        {'type': 'text'},
        {'type': 'blob', 'mime_type': 'audio/pcm', 'modality': 'audio'},
    ]
    with pytest.warns(DeprecationWarning, match='version 3 is deprecated; use `version=5`'):
        version_3 = InstrumentationSettings(version=3, include_binary_content=False)
    assert part.otel_message_parts(version_3) == [
        {'type': 'text', 'content': 'Hello'},
        {'type': 'binary', 'media_type': 'audio/pcm'},
    ]
    assert SpeechPart(speaker='assistant').otel_message_parts(InstrumentationSettings()) == []


def test_prepare_messages_turns_spoken_parts_into_prompts_and_text() -> None:
    history: list[ModelMessage] = [
        ModelRequest(parts=[SpeechPart(speaker='user', transcript='What time is it?', audio=AUDIO)]),
        ModelResponse(parts=[SpeechPart(speaker='assistant', transcript='It is noon.'), TextPart('Bye!')]),
    ]
    prepared = TestModel().prepare_messages(history)
    assert _prompts(prepared[0]) == ['What time is it?']
    assert isinstance(prepared[0].parts[0], UserPromptPart)
    assert prepared[1].parts == [TextPart('It is noon.'), TextPart('Bye!')]
    # A model that takes audio gets the kept audio instead of the transcript (also behind a wrapper).
    audio_model = WrapperModel(TestModel(profile=ModelProfile(supports_audio_input=True)))
    assert _prompts(audio_model.prepare_messages(history)[0]) == [[AUDIO]]
    # A history without spoken parts is the same list.
    plain: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart('hi')])]
    assert TestModel().prepare_messages(plain) is plain


@pytest.mark.parametrize(
    ('response', 'text'),
    [
        (
            ModelResponse(parts=[SpeechPart(speaker='assistant', transcript='The answer is', interrupted_at_ms=640)]),
            'The answer is\n[Interrupted after 640 ms]',
        ),
        (
            ModelResponse(parts=[SpeechPart(speaker='assistant', transcript='The answer is')], state='interrupted'),
            'The answer is\n[Interrupted]',
        ),
        (ModelResponse(parts=[SpeechPart(speaker='assistant', interrupted_at_ms=640)]), '[Interrupted after 640 ms]'),
        (ModelResponse(parts=[SpeechPart(speaker='assistant', transcript='The answer is')]), 'The answer is'),
    ],
    ids=['known-offset', 'unknown-offset', 'no-transcript', 'not-interrupted'],
)
def test_prepare_messages_says_where_a_spoken_answer_was_cut_off(response: ModelResponse, text: str) -> None:
    assert TestModel().prepare_messages([response])[0].parts == [TextPart(text)]


def test_prepare_messages_drops_spoken_parts_with_nothing_to_say() -> None:
    prompt = UserPromptPart('hello')
    history: list[ModelMessage] = [
        ModelRequest(parts=[SpeechPart(speaker='user')]),
        ModelResponse(parts=[SpeechPart(speaker='assistant', audio=AUDIO)]),
        ModelRequest(parts=[prompt, SpeechPart(speaker='user', audio=AUDIO)]),  # audio a text model cannot take
    ]
    prepared = TestModel().prepare_messages(history)
    assert prepared == [ModelRequest(parts=[prompt])]


async def test_a_run_sends_a_spoken_history_as_text() -> None:
    received: list[ModelMessage] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        received[:] = messages
        return ModelResponse(parts=[TextPart('done')])

    history: list[ModelMessage] = [
        ModelRequest(parts=[SpeechPart(speaker='user', transcript='Hello', audio=AUDIO)]),
        ModelResponse(parts=[SpeechPart(speaker='assistant', transcript='Hi! How can I help?')]),
        ModelRequest(parts=[SpeechPart(speaker='user')]),  # dropped: its neighbours merge
        ModelRequest(parts=[SystemPromptPart('note')]),
    ]
    result = await Agent(FunctionModel(answer)).run('What time is it?', message_history=history)
    assert result.output == 'done'
    assert [type(m).__name__ for m in received] == ['ModelRequest', 'ModelResponse', 'ModelRequest']
    assert _prompts(received[0]) == ['Hello']
    assert received[1].parts == [TextPart('Hi! How can I help?')]
    assert _prompts(received[2]) == ['note', 'What time is it?']
    # The history kept is the one given: the conversion is only what the model is sent.
    assert result.all_messages()[0].parts == history[0].parts


async def test_a_spoken_answer_is_the_runs_text_output() -> None:
    def speak(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[SpeechPart(speaker='assistant', transcript='hello from speech')])

    assert (await Agent(FunctionModel(speak)).run('hi')).output == 'hello from speech'


async def test_a_spoken_answer_in_the_middle_of_a_run_is_converted_for_the_next_request() -> None:
    seen: list[list[ModelMessage]] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(messages)
        if len(seen) == 1:
            return ModelResponse(parts=[SpeechPart(speaker='assistant', transcript='let me check'), _call()])
        return ModelResponse(parts=[TextPart('it is noon')])

    agent = Agent(FunctionModel(respond))

    @agent.tool_plain
    def clock() -> str:
        return 'noon'

    assert (await agent.run('time?')).output == 'it is noon'
    assert seen[1][1].parts[0] == TextPart('let me check')


def _call() -> Any:
    from edgewise.agent.messages import ToolCallPart

    return ToolCallPart('clock', {}, 'call-1')


async def test_function_model_counts_a_transcript_as_text() -> None:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart('ok')])

    model = FunctionModel(respond)
    spoken: list[ModelMessage] = [ModelRequest(parts=[SpeechPart(speaker='user', transcript='Hello from speech')])]
    written: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart('Hello from speech')])]
    spoken_usage = (await model.request(spoken, None, ModelRequestParameters())).usage
    written_usage = (await model.request(written, None, ModelRequestParameters())).usage
    assert spoken_usage.input_tokens == written_usage.input_tokens > 50
    answer = ModelResponse(parts=[SpeechPart(speaker='assistant', transcript='hello spoken world')])
    assert _estimate_usage([answer]) == RequestUsage(input_tokens=50, output_tokens=3)


def test_realtime_settings_are_typed_data() -> None:
    detection: TurnDetection = {'sensitivity': 'high', 'silence_duration_ms': 300}
    settings: RealtimeModelSettings = {'max_tokens': 100, 'turn_detection': detection, 'output_modality': 'text'}
    assert RealtimeModelSettings.__optional_keys__ >= {'max_tokens', 'turn_detection', 'reconnect', 'thinking'}
    assert settings['turn_detection'] == detection


def test_speech_timestamps_are_kept_on_the_part_and_survive_serialization() -> None:
    words = [
        SpeechTimestamp(text='Hi', start_ms=0, duration_ms=180),
        SpeechTimestamp(text='!', start_ms=180, duration_ms=20),
    ]
    segment = SpeechTimestamp(text='How are you?', start_ms=400, duration_ms=900, granularity='segment')
    messages: list[ModelMessage] = [
        ModelResponse(
            parts=[SpeechPart(speaker='assistant', transcript='Hi! How are you?', timestamps=[*words, segment])]
        )
    ]
    dumped = ModelMessagesTypeAdapter.dump_python(messages, mode='json')
    assert dumped[0]['parts'][0]['timestamps'] == [
        {'text': 'Hi', 'start_ms': 0, 'duration_ms': 180, 'granularity': 'word'},
        {'text': '!', 'start_ms': 180, 'duration_ms': 20, 'granularity': 'word'},
        {'text': 'How are you?', 'start_ms': 400, 'duration_ms': 900, 'granularity': 'segment'},
    ]
    assert ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(messages)) == messages
    # A history written before timestamps existed loads without them.
    del dumped[0]['parts'][0]['timestamps']
    [response] = ModelMessagesTypeAdapter.validate_python(dumped)
    assert isinstance(response, ModelResponse)
    assert response.parts == [SpeechPart(speaker='assistant', transcript='Hi! How are you?')]
    dumped[0]['parts'][0]['timestamps'] = [{'text': 'x', 'start_ms': 0, 'duration_ms': 1, 'granularity': 'line'}]
    with pytest.raises(pydantic.ValidationError, match='granularity'):
        ModelMessagesTypeAdapter.validate_python(dumped)
    assert repr(segment) == "SpeechTimestamp(text='How are you?', start_ms=400, duration_ms=900, granularity='segment')"
    assert repr(words[0]) == "SpeechTimestamp(text='Hi', start_ms=0, duration_ms=180)"


def test_speech_deltas_add_their_timestamps_to_the_parts() -> None:
    first, second = (
        SpeechTimestamp(text='Hi', start_ms=0, duration_ms=180),
        SpeechTimestamp(text='there', start_ms=200, duration_ms=240),
    )
    part = SpeechPartDelta(speaker='assistant', transcript_delta='Hi', timestamps=[first])
    grown = part.apply(SpeechPart(speaker='assistant'))
    assert grown.timestamps == [first]
    grown = SpeechPartDelta(transcript_delta=' there', timestamps=[second]).apply(grown)
    assert (grown.transcript, grown.timestamps) == ('Hi there', [first, second])
    # A delta without timestamps leaves the part's as they are (none stays none).
    assert SpeechPartDelta(transcript_delta='!').apply(grown).timestamps == [first, second]
    assert SpeechPartDelta(transcript_delta='!').apply(SpeechPart(speaker='assistant')).timestamps is None
    assert 'timestamps=[SpeechTimestamp(' in repr(part)
    adapter: pydantic.TypeAdapter[AgentStreamEvent] = pydantic.TypeAdapter(AgentStreamEvent)
    event = PartDeltaEvent(index=0, delta=part)
    assert adapter.validate_json(adapter.dump_json(event)) == event


def test_realtime_settings_name_speech_timestamps() -> None:
    assert 'output_speech_timestamps' in RealtimeModelSettings.__optional_keys__
