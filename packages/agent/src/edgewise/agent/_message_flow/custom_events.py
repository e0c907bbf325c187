"""Events that applications and capabilities define themselves (pydantic-ai 2.68): `CustomEvent` (an application's,
tagged by `name`) and `CapabilityEvent` (a capability's, tagged by a namespaced `kind`).

Each is an open family: a dataclass subclass registers itself when it is defined, and the family's schema is built
from the registry when a schema is generated, so an event serialized in one process loads as its own class in
another that imported it, and as `UnknownCustomEvent` / `UnknownCapabilityEvent` (payload kept in `data`, written
back flat) in one that did not.
"""

from __future__ import annotations as _annotations

import dataclasses
import functools
import inspect
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypeVar

import pydantic
import pydantic_core
from pydantic.alias_generators import to_snake
from pydantic_core import core_schema

from ..exceptions import UserError

__all__ = (
    'CustomEvent',
    'UnknownCustomEvent',
    'CapabilityEvent',
    'UnknownCapabilityEvent',
    'CUSTOM_EVENT_TYPES',
    'CAPABILITY_EVENT_TYPES',
    'EventRegistry',
    'event_registry_version',
)

_UNKNOWN_TAG = '__unknown__'
_registry_version = 0
_ClassT = TypeVar('_ClassT')


class EventRegistry(dict[str, _ClassT]):
    """The tag-to-class table of one event family. Every change (a class defined, or removed with `del` / `pop`)
    bumps `event_registry_version()`, so a cache of type adapters keyed on it is rebuilt after a registration."""

    def __setitem__(self, tag: str, event_cls: _ClassT) -> None:
        super().__setitem__(tag, event_cls)
        _bump()

    def __delitem__(self, tag: str) -> None:
        super().__delitem__(tag)
        _bump()

    def pop(self, tag: str, /, *default: Any) -> Any:
        popped = super().pop(tag, *default)
        _bump()
        return popped


def _bump() -> None:
    global _registry_version
    _registry_version += 1


def event_registry_version() -> int:
    """A counter that grows with every change of any event family's registry."""
    return _registry_version


CUSTOM_EVENT_TYPES: dict[str, type[CustomEvent]] = EventRegistry()
"""The `CustomEvent` subclasses by `name` (a class registers when it is defined)."""

CAPABILITY_EVENT_TYPES: dict[str, type[CapabilityEvent]] = EventRegistry()
"""The `CapabilityEvent` subclasses by `kind`."""


def _own_annotations(cls: type) -> dict[str, Any]:
    return inspect.get_annotations(cls)


def _is_class_var(annotation: Any) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(('ClassVar', 'typing.ClassVar', 't.ClassVar'))


def _undecorated_field_base(cls: type, family: type) -> type | None:
    """A base between `cls` and `family` that declares fields without being a dataclass (its fields would be lost)."""
    for base in cls.__mro__[1:]:  # pragma: no branch  (`family` is always in the MRO)
        if base is family or not issubclass(base, family):
            break
        if '__dataclass_fields__' in base.__dict__:
            continue
        if any(not _is_class_var(annotation) for annotation in _own_annotations(base).values()):
            return base
    return None


def _shadowed(cls: type, reserved: frozenset[str]) -> str | None:
    names = set(_own_annotations(cls)) & reserved
    return ', '.join(sorted(names)) if names else None


def _is_redefinition(existing: type, cls: type) -> bool:
    # A re-run notebook cell or a reloaded module defines the same class again: it replaces the registration.
    return existing.__module__ == cls.__module__ and existing.__qualname__ == cls.__qualname__


def _inject_tag_field(cls: type, tag_field: str, tag_value: str) -> None:
    # Redeclared on the subclass so that `@dataclass` (which runs after `__init_subclass__`) gives it this default.
    cls.__annotations__ = {tag_field: 'str', **_own_annotations(cls)}
    setattr(cls, tag_field, dataclasses.field(default=tag_value, kw_only=True))


def _guard_post_init(cls: type, base_post_init: Callable[[Any], None]) -> None:
    """Keep the family's checks when a subclass defines a `__post_init__` of its own (whether or not it calls
    `super()`): they run before and after it."""
    own = cls.__dict__.get('__post_init__')
    if own is None or getattr(own, '_event_guarded', False):
        return

    @functools.wraps(own)
    def guarded(self: Any, *args: Any, **kwargs: Any) -> None:
        base_post_init(self)
        own(self, *args, **kwargs)
        base_post_init(self)

    guarded._event_guarded = True  # type: ignore[attr-defined]
    cls.__post_init__ = guarded  # type: ignore[attr-defined]


def _family_schema(
    handler: pydantic.GetCoreSchemaHandler,
    *,
    registry: Mapping[str, type[Any]],
    tag_field: str,
    unknown_type: type[Any],
    envelope_fields: frozenset[str],
) -> core_schema.CoreSchema:
    """The tagged union over a family's registry as it stands now; a tag no class has degrades to `unknown_type`."""
    known = frozenset(registry)

    def discriminator(value: Any) -> str | None:
        tag = value.get(tag_field) if isinstance(value, dict) else getattr(value, tag_field, None)
        if isinstance(tag, str) and tag in known:
            return tag
        return _UNKNOWN_TAG if isinstance(value, dict | unknown_type) else None

    carried = envelope_fields - {'data'}

    def gather(value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        envelope = {key: item for key, item in value.items() if key in carried}
        payload = {key: item for key, item in value.items() if key not in carried}
        if payload:
            envelope['data'] = payload
        warnings.warn(
            f'Unknown event {tag_field} {value.get(tag_field)!r}: loaded as {unknown_type.__name__}. '
            'Import the module that defines the event before loading it.',
            UserWarning,
            stacklevel=2,
        )
        return envelope

    def flatten(value: Any, serializer: core_schema.SerializerFunctionWrapHandler) -> Any:
        dumped: dict[str, Any] = serializer(value)
        data = dumped.pop('data', None)
        return {**data, **dumped} if isinstance(data, dict) else {**dumped, 'data': data}

    choices: dict[Any, core_schema.CoreSchema] = {tag: handler.generate_schema(cls) for tag, cls in registry.items()}
    choices[_UNKNOWN_TAG] = core_schema.no_info_before_validator_function(
        gather,
        handler.generate_schema(unknown_type),
        serialization=core_schema.wrap_serializer_function_ser_schema(flatten),
    )
    return core_schema.tagged_union_schema(choices, discriminator)


@dataclass(repr=False, kw_only=True)
class CustomEvent:
    """An event an application defines and emits into a run's stream (`RunContext.emit`, `AgentRun.emit`): progress,
    intermediate results, status, without adding to what the model sees.

    Subclass it as a dataclass with typed payload fields; the subclass registers under its `name`, by default the
    snake-case class name without `Event` (`OperationProgressEvent` is `'operation_progress'`), or the `name` class
    argument. `ui=False` as a class argument keeps the UI event streams from forwarding it; `abstract=True` makes a
    shared base that is not an event itself.
    """

    name: str = ''
    """The event's name (on a registered subclass, its registered name, never passed)."""
    tool_call_id: str | None = None
    """The tool call the event belongs to: stamped by `RunContext.emit` inside a tool call when unset."""
    tool_name: str | None = None
    """The tool the event belongs to, stamped like `tool_call_id`."""
    event_kind: Literal['custom'] = 'custom'
    """Tag of this event kind."""

    _registered_name: ClassVar[str | None] = None
    _abstract: ClassVar[bool] = False
    ui: ClassVar[bool] = True
    """Whether the UI event streams forward events of this class (set with the `ui` class argument)."""

    def __repr__(self) -> str:
        shown = ', '.join(
            f'{f.name}={getattr(self, f.name)!r}'
            for f in dataclasses.fields(self)
            if f.name != 'event_kind' and getattr(self, f.name) is not None
        )
        return f'{type(self).__name__}({shown})'

    def __post_init__(self) -> None:
        cls = type(self)
        if cls is CustomEvent:
            raise UserError('`CustomEvent` is a base class: define a dataclass subclass with typed payload fields.')
        if cls.__dict__.get('_abstract'):
            raise UserError(f'`{cls.__qualname__}` is `abstract=True` (it has no event name): emit a subclass of it.')
        if '__dataclass_fields__' not in cls.__dict__:
            raise UserError(f'Custom event subclass `{cls.__name__}` must be decorated with `@dataclass`.')
        if not self.name:
            raise UserError('A custom event needs a `name`.')
        if (registered := cls._registered_name) is not None and self.name != registered:
            raise UserError(
                f'`{cls.__name__}` is registered as {registered!r}; its `name` cannot be set per event '
                f'(got {self.name!r}).'
            )

    def __init_subclass__(
        cls, *, name: str | None = None, ui: bool | None = None, abstract: bool = False, **kwargs: Any
    ) -> None:
        register = kwargs.pop('_register', True)
        super().__init_subclass__(**kwargs)
        _guard_post_init(cls, CustomEvent.__post_init__)
        if ui is not None:
            cls.ui = ui
        if base := _undecorated_field_base(cls, CustomEvent):
            raise UserError(
                f'Custom event {cls.__qualname__} inherits from {base.__qualname__}, which declares fields without '
                'being a dataclass (they would be lost from every payload): decorate it with '
                '`@dataclass(kw_only=True)`.'
            )
        if abstract:
            cls._abstract = True
        if cls.__dict__.get('_abstract') or not register:
            return
        # `@dataclass(slots=True)` builds the class again without the class arguments: it keeps its first name.
        recreated = cls.__dict__.get('_registered_name') if name is None else None
        event_name = recreated or name or to_snake(cls.__name__.removesuffix('Event'))
        if not event_name:
            raise UserError(
                f'Custom event {cls.__qualname__} has no name to derive from its class name: '
                f"pass one (`class {cls.__name__}(CustomEvent, name='...')`)."
            )
        if event_name == _UNKNOWN_TAG:
            raise UserError(f'Custom event name {event_name!r} is reserved.')
        existing = CUSTOM_EVENT_TYPES.get(event_name)
        if existing is not None and recreated is None and not _is_redefinition(existing, cls):
            raise UserError(
                f'Duplicate custom event name {event_name!r}: {existing.__qualname__} has it. Pass another '
                f"(`class {cls.__name__}(CustomEvent, name='...')`); a library's events take a dotted prefix "
                "(`name='mylib.progress'`) or are `CapabilityEvent`s."
            )
        if shadowed := _shadowed(cls, _CUSTOM_ENVELOPE - {'name'}):
            raise UserError(f'Custom event {cls.__qualname__} declares field(s) of the event envelope: {shadowed}.')
        if _shadowed(cls, frozenset({'ui'})):
            raise UserError(
                f'Custom event {cls.__qualname__} declares `ui`, the flag that decides whether UI streams forward '
                f'it: rename the field and give the flag as a class argument (`class {cls.__name__}(CustomEvent, '
                'ui=False)`).'
            )
        CUSTOM_EVENT_TYPES[event_name] = cls
        cls._registered_name = event_name
        _inject_tag_field(cls, 'name', event_name)

    def to_payload(self) -> Any:
        """The event's own (payload) fields, as UI event streams send them to the frontend; override to reshape."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in _CUSTOM_ENVELOPE}

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: pydantic.GetCoreSchemaHandler
    ) -> pydantic_core.CoreSchema:
        # The family base validates to the registered class of the event's name; a subclass to itself.
        if cls is not CustomEvent:
            return handler(source)
        return _family_schema(
            handler,
            registry=CUSTOM_EVENT_TYPES,
            tag_field='name',
            unknown_type=UnknownCustomEvent,
            envelope_fields=_CUSTOM_ENVELOPE,
        )


@dataclass(repr=False, kw_only=True)
class UnknownCustomEvent(CustomEvent, _register=False):
    """A custom event whose `name` no class of this process has: its payload fields are kept in `data` and written
    back flat, so a process that has the class gets the typed event again."""

    data: dict[str, Any] | None = None
    """The event's payload fields, or `None` when it had none."""

    def to_payload(self) -> dict[str, Any] | None:
        """The payload kept in `data`."""
        return self.data


_CUSTOM_ENVELOPE = frozenset(f.name for f in dataclasses.fields(UnknownCustomEvent))


def _inherited_namespace(cls: type) -> str | None:
    for base in cls.__mro__[1:]:
        if not issubclass(base, CapabilityEvent):
            continue
        if kind := base.__dict__.get('_registered_kind'):
            return str(kind).rpartition('.')[0]
        if namespace := base.__dict__.get('_abstract_namespace'):
            return str(namespace)
    return None


def _check_namespace(cls: type, namespace: str) -> None:
    if not namespace or not all(namespace.split('.')):
        raise UserError(f'Capability event {cls.__qualname__} has an invalid namespace {namespace!r}.')


@dataclass(repr=False, kw_only=True)
class CapabilityEvent:
    """An event a capability defines and emits (from its hooks or its tools, with `RunContext.emit`).

    Subclass it as a dataclass with a `namespace` class argument shared by the capability's events; its `kind` is
    `'<namespace>.<name>'`, the name by default the snake-case class name without `Event`. `dispatch='immediate'`
    has listeners run before `emit` returns (for events that carry a decision); `abstract=True` makes a shared base.
    """

    event_dispatch: ClassVar[Literal['stream', 'immediate']] = 'stream'
    """When listeners get the event: at its place in the stream, or before `emit` returns."""
    kind: str = ''
    """The namespaced kind (on a registered subclass, its registered kind, never passed)."""
    capability_id: str | None = None
    """The run id of the capability that emitted the event: stamped by `emit` when unset."""
    tool_call_id: str | None = None
    """The tool call the event belongs to, when a capability's tool emitted it."""
    tool_name: str | None = None
    """The tool that emitted it, likewise."""
    event_kind: Literal['capability'] = 'capability'
    """Tag of this event kind."""

    _registered_kind: ClassVar[str | None] = None
    _abstract: ClassVar[bool] = False
    _abstract_namespace: ClassVar[str | None] = None

    __repr__ = CustomEvent.__repr__

    def __post_init__(self) -> None:
        cls = type(self)
        if cls is CapabilityEvent:
            raise UserError('`CapabilityEvent` is a base class: define a dataclass subclass with a `namespace`.')
        if cls.__dict__.get('_abstract'):
            raise UserError(f'`{cls.__qualname__}` is `abstract=True` (it has no event kind): emit a subclass of it.')
        if '__dataclass_fields__' not in cls.__dict__:
            raise UserError(f'Capability event subclass `{cls.__name__}` must be decorated with `@dataclass`.')
        if (registered := cls._registered_kind) is not None and self.kind != registered:
            raise UserError(
                f'`{cls.__name__}` is registered as {registered!r}; its `kind` cannot be set per event '
                f'(got {self.kind!r}).'
            )

    def __init_subclass__(
        cls,
        *,
        namespace: str | None = None,
        name: str | None = None,
        dispatch: Literal['stream', 'immediate'] | None = None,
        abstract: bool = False,
        **kwargs: Any,
    ) -> None:
        register = kwargs.pop('_register', True)
        super().__init_subclass__(**kwargs)
        _guard_post_init(cls, CapabilityEvent.__post_init__)
        if dispatch not in (None, 'stream', 'immediate'):
            raise UserError("`dispatch` must be 'stream' or 'immediate'.")
        if dispatch is not None:
            cls.event_dispatch = dispatch
        if base := _undecorated_field_base(cls, CapabilityEvent):
            raise UserError(
                f'Capability event {cls.__qualname__} inherits from {base.__qualname__}, which declares fields '
                'without being a dataclass (they would be lost from every payload): decorate it with '
                '`@dataclass(kw_only=True)`.'
            )
        if abstract:
            cls._abstract = True
            if namespace is not None:
                _check_namespace(cls, namespace)
                cls._abstract_namespace = namespace
        if cls.__dict__.get('_abstract') or not register:
            return
        recreated = cls.__dict__.get('_registered_kind') if namespace is None and name is None else None
        event_kind = recreated or _new_kind(cls, namespace, name)
        if shadowed := _shadowed(cls, _CAPABILITY_ENVELOPE - {'kind'}):
            raise UserError(f'Capability event {cls.__qualname__} declares field(s) of the event envelope: {shadowed}.')
        CAPABILITY_EVENT_TYPES[event_kind] = cls
        cls._registered_kind = event_kind
        _inject_tag_field(cls, 'kind', event_kind)

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: pydantic.GetCoreSchemaHandler
    ) -> pydantic_core.CoreSchema:
        if cls is not CapabilityEvent:
            return handler(source)
        return _family_schema(
            handler,
            registry=CAPABILITY_EVENT_TYPES,
            tag_field='kind',
            unknown_type=UnknownCapabilityEvent,
            envelope_fields=_CAPABILITY_ENVELOPE,
        )


def _new_kind(cls: type[CapabilityEvent], namespace: str | None, name: str | None) -> str:
    namespace = namespace if namespace is not None else _inherited_namespace(cls)
    if namespace is None:
        raise UserError(
            f'Capability event {cls.__qualname__} needs a namespace '
            f"(`class {cls.__name__}(CapabilityEvent, namespace='my_capability')`)."
        )
    _check_namespace(cls, namespace)
    event_name = name or to_snake(cls.__name__.removesuffix('Event'))
    if not event_name:
        raise UserError(f'Capability event {cls.__qualname__} has no name to derive from its class name: pass `name`.')
    kind = f'{namespace}.{event_name}'
    existing = CAPABILITY_EVENT_TYPES.get(kind)
    if existing is not None and not _is_redefinition(existing, cls):
        raise UserError(
            f'Duplicate capability event kind {kind!r}: {existing.__qualname__} has it. Pass another `name` '
            f"(`class {cls.__name__}(CapabilityEvent, namespace={namespace!r}, name='...')`)."
        )
    return kind


@dataclass(repr=False, kw_only=True)
class UnknownCapabilityEvent(CapabilityEvent, _register=False):
    """A capability event whose `kind` no class of this process has: payload kept in `data`, written back flat."""

    data: dict[str, Any] | None = None
    """The event's payload fields, or `None` when it had none."""


_CAPABILITY_ENVELOPE = frozenset(f.name for f in dataclasses.fields(UnknownCapabilityEvent))
