"""Drop-in compatibility: user programs written for pydantic-graph / pydantic-ai 1.x, run on Edgewise.

Each scenario in scenarios/ is a small program exercising a documented part of the API. Its expected output
in expected/ was produced by running the same program, with `pydantic_graph` / `pydantic_ai` imports, under
pydantic-graph and pydantic-ai-slim 1.107.10 (`python -m tests.compat.regenerate` redoes it). Here it runs
on Edgewise and must print the same thing, once timestamps, durations and random ids are blanked out.
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
SCENARIOS = sorted(p for p in (HERE / 'scenarios').glob('*.py') if not p.name.startswith('_'))


@pytest.mark.parametrize('scenario', SCENARIOS, ids=lambda p: p.stem)
def test_scenario_prints_what_the_reference_printed(
    scenario: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        runpy.run_path(os.fspath(scenario), run_name='__main__')

    assert normalize(out.getvalue()) == (HERE / 'expected' / f'{scenario.stem}.txt').read_text()


def test_every_scenario_has_its_expected_output() -> None:
    expected = sorted(p.stem for p in (HERE / 'expected').glob('*.txt'))
    assert expected == [p.stem for p in SCENARIOS]
