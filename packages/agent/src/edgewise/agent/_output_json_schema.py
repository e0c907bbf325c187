"""The JSON schema of an agent's output values (`Agent.output_json_schema`): what a caller of the agent gets
back, as opposed to the schemas the model is shown (output tools, native and prompted output)."""

from __future__ import annotations as _annotations

import inspect
import types
from collections.abc import Sequence
from typing import Any, Union, get_args, get_origin, get_type_hints

import pydantic

from .output import NativeOutput, PromptedOutput, TextOutput, ToolOutput

__all__ = ('output_json_schema', 'output_value_types')


def output_value_types(output_spec: Any) -> list[Any]:
    """The types of the values an output spec can give, flattened (unions, lists of specs, output markers);
    an output function gives its return type (`str` when it has none)."""
    specs = output_spec if isinstance(output_spec, Sequence) and not isinstance(output_spec, str) else [output_spec]
    found: list[Any] = []
    for spec in specs:
        if isinstance(spec, NativeOutput | PromptedOutput):
            found.extend(output_value_types(spec.outputs))
        elif isinstance(spec, TextOutput):
            found.append(str)
        elif isinstance(spec, ToolOutput):
            found.extend(output_value_types(spec.output))
        elif _is_union(spec):
            found.extend(get_args(spec))
        elif inspect.isfunction(spec) or inspect.ismethod(spec):
            returns = get_type_hints(spec).get('return')
            found.extend(output_value_types(returns) if returns is not None else [str])
        else:
            found.append(spec)
    return found


def _is_union(tp: Any) -> bool:
    origin: Any = get_origin(tp)
    return origin is Union or origin is types.UnionType


def output_json_schema(output_spec: Any) -> dict[str, Any]:
    """The JSON schema (serialization mode) of the output values of `output_spec`: one type's own schema, or
    an `anyOf` of the distinct schemas with their `$defs` merged (a name used for two different definitions
    is given a numbered suffix in the schema that brings the second one)."""
    schemas: list[dict[str, Any]] = []
    for tp in output_value_types(output_spec):
        schema = pydantic.TypeAdapter(tp).json_schema(mode='serialization')
        if schema not in schemas:
            schemas.append(schema)
    if len(schemas) == 1:
        return schemas[0]
    merged: dict[str, Any] = {}
    members = [_merge_defs(schema, merged) for schema in schemas]
    result: dict[str, Any] = {'anyOf': members}
    if merged:
        result['$defs'] = merged
    return result


def _merge_defs(schema: dict[str, Any], merged: dict[str, Any]) -> dict[str, Any]:
    """`schema` without its `$defs`, which go into `merged` (renamed where `merged` has another definition
    of the same name, with the schema's references rewritten)."""
    defs: dict[str, Any] | None = schema.get('$defs')
    if not defs:
        return schema
    renames: dict[str, str] = {}
    for name, definition in defs.items():
        new_name, n = name, 0
        while new_name in merged and merged[new_name] != definition:
            n += 1
            new_name = f'{name}_{n}'
        renames[name] = new_name
    body: dict[str, Any] = _rewrite_refs({k: v for k, v in schema.items() if k != '$defs'}, renames)
    for name, definition in defs.items():
        merged.setdefault(renames[name], _rewrite_refs(definition, renames))
    return body


def _rewrite_refs(value: Any, renames: dict[str, str]) -> Any:
    if isinstance(value, dict):
        ref = value.get('$ref')
        out = {k: _rewrite_refs(v, renames) for k, v in value.items()}
        if isinstance(ref, str) and ref.startswith('#/$defs/'):
            out['$ref'] = '#/$defs/' + renames.get(ref.removeprefix('#/$defs/'), ref.removeprefix('#/$defs/'))
        return out
    if isinstance(value, list):
        return [_rewrite_refs(item, renames) for item in value]
    return value
