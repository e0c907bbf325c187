"""Templates in agent specs: a spec's description and instructions, and the arguments of a capability's `from_spec`
hinted as `TemplateStr`, become templates checked against the agent's deps type (or the spec's `deps_schema`)."""

from __future__ import annotations as _annotations

import inspect
from types import NoneType
from typing import Any, TypeVar, get_args, get_origin, get_type_hints

from pydantic import BaseModel, TypeAdapter

from ..template import TemplateStr

_Spec = TypeVar('_Spec', bound=BaseModel)

__all__ = ('template_context', 'with_deps_type', 'template_arguments')


def template_context(deps_type: Any, data: Any = None) -> dict[str, Any]:
    """The validation context templates are made in: the agent's deps type (none for `None` or `object`, the
    defaults) and the JSON schema of the deps that `data` (a spec, as a dict or validated) gives."""
    schema = data.get('deps_schema') if isinstance(data, dict) else getattr(data, 'deps_schema', None)
    return {
        'deps_type': None if deps_type in (None, NoneType, object) else deps_type,
        'deps_schema': schema if isinstance(schema, dict) else None,
    }


def _retyped(value: Any, deps_type: Any) -> Any:
    if isinstance(value, TemplateStr) and value.deps_type is None:
        return TemplateStr(value.source, deps_type=deps_type)
    if isinstance(value, list):
        return [_retyped(item, deps_type) for item in value]
    return value


def with_deps_type(spec: _Spec, context: dict[str, Any]) -> _Spec:
    """`spec` with its templates made without a deps type (a spec validated on its own, `AgentSpec.from_file`)
    checked against and rendered as the agent's deps type, when it has one."""
    deps_type = context['deps_type']
    if deps_type is None:
        return spec
    updates = {
        field: _retyped(getattr(spec, field), deps_type)
        for field in ('description', 'instructions')
        if _holds_template(getattr(spec, field))
    }
    return spec.model_copy(update=updates) if updates else spec


def _holds_template(value: Any) -> bool:
    return isinstance(value, TemplateStr) or (isinstance(value, list) and any(_holds_template(v) for v in value))


def template_arguments(
    cls: type[Any], args: tuple[Any, ...], kwargs: dict[str, Any], context: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments of `cls.from_spec` with those its hints type as `TemplateStr` (alone or in a union) validated
    in `context`: a text holding `{{` becomes a template, checked against the deps type."""
    hinted = _template_hints(cls)
    if not hinted:
        return args, kwargs
    names = [
        p.name
        for p in inspect.signature(cls.from_spec).parameters.values()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    new_args = list(args)
    for index, value in enumerate(args[: len(names)]):
        if names[index] in hinted:
            new_args[index] = hinted[names[index]].validate_python(value, context=context)
    new_kwargs = {
        name: hinted[name].validate_python(value, context=context) if name in hinted else value
        for name, value in kwargs.items()
    }
    return tuple(new_args), new_kwargs


def _template_hints(cls: type[Any]) -> dict[str, TypeAdapter[Any]]:
    try:
        hints = get_type_hints(cls.from_spec)
    except Exception:  # a hint that does not resolve: its arguments are taken as given
        return {}
    hints.pop('return', None)
    return {name: TypeAdapter(hint) for name, hint in hints.items() if _mentions_template(hint)}


def _mentions_template(hint: Any) -> bool:
    if hint is TemplateStr or get_origin(hint) is TemplateStr:
        return True
    return any(_mentions_template(arg) for arg in get_args(hint))
