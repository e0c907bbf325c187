"""`TemplateStr`: a text written as a Handlebars template (`'Help {{user.name}}'`), filled in from a run's deps.

An agent's instructions and description may be templates, and so may the same fields of an agent spec (where any
text holding `{{` becomes one). Templates are compiled by pydantic-handlebars, the `spec` extra
(`pip install "edgewise-agent[spec]"`), imported only when a template is made.

Given a deps type (an agent's `deps_type`, passed on when a spec is validated), a template is checked against it
when made: a name the type does not have is an error then, not an empty gap in a prompt later. Given only a spec's
`deps_schema` (a JSON schema), it is checked against that schema.
"""

from __future__ import annotations as _annotations

from typing import Any, Generic, cast

from pydantic import GetCoreSchemaHandler, TypeAdapter
from pydantic_core import CoreSchema, core_schema

from ._run_context import RunContext
from .tools import AgentDepsT

__all__ = ('TemplateStr',)

_MARK = '{{'


class TemplateStr(Generic[AgentDepsT]):
    """A Handlebars template rendered against the deps of a run (`RunContext.deps`).

    Usable wherever an agent takes instructions (it is a function of the run context) and as an agent's
    `description`; in a type hint (an `AgentSpec` field, a capability's `from_spec` argument), a string holding
    `{{` validates into one, with the deps type of the validation context (`{'deps_type': ...}`) or its
    `deps_schema`.

    Example:
        ```python
        from dataclasses import dataclass

        from edgewise.agent import Agent, TemplateStr

        @dataclass
        class Customer:
            name: str

        agent = Agent('test', deps_type=Customer, instructions=TemplateStr('The customer is {{name}}.'))
        ```

    Raises:
        ImportError: pydantic-handlebars (the `spec` extra) is not installed.
        pydantic_handlebars.HandlebarsParseError: the source is not a valid template.
        pydantic_handlebars.TemplateSchemaError: the template names what `deps_type` (or `deps_schema`) lacks.
    """

    __slots__ = ('_deps_schema', '_deps_type', '_dumped', '_source', '_typed', '_untyped')

    def __init__(
        self, source: str, *, deps_type: type[Any] | None = None, deps_schema: dict[str, Any] | None = None
    ) -> None:
        if not isinstance(source, str):
            raise TypeError(f'A `TemplateStr` is made from a string, not {type(source).__name__}.')
        self._source = source
        self._deps_type = deps_type
        self._deps_schema = deps_schema
        handlebars = _handlebars()
        self._typed: Any = None
        self._untyped: Any = None
        self._dumped: tuple[type[Any], TypeAdapter[Any]] | None = None
        if deps_type is not None:
            self._typed = handlebars.compile(source, deps_type)
        else:
            if deps_schema is not None:
                handlebars.check_template_compatibility(source, deps_schema, raise_on_error=True)
            self._untyped = handlebars.compile(source)

    @property
    def source(self) -> str:
        """The template as written."""
        return self._source

    @property
    def deps_type(self) -> type[Any] | None:
        """The deps type the template was checked against, if any."""
        return self._deps_type

    def render(self, deps: AgentDepsT | None = None) -> str:
        """The text, filled in from `deps` (a template checked against a deps type serializes `deps` as that
        type; otherwise `deps` is dumped as its own type and its fields are the template's names)."""
        if self._typed is not None:
            return cast(str, self._typed.render(deps))
        if deps is not None:
            data = self._dumper(type(deps)).dump_python(deps, mode='python')
            if isinstance(data, dict):
                return cast(str, self._untyped.render(data))
        return cast(str, self._untyped.render())

    def _dumper(self, deps_type: type[Any]) -> TypeAdapter[Any]:
        # Kept for the deps type last seen: as instructions, a template renders before every model request.
        dumper = self._dumped
        if dumper is None or dumper[0] is not deps_type:
            dumper = self._dumped = (deps_type, TypeAdapter(deps_type))
        return dumper[1]

    def __call__(self, ctx: RunContext[AgentDepsT]) -> str:
        """The text for a run: rendered from `ctx.deps`."""
        return self.render(ctx.deps)

    def __str__(self) -> str:
        return self._source

    def __repr__(self) -> str:
        return f'TemplateStr({self._source!r})'

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TemplateStr):
            return NotImplemented
        return (self._source, self._deps_type, self._deps_schema) == (
            other._source,
            other._deps_type,
            other._deps_schema,
        )

    def __hash__(self) -> int:
        return hash((self._source, self._deps_type))

    @classmethod
    def __get_pydantic_core_schema__(cls, source_type: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        # A string without `{{` is refused, so that in `TemplateStr | str` a plain text stays a `str`; in JSON it
        # is the template's source, and its JSON schema is a string's.
        return core_schema.with_info_plain_validator_function(
            _validate,
            json_schema_input_schema=core_schema.str_schema(),
            serialization=core_schema.plain_serializer_function_ser_schema(
                lambda value: value._source if isinstance(value, TemplateStr) else value, when_used='always'
            ),
        )


def _validate(value: Any, info: core_schema.ValidationInfo) -> TemplateStr[Any]:
    if isinstance(value, TemplateStr):
        return value
    if not isinstance(value, str):
        raise ValueError(f'a template must be a string, not {type(value).__name__}')
    if _MARK not in value:
        raise ValueError('not a template: the text holds no `{{`')
    context = info.context if isinstance(info.context, dict) else {}
    return TemplateStr(value, deps_type=context.get('deps_type'), deps_schema=context.get('deps_schema'))


def _handlebars() -> Any:
    try:
        import pydantic_handlebars
    except ImportError:
        raise ImportError(
            '`TemplateStr` needs pydantic-handlebars to compile its template: install the `spec` extra, '
            '`pip install "edgewise-agent[spec]"` (or write the text without `{{`).'
        ) from None
    return pydantic_handlebars
