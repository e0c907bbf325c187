"""The JSON schema of an agent's output values (`Agent.output_json_schema`): what a caller of the agent gets
back, as opposed to the schemas the model is shown (output tools, native and prompted output)."""

from __future__ import annotations as _annotations

import inspect
import types
from collections.abc import Sequence
from typing import Any, Union, get_args, get_origin, get_type_hints

import pydantic

from ..output import NativeOutput, PromptedOutput, TextOutput, ToolOutput

__all__ = ('merge_json_schema_defs', 'output_json_schema', 'output_value_types')


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
    an `anyOf` of the distinct schemas with their `$defs` merged (see `merge_json_schema_defs`)."""
    schemas: list[dict[str, Any]] = []
    for tp in output_value_types(output_spec):
        schema = pydantic.TypeAdapter(tp).json_schema(mode='serialization')
        if schema not in schemas:
            schemas.append(schema)
    if len(schemas) == 1:
        return schemas[0]
    members, merged = merge_json_schema_defs(schemas)
    result: dict[str, Any] = {'anyOf': members}
    if merged:
        result['$defs'] = merged
    return result


def merge_json_schema_defs(schemas: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The schemas without their `$defs`, and those definitions merged into one mapping (pydantic-ai's naming).

    A definition whose name is taken by a different one is renamed `<schema title>_<name>_<n>` (`<name>_<n>`
    for a schema without a title, `n` counting from 1), and the references to it are rewritten; so is an equal
    definition that refers to one renamed in its own schema (it differs in meaning)."""
    merged: dict[str, Any] = {}
    bodies: list[dict[str, Any]] = []
    for schema in schemas:
        defs: dict[str, Any] | None = schema.get('$defs')
        if not defs:
            bodies.append(schema)
            continue
        title = schema.get('title')
        renames: dict[str, str] = {}
        added: list[str] = []
        pending: list[str] = []  # already merged under this name with the same content
        for name, definition in defs.items():
            if name not in merged:
                merged[name] = definition
                renames[name] = name
                added.append(name)
            elif merged[name] != definition:
                renames[name] = _unique_def_name(name, title, merged)
                merged[renames[name]] = definition
                added.append(name)
            else:
                pending.append(name)
        changed = True
        while changed:  # a copy made for one definition can make those referring to it differ in turn
            changed = False
            for name in list(pending):
                if _rewrite_refs(defs[name], renames) != defs[name]:
                    pending.remove(name)
                    renames[name] = _unique_def_name(name, title, merged)
                    merged[renames[name]] = defs[name]
                    added.append(name)
                    changed = True
        for name in pending:
            renames[name] = name
        for name in added:
            merged[renames[name]] = _rewrite_refs(defs[name], renames)
        bodies.append(_rewrite_refs({k: v for k, v in schema.items() if k != '$defs'}, renames))
    return bodies, merged


def _unique_def_name(name: str, title: Any, taken: dict[str, Any]) -> str:
    base = f'{title}_{name}' if title else name
    n = 1
    while f'{base}_{n}' in taken:
        n += 1
    return f'{base}_{n}'


def _rewrite_refs(value: Any, renames: dict[str, str]) -> Any:
    """A copy of `value` with its local `$ref`s pointing at the renamed definitions."""
    if isinstance(value, dict):
        out = {k: _rewrite_refs(v, renames) for k, v in value.items()}
        ref = value.get('$ref')
        if isinstance(ref, str) and ref.startswith('#/$defs/'):
            name = ref.removeprefix('#/$defs/')
            out['$ref'] = '#/$defs/' + renames.get(name, name)
        return out
    if isinstance(value, list):
        return [_rewrite_refs(item, renames) for item in value]
    return value
