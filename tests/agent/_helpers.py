"""Helpers of the agent tests: matchers for timestamps and ids, scripted models, stores as older versions wrote them."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from datetime import timezone
from pathlib import Path
from typing import Any

from dirty_equals import IsNow, IsStr

from edgewise.agent.messages import ModelMessage, ModelResponse, ModelResponsePart, TextPart
from edgewise.agent.models.function import AgentInfo, FunctionModel

NOW: Any = IsNow(tz=timezone.utc)
"""Matches a timestamp made during the test."""
RUN_ID: Any = IsStr(regex=r'[0-9a-f]{32}')
"""Matches a run id."""
CONVERSATION_ID: Any = IsStr(regex=r'[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}')
"""Matches a generated conversation id (a UUID version 7)."""
CALL_ID: Any = IsStr(regex=r'pyd_ai_[0-9a-f]{32}')
"""Matches a generated tool call id."""


def scripted(*responses: Sequence[ModelResponsePart]) -> FunctionModel:
    """A `FunctionModel` answering with these parts, one response per request, in order."""
    it: Iterator[Sequence[ModelResponsePart]] = iter(responses)

    async def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=next(it))

    return FunctionModel(script)


def as_written_before_response_in_node(db: Path, run_id: str) -> int:
    """Rewrite the stored snapshots of a durable agent run as Edgewise wrote them before `response_in_node`: the
    response a `CallToolsNode` holds also at the end of the state's messages, and no such key. The number of
    snapshots changed (for the caller to check that there were some)."""
    changed = 0
    with sqlite3.connect(db) as conn:
        rows = conn.execute('SELECT seq, data FROM edgewise_snapshots WHERE run_id = ?', (run_id,)).fetchall()
        for seq, data in rows:
            snapshot = json.loads(data)
            state = snapshot['state']
            if state.pop('response_in_node'):
                state['message_history'].append(snapshot['node']['model_response'])
                changed += 1
            conn.execute(
                'UPDATE edgewise_snapshots SET data = ? WHERE run_id = ? AND seq = ?',
                (json.dumps(snapshot), run_id, seq),
            )
    return changed


class Recorder:
    """A model that records the messages and settings it receives and answers `'ok'` (`recorder.model`)."""

    def __init__(self) -> None:
        self.received: list[list[ModelMessage]] = []
        self.settings: list[Any] = []
        self.model = FunctionModel(self.answer)

    def answer(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.received.append(list(messages))
        self.settings.append(info.model_settings)
        return ModelResponse(parts=[TextPart('ok')])
