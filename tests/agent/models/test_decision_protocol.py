"""The Decisions protocol's data: the wire shape of questions and answers, and which answers fit their question."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from edgewise.agent.models._decision_protocol import answer_fits, wire
from edgewise.agent.models.decision import (
    ChoiceAnswer,
    ChoiceQuestion,
    DecisionAnswer,
    NoulAnswer,
    NoulCriteria,
    NoulQuestion,
    ScoreAnswer,
    ScoreQuestion,
)

CHOICE = ChoiceQuestion(criteria={'a': 'first', 'b': None}, instructions='Which?')
RUBRIC = ScoreQuestion(criteria=['none', 'some', 'all'], instructions='How much?')


def test_the_wire_shape_puts_the_type_first_and_leaves_out_what_is_unset() -> None:
    assert list(wire(NoulQuestion())) == ['type']
    assert wire(NoulQuestion(instructions={'question': 'Q'}, criteria=NoulCriteria(true='yes it is'))) == {
        'type': 'noul',
        'instructions': {'question': 'Q'},
        'criteria': {'true': 'yes it is'},
    }
    assert list(wire(CHOICE)) == ['type', 'criteria', 'instructions']
    assert wire(ScoreAnswer(score=1.0, confidence=0.5, probabilities={0: 0.0, 1: 1.0, 2: 0.0})) == {
        'type': 'score',
        'score': 1.0,
        'confidence': 0.5,
        'probabilities': {0: 0.0, 1: 1.0, 2: 0.0},
        'legend': {},
    }


@pytest.mark.parametrize(
    ('answer', 'fits'),
    [
        (NoulAnswer(noul=0.0), True),
        (NoulAnswer(noul=1.01), False),
        (NoulAnswer(noul=float('nan')), False),
        (ChoiceAnswer(choice='a', confidence=0.6, probabilities={'a': 0.6, 'b': 0.4}), False),  # a choice to a yes/no
    ],
)
def test_a_yes_no_is_answered_with_a_probability(answer: DecisionAnswer, fits: bool) -> None:
    assert answer_fits(NoulQuestion(instructions='Q'), answer) is fits


@pytest.mark.parametrize(
    ('answer', 'fits'),
    [
        (ChoiceAnswer(choice='a', confidence=0.67, probabilities={'a': 0.67, 'b': 0.33}), True),
        (ChoiceAnswer(choice='a', confidence=0.67, probabilities={'a': 0.67, 'b': 0.34}), True),  # rounded: 1.01
        (ChoiceAnswer(choice='a', confidence=0.67, probabilities={'a': 0.67, 'b': 0.4}), False),  # sums to 1.07
        (ChoiceAnswer(choice='c', confidence=0.6, probabilities={'a': 0.6, 'b': 0.4}), False),  # not offered
        (ChoiceAnswer(choice='a', confidence=0.6, probabilities={'a': 1.0}), False),  # not every option
        (ChoiceAnswer(choice='a', confidence=1.2, probabilities={'a': 0.6, 'b': 0.4}), False),
    ],
)
def test_a_choice_names_an_offered_option_with_a_distribution(answer: ChoiceAnswer, fits: bool) -> None:
    assert answer_fits(CHOICE, answer) is fits


@pytest.mark.parametrize(
    ('answer', 'fits'),
    [
        (ScoreAnswer(score=1.2, confidence=0.5, probabilities={0: 0.1, 1: 0.6, 2: 0.3}), True),
        (ScoreAnswer(score=1.21, confidence=0.5, probabilities={0: 0.1, 1: 0.6, 2: 0.3}), True),  # rounding
        (ScoreAnswer(score=1.6, confidence=0.5, probabilities={0: 0.1, 1: 0.6, 2: 0.3}), False),  # not their mean
        (ScoreAnswer(score=3.0, confidence=0.5, probabilities={0: 0.0, 1: 0.0, 2: 1.0}), False),  # past the rubric
        (ScoreAnswer(score=1.0, confidence=0.5, probabilities={0: 0.0, 1: 1.0}), False),  # a level missing
        (
            ScoreAnswer(score=1.0, confidence=0.5, probabilities={0: 0.0, 1: 1.0, 2: 0.0}, legend={0: 'none'}),
            False,
        ),
    ],
)
def test_a_score_is_the_mean_of_its_distribution(answer: ScoreAnswer, fits: bool) -> None:
    assert answer_fits(RUBRIC, answer) is fits


@given(st.lists(st.floats(min_value=0, max_value=1), min_size=3, max_size=3).filter(lambda ps: sum(ps) > 0))
def test_an_unrounded_softmax_and_its_mean_always_fit(weights: list[float]) -> None:
    total = sum(weights)
    probabilities = {level: w / total for level, w in enumerate(weights)}
    score = sum(level * p for level, p in probabilities.items())
    answer = ScoreAnswer(score=score, confidence=max(probabilities.values()), probabilities=probabilities)
    assert answer_fits(RUBRIC, answer)
