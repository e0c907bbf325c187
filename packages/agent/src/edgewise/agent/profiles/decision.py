"""The profile of a decision model: a model that answers typed questions about a conversation, with a confidence,
instead of writing text (TypeSafe's Jev, models behind a System One API).

`edgewise.agent.models.decision.DecisionModel` reads the `decision_` keys (its class limits are the fallback); the
providers that give this profile are `edgewise.agent.providers.system_one` and `edgewise.agent.providers.typesafe`.
"""

from __future__ import annotations as _annotations

from . import ModelProfile

__all__ = ('DecisionModelProfile', 'decision_model_profile')


class DecisionModelProfile(ModelProfile, total=False):
    """The profile of a decision model: the common keys and what the model can be asked (`decision_`-prefixed).

    These describe the model served under a name, so the provider sets them per model name (or `profile=` does).
    """

    decision_max_choice_options: int | None
    """How many options one pick-one question may offer at most (`None`: no limit)."""

    decision_max_score_levels: int | None
    """How many levels one rubric (score question) may have at most (`None`: no limit)."""

    decision_requires_instructions: bool
    """Whether every question must carry `instructions`, even one whose options already say what it asks."""


def decision_model_profile(model_name: str) -> ModelProfile:
    """The profile of any decision model, whatever its name.

    Such a model fills an `output_type` through tool-mode structured output, so it supports tools but neither text
    nor native / prompted JSON output; system prompts are part of what it judges, so they stay inline.
    """
    return ModelProfile(
        supports_tools=True,
        supports_text_output=False,
        supports_inline_system_prompts=True,
        supports_tool_return_schema=False,
        supports_json_schema_output=False,
        supports_json_object_output=False,
        supports_image_output=False,
        supports_audio_input=False,
        default_structured_output_mode='tool',
    )
