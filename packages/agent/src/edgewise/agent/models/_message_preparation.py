"""The steps that turn a run's history into the history a model is sent (`Model.prepare_messages`), each a function
of its own module, run in order for the model's profile."""

from __future__ import annotations as _annotations

from .._messages.model_messages import ModelMessage
from ..profiles import ModelProfile
from ._instruction_history import project_history_records
from ._lookalike_notes import note_lookalikes
from ._request_parameters import ModelRequestParameters
from ._request_scoped import scope_system_prompts
from ._retry_feedback_history import render_retry_feedback
from ._speech_history import convert_speech_parts
from ._system_prompt_contexts import render_system_prompt_contexts
from ._tool_announcements import announce_tool_availability
from ._tool_call_ids import fit_tool_call_ids

__all__ = ('prepare_history',)


def prepare_history(
    messages: list[ModelMessage],
    profile: ModelProfile,
    parameters: ModelRequestParameters | None,
    *,
    keeps_tool_deltas: bool = False,
) -> list[ModelMessage]:
    """`messages` as a model with `profile` is sent them for a request with `parameters` (see
    `Model.prepare_messages`): spoken turns converted, lookalike tags noted, retry feedback and instruction records
    rendered, revealed tools announced (unless `keeps_tool_deltas`: the model takes them natively), request-scoped
    system prompts placed, and tool call ids fitted to the profile's `tool_call_id_length`. `messages` itself when
    nothing changes."""
    spoken = convert_speech_parts(messages, include_audio=profile.get('supports_audio_input', False))
    inline_system = profile.get('supports_inline_system_prompts', False)
    noted = note_lookalikes(spoken, profile)
    projected = project_history_records(render_retry_feedback(noted), inline_system=inline_system)
    projected = render_system_prompt_contexts(projected, inline_system=inline_system)
    announced = announce_tool_availability(projected, parameters, native=keeps_tool_deltas)
    announced = scope_system_prompts(
        announced, cleared_by_api=profile.get('supports_request_scoped_system_prompts', False)
    )
    if (length := profile.get('tool_call_id_length')) is not None:
        return fit_tool_call_ids(announced, length)
    return announced
