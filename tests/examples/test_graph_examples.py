"""The graph examples run and print what they promise."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from examples.graph import countdown, flagship, question_answer, traffic_light, vending_machine

ROOT = Path(__file__).parents[2]

FLAGSHIP_OUTPUT = """\
Edgewise: an order workflow, persisted after every step and finished by a second worker.

order A-1001: 2 mugs and 1 tea
  worker 1: ReceiveOrder -> ReserveStock priced 3 items at 2120 cents
  worker 1: ReserveStock -> ChargeCard   reserved 2 mug, 1 tea
  worker 1: ChargeCard   -> ChargeCard   card declined (attempt 1)
worker 1 stops; 4 snapshots saved to runs.db
  worker 2: ChargeCard   -> Ship         charged 2120 cents (attempt 2)
  worker 2: Ship         -> End          shipped, tracking TRK-A-1001
receipt: Receipt(order_id='A-1001', status='shipped', total_cents=2120, tracking='TRK-A-1001')
history:
  1. ReceiveOrder success  charge attempts so far: 0
  2. ReserveStock success  charge attempts so far: 0
  3. ChargeCard   success  charge attempts so far: 0
  4. ChargeCard   success  charge attempts so far: 1
  5. Ship         success  charge attempts so far: 2
  6. End          end      charge attempts so far: 2
"""


def test_traffic_light(capsys: pytest.CaptureFixture[str]) -> None:
    traffic_light.main()
    assert capsys.readouterr().out == (
        'Green  Cars go.\nYellow Cars slow down.\nRed    Cars stop; the cycle ends here.\nend: cycle complete\n'
    )


def test_countdown(capsys: pytest.CaptureFixture[str]) -> None:
    countdown.main()
    assert capsys.readouterr().out == (
        'next: Tick    remaining=3\n'
        'next: Tick    remaining=2\n'
        'next: Tick    remaining=1\n'
        'next: Liftoff remaining=0\n'
        'said: 3 2 1 liftoff!\n'
    )


def test_vending_machine(capsys: pytest.CaptureFixture[str]) -> None:
    vending_machine.main()
    assert capsys.readouterr().out == (
        'customer wants tea, has coins [100, 50]\n'
        '  coin 100 -> credit 100\n'
        '  tea costs 120: need more\n'
        '  coin  50 -> credit 150\n'
        '  -> dispensed tea, change 30 cents\n'
        'customer wants crisps, has coins [50, 20]\n'
        '  coin  50 -> credit 50\n'
        '  crisps costs 90: need more\n'
        '  coin  20 -> credit 70\n'
        '  crisps costs 90: need more\n'
        '  -> customer walked away; returned 70 cents\n'
        'customer wants tea, has coins [200]\n'
        '  coin 200 -> credit 200\n'
        '  -> tea is sold out; returned 200 cents\n'
        "stock left: {'tea': 0, 'crisps': 5}\n"
    )


def test_vending_machine_edges_are_labelled() -> None:
    defs = vending_machine.vending_machine.node_defs
    assert {k: v.label for k, v in defs['SelectProduct'].next_node_edges.items()} == {
        'Dispense': 'enough credit',
        'InsertCoin': 'need more',
    }
    assert defs['SelectProduct'].end_edge is not None
    assert defs['SelectProduct'].end_edge.label == 'sold out'


def test_question_answer_stops_for_input_and_resumes(capsys: pytest.CaptureFixture[str]) -> None:
    question_answer.main()
    assert capsys.readouterr().out == (
        'Q: What is the capital of France?\n'
        '-- the run is saved; a later session resumes it --\n'
        'A: Paris\n'
        "   'Paris': right\n"
        'Q: How many legs has a spider?\n'
        '-- the run is saved; a later session resumes it --\n'
        'A: 6\n'
        "   '6': wrong, it is '8'\n"
        'you scored 1/2\n'
    )


@pytest.mark.anyio
async def test_question_answer_session_without_an_answer_asks_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / 'quiz.json'
    assert await question_answer.session(path, None) is None
    assert await question_answer.session(path, None) is None
    assert capsys.readouterr().out == 'Q: What is the capital of France?\nQ: What is the capital of France?\n'


def test_flagship(capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    flagship.main()
    assert capsys.readouterr().out == FLAGSHIP_OUTPUT


def test_flagship_runs_as_a_program(tmp_path: Path) -> None:
    env = {**os.environ, 'PYTHONPATH': str(ROOT)}
    for _ in range(2):  # the second run adds its run to the same database
        done = subprocess.run(
            [sys.executable, '-m', 'examples.graph.flagship'],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        assert (done.stdout, done.stderr) == (FLAGSHIP_OUTPUT, '')


@pytest.mark.anyio
async def test_flagship_order_out_of_stock() -> None:
    shop = flagship.Shop(prices={'mug': 850}, stock={'mug': 1})
    order = flagship.Order('B-1', {'mug': 2})
    result = await flagship.order_workflow.run(flagship.ReceiveOrder(), state=order, deps=shop)
    assert result.output == flagship.Receipt('B-1', 'cancelled: out of stock', 1700)
    assert order.events == ['priced 2 items at 1700 cents', 'out of stock: mug']


@pytest.mark.anyio
async def test_flagship_payment_fails_after_three_declines() -> None:
    class Declining(flagship.Shop):
        def charge(self, cents: int, attempt: int) -> bool:
            return False

    order = flagship.Order('C-1', {'tea': 1})
    result = await flagship.order_workflow.run(
        flagship.ReceiveOrder(), state=order, deps=Declining(prices={'tea': 420}, stock={'tea': 1})
    )
    assert result.output == flagship.Receipt('C-1', 'cancelled: payment failed', 420)
    assert order.charge_attempts == 3
