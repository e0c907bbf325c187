"""The profile of Mistral's models."""

from __future__ import annotations as _annotations

from . import InlineDefsJsonSchemaTransformer, ModelProfile, merge_profile

__all__ = ('mistral_model_profile',)


def mistral_model_profile(model_name: str) -> ModelProfile:
    """The profile of a Mistral model.

    Every Mistral model takes tool call ids of exactly 9 letters and digits (its chat template's; some deployments
    reject others), Magistral always reasons, and GLM-5.3 served by Mistral gets its tool schemas with `$defs`
    inlined (it garbles nested arguments behind a `$ref`).
    """
    profile = ModelProfile(tool_call_id_length=9)
    if model_name == 'zai-glm-5-3' or model_name.startswith('zai-glm-5-3-'):
        profile = merge_profile(profile, ModelProfile(json_schema_transformer=InlineDefsJsonSchemaTransformer))
    if model_name.startswith('magistral'):
        profile = merge_profile(profile, ModelProfile(supports_thinking=True, thinking_always_enabled=True))
    return profile
