"""The profile of Z.ai's GLM models: which think, which take an effort level, which cannot stop thinking."""

from __future__ import annotations as _annotations

from collections.abc import Mapping

from . import ModelProfile
from ._json_schema import InlineDefsJsonSchemaTransformer

__all__ = ('ZaiModelProfile', 'zai_model_profile')

_THINKING = ('glm-5', 'glm-4.7', 'glm-4.6', 'glm-4.5')
_WITH_EFFORT = ('glm-5.3', 'glm-5.2')
_ALWAYS_THINKING = ('glm-5.3',)
_GLM_5_3_EFFORTS = {'minimal': 'low', 'medium': 'high', 'xhigh': 'max'}  # GLM-5.3 takes only low, high and max


class ZaiModelProfile(ModelProfile, total=False):
    """The profile of a GLM model on Z.AI: the common keys and Z.AI's own (`zai_`-prefixed)."""

    zai_supports_reasoning_effort: bool
    """Whether the model takes an effort level (`reasoning_effort`) with each request (GLM-5.2, GLM-5.3)."""

    zai_reasoning_effort_mapping: Mapping[str, str]
    """Effort levels the model does not take, and the level sent for each instead (others are sent as they are)."""


def zai_model_profile(model_name: str) -> ModelProfile | None:
    """The profile of a GLM model by Z.AI's own name (`glm-*`), or `None` for the defaults.

    GLM-4.5 and later think (`supports_thinking`); GLM-5.2 and GLM-5.3 also take an effort level, and GLM-5.3
    always thinks, takes only the levels `low`, `high` and `max`, and gets its tool schemas with `$defs` inlined.
    How Z.AI's API carries thinking (`reasoning_content`) is the provider's part of the profile.
    """
    lowered = model_name.lower()
    if not lowered.startswith(_THINKING):
        return None
    profile = ZaiModelProfile(
        supports_thinking=True,
        thinking_always_enabled=lowered.startswith(_ALWAYS_THINKING),
        zai_supports_reasoning_effort=lowered.startswith(_WITH_EFFORT),
    )
    if lowered.startswith('glm-5.3'):
        profile['zai_reasoning_effort_mapping'] = _GLM_5_3_EFFORTS
        profile['json_schema_transformer'] = InlineDefsJsonSchemaTransformer
    return profile
