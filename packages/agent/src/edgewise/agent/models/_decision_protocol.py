"""The Decisions protocol's data: typed questions about a state, the answers a decision model gives, and the checks
that an answer fits its question (re-exported by `models.decision`).

A question is one of three kinds: a yes/no (`NoulQuestion`, answered with the probability of yes), a pick-one
(`ChoiceQuestion`, answered with a label and a distribution over the labels) and a rubric (`ScoreQuestion`, answered
with an expected level and a distribution over the levels). `wire` gives the JSON shape a question or answer has on
the wire; `answer_fits` says whether an answer a backend sent can be an answer to the question it was asked.
"""

from __future__ import annotations as _annotations

import dataclasses
import json
from dataclasses import dataclass, field
from math import isfinite
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import Field, JsonValue

from .._messages.content import BinaryContent
from .._messages.model_messages import ModelMessage
from .._messages.usage_counts import RequestUsage

__all__ = (
    'ChoiceAnswer',
    'ChoiceQuestion',
    'DecisionAnswer',
    'DecisionQuestion',
    'DecisionRequest',
    'DecisionResponse',
    'NoulAnswer',
    'NoulCriteria',
    'NoulQuestion',
    'ScoreAnswer',
    'ScoreQuestion',
    'WireAnswer',
    'WireQuestion',
    'answer_fits',
    'as_text',
    'wire',
)


@dataclass(kw_only=True)
class NoulCriteria:
    """What each answer of a yes/no means, where the question says."""

    true: JsonValue = None
    """What a yes stands for."""
    false: JsonValue = None
    """What a no stands for."""


@dataclass(kw_only=True)
class NoulQuestion:
    """A yes/no question; its answer is how likely yes is."""

    instructions: JsonValue = None
    """What is to be decided about the state."""
    criteria: NoulCriteria | None = None
    """What a yes and a no stand for, if said."""
    type: Literal['noul'] = 'noul'
    """The question's kind on the wire."""


@dataclass(kw_only=True)
class ChoiceQuestion:
    """A question answered by picking one of several labelled options."""

    criteria: dict[str, JsonValue]
    """Each option's label and what it stands for."""
    instructions: JsonValue = None
    """What is to be decided about the state."""
    type: Literal['choice'] = 'choice'
    """The question's kind on the wire."""


@dataclass(kw_only=True)
class ScoreQuestion:
    """A question answered by placing the state on an ordered rubric."""

    criteria: list[JsonValue]
    """What each level means, level 0 first."""
    instructions: JsonValue = None
    """What is to be decided about the state."""
    type: Literal['score'] = 'score'
    """The question's kind on the wire."""


DecisionQuestion: TypeAlias = NoulQuestion | ChoiceQuestion | ScoreQuestion
"""Any question of the Decisions protocol."""


@dataclass(kw_only=True)
class NoulAnswer:
    """How likely the answer to a yes/no is yes."""

    noul: float
    """The probability of yes, between 0 and 1."""
    type: Literal['noul'] = 'noul'
    """The answer's kind on the wire."""


@dataclass(kw_only=True)
class ChoiceAnswer:
    """The option picked, with the distribution it was picked from."""

    choice: str
    """The label of the option picked."""
    confidence: float
    """How sure the model is of the pick, between 0 and 1."""
    probabilities: dict[str, float]
    """The probability of every option, by label."""
    type: Literal['choice'] = 'choice'
    """The answer's kind on the wire."""


@dataclass(kw_only=True)
class ScoreAnswer:
    """Where the state sits on a rubric, with the distribution over its levels."""

    score: float
    """The expected level: a position along the rubric, possibly between two levels."""
    confidence: float
    """How sure the model is of the score, between 0 and 1."""
    probabilities: dict[int, float]
    """The probability of every level."""
    legend: dict[int, JsonValue] = field(default_factory=dict[int, JsonValue])
    """The levels' descriptions, when the backend sends them back; kept as received, never read for the output."""
    type: Literal['score'] = 'score'
    """The answer's kind on the wire."""


DecisionAnswer: TypeAlias = NoulAnswer | ChoiceAnswer | ScoreAnswer
"""Any answer of the Decisions protocol."""

WireAnswer = Annotated[DecisionAnswer, Field(discriminator='type')]
"""An answer as a backend sends it, told apart by its `type` (for validating a JSON body)."""
WireQuestion = Annotated[DecisionQuestion, Field(discriminator='type')]
"""A question as it is sent, told apart by its `type`."""


@dataclass(kw_only=True)
class DecisionRequest:
    """One request to a decision model: the state to judge and the named questions about it."""

    state: JsonValue
    """The text, or JSON value, the questions are about."""
    questions: dict[str, DecisionQuestion]
    """The questions, by the name their answers come back under."""
    images: tuple[BinaryContent, ...] = ()
    """Images referred to as `<image N>` in `state`, in that order. A backend without image input refuses any."""
    messages: list[ModelMessage] = field(default_factory=list[ModelMessage])
    """The conversation the state was made from (empty when `decide` is called with a state alone), for a backend
    that takes a conversation as it is."""


@dataclass(kw_only=True)
class DecisionResponse:
    """A decision model's answers to a `DecisionRequest`."""

    answers: dict[str, DecisionAnswer]
    """The answers, by question name."""
    model_name: str
    """The model that answered."""
    usage: RequestUsage = field(default_factory=RequestUsage)
    """What the request used."""
    provider_response_id: str | None = None
    """The backend's id of the request, when it sends one."""


def as_text(value: JsonValue) -> str:
    """A protocol value as the text an API takes: a string as it is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def wire(value: DecisionQuestion | DecisionAnswer) -> dict[str, Any]:
    """A question or answer as the protocol's JSON: `type` first, fields that are `None` left out (a yes/no's
    undescribed side included)."""
    out: dict[str, Any] = {'type': value.type}
    for f in dataclasses.fields(value):
        item = getattr(value, f.name)
        if f.name == 'type' or item is None:
            continue
        if isinstance(item, NoulCriteria):
            item = {side: meaning for side in ('true', 'false') if (meaning := getattr(item, side)) is not None}
        out[f.name] = item
    return out


ROUNDING_SLACK = 0.005
"""Half a unit of the second decimal: how far a probability a backend rounds for display may be off."""
FLOAT_SLACK = 1e-6
"""How far an unrounded probability (a float32 softmax) may be off, on top of rounding."""


def _probability(value: float) -> bool:
    return isfinite(value) and 0 <= value <= 1


def _distribution_fits(confidence: float, probabilities: dict[Any, float]) -> bool:
    """Whether a confidence and a distribution are probabilities, the distribution summing to one (give or take the
    rounding of each of its values)."""
    values = list(probabilities.values())
    if not (_probability(confidence) and all(_probability(p) for p in values)):
        return False
    return abs(sum(values) - 1) <= FLOAT_SLACK + len(values) * ROUNDING_SLACK


def _score_fits(question: ScoreQuestion, answer: ScoreAnswer) -> bool:
    levels = range(len(question.criteria))
    if answer.probabilities.keys() != set(levels) or (answer.legend and answer.legend.keys() != set(levels)):
        return False
    if not (isfinite(answer.score) and 0 <= answer.score <= levels[-1]):
        return False
    if not _distribution_fits(answer.confidence, answer.probabilities):
        return False
    # The score is the distribution's mean; each rounded probability may be off by its slack, so the mean may be
    # off by that slack times the level, summed, and the displayed score by its own rounding.
    mean = sum(level * answer.probabilities[level] for level in levels)
    slack = sum(level * (ROUNDING_SLACK + FLOAT_SLACK) for level in levels) + ROUNDING_SLACK + FLOAT_SLACK
    return abs(mean - answer.score) <= slack


def answer_fits(question: DecisionQuestion, answer: DecisionAnswer) -> bool:
    """Whether `answer` can be the answer to `question`: of its kind, naming what was offered, with probabilities
    that are probabilities (rounded to two decimals, or unrounded floats)."""
    if isinstance(question, NoulQuestion):
        return isinstance(answer, NoulAnswer) and _probability(answer.noul)
    if isinstance(question, ChoiceQuestion):
        return (
            isinstance(answer, ChoiceAnswer)
            and answer.choice in question.criteria
            and answer.probabilities.keys() == question.criteria.keys()
            and _distribution_fits(answer.confidence, answer.probabilities)
        )
    return isinstance(answer, ScoreAnswer) and _score_fits(question, answer)
