"""The profile of Google's Gemini models, and the JSON schema subset the Gemini API accepts."""

from __future__ import annotations as _annotations

from . import JsonSchema, JsonSchemaTransformer, ModelProfile

__all__ = ('GoogleModelProfile', 'GoogleJsonSchemaTransformer', 'google_model_profile')

_TOOL_RETURN_MIME_TYPES = ('image/png', 'image/jpeg', 'image/webp', 'application/pdf', 'text/plain')


class GoogleModelProfile(ModelProfile, total=False):
    """A profile with the fields of the Gemini API (all prefixed `google_`, so that profiles merge)."""

    google_supports_tool_combination: bool
    """Whether function tools, server-side tools and a response schema may be combined (Gemini 3+) (default `False`)."""
    google_supports_server_side_tool_invocations: bool
    """Whether server-side tool calls are returned as parts to be sent back (Gemini 3+) (default `False`)."""
    google_supported_mime_types_in_tool_returns: tuple[str, ...]
    """Media types a function response may carry as parts (default `()`)."""
    google_supports_thinking_level: bool
    """Whether thinking is tuned by `thinking_level` (Gemini 3+) rather than `thinking_budget` (default `False`)."""
    google_supports_batch_api: bool
    """Whether the endpoint serves the Gemini API's Batch Mode (default: only the `google` provider does, not Google
    Cloud)."""


def google_model_profile(model_name: str) -> ModelProfile | None:
    """The profile of a Gemini model.

    Gemini reasons in `thought` parts; their signatures (`thoughtSignature`) go back to Gemini only.
    Image models take no tools.
    """
    image_model = 'image' in model_name
    gemini_3 = 'gemini-3' in model_name
    thinks = 'gemini-2.5' in model_name or gemini_3
    # Pro models cannot switch thinking off.
    pro = 'pro' in model_name and 'flash' not in model_name
    return GoogleModelProfile(
        json_schema_transformer=GoogleJsonSchemaTransformer,
        supports_image_output=image_model,
        supports_json_schema_output=gemini_3 or not image_model,
        supports_json_object_output=gemini_3 or not image_model,
        supports_tools=not image_model,
        supports_tool_return_schema=not image_model,
        supports_thinking=thinks,
        thinking_always_enabled=thinks and pro,
        google_supports_tool_combination=gemini_3,
        google_supports_server_side_tool_invocations=gemini_3,
        google_supported_mime_types_in_tool_returns=_TOOL_RETURN_MIME_TYPES if gemini_3 else (),
        google_supports_thinking_level=gemini_3,
    )


class GoogleJsonSchemaTransformer(JsonSchemaTransformer):
    """Rewrites a schema into the subset of JSON schema that Gemini accepts.

    `const` becomes a one-value `enum` (with its type), string formats move into the description,
    `$ref` gets no siblings (they are kept beside an `anyOf` holding the ref), and keywords Gemini
    rejects (`title`, `examples`, `discriminator`, exclusive bounds, `$schema`) are dropped.
    """

    def transform(self, schema: JsonSchema) -> JsonSchema:
        """Rewrite one sub-schema for Gemini."""
        for key in ('$schema', 'title', 'examples', 'discriminator', 'exclusiveMinimum', 'exclusiveMaximum'):
            schema.pop(key, None)
        if 'const' in schema:
            const = schema.pop('const')
            schema['enum'] = [const]
            if 'type' not in schema:
                # bool before int: True is an int too.
                for python_type, json_type in ((str, 'string'), (bool, 'boolean'), (int, 'integer'), (float, 'number')):
                    if isinstance(const, python_type):
                        schema['type'] = json_type
                        break
        if schema.get('type') == 'string' and (fmt := schema.pop('format', None)):
            description = schema.get('description')
            schema['description'] = f'{description} (format: {fmt})' if description else f'Format: {fmt}'
        if '$ref' in schema and len(schema) > 1:
            schema['anyOf'] = [{'$ref': schema.pop('$ref')}]
        return schema
