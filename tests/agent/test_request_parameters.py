"""What the model is told about the output, as pydantic-ai 1.x tells it."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from edgewise.agent import Agent, NativeOutput, PromptedOutput
from edgewise.agent.models.test import TestModel

pytestmark = pytest.mark.anyio


class Town(BaseModel):
    name: str


@pytest.mark.parametrize(
    ('output_type', 'expected'),
    [
        (str, ('text', True)),
        (Town, ('tool', False)),
        (Town | str, ('tool', True)),
        (NativeOutput(Town), ('native', True)),
        (PromptedOutput(Town), ('prompted', True)),
    ],
    ids=['text', 'tool', 'tool-or-text', 'native', 'prompted'],
)
async def test_output_mode_and_text_allowance_sent_to_the_model(output_type: Any, expected: tuple[str, bool]) -> None:
    model = TestModel()

    await Agent(model, output_type=output_type).run('x')

    params = model.last_model_request_parameters
    assert params is not None
    assert (params.output_mode, params.allow_text_output) == expected
