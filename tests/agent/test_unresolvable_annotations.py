"""A user function whose first parameter's annotation decides how it is called (a history processor, a
`FallbackModel` handler) and names something undefined at run time is refused with a `UserError` naming it,
instead of being called the wrong way (pydantic-ai 2.x)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from edgewise.agent import Agent, ModelResponse, UserError
from edgewise.agent._utils import get_first_param_type
from edgewise.agent.capabilities import ProcessHistory
from edgewise.agent.models.fallback import FallbackModel
from edgewise.agent.models.test import TestModel

SOURCE = """
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from edgewise.agent import ModelMessage, ModelResponse, RunContext


def drop_first(ctx: RunContext[None], messages: list[ModelMessage]) -> list[ModelMessage]:
    return messages[1:]


def reject_primary(response: ModelResponse) -> bool:
    return True


class RejectPrimary:
    def __call__(self, response: ModelResponse) -> bool:
        return True
"""


@pytest.fixture
def module(tmp_path: Path) -> Iterator[ModuleType]:
    path = tmp_path / 'checked_only_when_typing.py'
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location('checked_only_when_typing', path)
    assert spec is not None
    assert spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = loaded
    spec.loader.exec_module(loaded)
    yield loaded
    del sys.modules[spec.name]


@pytest.mark.anyio
async def test_a_history_processor_with_an_unresolvable_context_annotation_is_refused(module: ModuleType) -> None:
    agent = Agent(TestModel(), capabilities=[ProcessHistory(module.drop_first)])
    with pytest.raises(UserError, match=r"annotations of 'drop_first': name 'RunContext' is not defined\.") as caught:
        await agent.run('Hello')
    assert 'TYPE_CHECKING' in str(caught.value)


@pytest.mark.parametrize(
    ('make', 'name'), [(lambda m: m.reject_primary, 'reject_primary'), (lambda m: m.RejectPrimary(), 'RejectPrimary')]
)
def test_a_fallback_handler_with_an_unresolvable_annotation_is_refused(
    module: ModuleType, make: Any, name: str
) -> None:
    with pytest.raises(UserError, match=rf"annotations of '{name}': name 'ModelResponse' is not defined\."):
        FallbackModel(TestModel(), TestModel(), fallback_on=make(module))


def test_the_first_parameters_hint_of_functions_partials_and_callable_objects() -> None:
    def handler(response: ModelResponse, extra: int) -> bool:
        return True  # pragma: no cover

    class Handler:
        def __call__(self, response: ModelResponse) -> bool:
            return True  # pragma: no cover

    def untyped(response):
        return True  # pragma: no cover

    assert get_first_param_type(handler) is ModelResponse
    assert get_first_param_type(partial(handler, extra=1)) is ModelResponse
    assert get_first_param_type(Handler()) is ModelResponse
    assert get_first_param_type(untyped) is None
    assert get_first_param_type(lambda: True) is None
    assert get_first_param_type(len) is None  # a builtin: no annotations to read
