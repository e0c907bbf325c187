"""The map-reduce and subgraph examples run and print what they promise."""

from __future__ import annotations

import pytest
from examples.graph import map_reduce, subgraph


def test_map_reduce(capsys: pytest.CaptureFixture[str]) -> None:
    map_reduce.main()
    assert capsys.readouterr().out == (
        '---\n'
        'title: word_count\n'
        '---\n'
        'stateDiagram-v2\n'
        '  [*] --> Scatter\n'
        '  state Scatter_fork <<fork>>\n'
        '  Scatter --> Scatter_fork\n'
        '  Scatter_fork --> CountWords\n'
        '  state Scatter_join <<join>>\n'
        '  Scatter_join --> AddUp\n'
        '  CountWords --> Scatter_join\n'
        '  AddUp --> [*]\n'
        "  branch 0: counted 4 words in 'the quick brown fox'\n"
        "  branch 1: counted 5 words in 'jumps over the lazy dog'\n"
        "  branch 2: counted 3 words in 'the dog sleeps'\n"
        '12 words; most common: the x3, dog x2\n'
        "longest in 'the quick brown fox': quick\n"
        "longest in 'jumps over the lazy dog': jumps\n"
        "longest in 'the dog sleeps': sleeps\n"
    )


def test_subgraph(capsys: pytest.CaptureFixture[str]) -> None:
    subgraph.main()
    assert capsys.readouterr().out == (
        '---\n'
        'title: orders\n'
        '---\n'
        'stateDiagram-v2\n'
        '  [*] --> Pay\n'
        '  state Pay {\n'
        '    Authorize --> Capture\n'
        '    Authorize --> [*]\n'
        '    Capture --> [*]\n'
        '  }\n'
        '  Pay --> Ship\n'
        '  Pay --> [*]\n'
        '  Ship --> [*]\n'
        '  order: Pay\n'
        '  payment: Authorize\n'
        '  payment: Capture\n'
        '  order: Ship\n'
        'teapot: shipped, 70 left in the wallet\n'
        'stored run order-42: finished, 3 snapshots\n'
        'stored run order-42/payment: finished, 3 snapshots\n'
    )
