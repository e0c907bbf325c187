"""Drop-in compatibility: user programs written for pydantic-graph / pydantic-ai 1.x, run on Edgewise.

Each scenario in scenarios/ is a small program exercising a documented part of the API. Its expected output
in expected/ was produced by running the same program, with `pydantic_graph` / `pydantic_ai` imports, under
pydantic-graph and pydantic-ai-slim 1.107.10 (`python -m tests.compat.regenerate` redoes it). Here it runs
on Edgewise and must print the same thing, once timestamps, durations and random ids are blanked out.

Where Edgewise follows a behaviour pydantic-ai 2.x changed on purpose, the scenario's output as Edgewise prints
it is kept in expected_2x/ beside the untouched 1.107 reference, and `CHANGED_IN_2X` says what differs.
"""

from __future__ import annotations

import contextlib
import io
import os
import runpy
from pathlib import Path

import pytest

from ._normalize import normalize

HERE = Path(__file__).parent
CHANGED_IN_2X = {
    # pydantic-ai 2.x answers a response's tool calls in the order they were made ('graceful', the 2.x default):
    'agent_prompts_strategies': "under end_strategy='graceful', the log tool's return comes before the output's",
    'agent_tools_limits': "an unknown tool's retry prompt comes where its call was made, not after the others",
}
SCENARIOS = sorted(p for p in (HERE / 'scenarios').glob('*.py') if not p.name.startswith('_'))


@pytest.mark.parametrize('scenario', SCENARIOS, ids=lambda p: p.stem)
def test_scenario_prints_what_the_reference_printed(
    scenario: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        runpy.run_path(os.fspath(scenario), run_name='__main__')

    folder = 'expected_2x' if scenario.stem in CHANGED_IN_2X else 'expected'
    reference = (HERE / 'expected' / f'{scenario.stem}.txt').read_text()
    expected = (HERE / folder / f'{scenario.stem}.txt').read_text()
    if scenario.stem in CHANGED_IN_2X:  # the same lines as 1.107's, only some in another order
        assert sorted(expected.splitlines()) == sorted(reference.splitlines())
    assert normalize(out.getvalue()) == expected


def test_every_scenario_has_its_expected_output() -> None:
    expected = sorted(p.stem for p in (HERE / 'expected').glob('*.txt'))
    assert expected == [p.stem for p in SCENARIOS]
    assert sorted(p.stem for p in (HERE / 'expected_2x').glob('*.txt')) == sorted(CHANGED_IN_2X)
