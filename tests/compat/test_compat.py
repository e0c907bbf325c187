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
import re
import runpy
from pathlib import Path

import pytest

from ._normalize import normalize

HERE = Path(__file__).parent
CHANGED_IN_2X = {
    # pydantic-ai 2.x answers a response's tool calls in the order they were made ('graceful', the 2.x default):
    'agent_prompts_strategies': "under end_strategy='graceful', the log tool's return comes before the output's; "
    "under 'exhaustive', a later output call is told its value is not the result",
    'agent_tools_limits': "an unknown tool's retry prompt comes where its call was made, not after the others",
    # pydantic-ai 2.x answers a response with nothing to act on with a retry prompt (1.x sent an empty request):
    'agent_iter_testing': "an empty response is answered with 'Please return text.' (and the request counts it)",
}
LINES_CHANGED_IN_2X: dict[str, tuple[list[str], list[str]]] = {
    'agent_iter_testing': (
        [],
        ["  retry-prompt content='Please return text.' tool_name=None tool_call_id='pyd_ai_<id>'"],
    ),
    'agent_prompts_strategies': (
        ["  tool-return content='Final result processed.' tool_name='final_result' tool_call_id='o2'"],
        [
            "  tool-return content='Output tool processed, but its value will not be the final result of the agent "
            "run.' tool_name='final_result' tool_call_id='o2'"
        ],
    ),
}
"""The lines of 1.107's output a scenario no longer prints on 2.x, and those it prints instead (the rest are 1.107's
lines, some in another order or with other token counts). Checked against pydantic-ai 2.33, which prints the same
but for the links to its documentation it adds to some errors."""
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
    if scenario.stem in CHANGED_IN_2X:  # 1.107's lines, some in another order, with the lines 2.x changed
        removed, added = LINES_CHANGED_IN_2X.get(scenario.stem, ([], []))
        now = [line for line in expected.splitlines() if line not in added]
        before = [line for line in reference.splitlines() if line not in removed]
        assert (len(now), len(before)) == (
            len(expected.splitlines()) - len(added),
            len(reference.splitlines()) - len(removed),
        )
        assert sorted(_tokens_blanked(now)) == sorted(_tokens_blanked(before))
    assert normalize(out.getvalue()) == expected


def _tokens_blanked(lines: list[str]) -> list[str]:
    """`lines` with token counts blanked out (a request that holds one more prompt counts more input tokens)."""
    return [re.sub(r'input_tokens=\d+', 'input_tokens=<n>', line) for line in lines]


def test_every_scenario_has_its_expected_output() -> None:
    expected = sorted(p.stem for p in (HERE / 'expected').glob('*.txt'))
    assert expected == [p.stem for p in SCENARIOS]
    assert sorted(p.stem for p in (HERE / 'expected_2x').glob('*.txt')) == sorted(CHANGED_IN_2X)
