"""Loads the recorded provider traffic of `../shared/cassettes` (never copied into the project) for replay."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml  # type: ignore[import-untyped]

_SET = Path('shared', 'cassettes', 'pydantic-ai-v1.96.1')
# `<repo>/../shared` (CI's layout); a git worktree kept one level deeper finds it further up.
CASSETTES = next(
    (p / _SET for p in Path(__file__).resolve().parents[3].parents if (p / _SET).is_dir()),
    Path(__file__).resolve().parents[4] / _SET,
)
"""Where the recorded cassettes are, beside the project; tests skip when it is absent."""


@dataclass
class Interaction:
    """One recorded request and its response."""

    cassette: str
    index: int
    request: dict[str, Any]
    response: dict[str, Any]

    @property
    def id(self) -> str:
        return f'{self.cassette}#{self.index}'

    @property
    def request_body(self) -> dict[str, Any]:
        return self.request.get('parsed_body') or {}

    def reply(self) -> httpx.Response:
        """The recorded response, as httpx would have received it (JSON re-serialised, lengths dropped)."""
        rs = self.response
        headers = {k: v[0] for k, v in rs['headers'].items() if k not in ('content-length', 'content-encoding')}
        if 'parsed_body' in rs:
            return httpx.Response(rs['status']['code'], headers=headers, content=json.dumps(rs['parsed_body']))
        return httpx.Response(rs['status']['code'], headers=headers, content=rs['body']['string'].encode())


def interactions(path_suffix: str) -> Iterator[Interaction]:
    """Every recorded interaction whose request URL path ends with `path_suffix`, in file order."""
    if not CASSETTES.is_dir():
        return
    for file in sorted(CASSETTES.rglob('*.yaml')):
        data: dict[str, Any] = yaml.load(file.read_text(), Loader=getattr(yaml, 'CSafeLoader', yaml.SafeLoader))
        for index, item in enumerate(data['interactions']):
            if httpx.URL(item['request']['uri']).path.endswith(path_suffix):
                yield Interaction(file.stem, index, item['request'], item['response'])
