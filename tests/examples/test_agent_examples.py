"""The agent examples run offline and print what they promise."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from examples.agent import mcp_stdio, output_validation, router, structured_output, tools_with_deps

ROOT = Path(__file__).parents[2]


def test_structured_output(capsys: pytest.CaptureFixture[str]) -> None:
    structured_output.main()
    assert capsys.readouterr().out == (
        "output: CityInfo(city='Lisbon', country='Portugal', population_millions=0.55)\n"
        "the model called: final_result({'city': 'Lisbon', 'country': 'Portugal', 'population_millions': 0.55})\n"
        "and was told: 'Final result processed.'\n"
        'usage: RunUsage(input_tokens=58, output_tokens=9, requests=1)\n'
    )


def test_tools_with_deps(capsys: pytest.CaptureFixture[str]) -> None:
    tools_with_deps.main()
    assert capsys.readouterr().out == (
        'Right now: Oslo -3.0 °C, Rome +14.5 °C.\n'
        '  UserPromptPart  How warm is it in Oslo and Rome?\n'
        "  ToolCallPart    {'city': 'Oslo'}\n"
        "  ToolCallPart    {'city': 'Rome'}\n"
        '  ToolReturnPart  Oslo -3.0 °C\n'
        '  ToolReturnPart  Rome +14.5 °C\n'
        '  TextPart        Right now: Oslo -3.0 °C, Rome +14.5 °C.\n'
    )


def test_output_validation(capsys: pytest.CaptureFixture[str]) -> None:
    output_validation.main()
    assert capsys.readouterr().out == (
        'query: SELECT id, name FROM users WHERE active\n'
        "retry prompt: 'Validation feedback:\\nName the columns instead of using `SELECT *`.\\n\\n"
        "Fix the errors and try again.'\n"
        'requests: 2\n'
    )


def test_router(capsys: pytest.CaptureFixture[str]) -> None:
    router.main()
    assert capsys.readouterr().out == (
        "'How should I open a chess game?' -> MatchResult(specialist='games', answer='Chess openings: start with "
        "e4 or d4.')\n"
        '  requests (commander and specialist): 3\n'
        "'My login does not work.' -> MatchResult(specialist='tickets', answer='Ticket T-42 opened for: My login "
        "does not work.')\n"
        '  requests (commander and specialist): 3\n'
    )


@pytest.mark.parametrize('module', ['structured_output', 'tools_with_deps', 'output_validation', 'router'])
def test_examples_run_as_scripts(module: str) -> None:
    completed = subprocess.run(
        [sys.executable, '-m', f'examples.agent.{module}'], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert completed.stderr == ''
    assert completed.stdout


def test_mcp_stdio(capsys: pytest.CaptureFixture[str]) -> None:
    mcp_stdio.main()
    assert capsys.readouterr().out == (
        'server: text-tools - tools: word_count, shout\n'
        "  call    text_word_count({'text': 'a'})\n"
        "  call    text_shout({'text': 'a'})\n"
        '  return  text_word_count -> 1\n'
        "  return  text_shout -> 'A!'\n"
        'output: {"text_word_count":1,"text_shout":"A!"}\n'
    )
