"""Blank out what differs between two runs of the same scenario: timestamps, durations and random ids."""

from __future__ import annotations

import re

_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r'datetime\.datetime\((?:[^()]|\([^()]*\))*\)'), '<datetime>'),
    (re.compile(r'\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?'), '<ts>'),
    (re.compile(r'(duration["\']?[=:] ?)\d+(?:\.\d+)?(?:e-?\d+)?'), r'\1<duration>'),
    (re.compile(r'pyd_ai_[0-9a-f]{32}'), 'pyd_ai_<id>'),
    (re.compile(r'(:)[0-9a-f]{32}\b'), r'\1<id>'),
]


def normalize(text: str) -> str:
    """`text` with timestamps, durations, snapshot ids and generated tool call ids replaced by placeholders."""
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text
