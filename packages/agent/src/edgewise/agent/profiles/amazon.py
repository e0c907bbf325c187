"""The profile of Amazon's models (Nova, Titan)."""

from __future__ import annotations as _annotations

from . import InlineDefsJsonSchemaTransformer, ModelProfile

__all__ = ('amazon_model_profile',)


def amazon_model_profile(model_name: str) -> ModelProfile | None:
    """The profile of an Amazon model: its tool schemas must not use `$defs`."""
    return ModelProfile(json_schema_transformer=InlineDefsJsonSchemaTransformer)
