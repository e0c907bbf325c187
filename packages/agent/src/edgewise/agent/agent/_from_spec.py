"""Agent specs: an agent described as data (a dict, JSON or YAML), for `Agent.from_spec`, `Agent.from_file` and
the `spec=` argument of `run`, `iter` and `override`.

```yaml
model: openai:gpt-4o
instructions: Answer in one sentence.
retries: {output: 2}
capabilities:
  - ToolSearch: {max_results: 5}
```

YAML needs PyYAML (`pip install pyyaml`), imported only when YAML is read or written.
"""

from __future__ import annotations as _annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Self, cast

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_serializer, model_validator
from pydantic_core import from_json, to_json
from pydantic_core.core_schema import SerializationInfo, SerializerFunctionWrapHandler

from .. import capabilities
from .._run.deps import EndStrategy
from .._run.options import AgentRetries, instruction_items
from .._spec import (
    CapabilitySpec,
    CapabilitySpecContext,
    build_registry,
    build_schema_types,
    capability_spec_context,
    load_from_registry,
)
from .._warnings import PydanticAIDeprecationWarning, application_caller
from ..capabilities.abstract import AbstractCapability
from ..exceptions import UserError
from ..output import StructuredDict
from ..settings import ModelSettings, merge_model_settings
from ..template import TemplateStr
from ._spec_templates import template_arguments, template_context, with_deps_type

__all__ = (
    'AgentSpec',
    'build_agent',
    'override_from_spec',
    'run_from_spec',
    'CapabilitySpec',
    'CapabilitySpecContext',
    'DEFAULT_SCHEMA_PATH_TEMPLATE',
    'LEGACY_CAPABILITY_NAMES',
    'capability_spec_context',
    'get_capability_registry',
    'load_capability_from_nested_spec',
)

DEFAULT_SCHEMA_PATH_TEMPLATE = './{stem}_schema.json'
"""Where `AgentSpec.to_file` writes the JSON schema by default, `{stem}` being the spec file's stem."""

LEGACY_CAPABILITY_NAMES: Mapping[str, str] = {'BuiltinTool': 'NativeTool', 'BuiltinOrLocalTool': 'NativeOrLocalTool'}
"""Capability names of earlier pydantic-ai versions: a spec using one warns and gets the new name."""

_YAML_SCHEMA_COMMENT = '# yaml-language-server: $schema='

_Format = Literal['yaml', 'json']


class AgentSpec(BaseModel):
    """An agent as data: what `Agent.from_spec` builds an agent from, and what `run(spec=...)` adds to a run."""

    model_config = ConfigDict(defer_build=True)  # the schema is built on first use, not when the agent is imported

    json_schema_path: str | None = Field(default=None, alias='$schema')
    """The `$schema` key of a spec file (its JSON schema, for editors); not used otherwise."""
    model: str | None = None
    """The model's name, such as `'openai:gpt-4o'` or `'test'`."""
    name: str | None = None
    """The agent's name."""
    description: TemplateStr[Any] | str | None = None
    """What the agent does; a text holding `{{` is a template (`TemplateStr`) rendered from a run's deps."""
    instructions: TemplateStr[Any] | str | list[TemplateStr[Any] | str] | None = None
    """Instructions sent with every request; a text holding `{{` is a template (`TemplateStr`)."""
    deps_schema: dict[str, Any] | None = None
    """The JSON schema of the deps (recorded; Edgewise does not validate deps against it)."""
    output_schema: dict[str, Any] | None = None
    """The JSON schema of the output: the agent's output type becomes `StructuredDict(output_schema)`."""
    model_settings: dict[str, Any] | None = None
    """Settings of the model requests."""
    retries: int | AgentRetries | None = None
    """Retry budgets, as `Agent(retries=...)`."""
    tool_retries: int | None = Field(default=None, json_schema_extra={'deprecated': True})
    """Deprecated: `retries={'tools': n}`."""
    output_retries: int | None = Field(default=None, json_schema_extra={'deprecated': True})
    """Deprecated: `retries={'output': n}`."""
    end_strategy: EndStrategy = 'graceful'
    """What happens to other tool calls once the output is given."""
    tool_timeout: float | None = None
    """The default timeout of the agent's tools, in seconds."""
    instrument: bool | None = None
    """Deprecated: `capabilities: [Instrumentation]`."""
    metadata: dict[str, Any] | None = None
    """Metadata of the runs."""
    capabilities: list[CapabilitySpec] = []
    """Capabilities by name: `'Name'`, `{'Name': argument}` or `{'Name': {'key': value}}`."""

    @model_validator(mode='after')
    def _warn_deprecated_fields(self) -> Self:
        replacements = {
            'instrument': 'capabilities=[Instrumentation(...)]',
            'tool_retries': "retries={'tools': ...}",
            'output_retries': "retries={'output': ...}",
        }
        for field, replacement in replacements.items():
            if field in self.model_fields_set:
                warnings.warn(
                    f'`AgentSpec.{field}` is deprecated, use `{replacement}` instead.',
                    PydanticAIDeprecationWarning,
                    stacklevel=2,
                )
        return self

    @classmethod
    def from_file(cls, path: Path | str, fmt: _Format | None = None) -> AgentSpec:
        """Read a spec from a YAML or JSON file (the format from the suffix unless `fmt` is given).

        Raises:
            ValueError: the format is neither given nor known from the suffix.
        """
        path = Path(path)
        return cls.from_text(path.read_text(encoding='utf-8'), fmt=_infer_fmt(path, fmt))

    @classmethod
    def from_text(cls, text: str, fmt: _Format = 'yaml') -> AgentSpec:
        """Read a spec from YAML (the default) or JSON text.

        Raises:
            UserError: the text holds something other than an object (a list, say, or nothing).
        """
        data = from_json(text) if fmt == 'json' else _yaml().safe_load(text)
        if not isinstance(data, dict):
            raise UserError(f'Agent spec must parse to an object, got {type(data).__name__}')
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AgentSpec:
        """Validate a spec given as a dict (its templates checked against its `deps_schema`, if it has one)."""
        return cls.model_validate(data, context=template_context(None, data))

    def to_file(
        self,
        path: Path | str,
        fmt: _Format | None = None,
        schema_path: Path | str | None = DEFAULT_SCHEMA_PATH_TEMPLATE,
        custom_capability_types: Sequence[type[AbstractCapability[Any]]] = (),
    ) -> None:
        """Write the spec to a YAML or JSON file, fields at their defaults left out, capabilities in their short
        forms; and its JSON schema to `schema_path` (relative to the spec's folder, `{stem}` replaced by the
        file's stem; `None`: no schema), referenced from the spec (by a path relative to the spec's folder when
        the schema is in it or below)."""
        path = Path(path)
        fmt = _infer_fmt(path, fmt)
        schema_ref: str | None = None
        if schema_path is not None:
            if isinstance(schema_path, str):
                schema_path = Path(schema_path.format(stem=path.stem))
            if not schema_path.is_absolute():
                schema_ref, schema_path = str(schema_path), path.parent / schema_path
            elif schema_path.is_relative_to(path.parent):
                schema_ref = str(schema_path.relative_to(path.parent))
            else:
                schema_ref = str(schema_path)
            self._save_schema(schema_path, custom_capability_types)
        context: dict[str, Any] = {'use_short_form': True}
        if fmt == 'json':
            context['$schema'] = schema_ref
            text = self.model_dump_json(indent=2, by_alias=True, exclude_defaults=True, context=context) + '\n'
        else:
            data = self.model_dump(mode='json', by_alias=True, exclude_defaults=True, context=context)
            text = _yaml().dump(data, sort_keys=False, allow_unicode=True)
            if schema_ref is not None:
                text = f'{_YAML_SCHEMA_COMMENT}{schema_ref}\n{text}'
        path.write_text(text, encoding='utf-8')

    @classmethod
    def _save_schema(
        cls, path: Path | str, custom_capability_types: Sequence[type[AbstractCapability[Any]]] = ()
    ) -> None:
        """Write the JSON schema of spec files (`model_json_schema_with_capabilities`) to `path`, unless the file
        already holds it (an unchanged schema keeps its modification time)."""
        path = Path(path)
        content = to_json(cls.model_json_schema_with_capabilities(custom_capability_types), indent=2).decode() + '\n'
        if not path.exists() or path.read_text(encoding='utf-8') != content:
            path.write_text(content, encoding='utf-8')

    @model_serializer(mode='wrap')
    def _dump_with_schema(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        context = info.context
        if isinstance(context, dict) and context.get('$schema'):
            return {'$schema': context['$schema'], **dumped}
        return dumped

    @classmethod
    def model_json_schema_with_capabilities(
        cls, custom_capability_types: Sequence[type[AbstractCapability[Any]]] = ()
    ) -> dict[str, Any]:
        """The JSON schema of spec files, each capability entry described by the arguments its capability takes
        (the registry's and `custom_capability_types`)."""
        schema = cls.model_json_schema(by_alias=True)
        schema['properties']['$schema'] = {'type': 'string'}
        schema['properties'].pop('json_schema_path', None)
        forms = build_schema_types(get_capability_registry(custom_capability_types), get_schema_target=_schema_target)
        if forms:
            entry: Any = forms[0] if len(forms) == 1 else _union(forms)
            items = TypeAdapter[Any](list[entry]).json_schema(ref_template='#/$defs/{model}')
            defs = schema.setdefault('$defs', {})
            defs.pop('CapabilitySpec', None)
            defs.update(items.pop('$defs', {}))
            schema['properties']['capabilities'] = {**items, 'default': [], 'title': 'Capabilities'}
        return schema


def _union(forms: list[Any]) -> Any:
    from typing import Union

    return Union[tuple(forms)]  # noqa: UP007


def _schema_target(cls: type[Any]) -> Any:
    # A `from_spec` of the class's own says what a spec may give; otherwise the constructor does.
    return cls.from_spec if 'from_spec' in cls.__dict__ else cls


def _yaml() -> Any:
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:
        raise ImportError(
            'Reading or writing YAML agent specs needs PyYAML: install the `yaml` extra, '
            '`pip install "edgewise-agent[yaml]"` (or use JSON: `fmt="json"`).'
        ) from None
    return yaml


def _infer_fmt(path: Path, fmt: _Format | None) -> _Format:
    if fmt is not None:
        return fmt
    suffix = path.suffix.lower()
    if suffix in ('.yaml', '.yml'):
        return 'yaml'
    if suffix == '.json':
        return 'json'
    raise ValueError(
        f'Could not infer format for filename {path.name!r}. Use the `fmt` argument to specify the format.'
    )


def get_capability_registry(
    custom_types: Sequence[type[AbstractCapability[Any]]] = (),
) -> Mapping[str, type[AbstractCapability[Any]]]:
    """The capabilities a spec may name: `custom_types` (dataclass subclasses of `AbstractCapability`) and
    `CAPABILITY_TYPES`, a custom one winning a name clash.

    Raises:
        ValueError: a custom type is not a dataclass subclass of `AbstractCapability`.
    """

    def check(cls: type[AbstractCapability[Any]]) -> None:
        if not (isinstance(cls, type) and issubclass(cls, AbstractCapability)):
            raise ValueError(
                f'All custom capability classes must be subclasses of AbstractCapability, but {cls} is not'
            )
        if '__dataclass_fields__' not in cls.__dict__:
            raise ValueError(f'All custom capability classes must be decorated with `@dataclass`, but {cls} is not')

    return build_registry(
        custom_types=custom_types,
        defaults=tuple(capabilities.CAPABILITY_TYPES.values()),
        get_name=lambda cls: cls.get_serialization_name(),
        label='capability',
        validate=check,
    )


def _from_spec(cls: type[AbstractCapability[Any]], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return cls.from_spec(*args, **kwargs)


def _from_spec_in(context: dict[str, Any]) -> Any:
    """`_from_spec`, the arguments hinted as `TemplateStr` made templates in `context` (the agent's deps type)."""

    def instantiate(cls: type[AbstractCapability[Any]], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        args, kwargs = template_arguments(cls, args, kwargs, context)
        return cls.from_spec(*args, **kwargs)

    return instantiate


def load_capability_from_nested_spec(spec: CapabilitySpec | dict[str, Any] | str) -> AbstractCapability[Any]:
    """Build a capability given in another capability's spec arguments, with the registry of the spec being
    loaded (its custom capabilities too), or the default registry outside one.

    Raises:
        SpecError: the name is unknown or the arguments do not build the capability.
    """
    capability_spec = spec if isinstance(spec, CapabilitySpec) else CapabilitySpec.model_validate(spec)
    context = capability_spec_context.get()
    registry = get_capability_registry() if context is None else context.registry
    instantiate = _from_spec if context is None else context.instantiate
    return load_from_registry(
        registry,
        capability_spec,
        label='capability',
        custom_types_param='custom_capability_types',
        instantiate=instantiate,
        legacy_aliases=LEGACY_CAPABILITY_NAMES,
    )


def validate_spec(spec: dict[str, Any] | AgentSpec, deps_type: Any = None) -> AgentSpec:
    """`spec` as an `AgentSpec` (a dict is validated), its templates checked against `deps_type` (the agent's)."""
    context = template_context(deps_type, spec)
    if isinstance(spec, AgentSpec):
        return with_deps_type(spec, context)
    return AgentSpec.model_validate(spec, context=context)


def capabilities_from_spec(
    spec: AgentSpec, custom_capability_types: Sequence[type[AbstractCapability[Any]]] = (), deps_type: Any = None
) -> list[AbstractCapability[Any]]:
    """The capabilities `spec` names, built in order (arguments hinted as `TemplateStr` made templates checked
    against `deps_type`).

    Raises:
        SpecError: a name is unknown or arguments do not build their capability (the message names it).
    """
    registry = get_capability_registry(custom_capability_types)
    instantiate = _from_spec_in(template_context(deps_type, spec))
    token = capability_spec_context.set(CapabilitySpecContext(registry, instantiate))
    try:
        return [
            load_from_registry(
                registry,
                entry,
                label='capability',
                custom_types_param='custom_capability_types',
                instantiate=instantiate,
                legacy_aliases=LEGACY_CAPABILITY_NAMES,
            )
            for entry in spec.capabilities
        ]
    finally:
        capability_spec_context.reset(token)


def retries_from_spec(spec: AgentSpec) -> AgentRetries:
    """The retry budgets `spec` sets: its `retries`, then the deprecated `tool_retries` and `output_retries` for
    a budget `retries` leaves unset."""
    budgets = AgentRetries()
    if isinstance(spec.retries, int):
        budgets.update({'tools': spec.retries, 'output': spec.retries})
    elif spec.retries is not None:
        budgets.update(spec.retries)
    if spec.tool_retries is not None:
        budgets.setdefault('tools', spec.tool_retries)
    if spec.output_retries is not None:
        budgets.setdefault('output', spec.output_retries)
    return budgets


_RUN_UNSUPPORTED_FIELDS = ('description', 'end_strategy', 'tool_timeout', 'instrument', 'output_schema', 'deps_schema')


@dataclass(frozen=True)
class RunSpec:
    """What a spec given to `run`, `iter` or `override` contributes."""

    model: str | None
    name: str | None
    instructions: list[Any]
    model_settings: dict[str, Any] | None
    metadata: dict[str, Any] | None
    retries: AgentRetries
    capabilities: list[AbstractCapability[Any]]


def run_spec(spec: dict[str, Any] | AgentSpec, deps_type: Any = None) -> RunSpec:
    """The contributions of a spec given to a run or an override; fields that only an agent can take (its
    end strategy, tool timeout, output schema, ...) warn (`UserWarning`) and are ignored; its retry budgets,
    the tool budget included, apply to the run (pydantic-ai 2.x)."""
    validated = validate_spec(spec, deps_type)
    budgets = retries_from_spec(validated)
    for field in _RUN_UNSUPPORTED_FIELDS:
        if getattr(validated, field) != AgentSpec.model_fields[field].default:
            warnings.warn(
                f'AgentSpec field {field!r} is not supported at run/override time and will be ignored',
                UserWarning,
                stacklevel=application_caller()[0],  # the application's run or override
            )
    return RunSpec(
        model=validated.model,
        name=validated.name,
        instructions=instruction_items(validated.instructions),
        model_settings=validated.model_settings or None,
        metadata=validated.metadata,
        retries=budgets,
        capabilities=capabilities_from_spec(validated, (), deps_type),
    )


def agent_output_type(spec: AgentSpec, output_type: Any) -> Any:
    """The output type of an agent built from `spec`: `output_type` unless it is the default `str` and the spec
    has an `output_schema`."""
    if output_type is str and spec.output_schema is not None:
        return StructuredDict(spec.output_schema)
    return output_type


def agent_arguments(
    spec: AgentSpec,
    custom_capability_types: Sequence[type[AbstractCapability[Any]]],
    arguments: dict[str, Any],
    deps_type: Any = None,
) -> dict[str, Any]:
    """The arguments of `Agent(...)` for `Agent.from_spec(spec, **arguments)`: an argument given wins over the
    spec's field, instructions and capabilities add to the spec's, model settings merge over the spec's.

    Raises:
        UserError: neither the spec nor the arguments give a model.
        SpecError: a capability of the spec is unknown or its arguments do not build it.
    """
    merged = dict(arguments)
    merged['model'] = arguments['model'] or spec.model
    if merged['model'] is None:
        raise UserError('`model` must be provided either in the spec or as a keyword argument to `from_spec()`.')
    merged['output_type'] = agent_output_type(spec, arguments['output_type'])
    merged['instructions'] = [*instruction_items(spec.instructions), *instruction_items(arguments['instructions'])]
    merged['name'] = arguments['name'] or spec.name
    merged['description'] = arguments['description'] or spec.description
    merged['model_settings'] = settings_over_spec(spec.model_settings, arguments['model_settings'])
    budgets = retries_from_spec(spec)
    explicit = arguments['retries']
    if isinstance(explicit, int):
        budgets.update({'tools': explicit, 'output': explicit})
    elif explicit is not None:
        budgets.update(explicit)
    merged['retries'] = budgets or None
    for field in ('end_strategy', 'metadata', 'tool_timeout'):
        if arguments[field] is None:
            merged[field] = getattr(spec, field)
    merged['capabilities'] = [
        *capabilities_from_spec(spec, custom_capability_types, deps_type),
        *(arguments['capabilities'] or ()),
    ]
    return merged


def settings_over_spec(spec_settings: dict[str, Any] | None, settings: Any) -> Any:
    """Model settings (a dict, or a function of the run context returning one) merged over a spec's."""
    if not spec_settings:
        return settings
    base = cast(ModelSettings, spec_settings)
    if callable(settings):
        function = settings

        def merged(ctx: Any) -> ModelSettings | None:
            return merge_model_settings(base, function(ctx))

        return merged
    return merge_model_settings(base, settings)


def build_agent(
    agent_cls: Any,
    spec: dict[str, Any] | AgentSpec,
    custom_capability_types: Sequence[type[AbstractCapability[Any]]],
    given: dict[str, Any],
    passed: dict[str, Any],
) -> Any:
    """`Agent.from_spec`: an agent of `agent_cls` from `spec`, the arguments in `given` winning over the spec's
    fields (see `agent_arguments`) and those in `passed` going to the agent as they are."""
    validated = validate_spec(spec, passed.get('deps_type'))
    deps_type = passed.get('deps_type')
    agent = agent_cls(**passed, **agent_arguments(validated, custom_capability_types, given, deps_type))
    if 'instrument' in validated.model_fields_set and 'instrument' not in passed:
        agent._instrument = validated.instrument
    return agent


def override_from_spec(
    spec: dict[str, Any] | AgentSpec, given: dict[str, Any], unset: Any, deps_type: Any = None
) -> tuple[dict[str, Any], list[Any] | None]:
    """`Agent.override(spec=...)`: the spec's name, model, instructions, model settings, metadata and output retries
    for the arguments of `given` left `unset`; and the spec's capabilities, which replace the agent's (pydantic-ai)."""
    contributed = run_spec(spec, deps_type)
    values = dict(given)
    spec_values = {
        'name': contributed.name,
        'model': contributed.model,
        'instructions': contributed.instructions or None,
        'model_settings': contributed.model_settings,
        'metadata': contributed.metadata,
        'retries': contributed.retries or None,
    }
    for key, value in spec_values.items():
        if values[key] is unset and value is not None:
            values[key] = value
    return values, contributed.capabilities or None


def run_from_spec(
    spec: dict[str, Any] | AgentSpec,
    model: Any,
    retries: AgentRetries,
    instructions: Any,
    model_settings: Any,
    capabilities: Sequence[Any] | None,
    deps_type: Any = None,
) -> tuple[Any, AgentRetries, Any, Any, Sequence[Any] | None, Any]:
    """`run(spec=...)`: the run's model, retry budgets (the run's own keys win), instructions, model settings,
    capabilities and the spec's metadata, the spec filling in what the run leaves unset and adding to the rest."""
    contributed = run_spec(spec, deps_type)
    if contributed.instructions:
        instructions = [*instruction_items(instructions), *contributed.instructions]
    if contributed.capabilities:
        capabilities = [*contributed.capabilities, *(capabilities or ())]
    return (
        model if model is not None else contributed.model,
        AgentRetries(**{**contributed.retries, **retries}),
        instructions,
        settings_over_spec(contributed.model_settings, model_settings),
        capabilities,
        contributed.metadata,
    )
