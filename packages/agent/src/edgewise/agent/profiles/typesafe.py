"""The profile of TypeSafe's Jev models: a decision model profile with Jev's limits on options and rubric levels."""

from __future__ import annotations as _annotations

from . import ModelProfile, merge_profile
from .decision import DecisionModelProfile, decision_model_profile

__all__ = ('typesafe_model_profile',)

_JEV_MAX_CHOICE_OPTIONS = 255
"""The most options Jev takes in one pick-one question (the API refuses more with a 400)."""

_JEV_MAX_SCORE_LEVELS = 10
"""The most levels Jev takes in one rubric (the API refuses more with a 400)."""


def typesafe_model_profile(model_name: str) -> ModelProfile | None:
    """The profile of a Jev model (`jev-latest`, `jev-preview`, `jev-1.13.0`, ...): `decision_model_profile` with
    Jev's caps (`decision_max_choice_options=255`, `decision_max_score_levels=10`)."""
    return merge_profile(
        decision_model_profile(model_name),
        DecisionModelProfile(
            decision_max_choice_options=_JEV_MAX_CHOICE_OPTIONS,
            decision_max_score_levels=_JEV_MAX_SCORE_LEVELS,
        ),
    )
