"""Tools shown as Python function signatures, as pydantic-ai 2.x's code mode shows them to a model.

`FunctionSignature.from_schema` reads a tool's argument and return JSON schemas into a small tree: the
parameters (`FunctionParam`), the return type and the `TypedDict`s the types refer to (`TypeSignature`, whose
fields are `TypeFieldSignature`s), each type written as a `TypeExpr` (`SimpleTypeExpr`, `LiteralTypeExpr`,
`GenericTypeExpr`, `UnionTypeExpr` or a `TypeSignature` by name). `FunctionSignature.render` writes it out as
Python source with a body of the caller's choosing:

```python
from edgewise.agent.function_signature import FunctionSignature

signature = FunctionSignature.from_schema(
    name='add',
    parameters_schema={
        'type': 'object',
        'properties': {'a': {'type': 'integer'}, 'b': {'type': 'integer', 'default': 1}},
        'required': ['a'],
    },
    return_schema={'type': 'integer'},
)
assert signature.render('...') == 'def add(*, a: int, b: int = 1) -> int:\\n    ...'
```

`ToolDefinition.function_signature` is the signature of a tool (made once, on first use) and
`ToolDefinition.render_signature(body)` renders it with the tool's name and description.

Several tools rendered together share their `TypedDict`s: `FunctionSignature.get_conflicting_type_names` makes
types equal in name and structure one object, and gives the types that share a name but not a structure names of
their own (the first tool using each as a prefix: `get_user_Address`), which `render(conflicting_type_names=...)`
and `render_type_definitions` then use.
"""

from __future__ import annotations as _annotations

import keyword
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, TypeAlias, cast

__all__ = (
    'FunctionSignature',
    'FunctionParam',
    'TypeSignature',
    'TypeFieldSignature',
    'TypeExpr',
    'SimpleTypeName',
    'SimpleTypeExpr',
    'LiteralTypeExpr',
    'GenericTypeExpr',
    'UnionTypeExpr',
)

SimpleTypeName = Literal['str', 'int', 'float', 'bool', 'Any', 'None']
"""The plain type names a signature uses."""

# While a signature renders: the names some types take instead of their own (empty when none has to change).
_NO_RENAMES: Mapping[str, str] = MappingProxyType({})
_renamed_types: ContextVar[Mapping[str, str]] = ContextVar('_renamed_types', default=_NO_RENAMES)


@dataclass
class SimpleTypeExpr:
    """A plain type: `str`, `int`, `float`, `bool`, `Any` or `None`."""

    name: SimpleTypeName
    """The type's name."""
    kind: Literal['simple'] = 'simple'
    """Tag of this kind of expression."""

    def __str__(self) -> str:
        return self.name


@dataclass
class LiteralTypeExpr:
    """A choice of fixed values: `Literal['a', 'b']`, `Literal[42]`."""

    values: list[Any]
    """The values, in schema order."""
    kind: Literal['literal'] = 'literal'
    """Tag of this kind of expression."""

    def __str__(self) -> str:
        return 'Literal[' + ', '.join(map(repr, self.values)) + ']'


@dataclass
class GenericTypeExpr:
    """A container type with its arguments: `list[User]`, `dict[str, int]`, `tuple[int, str]`."""

    base: str
    """The container (`list`, `dict` or `tuple`)."""
    args: list[TypeExpr]
    """Its type arguments."""
    kind: Literal['generic'] = 'generic'
    """Tag of this kind of expression."""

    def __str__(self) -> str:
        return self.base + '[' + ', '.join(map(str, self.args)) + ']'


@dataclass
class UnionTypeExpr:
    """One of several types: `User | None`, `str | int`."""

    members: list[TypeExpr]
    """The types, in order."""
    kind: Literal['union'] = 'union'
    """Tag of this kind of expression."""

    def __str__(self) -> str:
        return ' | '.join(map(str, self.members))


TypeExpr: TypeAlias = 'TypeSignature | SimpleTypeExpr | LiteralTypeExpr | GenericTypeExpr | UnionTypeExpr'
"""A type written in a signature: a plain type, a literal, a container, a union, or a `TypedDict` by name."""

_INDENT = '    '
# A description goes inside a `"""..."""` literal: backslashes and quotes must not end or change it, and
# compile() refuses a NUL byte anywhere.
_DOCSTRING_ESCAPES = str.maketrans({'\\': '\\\\', '"': '\\"', '\0': '\\x00'})


def _docstring(text: str, indent: str) -> list[str]:
    """The lines of a docstring holding `text`: one line when it fits on one, a block otherwise."""
    lines = text.strip().translate(_DOCSTRING_ESCAPES).splitlines()
    if len(lines) == 1:
        return [f'{indent}"""{lines[0]}"""']
    return [f'{indent}"""', *(f'{indent}{line}' if line.strip() else '' for line in lines), f'{indent}"""']


def _comment(text: str, indent: str) -> list[str]:
    """`text` as `#` comment lines (where a docstring cannot go)."""
    return [f'{indent}# {line}'.rstrip() for line in text.strip().replace('\0', '\\x00').splitlines()]


def _is_identifier(name: str) -> bool:
    """Whether `name` can be written as a Python parameter or attribute name."""
    return name.isidentifier() and not keyword.iskeyword(name)


@dataclass(kw_only=True)
class TypeFieldSignature:
    """A field of a `TypedDict`."""

    name: str
    """The field's key, as in the schema."""
    type: TypeExpr
    """The field's type."""
    required: bool = False
    """Whether the key must be present (otherwise it is `NotRequired`)."""
    description: str | None = None
    """The field's description, from the schema."""
    kind: Literal['field'] = 'field'
    """Tag of this kind of node."""

    @property
    def _annotation(self) -> str:
        return str(self.type) if self.required else f'NotRequired[{self.type}]'

    def __str__(self) -> str:
        """The field as a line of a `TypedDict` class body (its description below it as a docstring)."""
        lines = [f'{_INDENT}{self.name}: {self._annotation}']
        if self.description:
            lines += _docstring(self.description, _INDENT)
        return '\n'.join(lines)

    def _functional_entry(self) -> str:
        lines = _comment(self.description, _INDENT) if self.description else []
        lines.append(f'{_INDENT}{self.name!r}: {self._annotation},')
        return '\n'.join(lines)


@dataclass(kw_only=True)
class TypeSignature:
    """A `TypedDict` a signature refers to: its name, description and fields."""

    name: str
    """The type's name (the schema's `title`, its `$defs` key, or one made from the tool's name and the path)."""
    description: str | None = None
    """The type's description, from the schema."""
    fields: dict[str, TypeFieldSignature] = field(default_factory=dict[str, TypeFieldSignature])
    """The fields, by key."""
    kind: Literal['type'] = 'type'
    """Tag of this kind of node."""
    # The name `FunctionSignature.get_conflicting_type_names` gave the type when another type has its name too;
    # it comes from the signatures rendered together, not from the type, hence out of `__init__`, repr and `==`.
    _resolved_name: str | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def display_name(self) -> str:
        """The name the type renders under: its own, or the one it takes while a render renames conflicting
        types."""
        renamed = _renamed_types.get()
        if renamed and self._resolved_name:
            return self._resolved_name
        return renamed.get(self.name, self.name)

    def __str__(self) -> str:
        """The type's name, as a type expression uses it."""
        return self.display_name

    def render_definition(
        self, *, owner_name: str | None = None, conflicting_type_names: frozenset[str] = frozenset()
    ) -> str:
        """The `TypedDict` definition as Python source.

        Args:
            owner_name: The tool the type belongs to, whose name prefixes conflicting type names.
            conflicting_type_names: What `FunctionSignature.get_conflicting_type_names` returned just before;
                used only with `owner_name`.
        """
        if not (owner_name and conflicting_type_names):
            return self._definition()
        token = _renamed_types.set({name: f'{owner_name}_{name}' for name in conflicting_type_names})
        try:
            return self._definition()
        finally:
            _renamed_types.reset(token)

    def _definition(self) -> str:
        if not all(_is_identifier(name) for name in self.fields):
            # A key such as `from` or `@type` cannot be a class attribute: the functional syntax keeps it as it is.
            lines = _comment(self.description, '') if self.description else []
            lines.append(f'{self.display_name} = TypedDict({self.display_name!r}, {{')
            lines += [f._functional_entry() for f in self.fields.values()]
            lines.append('})')
            return '\n'.join(lines)
        lines = [f'class {self.display_name}(TypedDict):']
        if self.description:
            lines += _docstring(self.description, _INDENT)
        lines += [str(f) for f in self.fields.values()]
        if not self.fields and not self.description:
            lines.append(f'{_INDENT}pass')
        return '\n'.join(lines)

    def structurally_equal(self, other: TypeSignature) -> bool:
        """Whether both types have the same keys, each equally required and of the same written type (descriptions
        aside; nested types compare by name)."""
        if self.fields.keys() != other.fields.keys():
            return False
        return all(
            f.required == other.fields[key].required and str(f.type) == str(other.fields[key].type)
            for key, f in self.fields.items()
        )


@dataclass(kw_only=True)
class FunctionParam:
    """A parameter of a signature (every parameter renders keyword-only)."""

    name: str
    """The Python name the parameter renders as: the schema's property name, or, when that is a keyword or not
    an identifier, one made from it (`from` becomes `from_`, `user-id` becomes `user_id`)."""
    type: TypeExpr
    """The parameter's type."""
    default: str | None = None
    """The default as Python source (`'None'`, `"'x'"`), or `None` for a required parameter."""
    description: str | None = None
    """The parameter's description, rendered in the docstring's `Args:` section."""
    kind: Literal['param'] = 'param'
    """Tag of this kind of node."""

    def __str__(self) -> str:
        """The parameter as written in the `def` line."""
        if self.default is None:
            return f'{self.name}: {self.type}'
        return f'{self.name}: {self.type} = {self.default}'


@dataclass(kw_only=True)
class FunctionSignature:
    """A function's shape: its parameters, return type and the `TypedDict`s they use.

    The name and description given when rendering win over the ones stored here (a `ToolDefinition` gives its
    own).
    """

    name: str
    """The function's name (also the base of the names made for untitled object types)."""
    description: str | None = None
    """The function's description."""
    params: dict[str, FunctionParam] = field(default_factory=dict[str, FunctionParam])
    """The parameters by schema property name: required ones first, all keyword-only."""
    return_type: TypeExpr
    """The return type (`Any` when there is no return schema)."""
    referenced_types: list[TypeSignature] = field(default_factory=list[TypeSignature])
    """The `TypedDict`s the parameters and return type use, nested ones included."""
    is_async: bool = False
    """Whether the function renders as `async def`."""
    kind: Literal['function'] = 'function'
    """Tag of this kind of node."""

    def render(
        self,
        body: str,
        *,
        name: str | None = None,
        description: str | None = None,
        is_async: bool | None = None,
        conflicting_type_names: frozenset[str] = frozenset(),
    ) -> str:
        """The function as Python source: the `def` line, a docstring (the description, then an `Args:` section
        of the described parameters) and `body`.

        Args:
            body: The body's source (`'...'`, `'return await call()'`).
            name: The function's name; this signature's when `None`.
            description: The docstring's text; this signature's when `None`.
            is_async: Whether to write `async def`; `is_async` when `None`.
            conflicting_type_names: What `get_conflicting_type_names` returned just before, so that types share
                the names their definitions render under.
        """
        name = name or self.name
        token = _renamed_types.set({type_name: f'{name}_{type_name}' for type_name in conflicting_type_names})
        try:
            return self._source(body, name, self.description if description is None else description, is_async)
        finally:
            _renamed_types.reset(token)

    def _source(self, body: str, name: str, description: str | None, is_async: bool | None) -> str:
        keyword_ = 'async def' if (self.is_async if is_async is None else is_async) else 'def'
        params = ', '.join(map(str, self.params.values()))
        head = f'{keyword_} {name}(*, {params})' if params else f'{keyword_} {name}()'
        lines = [f'{head} -> {self.return_type}:']
        sections = [description] if description else []
        arg_lines: list[str] = []
        for param in self.params.values():
            first, *rest = (param.description or '').strip().splitlines() or ['']
            if first:
                arg_lines.append(f'{_INDENT}{param.name}: {first}')
                arg_lines += [f'{_INDENT * 2}{line}' for line in rest]
        if arg_lines:
            sections.append('\n'.join(['Args:', *arg_lines]))
        if sections:
            lines += _docstring('\n\n'.join(sections), _INDENT)
        lines.append(f'{_INDENT}{body}')
        return '\n'.join(lines)

    @classmethod
    def from_schema(
        cls, *, name: str, parameters_schema: dict[str, Any], return_schema: dict[str, Any] | None = None
    ) -> FunctionSignature:
        """The signature of a tool from its JSON schemas.

        Each schema resolves its `$ref`s in its own `$defs`. Object types become `TypedDict`s named by their
        `title` (or `$defs` key), else by `name` and where they sit (`GetUserAddress`); other definitions a
        `$ref` points at (enums, aliases, unions) are written out where they are used. A type the return schema
        defines exactly as the parameters do is listed once.
        """
        reader = _SchemaReader(name, parameters_schema.get('$defs', {}))
        params = reader.params(parameters_schema)
        return_type: TypeExpr = _ANY
        return_types: dict[str, TypeSignature] = {}
        if return_schema is not None:
            return_reader = _SchemaReader(name, return_schema.get('$defs', {}))
            return_type = return_reader.type_of(return_schema, 'Return')
            return_types = return_reader.types
        referenced = list(reader.types.values())
        classes = _structure_classes(_with_nested_types([*referenced, *return_types.values()]))
        for type_sig in return_types.values():
            same_name = reader.types.get(type_sig.name)
            if same_name is None or classes[id(same_name)] != classes[id(type_sig)]:
                referenced.append(type_sig)
        return cls(name=name, params=params, return_type=return_type, referenced_types=referenced)

    @staticmethod
    def get_conflicting_type_names(signatures: list[FunctionSignature]) -> frozenset[str]:
        """Prepare signatures to be rendered together: return the type names that more than one type has.

        Types with one name and one structure (all the way down) become a single object in every signature.
        Each type whose name another type has too is given its own: the name of the first signature listing it
        as a prefix (`get_user_Address`), then a number if that is taken (`get_user_Address_2`). These names are
        kept on the types and used by `render` and `render_type_definitions` when given the returned set; render
        straight away, since preparing these types again among other signatures renames them.
        """
        _unify_identical_types(signatures)
        types = FunctionSignature.collect_unique_referenced_types(signatures)
        owners = _owners(signatures)
        counts = Counter(type_sig.name for type_sig in types)
        conflicting = {type_name for type_name, count in counts.items() if count > 1}
        taken = set(counts) - conflicting  # names kept as they are go first, so a made name never takes one
        for type_sig in types:
            resolved = None
            if type_sig.name in conflicting:
                base = resolved = f'{owners[id(type_sig)]}_{type_sig.name}'
                number = 2
                while resolved in taken:
                    resolved, number = f'{base}_{number}', number + 1
                taken.add(resolved)
            type_sig._resolved_name = resolved
        return frozenset(conflicting)

    @staticmethod
    def collect_unique_referenced_types(signatures: list[FunctionSignature]) -> list[TypeSignature]:
        """The types the signatures list, each object once, in order."""
        unique: dict[int, TypeSignature] = {}
        for sig in signatures:
            for type_sig in sig.referenced_types:
                unique.setdefault(id(type_sig), type_sig)
        return list(unique.values())

    @staticmethod
    def render_type_definitions(
        signatures: list[FunctionSignature], conflicting_type_names: frozenset[str]
    ) -> list[str]:
        """The `TypedDict` definitions the signatures need, each once, under the names
        `get_conflicting_type_names` (called just before, and returning `conflicting_type_names`) gave them."""
        owners = _owners(signatures)
        return [
            type_sig.render_definition(owner_name=owners[id(type_sig)], conflicting_type_names=conflicting_type_names)
            for type_sig in FunctionSignature.collect_unique_referenced_types(signatures)
        ]


_ANY = SimpleTypeExpr('Any')
_NONE = SimpleTypeExpr('None')
_STR = SimpleTypeExpr('str')
_JSON_TYPES: dict[str, SimpleTypeName] = {
    'string': 'str',
    'integer': 'int',
    'number': 'float',
    'boolean': 'bool',
    'null': 'None',
}


def _schema(node: dict[str, Any] | bool) -> dict[str, Any]:
    # `true` and `false` are schemas too; neither has a Python type, so both read as `{}` (rendered `Any`).
    return {} if isinstance(node, bool) else node


def _pascal_case(text: str) -> str:
    words = re.sub(r'[^a-zA-Z0-9]', '_', text).split('_')
    joined = ''.join(word.capitalize() for word in words if word)
    return f'_{joined}' if joined[:1].isdigit() else joined


def _python_names(keys: Iterable[str]) -> dict[str, str]:
    """The parameter name of each schema property: itself when it is a valid identifier, else a valid one made
    from it, numbered (`user_id_2`) if another parameter has that name."""
    keys = list(keys)
    taken = {key for key in keys if _is_identifier(key)}
    names: dict[str, str] = {}
    for key in keys:
        if key in taken:
            names[key] = key
            continue
        base = re.sub(r'[^a-zA-Z0-9_]', '_', key)
        base = f'_{base}' if base[:1].isdigit() else base
        base = f'{base}_' if keyword.iskeyword(base) else base or '_'
        candidate, number = base, 2
        while candidate in taken:
            candidate, number = f'{base}_{number}', number + 1
        taken.add(candidate)
        names[key] = candidate
    return names


class _SchemaReader:
    """Reads one JSON schema (with its `$defs`) into type expressions, collecting the `TypedDict`s it makes."""

    def __init__(self, tool_name: str, defs: dict[str, Any]) -> None:
        self.tool_name = tool_name
        self.defs = defs
        self.types: dict[str, TypeSignature] = {}
        self._inlining: set[str] = set()  # non-object definitions being written out, against endless recursion
        for def_name, definition in defs.items():
            definition = _schema(definition)
            if _is_typed_dict(definition) and def_name not in self.types:
                self._register(def_name, definition, def_name)

    def params(self, schema: dict[str, Any]) -> dict[str, FunctionParam]:
        properties: dict[str, Any] = schema.get('properties', {})
        required = set(schema.get('required', []))
        names = _python_names(properties)
        first: dict[str, FunctionParam] = {}
        then: dict[str, FunctionParam] = {}
        for key, node in properties.items():
            prop = _schema(node)
            type_ = self.type_of(prop, key)
            description = prop.get('description') or None
            if 'default' in prop:
                then[key] = FunctionParam(
                    name=names[key], type=type_, default=repr(prop['default']), description=description
                )
            elif key in required:
                first[key] = FunctionParam(name=names[key], type=type_, description=description)
            else:
                if not _allows_null(prop):
                    type_ = UnionTypeExpr(members=[type_, _NONE])
                then[key] = FunctionParam(name=names[key], type=type_, default='None', description=description)
        return first | then

    def type_of(self, node: dict[str, Any] | bool, path: str) -> TypeExpr:
        schema = _schema(node)
        if '$ref' in schema:
            return self._ref(schema['$ref'], path)
        for key in ('anyOf', 'oneOf'):
            if key in schema:
                return self._union(schema[key], path)
        if 'allOf' in schema:
            return self.type_of(schema['allOf'][0], path) if len(schema['allOf']) == 1 else _ANY
        if 'const' in schema:
            return LiteralTypeExpr([schema['const']])
        if 'enum' in schema:
            return LiteralTypeExpr(list(schema['enum']))
        return self._typed(schema.get('type'), schema, path)

    def _ref(self, ref: str, path: str) -> TypeExpr:
        ref_name = ref.rsplit('/', 1)[-1]
        if ref_name in self.types:
            return self.types[ref_name]
        # Every object definition is a `TypedDict` already; an enum, alias or union definition has none to name,
        # so it is written out where it is used (`Any` for one that refers to itself, which has no finite form).
        # A definition that is only a `$ref` to another, or a missing one, stays a bare name.
        if ref_name in self.defs and '$ref' not in (definition := _schema(self.defs[ref_name])):
            if ref_name in self._inlining:
                return _ANY
            self._inlining.add(ref_name)
            try:
                return self.type_of(definition, path)
            finally:
                self._inlining.discard(ref_name)
        return TypeSignature(name=ref_name)

    def _union(self, nodes: list[dict[str, Any] | bool], path: str) -> TypeExpr:
        members: dict[str, TypeExpr] = {}
        nullable = False
        for node in nodes:
            schema = _schema(node)
            if schema.get('type') == 'null':
                nullable = True
            else:
                type_ = self.type_of(schema, path)
                members.setdefault(str(type_), type_)
        unique = list(members.values()) + ([_NONE] if nullable else [])
        return unique[0] if len(unique) == 1 else UnionTypeExpr(members=unique)

    def _typed(self, json_type: Any, schema: dict[str, Any], path: str) -> TypeExpr:
        if isinstance(json_type, str) and json_type in _JSON_TYPES:
            return SimpleTypeExpr(_JSON_TYPES[json_type])
        if json_type == 'array':
            items = schema.get('items')
            if not items:
                return GenericTypeExpr(base='list', args=[_ANY])
            if isinstance(items, list):
                item_nodes = cast(list[dict[str, Any]], items)
                return GenericTypeExpr(
                    base='tuple', args=[self.type_of(item, f'{path}.{i}') for i, item in enumerate(item_nodes)]
                )
            return GenericTypeExpr(base='list', args=[self.type_of(items, f'{path}Item')])
        if json_type == 'object':
            if 'properties' in schema:
                title = schema.get('title')
                type_name = title if title and title.isidentifier() else self._made_name(path)
                if type_name not in self.types:
                    self._register(type_name, schema, path)
                return self.types[type_name]
            values = schema.get('additionalProperties')
            if isinstance(values, dict):
                return GenericTypeExpr(
                    base='dict', args=[_STR, self.type_of(cast(dict[str, Any], values), f'{path}Value')]
                )
            return GenericTypeExpr(base='dict', args=[_STR, _ANY])
        if isinstance(json_type, list):
            return self._type_list(cast(list[str], json_type), schema, path)
        return _ANY

    def _type_list(self, json_types: list[str], schema: dict[str, Any], path: str) -> TypeExpr:
        if 'object' in json_types and 'properties' in schema:
            object_type = self._typed('object', schema, path)
            return UnionTypeExpr(members=[object_type, _NONE]) if 'null' in json_types else object_type
        types: list[TypeExpr] = [SimpleTypeExpr(_JSON_TYPES.get(json_type, 'Any')) for json_type in json_types]
        if len(types) == 2 and _NONE in types:
            return UnionTypeExpr(members=[next(t for t in types if t != _NONE), _NONE])
        if not types:
            return _ANY
        return types[0] if len(types) == 1 else UnionTypeExpr(members=types)

    def _made_name(self, path: str) -> str:
        return ''.join(_pascal_case(part) for part in [self.tool_name, *path.split('.')] if part)

    def _register(self, type_name: str, schema: dict[str, Any], path: str) -> TypeSignature:
        # Registered before its fields are read, so that a type referring to itself finds itself.
        type_sig = self.types[type_name] = TypeSignature(name=type_name)
        required = set(schema.get('required', []))
        for key, node in schema.get('properties', {}).items():
            prop = _schema(node)
            type_sig.fields[key] = TypeFieldSignature(
                name=key,
                type=self.type_of(prop, f'{path}.{key}' if path else key),
                required=key in required,
                description=prop.get('description') or None,
            )
        type_sig.description = schema.get('description') or None
        return type_sig


def _is_typed_dict(schema: dict[str, Any]) -> bool:
    return schema.get('type') == 'object' and 'properties' in schema


def _allows_null(schema: dict[str, Any]) -> bool:
    json_type = schema.get('type')
    if isinstance(json_type, list) and 'null' in json_type:
        return True
    members = schema.get('anyOf', schema.get('oneOf', []))
    return any(_schema(member).get('type') == 'null' for member in members)


def _types_in(expr: TypeExpr) -> Iterator[TypeSignature]:
    """The types an expression names (not the ones inside them)."""
    if isinstance(expr, TypeSignature):
        yield expr
    elif isinstance(expr, GenericTypeExpr | UnionTypeExpr):
        for child in expr.args if isinstance(expr, GenericTypeExpr) else expr.members:
            yield from _types_in(child)


def _with_nested_types(types: Iterable[TypeSignature]) -> list[TypeSignature]:
    """The types and every type inside them, each object once, in the order found."""
    pending = list(types)
    found: dict[int, TypeSignature] = {}
    for type_sig in pending:
        if id(type_sig) not in found:
            found[id(type_sig)] = type_sig
            for f in type_sig.fields.values():
                pending.extend(_types_in(f.type))
    return list(found.values())


def _expr_key(expr: TypeExpr, classes: dict[int, object]) -> object:
    if isinstance(expr, TypeSignature):
        return ('type', classes[id(expr)])
    if isinstance(expr, GenericTypeExpr):
        return (expr.base, *(_expr_key(arg, classes) for arg in expr.args))
    if isinstance(expr, UnionTypeExpr):
        return ('|', *(_expr_key(member, classes) for member in expr.members))
    return str(expr)  # a plain type or a literal


def _structure_classes(types: Sequence[TypeSignature]) -> dict[int, object]:
    """A class for each type (by identity), shared by two types exactly when they have one name and one structure
    all the way down: types start grouped by name, and a group splits while its members' fields differ (a nested
    type counting by its group), so types in a cycle split only on a real difference."""
    classes: dict[int, object] = {id(t): t.name for t in types}
    count = len(set(classes.values()))
    while True:
        numbers: dict[object, int] = {}
        classes = {id(t): numbers.setdefault((classes[id(t)], _fields_key(t, classes)), len(numbers)) for t in types}
        if len(numbers) == count:
            return classes
        count = len(numbers)


def _fields_key(type_sig: TypeSignature, classes: dict[int, object]) -> object:
    return frozenset((key, f.required, _expr_key(f.type, classes)) for key, f in type_sig.fields.items())


def _replace_types(expr: TypeExpr, canonical: dict[int, TypeSignature]) -> TypeExpr:
    if isinstance(expr, TypeSignature):
        return canonical[id(expr)]
    if isinstance(expr, GenericTypeExpr):
        expr.args = [_replace_types(arg, canonical) for arg in expr.args]
    elif isinstance(expr, UnionTypeExpr):
        expr.members = [_replace_types(member, canonical) for member in expr.members]
    return expr


def _unify_identical_types(signatures: list[FunctionSignature]) -> None:
    """Make the types with one name and one structure a single object (the first seen) everywhere."""
    # Types can be named by an expression without being listed: an unresolved `$ref`, or a return type that
    # `from_schema` found among the parameters' types.
    exprs = [expr for sig in signatures for expr in (*(p.type for p in sig.params.values()), sig.return_type)]
    listed = [type_sig for sig in signatures for type_sig in sig.referenced_types]
    types = _with_nested_types([*listed, *(t for expr in exprs for t in _types_in(expr))])
    classes = _structure_classes(types)
    first: dict[object, TypeSignature] = {}
    canonical = {id(t): first.setdefault(classes[id(t)], t) for t in types}
    for sig in signatures:
        sig.referenced_types = [canonical[id(t)] for t in sig.referenced_types]
        for param in sig.params.values():
            param.type = _replace_types(param.type, canonical)
        sig.return_type = _replace_types(sig.return_type, canonical)
    for type_sig in types:
        for f in type_sig.fields.values():
            f.type = _replace_types(f.type, canonical)


def _owners(signatures: list[FunctionSignature]) -> dict[int, str]:
    """The name of the first signature listing each type, by the type's identity."""
    owners: dict[int, str] = {}
    for sig in signatures:
        for type_sig in sig.referenced_types:
            owners.setdefault(id(type_sig), sig.name)
    return owners
