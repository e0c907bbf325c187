"""A decision model backend for the tests: a real `DecisionModel` subclass whose `decide` answers from a script.

It records every `DecisionRequest` it was sent. `answer` picks, for each question, the option, probability or score
the test wants (by question key), and fills in a distribution consistent with it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from edgewise.agent.models.decision import (
    ChoiceAnswer,
    ChoiceQuestion,
    DecisionAnswer,
    DecisionModel,
    DecisionModelSettings,
    DecisionQuestion,
    DecisionRequest,
    DecisionResponse,
    NoulAnswer,
    NoulQuestion,
    ScoreAnswer,
)
from edgewise.agent.usage import RequestUsage


def answer(question: DecisionQuestion, wanted: Any = None) -> DecisionAnswer:
    """An answer to `question`: the probability, option label or score `wanted` (a default one when `None`)."""
    if isinstance(question, NoulQuestion):
        return NoulAnswer(noul=0.9 if wanted is None else wanted)
    if isinstance(question, ChoiceQuestion):
        choice = next(iter(question.criteria)) if wanted is None else wanted
        return ChoiceAnswer(
            choice=choice, confidence=0.8, probabilities={o: 0.8 if o == choice else 0.0 for o in question.criteria}
        )
    levels = len(question.criteria)
    score = 0.0 if wanted is None else float(wanted)
    low = int(score)
    probabilities = dict.fromkeys(range(levels), 0.0)
    probabilities[low] = 1 - (score - low)
    if score > low:
        probabilities[low + 1] = score - low
    return ScoreAnswer(score=score, confidence=0.7, probabilities=probabilities)


class ScriptedDecisions(DecisionModel):
    """Answers each question with `wanted[key]` (see `answer`; a list: one item per request asking it, the last one
    kept), or by calling `respond` for the whole request."""

    max_questions: ClassVar[int | None] = None

    def __init__(
        self,
        wanted: Mapping[str, Any] | None = None,
        *,
        respond: Callable[[DecisionRequest], dict[str, DecisionAnswer]] | None = None,
        profile: Any = None,
        settings: Any = None,
    ) -> None:
        super().__init__(profile=profile, settings=settings)
        self.wanted = dict(wanted or {})
        self.respond = respond
        self.requests: list[DecisionRequest] = []
        self.settings_seen: list[DecisionModelSettings] = []

    def _wanted(self, key: str) -> Any:
        wanted = self.wanted.get(key)
        if isinstance(wanted, list):  # one per request that asks it, in order
            return wanted.pop(0) if len(wanted) > 1 else wanted[0]
        return wanted

    @property
    def model_name(self) -> str:
        return 'scripted'

    @property
    def system(self) -> str:
        return 'scripted-decisions'

    @property
    def base_url(self) -> str | None:
        return 'http://decisions.invalid'

    async def decide(self, request: DecisionRequest, model_settings: DecisionModelSettings) -> DecisionResponse:
        self.requests.append(request)
        self.settings_seen.append(model_settings)
        if self.respond is not None:
            answers = self.respond(request)
        else:
            answers = {key: answer(q, self._wanted(key)) for key, q in request.questions.items()}
        return DecisionResponse(
            answers=answers, model_name='scripted-1', usage=RequestUsage(input_tokens=10, output_tokens=len(answers))
        )
