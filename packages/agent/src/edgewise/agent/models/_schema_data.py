"""Made-up data matching a JSON schema: the arguments `TestModel` sends.

The values are the same as pydantic-ai's `TestModel` where those are valid (`'a'` for a string, `0` for an
integer, `2024-01-01` for a date, the lower bound of a range, `minLength` repeats of one character...), so
tests that snapshot them carry over; where pydantic-ai's would not validate (formats other than `date`,
`multipleOf`, patterns, float ranges, unique items drawn from a narrow range), the value is made to validate.
"""

from __future__ import annotations as _annotations

import importlib
import json
import math
import re
import string
from collections.abc import Callable
from datetime import date, datetime, timedelta, timezone
from typing import Any

__all__ = ('_JsonSchemaTestData', '_chars')

_chars = string.ascii_letters + string.digits + string.punctuation
"""The characters of made-up strings, in order; past the last one they go on as spreadsheet columns do."""

try:  # the stdlib's regex parser: private, but the only parser of Python's own regex syntax at hand
    _re_parser: Any = importlib.import_module('re._parser')
except ImportError:  # pragma: no cover - every supported Python has it
    _re_parser = None


def _uuid(version: int) -> Callable[[int], str]:
    def make(seed: int) -> str:
        # version nibble and RFC 4122 variant bits set, so strict UUIDn types accept it
        value = (seed & ((1 << 48) - 1)) | (version << 76) | (0b10 << 62)
        text = f'{value:032x}'
        return f'{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}'

    return make


_FORMATS: dict[str, Callable[[int], str]] = {
    'date': lambda seed: (date(2024, 1, 1) + timedelta(days=seed)).isoformat(),
    'date-time': lambda seed: (
        (datetime(2024, 1, 1, tzinfo=timezone.utc) + timedelta(days=seed)).isoformat().replace('+00:00', 'Z')
    ),
    'time': lambda seed: f'{seed // 3600 % 24:02d}:{seed // 60 % 60:02d}:{seed % 60:02d}',
    'duration': lambda seed: f'P{seed}D',
    'uuid': _uuid(4),
    **{f'uuid{v}': _uuid(v) for v in range(1, 9)},
    'ipv4': lambda seed: f'10.0.{seed // 256 % 256}.{seed % 256}',
    'ipv6': lambda seed: f'2001:db8::{seed % 65536:x}',
    'ipvanyaddress': lambda seed: f'10.0.{seed // 256 % 256}.{seed % 256}',
    'ipv4network': lambda seed: f'10.{seed % 256}.0.0/16',
    'ipv6network': lambda seed: f'2001:db8:{seed % 65536:x}::/48',
    'ipvanynetwork': lambda seed: f'10.{seed % 256}.0.0/16',
    'ipv4interface': lambda seed: f'10.0.{seed // 256 % 256}.{seed % 256}/24',
    'ipv6interface': lambda seed: f'2001:db8::{seed % 65536:x}/64',
    'ipvanyinterface': lambda seed: f'10.0.{seed // 256 % 256}.{seed % 256}/24',
    'hostname': lambda seed: f'{_char(seed).lower() if _char(seed).isalnum() else "h"}.example.com',
}
"""Formats whose values a plain character would not satisfy (emails and URIs are built from `_char` below)."""


_MAX_REF_DEPTH = 2
"""How deep a recursive schema is followed before optional parts (nullable, empty arrays) are left out."""


def _char(seed: int) -> str:
    """`a`..`z`, `A`..`Z`, digits, punctuation, then `aa`, `ab`... (spreadsheet columns) as `seed` grows."""
    size = len(_chars)
    text = ''
    rest = seed // size
    while rest > 0:
        text += _chars[(rest - 1) % size]
        rest //= size
    return text + _chars[seed % size]


def _word(seed: int) -> str:
    """A made-up string of letters and digits only (for the parts of emails and URLs)."""
    return ''.join(c if c.isalnum() else 'x' for c in _char(seed))


class _JsonSchemaTestData:
    """Makes up the smallest data that matches a JSON schema; `seed` varies it (and grows for unique items)."""

    def __init__(self, schema: dict[str, Any], seed: int = 0) -> None:
        self.schema = schema
        self.defs: dict[str, Any] = {**schema.get('definitions', {}), **schema.get('$defs', {})}
        self.seed = seed
        self._ref_depth = 0  # how many `$ref`s deep: past `_MAX_REF_DEPTH`, recursion takes the way out

    def generate(self) -> Any:
        """Data matching the whole schema."""
        return self._any(self.schema)

    def _any(self, schema: Any) -> Any:
        if not isinstance(schema, dict):  # `true` (anything) or `false` (nothing): a string either way
            return self._char()
        if 'const' in schema:
            return schema['const']
        if enum := schema.get('enum'):
            return enum[self.seed % len(enum)]
        if (examples := schema.get('examples')) and isinstance(examples, list):
            return examples[self.seed % len(examples)]
        if ref := schema.get('$ref'):
            self._ref_depth += 1
            try:
                return self._any(self._resolve(ref))
            finally:
                self._ref_depth -= 1
        for key in ('anyOf', 'oneOf'):
            if choices := schema.get(key):
                if self._ref_depth > _MAX_REF_DEPTH and {'type': 'null'} in choices:
                    return None
                return self._any(choices[self.seed % len(choices)])
        if all_of := schema.get('allOf'):
            merged = {k: v for k, v in schema.items() if k != 'allOf'}
            for part in all_of:
                merged.update(self._resolve(part['$ref']) if '$ref' in part else part)
            return self._any(merged)
        kind = schema.get('type')
        if isinstance(kind, list):
            kind = next((k for k in kind if k != 'null'), 'null')
        if kind is None:
            return self._char()
        if kind == 'object':
            return self._object(schema)
        if kind == 'string':
            return self._string(schema)
        if kind == 'integer':
            return self._integer(schema)
        if kind == 'number':
            return self._number(schema)
        if kind == 'boolean':
            return bool(self.seed % 2)
        if kind == 'array':
            return self._array(schema)
        if kind == 'null':
            return None
        raise NotImplementedError(f'TestModel cannot make up data of JSON schema type {kind!r}')

    def _resolve(self, ref: str) -> Any:
        if ref == '#':
            return self.schema
        return self.defs[re.sub(r'^#/(\$defs|definitions)/', '', ref)]

    def _char(self) -> str:
        return _char(self.seed)

    def _object(self, schema: dict[str, Any]) -> dict[str, Any]:
        required = set(schema.get('required', ()))
        data = {key: self._any(value) for key, value in schema.get('properties', {}).items() if key in required}
        extra = schema.get('additionalProperties')
        max_props = schema.get('maxProperties')
        wanted = max(schema.get('minProperties', 0), len(data) + 1 if extra else 0)
        if max_props is not None:
            wanted = min(wanted, max_props)
        names = schema.get('propertyNames')
        while len(data) < wanted and extra is not False:
            data[self._extra_key(data, names)] = self._char() if extra in (True, None) else self._any(extra)
        return data

    def _extra_key(self, data: dict[str, Any], names: Any) -> str:
        if isinstance(names, dict) and names:
            names = {'type': 'string', **names}  # key schemas often give only a `format`
            for _ in range(64):
                key = str(self._any(names))
                if key not in data:
                    return key
                self.seed += 1
        key = 'additionalProperty'
        while key in data:
            key += '_'
        return key

    def _string(self, schema: dict[str, Any]) -> str:
        fmt = schema.get('format')
        if fmt in _FORMATS:
            return _FORMATS[fmt](self.seed)
        if fmt in ('email', 'idn-email'):
            return f'{_word(self.seed)}@example.com'
        if fmt == 'name-email':
            return f'{_word(self.seed)} <{_word(self.seed)}@example.com>'
        if fmt in ('uri', 'iri', 'uri-reference', 'iri-reference'):
            return f'https://example.com/{_word(self.seed)}'
        content = schema.get('contentSchema')
        if content is not None and schema.get('contentMediaType', 'application/json') == 'application/json':
            return json.dumps(self._any(content))
        min_len, max_len = schema.get('minLength'), schema.get('maxLength')
        pattern = schema.get('pattern')
        text = None if pattern is None else _from_pattern(pattern)
        if text is not None and (min_len is None or len(text) >= min_len) and (max_len is None or len(text) <= max_len):
            return text
        if min_len is not None:
            text = self._char() * min_len
        elif max_len == 0:
            return ''
        else:
            text = self._char()
        return text if max_len is None else text[: max(max_len, min_len or 0)]

    def _integer(self, schema: dict[str, Any]) -> int:
        low = _bound(schema, 'minimum', 'exclusiveMinimum', 1)
        high = _bound(schema, 'maximum', 'exclusiveMaximum', -1)
        low = None if low is None else math.ceil(low)
        high = None if high is None else math.floor(high)
        if low is not None and high is not None:
            value = low + self.seed % (high - low + 1) if high >= low else low
        elif low is not None:
            value = low + self.seed
        elif high is not None:
            value = high - self.seed
        else:
            value = self.seed
        step = schema.get('multipleOf')
        if step and value % step:
            value = _multiple(step, low, high, value)
        return int(value)

    def _number(self, schema: dict[str, Any]) -> float:
        low = _bound(schema, 'minimum', 'exclusiveMinimum', 1)
        high = _bound(schema, 'maximum', 'exclusiveMaximum', -1)
        if low is not None and high is not None:
            value = low + self.seed % (high - low) if high > low else low
        elif low is not None:
            value = low + self.seed
        elif high is not None:
            value = high - self.seed
        else:
            value = self.seed
        value = float(value)
        if not _in_range(schema, value):  # a range narrower than 1 (`gt=0, lt=1`): its middle
            low = schema.get('minimum', schema.get('exclusiveMinimum'))
            high = schema.get('maximum', schema.get('exclusiveMaximum'))
            if low is not None and high is not None:
                value = float((low + high) / 2)
        step = schema.get('multipleOf')
        if step and not _is_multiple(value, step):
            value = float(_multiple(step, _bound(schema, 'minimum', 'exclusiveMinimum', 0),
                                    _bound(schema, 'maximum', 'exclusiveMaximum', 0), value, schema))  # fmt: skip
        return value

    def _array(self, schema: dict[str, Any]) -> list[Any]:
        data: list[Any] = []
        unique = schema.get('uniqueItems')
        for item in schema.get('prefixItems', ()):
            data.append(self._any(item))
            if unique:
                self.seed += 1
        items = schema.get('items', {})
        if items is True:
            items = {}
        min_items = schema.get('minItems', 0)
        max_items = schema.get('maxItems')
        count = min_items - len(data) if min_items > len(data) else 0
        deep = self._ref_depth > _MAX_REF_DEPTH
        if not count and items and not deep and (max_items is None or max_items > len(data)):
            count = 1
        for _ in range(count):
            data.append(self._any(items))
            if unique:
                self.seed += 1
        return data


def _bound(schema: dict[str, Any], inclusive: str, exclusive: str, step: int) -> Any:
    """A bound of a range as an inclusive one (an exclusive bound moved by `step`, as pydantic-ai does)."""
    value = schema.get(inclusive)
    if value is None and (exc := schema.get(exclusive)) is not None:
        value = exc + step
    return value


def _in_range(schema: dict[str, Any], value: float) -> bool:
    checks = (('minimum', value.__ge__), ('exclusiveMinimum', value.__gt__), ('maximum', value.__le__),
              ('exclusiveMaximum', value.__lt__))  # fmt: skip
    return all(check(schema[key]) for key, check in checks if schema.get(key) is not None)


def _is_multiple(value: float, step: float) -> bool:
    ratio = value / step
    return math.isclose(ratio, round(ratio), rel_tol=0, abs_tol=1e-9)


def _multiple(step: Any, low: Any, high: Any, value: Any, schema: dict[str, Any] | None = None) -> Any:
    """A multiple of `step` within the bounds: the first one from the low bound, else from the high one."""
    if low is not None:
        candidate = math.ceil(low / step) * step
        if schema is not None and not _in_range(schema, candidate):
            candidate += step
        return candidate
    if high is not None:
        candidate = math.floor(high / step) * step
        if schema is not None and not _in_range(schema, candidate):
            candidate -= step
        return candidate
    return round(value / step) * step


def _from_pattern(pattern: str) -> str | None:
    """The shortest string the regex matches, built from its parse tree; `None` if it has parts not handled."""
    if _re_parser is None:  # pragma: no cover
        return None
    try:
        tree = _re_parser.parse(pattern)
        text = _emit(tree)
    except Exception:  # an invalid or unsupported pattern: no value from it
        return None
    if text is None or re.search(pattern, text) is None:
        return None
    return text


_CATEGORY_CHARS = {
    'CATEGORY_DIGIT': '0',
    'CATEGORY_NOT_DIGIT': 'a',
    'CATEGORY_SPACE': ' ',
    'CATEGORY_NOT_SPACE': 'a',
    'CATEGORY_WORD': 'a',
    'CATEGORY_NOT_WORD': '-',
}


def _emit(items: Any) -> str | None:
    out: list[str] = []
    for op, arg in items:
        name = str(op)
        if name == 'LITERAL':
            out.append(chr(arg))
        elif name == 'NOT_LITERAL':
            out.append('b' if arg == ord('a') else 'a')
        elif name == 'ANY':
            out.append('a')
        elif name == 'IN':
            char = _class_char(arg)
            if char is None:
                return None
            out.append(char)
        elif name == 'CATEGORY':
            out.append(_CATEGORY_CHARS.get(str(arg), 'a'))
        elif name == 'BRANCH':
            part = _emit(arg[1][0])
            if part is None:
                return None
            out.append(part)
        elif name == 'SUBPATTERN':
            part = _emit(arg[-1])
            if part is None:
                return None
            out.append(part)
        elif name in ('MAX_REPEAT', 'MIN_REPEAT', 'POSSESSIVE_REPEAT'):
            low, _, sub = arg
            part = _emit(sub)
            if part is None:
                return None
            out.append(part * low)
        elif name in ('AT', 'ASSERT', 'ASSERT_NOT'):
            continue  # anchors and lookarounds add no characters (the final check catches a miss)
        else:
            return None
    return ''.join(out)


def _class_char(members: Any) -> str | None:
    """A character of a `[...]` class: its first member, or for a negated class one it leaves out."""
    if members and str(members[0][0]) == 'NEGATE':
        excluded = re.compile(_class_source(members[1:]))
        return next((c for c in 'aA0_- ' if not excluded.fullmatch(c)), None)
    op, arg = members[0]
    name = str(op)
    if name == 'LITERAL':
        return chr(arg)
    if name == 'RANGE':
        return chr(arg[0])
    if name == 'CATEGORY':
        return _CATEGORY_CHARS.get(str(arg), 'a')
    return None


def _class_source(members: Any) -> str:
    parts: list[str] = []
    for op, arg in members:
        name = str(op)
        if name == 'LITERAL':
            parts.append(re.escape(chr(arg)))
        elif name == 'RANGE':
            parts.append(f'{re.escape(chr(arg[0]))}-{re.escape(chr(arg[1]))}')
        elif name == 'CATEGORY':
            parts.append({'CATEGORY_DIGIT': r'\d', 'CATEGORY_SPACE': r'\s', 'CATEGORY_WORD': r'\w',
                          'CATEGORY_NOT_DIGIT': r'\D', 'CATEGORY_NOT_SPACE': r'\S',
                          'CATEGORY_NOT_WORD': r'\W'}.get(str(arg), ''))  # fmt: skip
    return f'[{"".join(parts)}]' if parts else '[^\\s\\S]'
