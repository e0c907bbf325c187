"""A function's signature and docstring turned into a JSON schema, and its arguments validated and applied.

Used for tools and for output functions. Docstrings are parsed with griffe (imported only when a function
actually has a docstring), in the google, numpy or sphinx style, detected from the text.
"""

from __future__ import annotations as _annotations

import inspect
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cache, partial
from typing import Any, Literal, get_origin

import anyio.to_thread
import pydantic
from pydantic_core import SchemaValidator

from .exceptions import UserError
from .models._model import RunContext

__all__ = ('DocstringFormat', 'FunctionSchema', 'function_schema', 'parse_docstring')

DocstringFormat = Literal['google', 'numpy', 'sphinx', 'auto']
"""How a function's docstring is written; `'auto'` detects it from the text."""

_SPHINX_RE = re.compile(r'^\s*:(param|parameter|arg|argument|returns?|raises?)\b', re.MULTILINE)
_NUMPY_RE = re.compile(r'^\s*(Parameters|Returns|Raises|Yields)\s*\n\s*-{3,}\s*$', re.MULTILINE)


@cache
def _args_adapter() -> pydantic.TypeAdapter[dict[str, Any]]:
    # Built on first use: building type adapters at import time would slow down `import edgewise.agent`.
    return pydantic.TypeAdapter(dict[str, Any])


def _detect_style(docstring: str) -> Literal['google', 'numpy', 'sphinx']:
    if _SPHINX_RE.search(docstring):
        return 'sphinx'
    if _NUMPY_RE.search(docstring):
        return 'numpy'
    return 'google'


def parse_docstring(function: Callable[..., Any], docstring_format: DocstringFormat) -> tuple[str, dict[str, str]]:
    """The main description of `function` and the description of each parameter, from its docstring."""
    doc = inspect.getdoc(function)
    if not doc:
        return '', {}
    import griffe  # deferred: griffe is the heaviest import of the package and only docstrings need it

    style = _detect_style(doc) if docstring_format == 'auto' else docstring_format
    logger = logging.getLogger('griffe')
    level = logger.level
    # griffe logs a warning for every parameter documented without a type; tools rarely have one.
    logger.setLevel(logging.ERROR)
    try:
        sections = griffe.Docstring(doc, lineno=1, parser=style).parse()
    finally:
        logger.setLevel(level)
    texts: list[str] = []
    params: dict[str, str] = {}
    for section in sections:
        if section.kind is griffe.DocstringSectionKind.text:
            texts.append(section.value)
        elif section.kind is griffe.DocstringSectionKind.parameters:
            params.update({p.name: p.description for p in section.value})
    return '\n\n'.join(texts), params


@dataclass(kw_only=True)
class FunctionSchema:
    """A function with the JSON schema of its arguments and the validator that applies them."""

    function: Callable[..., Any]
    """The function."""
    description: str | None
    """The function's description, from its docstring."""
    json_schema: dict[str, Any]
    """The JSON schema of the function's arguments (without the `RunContext` parameter)."""
    takes_ctx: bool
    """Whether the first parameter is the `RunContext`."""
    is_async: bool
    """Whether the function is a coroutine function (else it runs in a worker thread)."""
    validator: SchemaValidator | None
    """Validates arguments into keyword arguments; `None` when the arguments are passed through as given."""
    positional: tuple[str, ...] = ()
    """Parameters that can only be passed positionally, in order."""

    def validate(self, args: str | dict[str, Any] | None) -> dict[str, Any]:
        """Validate arguments given as a JSON string or a dict into keyword arguments.

        Raises:
            pydantic.ValidationError: the arguments do not match the schema.
        """
        if self.validator is None:
            if isinstance(args, str):
                return _args_adapter().validate_json(args or '{}')
            return dict(args or {})
        if isinstance(args, str):
            model = self.validator.validate_json(args or '{}')
        else:
            model = self.validator.validate_python(args or {})
        return dict(model.__dict__)

    async def call(self, kwargs: dict[str, Any], ctx: Any) -> Any:
        """Call the function with validated keyword arguments (and `ctx` first when it takes one)."""
        positional: list[Any] = [ctx] if self.takes_ctx else []
        for name in self.positional:
            positional.append(kwargs.pop(name))
        if self.is_async:
            return await self.function(*positional, **kwargs)
        return await anyio.to_thread.run_sync(partial(self.function, *positional, **kwargs))


def _is_run_context(annotation: Any) -> bool:
    return annotation is RunContext or get_origin(annotation) is RunContext


def takes_run_context(function: Callable[..., Any]) -> bool:
    """Whether the first parameter of `function` is annotated as a `RunContext`."""
    try:
        params = list(inspect.signature(function).parameters.values())
    except ValueError:  # pragma: no cover - builtins without a signature
        return False
    if not params:
        return False
    annotation = params[0].annotation
    if isinstance(annotation, str):
        return annotation.startswith(('RunContext', 'tools.RunContext'))
    return _is_run_context(annotation)


def function_schema(
    function: Callable[..., Any],
    *,
    takes_ctx: bool,
    docstring_format: DocstringFormat = 'auto',
    require_parameter_descriptions: bool = False,
    name: str | None = None,
) -> FunctionSchema:
    """Build the schema of `function`'s arguments from its signature and docstring.

    Raises:
        UserError: the function takes `*args`/`**kwargs`, or a `RunContext` where it should not (or the
            other way round), or lacks a parameter description while they are required.
    """
    label = name or getattr(function, '__name__', repr(function))
    signature = inspect.signature(function)
    try:
        hints = inspect.get_annotations(function, eval_str=True)
    except Exception:  # pragma: no cover - unresolvable hints fall back to the raw annotations
        hints = {}
    description, param_docs = parse_docstring(function, docstring_format)
    fields: dict[str, Any] = {}
    positional: list[str] = []
    params = list(signature.parameters.values())
    if takes_ctx:
        if not params or not _is_run_context(hints.get(params[0].name, params[0].annotation)):
            raise UserError(
                f'The first parameter of tool {label!r} must be annotated `RunContext[...]` (it takes the run '
                'context); register it with `tool_plain` if it does not need the context.'
            )
        params = params[1:]
    for param in params:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise UserError(f'Tool {label!r} takes `*{param.name}`; tools need named parameters only.')
        annotation = hints.get(param.name, Any if param.annotation is param.empty else param.annotation)
        if _is_run_context(annotation):
            raise UserError(
                f'Parameter {param.name!r} of tool {label!r} is a `RunContext`, which only the first parameter of a '
                '`tool` (not `tool_plain`) may be.'
            )
        doc = param_docs.get(param.name)
        if doc is None and require_parameter_descriptions:
            raise UserError(f'Parameter {param.name!r} of tool {label!r} has no description in its docstring.')
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (annotation, pydantic.Field(default, description=doc))
        if param.kind is param.POSITIONAL_ONLY:
            positional.append(param.name)
    model = pydantic.create_model(
        f'{label}_args', __config__=pydantic.ConfigDict(extra='forbid', arbitrary_types_allowed=True), **fields
    )
    json_schema = model.model_json_schema()
    json_schema.pop('title', None)
    for prop in json_schema.get('properties', {}).values():
        prop.pop('title', None)
    return FunctionSchema(
        function=function,
        description=description or None,
        json_schema=json_schema,
        takes_ctx=takes_ctx,
        is_async=inspect.iscoroutinefunction(function),
        validator=model.__pydantic_validator__,  # type: ignore[arg-type]
        positional=tuple(positional),
    )


def passthrough_schema(
    function: Callable[..., Any] | Callable[..., Awaitable[Any]],
    *,
    json_schema: dict[str, Any],
    description: str | None,
    takes_ctx: bool,
) -> FunctionSchema:
    """A schema given as JSON schema: arguments are passed to the function as they come, unvalidated."""
    return FunctionSchema(
        function=function,
        description=description,
        json_schema=json_schema,
        takes_ctx=takes_ctx,
        is_async=inspect.iscoroutinefunction(function),
        validator=None,
    )
