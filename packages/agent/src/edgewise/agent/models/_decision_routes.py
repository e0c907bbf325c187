"""The routes a decision model picks between: output types, output functions without arguments, `None`, and tools.

Each route is offered under one label on the route question (`route`, a pick-one): a function tool under its name,
an output route under the name the user gave it (`ToolOutput(name=...)`, a union member's name, the output type's
name or schema title, else `output`), made distinct with ` (output)`. The question's options say what each route is
for: a tool's description, an output type's docstring (or the agent's instructions for a single one), and
`None of these.` for a `None` route.

`Speculation` decides which routes' fields are asked beside the route question, so that the pick needs no second
request: all the fillable ones while their questions cost less than the second request would (a JSON-size estimate
of tokens) and fit the request's question cap; otherwise only a single output type's, and the rest are filled after
the pick.
"""

from __future__ import annotations as _annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import JsonValue

from .._tools.definition import ToolDefinition
from ..exceptions import UserError
from ..output import DEFAULT_OUTPUT_TOOL_NAME
from ._decision_fields import (
    NONE_OF_THESE,
    FieldQuestions,
    Limits,
    described,
    has_fields,
    node,
    none_route,
    properties_of,
)
from ._decision_protocol import ChoiceQuestion, DecisionQuestion

__all__ = ('ROUTE_KEY', 'Speculation', 'fillable_outputs', 'route_labels', 'route_question')

ROUTE_KEY = 'route'
"""The name of the route question in a request."""
_ROUTE_QUESTION = 'Which of these does this call for?'


def _wrapped(tool: ToolDefinition) -> dict[str, Any] | None:
    """The one property a non-object output type is wrapped in, if it is one."""
    key = tool.outer_typed_dict_key
    return properties_of(tool.parameters_json_schema).get(key) if key else None


def _purpose(tool: ToolDefinition) -> str | None:
    """What a route says about itself: its description, or a wrapped type's own (an `Enum`'s docstring)."""
    if text := described(tool):
        return text
    wrapped = _wrapped(tool)
    if wrapped is None:
        return None
    schema = tool.parameters_json_schema
    if ref := wrapped.get('$ref'):
        wrapped = {**node(schema.get('$defs', {})[ref.removeprefix('#/$defs/')]), **wrapped}
    description = wrapped.get('description')
    return description if isinstance(description, str) else None


def _output_label(tool: ToolDefinition, output_name: str | None) -> str:
    if tool.name == DEFAULT_OUTPUT_TOOL_NAME:
        wrapped = _wrapped(tool)
        if output_name and (wrapped is None or '$ref' in wrapped):
            return output_name
        schema = tool.parameters_json_schema
        title = schema.get('title')
        if (ref := schema.get('$ref')) and not title:
            title = node(schema.get('$defs', {})[ref.removeprefix('#/$defs/')]).get('title')
        return title if isinstance(title, str) and title else 'output'
    return tool.name.removeprefix(f'{DEFAULT_OUTPUT_TOOL_NAME}_') or 'output'


def route_labels(
    output_tools: list[ToolDefinition], tools: list[ToolDefinition], output_name: str | None
) -> dict[str, ToolDefinition]:
    """Every route by its label, output routes first, in the order they are offered."""
    routes = [*output_tools, *tools]
    labels = {tool.name: tool.name for tool in routes if tool.kind != 'output'}
    taken = set(labels.values())
    for tool in routes:
        if tool.kind == 'output':
            label = _output_label(tool, output_name)
            while label in taken:
                label += ' (output)'
            taken.add(label)
            labels[tool.name] = label
    return {labels[tool.name]: tool for tool in routes}


def route_question(
    routes: dict[str, ToolDefinition],
    output_tools: list[ToolDefinition],
    tools: list[ToolDefinition],
    instructions: str | None,
    limits: Limits,
) -> ChoiceQuestion:
    """The question picking a route.

    Raises:
        UserError: nothing to pick between, an output type that says nothing about itself, or more routes than the
            model's pick-one takes.
    """
    if not output_tools and len(tools) < 2:
        raise UserError(
            'An `output_type` with no fields is not supported by this model; there is nothing to ask the model. '
            'Give it fields, or more than one tool to pick between.'
        )
    criteria: dict[str, JsonValue] = {}
    for label, route in routes.items():
        if route not in output_tools:
            criteria[label] = (
                (_purpose(route) or NONE_OF_THESE) if none_route(route) else _purpose(route) or route.description
            )
            continue
        purpose = _purpose(route)
        if not (purpose or (instructions and len(output_tools) == 1)):
            raise UserError(
                f'A decision model weighs each route by what it is for, and {label!r} says nothing about itself. '
                'Give the output type a docstring that says what filling it does'
                + ('.' if len(output_tools) > 1 else ', or the agent `instructions`.')
            )
        criteria[label] = purpose or instructions
    if limits.choice_options is not None and len(criteria) > limits.choice_options:
        raise UserError(
            f'This model picks from at most {limits.choice_options} options, and it is being offered '
            f'{len(criteria)} routes: each output type counts as one beside the tools. Attach fewer tools, or '
            'withhold some of them until they are needed.'
        )
    asked: JsonValue = {'question': _ROUTE_QUESTION, 'background': instructions} if instructions else _ROUTE_QUESTION
    return ChoiceQuestion(instructions=asked, criteria=criteria)


def _fillable(tool: ToolDefinition, instructions: str | None, limits: Limits) -> bool:
    try:
        FieldQuestions.about(tool, instructions, limits, label=None)
    except UserError:
        return False
    return True


def fillable_outputs(
    output_tools: list[ToolDefinition], offered: list[ToolDefinition], instructions: str | None, limits: Limits
) -> list[ToolDefinition]:
    """The output types the model can fill.

    Raises:
        UserError: none can, and no other route is a real alternative (every answer would be a hand-off): a single
            output type's own field error, else a general one.
    """
    fillable = [tool for tool in output_tools if _fillable(tool, instructions, limits)]
    if output_tools and not fillable and not any(none_route(t) or _fillable(t, instructions, limits) for t in offered):
        if len(output_tools) == 1:
            FieldQuestions.about(output_tools[0], instructions, limits, label=None)
        raise UserError(
            'None of the output types can be filled by this model, so every answer would be handed off and '
            'the request asking which would be wasted. Give the agent an `output_type` it can fill, or drop '
            'it from this model.'
        )
    return fillable


_REQUEST_TOKENS = 260
"""About what a request costs besides its state and questions: what a second request adds."""
_SPECULATION_TOKENS = 16_000
"""The largest request asking every route's fields up front."""
_STATE_CHARS_PER_TOKEN = 6
_QUESTION_CHARS_PER_TOKEN = 4


def _tokens(value: Any, chars_per_token: int) -> float:
    return len(json.dumps(value, ensure_ascii=False)) / chars_per_token


@dataclass(frozen=True)
class Speculation:
    """The routes whose fields go beside the route question, each question keyed `'<label>.<key>'` (made unique)."""

    asked: dict[str, FieldQuestions]
    keys: dict[str, dict[str, str]]
    """Per route label: each of its question keys by the key it is sent under."""

    @classmethod
    def about(
        cls,
        routes: dict[str, ToolDefinition],
        output_tools: list[ToolDefinition],
        state: JsonValue,
        instructions: str | None,
        limits: Limits,
    ) -> Speculation:
        asked: dict[str, FieldQuestions] = {}
        for label, route in routes.items():
            if has_fields(route):
                try:
                    asked[label] = FieldQuestions.about(route, instructions, limits, label=label)
                except UserError:
                    continue  # picking it hands the step off: nothing to ask
        sizes = {
            label: sum(_tokens(dataclasses.asdict(q), _QUESTION_CHARS_PER_TOKEN) for q in a.questions.values())
            for label, a in asked.items()
        }
        state_tokens = _tokens(state, _STATE_CHARS_PER_TOKEN)
        # At most the smallest route's questions are used; all are wasted when a route with none may be taken.
        wasted = sum(sizes.values()) - (min(sizes.values()) if len(sizes) == len(routes) else 0)
        count = 1 + sum(len(a.questions) for a in asked.values())
        if (
            wasted > _REQUEST_TOKENS + state_tokens
            or state_tokens + sum(sizes.values()) > _SPECULATION_TOKENS
            or (limits.questions is not None and count > limits.questions)
        ):
            asked = {label: a for label, a in asked.items() if routes[label] in output_tools and len(output_tools) == 1}
        if limits.questions is not None and 1 + sum(len(a.questions) for a in asked.values()) > limits.questions:
            asked = {}
        keys: dict[str, dict[str, str]] = {}
        taken: set[str] = {ROUTE_KEY}
        for label, a in asked.items():
            keys[label] = {}
            for key in a.questions:
                scoped = f'{label}.{key}'
                while scoped in taken:
                    scoped += '_'
                taken.add(scoped)
                keys[label][scoped] = key
        return cls(asked, keys)

    def questions(self) -> dict[str, DecisionQuestion]:
        """Every speculated question under the key it is sent under."""
        return {
            scoped: self.asked[label].questions[key] for label, ks in self.keys.items() for scoped, key in ks.items()
        }

    def read(
        self, label: str, answers: Mapping[str, object], threshold: float
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """The taken route's arguments and details, from its own answers alone."""
        own = {key: answers.get(scoped) for scoped, key in self.keys[label].items()}
        return self.asked[label].read(own, threshold)
