"""Helpers of the agent tests: matchers for timestamps and ids, scripted models."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import timezone
from typing import Any

from dirty_equals import IsNow, IsStr

from edgewise.agent.messages import ModelMessage, ModelResponse, ModelResponsePart
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
