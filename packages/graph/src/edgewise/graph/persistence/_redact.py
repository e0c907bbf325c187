"""Secrets out of text that is stored or shown: DSN passwords (`mask_dsn`), and API keys and tokens (`redact`)."""

from __future__ import annotations as _annotations

import re

__all__ = ('mask_dsn', 'redact')

_PASSWORD_IN_URL = re.compile(r'(://[^:/@\s]*:)[^@\s]*@')
_PASSWORD_IN_KEYWORDS = re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", re.IGNORECASE)
_KEYS = re.compile(
    r"""((?:api[_-]?key|access[_-]?token|auth[_-]?token|token|secret|authorization|x-api-key)["']?\s*[:=]\s*["']?)"""
    r"""(?:Bearer\s+)?[^\s"',;)}]+""",
    re.IGNORECASE,
)
_BEARER = re.compile(r'(Bearer\s+)[^\s"\',;)}]+')
_KEY_LIKE = re.compile(r'\b(sk|pk|rk|gsk|xai|hf)([-_])[A-Za-z0-9_-]{12,}')


def mask_dsn(dsn: str) -> str:
    """`dsn` with any password replaced by `***`."""
    return _PASSWORD_IN_KEYWORDS.sub(r'\1***', _PASSWORD_IN_URL.sub(r'\1***@', dsn))


def redact(text: str) -> str:
    """`text` with passwords of DSNs, values of API keys, tokens and secrets, and bearer tokens replaced by `***`."""
    text = mask_dsn(text)
    text = _KEYS.sub(r'\1***', text)
    text = _BEARER.sub(r'\1***', text)
    return _KEY_LIKE.sub(r'\1\2***', text)
