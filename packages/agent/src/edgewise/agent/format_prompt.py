"""`format_as_xml`: Python data as XML for prompts (models read semi-structured examples more easily as XML)."""

from __future__ import annotations as _annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, fields, is_dataclass
from datetime import date, time, timedelta
from decimal import Decimal
from enum import Enum
from typing import Any, Literal
from uuid import UUID
from xml.etree import ElementTree

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

__all__ = ('format_as_xml',)

_ATTRIBUTES = ('title', 'description')
"""The field details written as XML attributes with `include_field_info`."""


def format_as_xml(
    obj: Any,
    root_tag: str | None = None,
    item_tag: str = 'item',
    none_str: str = 'null',
    indent: str | None = '  ',
    include_field_info: Literal['once'] | bool = False,
) -> str:
    """Format a Python object as XML.

    Handles `str`, `bytes`, `bytearray`, `bool`, `int`, `float`, `Decimal`, dates, times, `timedelta`, `UUID`,
    enums, mappings, iterables, dataclasses and pydantic models (nested as deep as they go).

    ```python
    from edgewise.agent import format_as_xml

    print(format_as_xml({'name': 'Ada', 'born': 1815}, root_tag='person'))
    '''
    <person>
      <name>Ada</name>
      <born>1815</born>
    </person>
    '''
    ```

    Args:
        obj: The object to format.
        root_tag: The tag wrapping the whole XML; `None` for no outer tag (the items follow one another).
        item_tag: The tag of each item of an iterable; dataclasses and models are tagged with their class name.
        none_str: The text of `None` values.
        indent: The indentation of nested elements; `None` for everything on one line.
        include_field_info: Write the `title` and `description` of pydantic fields (and of dataclass fields, from
            their `metadata`) as XML attributes: on every element of the field (`True`) or on its first one only
            (`'once'`).

    Returns:
        The XML text.

    Raises:
        TypeError: a value of a type not listed above, or a mapping key that is not a `str` or an `int`.
    """
    writer = _XmlWriter(obj, item_tag=item_tag, none_str=none_str, include_field_info=include_field_info)
    element = writer.element(obj, '', root_tag)
    if root_tag is None and element.text is None:
        return ('' if indent is None else '\n').join(_children_text(element, indent))
    if indent is not None:
        ElementTree.indent(element, space=indent)
    return ElementTree.tostring(element, encoding='unicode')


def _children_text(element: ElementTree.Element, indent: str | None) -> Iterator[str]:
    for child in element:
        if indent is not None:
            ElementTree.indent(child, space=indent)
        yield ElementTree.tostring(child, encoding='unicode')


def _scalar_text(value: Any, none_str: str) -> str | None:
    """The text of a scalar value; `None` for a value that is not one."""
    if value is None:
        return none_str
    if isinstance(value, str):
        return value.value if isinstance(value, Enum) else value
    if isinstance(value, bytes | bytearray):
        return value.decode(errors='ignore')
    if isinstance(value, date | time):
        return value.isoformat()
    if isinstance(value, bool | int | float | Enum | timedelta | Decimal | UUID):
        return str(value)
    return None


class _XmlWriter:
    """Builds the element tree. Elements are known by their path in the data (`key.[0].field`): the fields'
    titles and descriptions, and the class names of dataclasses and models (which become dicts once dumped),
    are collected by path from the original objects, on the first dataclass or model met."""

    def __init__(self, data: Any, *, item_tag: str, none_str: str, include_field_info: Literal['once'] | bool):
        self._data = data
        self._item_tag = item_tag
        self._none_str = none_str
        self._field_info = include_field_info
        self._attributes: dict[str, tuple[str, dict[str, str]]] = {}  # path -> (Class.field, attributes)
        self._class_names: dict[str, str] = {}  # path -> class name
        self._written: set[str] = set()  # the `Class.field`s whose attributes were written
        self._collected = False

    def element(self, value: Any, path: str, tag: str | None) -> ElementTree.Element:
        """The element of `value` at `path`, tagged `tag` (or by its class, or as an item)."""
        element = ElementTree.Element(self._item_tag if tag is None else tag)
        self._add_attributes(element, path)
        if (text := _scalar_text(value, self._none_str)) is not None:
            element.text = text
            return element
        if isinstance(value, Mapping):
            if tag is None and path in self._class_names:
                element.tag = self._class_names[path]
            self._add_items(element, value, path)
        elif is_dataclass(value) and not isinstance(value, type):
            self._collect()
            element.tag = type(value).__name__ if tag is None else element.tag
            self._add_items(element, asdict(value), path)
        elif isinstance(value, BaseModel):
            self._collect()
            element.tag = type(value).__name__ if tag is None else element.tag
            try:
                dumped = value.model_dump(mode='json')
            except PydanticSerializationError as exc:
                raise TypeError(f'Unsupported type for XML formatting: {exc}') from exc
            self._add_items(element, dumped, path)
        elif isinstance(value, Iterable):
            for index, item in enumerate(value):
                element.append(self.element(item, f'{path}.[{index}]' if path else f'[{index}]', None))
        else:
            raise TypeError(f'Unsupported type for XML formatting: {type(value)}')
        return element

    def _add_items(self, element: ElementTree.Element, mapping: Mapping[Any, Any], path: str) -> None:
        for key, value in mapping.items():
            if isinstance(key, int):
                key = str(key)
            elif not isinstance(key, str):
                raise TypeError(f'Unsupported key type for XML formatting: {type(key)}, only str and int are allowed')
            element.append(self.element(value, f'{path}.{key}' if path else key, key))

    def _add_attributes(self, element: ElementTree.Element, path: str) -> None:
        if path not in self._attributes:
            return
        field_name, attributes = self._attributes[path]
        if self._field_info == 'once' and field_name in self._written:
            return
        for name, text in attributes.items():
            element.set(name, text)
        self._written.add(field_name)

    def _collect(self) -> None:
        if not self._collected:
            self._collected = True
            self._walk(self._data, '')

    def _walk(self, value: Any, path: str) -> None:
        """Record the class names and field attributes found under `path`."""
        if value is None or isinstance(value, str | bytes | bytearray | int | float | date | time | timedelta):
            return
        if isinstance(value, Mapping):
            for key, item in value.items():
                self._walk(item, f'{path}.{key}' if path else f'{key}')
        elif is_dataclass(value) and not isinstance(value, type):
            self._class_names[path] = type(value).__name__
            for item in fields(value):
                item_path = f'{path}.{item.name}' if path else item.name
                attributes = {k: str(v) for k, v in item.metadata.items() if k in _ATTRIBUTES}
                if self._field_info and attributes:
                    self._attributes[item_path] = (f'{type(value).__name__}.{item.name}', attributes)
                self._walk(getattr(value, item.name), item_path)
        elif isinstance(value, BaseModel):
            cls = type(value)
            self._class_names[path] = cls.__name__
            infos: dict[str, Any] = {**cls.model_fields, **cls.model_computed_fields}
            for name, info in infos.items():
                item_path = f'{path}.{name}' if path else name
                if self._field_info and not getattr(info, 'exclude', False):
                    attributes = {a: str(v) for a in _ATTRIBUTES if (v := getattr(info, a, None)) is not None}
                    self._attributes[item_path] = (f'{cls.__name__}.{name}', attributes)
                self._walk(getattr(value, name), item_path)
        elif isinstance(value, Iterable):
            for index, item in enumerate(value):
                self._walk(item, f'{path}.[{index}]' if path else f'[{index}]')
