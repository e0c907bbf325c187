"""The profile of Meta's Llama models."""

from __future__ import annotations as _annotations

from . import InlineDefsJsonSchemaTransformer, ModelProfile

__all__ = ('meta_model_profile',)


def meta_model_profile(model_name: str) -> ModelProfile | None:
    """The profile of a Llama model: its tool schemas must not use `$defs`."""
    return ModelProfile(json_schema_transformer=InlineDefsJsonSchemaTransformer)
