"""Keyword options written once, as a `TypedDict` that functions take as `**options: Unpack[...]`: their
defaults, the check of their names, and the signature `inspect.signature` shows for such a function (each
option a keyword-only parameter with its default, as if written out)."""

from __future__ import annotations as _annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, ForwardRef, TypeVar

__all__ = ('KeywordOptions',)

_F = TypeVar('_F', bound=Callable[..., Any])


class KeywordOptions:
    """The options of one `TypedDict` with their defaults (one for each key, checked when made)."""

    def __init__(self, options: type, defaults: Mapping[str, Any]) -> None:
        """Args:
        options: The `TypedDict` class.
        defaults: The default of each of its keys.

        Raises:
            TypeError: `defaults` does not name exactly the keys of `options`.
        """
        annotations: dict[str, Any] = dict(options.__annotations__)
        if annotations.keys() != defaults.keys():
            missing, unknown = (
                sorted(annotations.keys() - defaults.keys()),
                sorted(defaults.keys() - annotations.keys()),
            )
            raise TypeError(
                f'the defaults of {options.__name__} must name its keys: missing {missing}, unknown {unknown}'
            )
        self.name = options.__name__
        self.defaults: dict[str, Any] = dict(defaults)
        self.parameters = [
            inspect.Parameter(
                name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=_text(annotations[name])
            )
            for name, default in defaults.items()
        ]

    def resolve(self, owner: str, given: Mapping[str, Any]) -> dict[str, Any]:
        """Every option: the given ones over the defaults.

        Raises:
            TypeError: a given name is not an option (as Python says of an unknown keyword argument).
        """
        if not given.keys() <= self.defaults.keys():
            unknown = next(name for name in given if name not in self.defaults)
            raise TypeError(f'{owner}() got an unexpected keyword argument {unknown!r}')
        return {**self.defaults, **given}

    def unknown(self, given: Mapping[str, Any]) -> list[str]:
        """The given names that are not options."""
        return [name for name in given if name not in self.defaults]

    def signed(self, func: _F) -> _F:
        """`func` with the options in place of its `**options` in `inspect.signature` (its `__signature__`)."""
        signature = inspect.signature(func)
        parameters = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
        taken = {p.name for p in parameters}
        parameters += [p for p in self.parameters if p.name not in taken]
        func.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        return func


def _text(annotation: Any) -> Any:
    """An annotation as written (the string of a forward reference, under `from __future__ import annotations`)."""
    return annotation.__forward_arg__ if isinstance(annotation, ForwardRef) else annotation
