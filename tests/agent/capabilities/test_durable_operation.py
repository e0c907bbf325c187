"""`durable_operation` (pydantic-ai 2.68): the decorator's checks, the name it records, and a marked method awaited in
place (Edgewise's durable runs do not journal capability operations)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

import pytest

from edgewise.agent import Agent, RunContext
from edgewise.agent.capabilities import AbstractCapability, durable_operation
from edgewise.agent.capabilities.durable_operation import operation_name
from edgewise.agent.models import ModelRequestContext

pytestmark = pytest.mark.anyio


@dataclass
class Audit(AbstractCapability[Any]):
    recorded: list[str] = field(default_factory=list)

    @durable_operation(name='record')
    async def record(self, ctx: RunContext[Any], message: str) -> bool:
        self.recorded.append(message)
        return bool(message)

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        assert await self.record(ctx, message=f'step {ctx.run_step}')
        return request_context

    @durable_operation(name='toolset')  # type: ignore[type-var]
    def get_toolset(self) -> None:
        return None


async def test_a_marked_method_runs_in_place_and_keeps_its_name() -> None:
    audit = Audit()
    assert (await Agent('test', capabilities=[audit]).run('hi')).output == 'success (no tool calls)'
    assert audit.recorded == ['step 1']
    assert operation_name(audit.record) == 'record'
    assert operation_name(Audit.get_toolset) == 'toolset'
    assert operation_name(Audit.before_model_request) is None
    assert Audit.record.__name__ == 'record'


def test_the_decorator_needs_a_stable_name_and_an_async_method() -> None:
    module = sys.modules['edgewise.agent.capabilities.durable_operation']
    assert durable_operation is module.durable_operation  # the package's attribute is the function, not the module
    untyped: Any = durable_operation  # called the wrong ways on purpose
    with pytest.raises(TypeError, match='requires an explicit operation name'):
        untyped(lambda: None)
    with pytest.raises(TypeError, match='name must be a string, got int'):
        untyped(3)
    with pytest.raises(ValueError, match='name must not be empty'):
        durable_operation('')

    def compute(self: Any) -> int:
        return 1  # pragma: no cover - never called

    with pytest.raises(TypeError, match='can only decorate async methods'):
        untyped(name='sync')(compute)
