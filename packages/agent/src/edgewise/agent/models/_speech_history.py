"""Spoken turns made readable for any model: the `SpeechPart`s of a history recorded by a realtime session become
the prompt and text parts every model's mapping knows (`Model.prepare_messages`)."""

from __future__ import annotations as _annotations

from dataclasses import replace

from ..exceptions import UserError
from ..messages import (
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponsePart,
    SpeechPart,
    TextPart,
    UserPromptPart,
)

__all__ = ('convert_speech_parts', 'unprepared_speech_error')


def convert_speech_parts(messages: list[ModelMessage], *, include_audio: bool) -> list[ModelMessage]:
    """`messages` with each user `SpeechPart` made a `UserPromptPart` (of its kept audio when `include_audio`
    and there is audio, else of its transcript) and each assistant one a `TextPart` of its transcript.

    A cut-off assistant turn says so in its text (`[Interrupted after N ms]`, or `[Interrupted]` on the last spoken
    part of an interrupted response), so the model does not take the fragment for a whole answer; the history
    itself keeps `interrupted_at_ms`. Parts with nothing to send are dropped, and messages left empty. The same
    list when there is no `SpeechPart`.
    """
    if not any(isinstance(part, SpeechPart) for message in messages for part in message.parts):
        return messages
    converted: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            request_parts: list[ModelRequestPart] = []
            for part in message.parts:
                if not isinstance(part, SpeechPart):
                    request_parts.append(part)
                elif include_audio and part.audio is not None:
                    request_parts.append(UserPromptPart([part.audio]))
                elif part.transcript:
                    request_parts.append(UserPromptPart(part.transcript))
            if request_parts:
                converted.append(replace(message, parts=request_parts))
            continue
        spoken = [index for index, part in enumerate(message.parts) if isinstance(part, SpeechPart)]
        response_parts: list[ModelResponsePart] = []
        for index, response_part in enumerate(message.parts):
            if not isinstance(response_part, SpeechPart):
                response_parts.append(response_part)
                continue
            lines = [response_part.transcript] if response_part.transcript else []
            if response_part.interrupted_at_ms is not None:
                lines.append(f'[Interrupted after {response_part.interrupted_at_ms} ms]')
            elif message.state == 'interrupted' and spoken and index == spoken[-1]:
                lines.append('[Interrupted]')
            if lines:
                response_parts.append(TextPart('\n'.join(lines)))
        if response_parts:
            converted.append(replace(message, parts=response_parts))
    return converted


def unprepared_speech_error(model_name: str) -> UserError:
    """The error of a model's mapping that meets a `SpeechPart` (the history did not go through
    `Model.prepare_messages`, as a direct `Model.request` call's does not)."""
    return UserError(
        f'`SpeechPart` cannot be sent to this model as-is ({model_name!r}): pass the history through '
        '`model.prepare_messages(messages)` first (agent runs do), which turns spoken turns into text or audio prompts.'
    )
