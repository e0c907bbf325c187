"""How a decision model asks for a route's fields, and reads the answers back into the route's arguments.

A route (an output tool, or a function tool) has a JSON schema of arguments. `FieldQuestions.about` flattens it
(a nested model is its fields, named `outer.inner`) and makes each leaf one question, by its type:

| field | question | read back as |
|---|---|---|
| `bool` | yes/no | yes when the probability clears `decision_boolean_threshold` |
| number with `ge=0`, `le=N` (no `multiple_of`) | yes/no | the probability times `N` |
| `Literal`/`Enum` of `True`/`False` with descriptions | yes/no with criteria | as a `bool` |
| `Literal`/`Enum` of 2+ strings or whole numbers | pick-one | the option picked (with its type) |
| whole numbers 0..n-1, each described | rubric, up to the model's levels | the score, rounded half up |
| `X | None` of a pick-one | pick-one with one more option, `none` | `None`, or left out for a default |
| `list` of a pick-one of strings | one yes/no per option | the options that came back yes |
| `dict[Literal, bool]` | one yes/no per key | every key with its verdict |

Anything else is a `UserError` naming the field. Each question's `instructions` are the field's labelled parts: its
name (`field`), the route's premise when a route question picks between routes, the chain of models it sits in
(`context`), its description (`question`), the output type's docstring (`goal`) and the agent's instructions
(`background`), sent bare when there is just one of them.
"""

from __future__ import annotations as _annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from pydantic import JsonValue

from .._tools.definition import ToolDefinition
from ..exceptions import UnexpectedModelBehavior, UserError
from ..output import DEFAULT_OUTPUT_TOOL_DESCRIPTION
from ._decision_protocol import (
    ChoiceAnswer,
    ChoiceQuestion,
    DecisionQuestion,
    NoulAnswer,
    NoulCriteria,
    NoulQuestion,
    ScoreAnswer,
    ScoreQuestion,
)

__all__ = ('FieldQuestions', 'Limits', 'NONE_OF_THESE', 'described', 'has_fields', 'none_route', 'properties_of')

NONE_OF_THESE = 'None of these.'
_GENERIC_QUESTION = 'Which of these applies?'
_HINT = (
    'Use `bool`, a `Literal` or `Enum` of two or more strings or whole numbers, a `float` bounded with `ge=0` and '
    '`le=1`, a `list` of a `Literal` or `Enum`, a rubric of whole numbers from 0 with a description per level in its '
    'schema, or a model of these.'
)


@dataclass(frozen=True)
class Limits:
    """What one request to this model may hold, read once per request (`None`: no limit)."""

    choice_options: int | None
    """The most options of one pick-one."""
    score_levels: int | None
    """The most levels of one rubric (more whole numbers are a pick-one)."""
    requires_instructions: bool
    """Whether every question needs `instructions` (a generic question is sent where nothing else says it)."""
    questions: int | None
    """The most questions in one request."""


def node(schema: dict[str, Any] | bool) -> dict[str, Any]:
    """A schema as an object: `true` accepts anything (`{}`), `false` nothing (`{'not': {}}`)."""
    if isinstance(schema, bool):
        return {} if schema else {'not': {}}
    return schema


def _definition(ref: str, defs: Mapping[str, Any]) -> dict[str, Any]:
    return node(defs[ref.removeprefix('#/$defs/')])


def properties_of(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool schema's properties (through a top-level `$ref`, how a self-referencing model is rendered)."""
    if ref := schema.get('$ref'):
        schema = {**_definition(ref, schema.get('$defs', {})), **{k: v for k, v in schema.items() if k != '$ref'}}
    return cast('dict[str, Any]', schema.get('properties', {}))


def _null(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get('type') == 'null'


def none_route(tool: ToolDefinition) -> bool:
    """Whether `tool` is the `None` member of an output union: one property that can only be `null`."""
    props = list(properties_of(tool.parameters_json_schema).values())
    return tool.kind == 'output' and len(props) == 1 and _null(props[0])


def has_fields(tool: ToolDefinition) -> bool:
    """Whether a route has arguments to fill."""
    return not none_route(tool) and bool(properties_of(tool.parameters_json_schema))


def described(tool: ToolDefinition) -> str | None:
    """What the user wrote about a tool (an output tool's stock description says nothing)."""
    text = tool.description
    if not text or (tool.kind == 'output' and text.endswith(DEFAULT_OUTPUT_TOOL_DESCRIPTION)):
        return None
    return text


# --- the schema, flattened ---------------------------------------------------------------------------------------


@dataclass
class _Flattened:
    defs: Mapping[str, Any]
    leaves: dict[str, dict[str, Any]] = field(default_factory=dict[str, dict[str, Any]])
    context: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    defaulted: set[str] = field(default_factory=set[str])

    def resolve(self, prop: Any) -> dict[str, Any]:
        prop = node(prop)
        if ref := prop.get('$ref'):
            prop = {**self.resolve(_definition(ref, self.defs)), **{k: v for k, v in prop.items() if k != '$ref'}}
        for key in ('items', 'propertyNames'):
            if key in prop:
                prop = {**prop, key: self.resolve(prop[key])}
        if 'anyOf' in prop:
            prop = {**prop, 'anyOf': [self.resolve(option) for option in prop['anyOf']]}
        return cast('dict[str, Any]', prop)

    def walk(self, props: dict[str, Any], prefix: str, seen: frozenset[str], chain: list[str]) -> None:
        for name, raw_prop in props.items():
            path = f'{prefix}{name}'
            if '.' in name:
                raise UserError(
                    f'Output field {path!r} is not supported by this model: a dot in a field name is how '
                    'a nested field is named. Rename it.'
                )
            raw = node(raw_prop)
            prop = self.resolve(raw)
            if prop.get('type') == 'object' and prop.get('properties'):
                ref = raw.get('$ref')
                if ref is not None and ref in seen:
                    raise UserError(
                        f'Output field {path!r} is not supported by this model: a model that contains itself has '
                        'no end to fill. Give the field a type that does not contain itself.'
                    )
                if 'default' in prop:
                    self.defaulted.add(path)
                inner_seen = seen | {ref} if ref else seen
                self.walk(prop['properties'], f'{path}.', inner_seen, [*chain, *self._about_model(path, raw)])
                continue
            self.leaves[path] = prop
            leaf_chain = [*chain, *filter(None, [self._enum_doc(raw)])]
            if leaf_chain:
                self.context[path] = leaf_chain

    def _about_model(self, path: str, raw: dict[str, Any]) -> list[str]:
        """A nested model's own description and its class docstring, as entries of its leaves' context."""
        entries: list[str] = []
        if isinstance(own := raw.get('description'), str) and own:
            entries.append(f'{path}: {own}')
        if ref := raw.get('$ref'):
            definition = _definition(ref, self.defs)
            if isinstance(doc := definition.get('description'), str) and doc:
                entries.append(f'{definition.get("title") or ref.rsplit("/", 1)[-1]}: {doc}')
        return entries

    def _enum_doc(self, raw: dict[str, Any]) -> str | None:
        """An `Enum`'s docstring that the field's own description hides (the description is the question)."""
        own = raw.get('description')
        if not own:
            return None
        refs = [raw.get('$ref'), node(raw.get('items', {})).get('$ref')]
        refs += [node(option).get('$ref') for option in raw.get('anyOf', [])]
        for ref in filter(None, refs):
            definition = node(self.defs.get(ref.removeprefix('#/$defs/'), {}))
            doc = definition.get('description')
            if 'enum' in definition and isinstance(doc, str) and doc and doc != own:
                return f'{definition.get("title") or ref.rsplit("/", 1)[-1]}: {doc}'
        return None


# --- what a leaf is ----------------------------------------------------------------------------------------------


def _options(prop: dict[str, Any]) -> dict[Any, str | None] | None:
    """A pick-one's options with their descriptions, or `None` when the schema is not a pick-one."""
    if 'enum' in prop:
        return dict.fromkeys(prop['enum'])
    if 'anyOf' in prop and all('const' in node(option) for option in prop['anyOf']):
        return {option['const']: option.get('description') for option in prop['anyOf']}
    return None


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _pickable(options: Mapping[Any, Any]) -> bool:
    return all(isinstance(option, str) or _whole(option) for option in options)


def _labels(options: Mapping[Any, Any]) -> dict[str, Any]:
    """Each option by the label it is offered under: a string as itself, a number by its digits, made distinct
    from a string option of the same digits (`'1 (number)'`)."""
    taken = {option for option in options if isinstance(option, str)}
    labels: dict[str, Any] = {}
    for option in options:
        label = option
        if not isinstance(option, str):
            label = str(option)
            while label in taken:
                label += ' (number)'
            taken.add(label)
        labels[label] = option
    return labels


def _rubric(options: Mapping[Any, str | None], limits: Limits) -> list[str] | None:
    """The level descriptions when the options are levels 0..n-1 (n >= 2), all described, within the model's limit."""
    if not all(_whole(option) for option in options) or sorted(options) != list(range(len(options))):
        return None
    if len(options) < 2 or (limits.score_levels is not None and len(options) > limits.score_levels):
        return None
    criteria = [meaning for level in range(len(options)) if (meaning := options[level])]
    return criteria if len(criteria) == len(options) else None


def _bound(prop: dict[str, Any]) -> float | None:
    """The scale of a number field asking for a probability (`ge=0`, `le=N`), or `None`."""
    if prop.get('type') != 'number' or prop.get('minimum') != 0 or 'multipleOf' in prop:
        return None
    maximum = prop.get('maximum')
    if isinstance(maximum, (int, float)) and not isinstance(maximum, bool) and maximum > 0:
        return float(maximum)
    return None


def _mapping_keys(prop: dict[str, Any]) -> dict[Any, str | None] | None:
    """The keys of a `dict[Literal, bool]` field, or `None` when the field is not one."""
    if prop.get('type') != 'object' or prop.get('properties') or {'minProperties', 'maxProperties'} & prop.keys():
        return None
    if prop.get('additionalProperties') != {'type': 'boolean'} or not isinstance(prop.get('propertyNames'), dict):
        return None
    return _options(prop['propertyNames'])


def _optional(prop: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """`X | None` as `X` and the extra option that stands for `None`; any other field as it is, with none."""
    branches = prop.get('anyOf')
    if not branches or len(branches) != 2 or sum(map(_null, branches)) != 1:
        return prop, {}
    none = next(b for b in branches if _null(b))
    inner = next(b for b in branches if not _null(b))
    prop = {**inner, **{k: v for k, v in prop.items() if k not in ('anyOf', 'default')}}
    key = 'none'
    while key in (_options(prop) or {}):
        key += '_'
    meaning = none.get('description')
    return prop, {key: meaning if isinstance(meaning, str) and meaning else NONE_OF_THESE}


def _unsupported(name: str, why: str = '') -> UserError:
    return UserError(f'Output field {name!r} is not supported by this model{": " + why if why else "."} {_HINT}')


# --- questions -----------------------------------------------------------------------------------------------------


def _fan_out(name: str, asked: dict[str, JsonValue], options: Mapping[Any, str | None]) -> dict[str, NoulQuestion]:
    """One yes/no per option, each carrying the field's question and the option."""
    return {
        f'{name}.{option}': NoulQuestion(
            instructions={**asked, 'option': f'{option}: {meaning}' if meaning else option}
        )
        for option, meaning in options.items()
    }


def _question(name: str, prop: dict[str, Any], asked: dict[str, JsonValue], limits: Limits) -> dict[str, Any]:
    """The question(s) one leaf becomes, by key."""
    prop, none_option = _optional(prop)
    bare: JsonValue = next(iter(asked.values())) if len(asked) == 1 else (asked or None)
    if bare is None and limits.requires_instructions:
        bare = _GENERIC_QUESTION
    if prop.get('type') == 'array':
        labels = _options(node(prop.get('items', {}))) or {}
        if len(labels) < 2 or not all(isinstance(label, str) for label in labels):
            raise _unsupported(name, 'a list must be of two or more string options.')
        if 'minItems' in prop or 'maxItems' in prop:
            raise _unsupported(name)
        return _fan_out(name, asked, labels)
    options = _options(prop)
    if options and all(isinstance(o, bool) for o in options) and not any(options.values()):
        options = None  # `Literal[True, False]` with nothing said of either is a plain `bool`
    if none_option:
        if options is not None and _rubric(options, limits) is not None:
            raise UserError(
                f'Output field {name!r} is a rubric, and a rubric cannot be optional: its levels are ordered and '
                '`None` is not one of them.'
            )
        if options is None or not _pickable(options):
            raise _unsupported(name, 'only a pick-one of strings or whole numbers can be optional.')
        options = {**options, **none_option}
    if options is not None:
        return {name: _option_question(name, options, bare, limits)}
    if (keys := _mapping_keys(prop)) is not None:
        if len(keys) < 2:
            raise _unsupported(name, 'a mapping must be keyed by two or more options.')
        return _fan_out(name, asked, keys)
    if prop.get('type') == 'boolean' or _bound(prop) is not None:
        if not asked:
            raise UserError(
                f'Output field {name!r} asks the model nothing: give the field a description, or the agent '
                '`instructions` (a system prompt is judged as part of the conversation, not asked).'
            )
        return {name: NoulQuestion(instructions=bare)}
    raise _unsupported(name)


def _option_question(name: str, options: dict[Any, str | None], asked: JsonValue, limits: Limits) -> DecisionQuestion:
    if (levels := _rubric(options, limits)) is not None:
        return ScoreQuestion(instructions=asked, criteria=cast('list[JsonValue]', levels))
    if len(options) == 2 and all(isinstance(option, bool) for option in options):
        return NoulQuestion(instructions=asked, criteria=NoulCriteria(true=options[True], false=options[False]))
    if len(options) < 2 or not _pickable(options):
        raise _unsupported(name, 'its options are not two or more strings or whole numbers.')
    if limits.choice_options is not None and len(options) > limits.choice_options:
        raise UserError(
            f'Output field {name!r} is not supported by this model: it picks from at most '
            f'{limits.choice_options} options, and this one has {len(options)}.'
        )
    return ChoiceQuestion(instructions=asked, criteria={label: options[o] for label, o in _labels(options).items()})


def _asked(
    name: str,
    prop: dict[str, Any],
    tool: ToolDefinition,
    instructions: str | None,
    *,
    label: str | None,
    context: list[str],
) -> dict[str, JsonValue]:
    """What a field asks, as labelled parts (see the module docstring); only what the user wrote."""
    parts: dict[str, JsonValue] = {}
    if name != tool.outer_typed_dict_key:  # the wrapper key of a bare output says nothing
        parts['field'] = name
    if label is not None:
        premise = f"If the user's request calls for {label}"
        parts['premise'] = f'{premise}: {purpose}' if (purpose := described(tool)) else f'{premise}.'
    if context:
        parts['context'] = cast('list[JsonValue]', context)
    if description := prop.get('description'):
        parts['question'] = description
    if label is None and (goal := described(tool)):
        parts['goal'] = goal
    if instructions:
        parts['question' if not {'question', 'field'} & parts.keys() else 'background'] = instructions
    return parts


# --- answers -------------------------------------------------------------------------------------------------------


def verdict(probability: float, threshold: float) -> tuple[bool, float]:
    """Whether a probability of yes clears the threshold, and how sure that is: the distance from the threshold,
    scaled to 0..1 on the side it fell."""
    if not 0 <= probability <= 1:
        raise UnexpectedModelBehavior(f'Unexpected probability from the model: {probability!r}')
    if probability >= threshold:
        sureness = (probability - threshold) / (1 - threshold) if threshold < 1 else 0.0
    else:
        sureness = (threshold - probability) / threshold
    return probability >= threshold, round(sureness, 6)


def _slot(args: dict[str, Any], name: str) -> tuple[dict[str, Any], str]:
    *outer, leaf = name.split('.')
    for part in outer:
        args = args.setdefault(part, {})
    return args, leaf


def _put(args: dict[str, Any], name: str, value: Any) -> None:
    parent, leaf = _slot(args, name)
    parent[leaf] = value


def _drop_unanswered(args: dict[str, Any], leaves: Mapping[str, Any], defaulted: frozenset[str], prefix: str) -> bool:
    """Leave out a defaulted nested model nothing under which was answered (its default applies); whether `args`
    holds an answer."""
    answered = False
    for key, value in list(args.items()):
        path = f'{prefix}{key}'
        if path in leaves or (isinstance(value, dict) and _drop_unanswered(value, leaves, defaulted, f'{path}.')):
            answered = True
        elif path in defaulted:
            del args[key]
    return answered


@dataclass
class _Reading:
    args: dict[str, Any] = field(default_factory=dict[str, Any])
    confidence: dict[str, float] = field(default_factory=dict[str, float])
    probabilities: dict[str, dict[str, float]] = field(default_factory=dict[str, dict[str, float]])
    scores: dict[str, float] = field(default_factory=dict[str, float])

    def fanned(
        self, name: str, options: Mapping[Any, Any], answers: Mapping[str, object], threshold: float
    ) -> dict[Any, bool]:
        raw: dict[Any, float] = {}
        for option in options:
            answer = answers.get(f'{name}.{option}')
            if not isinstance(answer, NoulAnswer):
                raise UnexpectedModelBehavior(
                    f'Unexpected answer from the model for output field {name!r}, option {option!r}: {answer!r}'
                )
            raw[option] = answer.noul
        verdicts = {option: verdict(p, threshold) for option, p in raw.items()}
        self.confidence[name] = min(sure for _, sure in verdicts.values())
        self.probabilities[name] = {str(option): p for option, p in raw.items()}
        return {option: yes for option, (yes, _) in verdicts.items()}


@dataclass(frozen=True)
class FieldQuestions:
    """One route's fields as questions, and how their answers become its arguments."""

    leaves: dict[str, dict[str, Any]]
    questions: dict[str, DecisionQuestion]
    defaulted: frozenset[str]

    @classmethod
    def about(
        cls, tool: ToolDefinition, instructions: str | None, limits: Limits, *, label: str | None
    ) -> FieldQuestions:
        """The questions of `tool`'s fields; `label` is the route's label when a route question is asked.

        Raises:
            UserError: a field the model cannot express.
        """
        schema = tool.parameters_json_schema
        flat = _Flattened(schema.get('$defs', {}))
        flat.walk(properties_of(schema), '', frozenset(), [])
        questions: dict[str, DecisionQuestion] = {}
        for name, prop in flat.leaves.items():
            asked = _asked(name, prop, tool, instructions, label=label, context=flat.context.get(name, []))
            questions.update(_question(name, prop, asked, limits))
        return cls(flat.leaves, questions, frozenset(flat.defaulted))

    @classmethod
    def to_fill(
        cls, tool: ToolDefinition, instructions: str | None, limits: Limits, *, label: str
    ) -> FieldQuestions | None:
        """The questions filling a picked route, or `None` when the model cannot fill it (a hand-off)."""
        try:
            asked = cls.about(tool, instructions, limits, label=label)
        except UserError:
            return None
        if limits.questions is not None and len(asked.questions) > limits.questions:
            return None
        return asked

    def read(self, answers: Mapping[str, object], threshold: float) -> tuple[dict[str, Any], dict[str, Any]]:
        """The route's arguments, and `provider_details` (`confidence`, `probabilities`, `scores` by field).

        Raises:
            UnexpectedModelBehavior: an answer is missing or of the wrong kind.
        """
        reading = _Reading()
        for name, declared in self.leaves.items():
            prop, none_option = _optional(declared)
            if (keys := _mapping_keys(prop)) is not None:
                _put(reading.args, name, reading.fanned(name, keys, answers, threshold))
                continue
            if prop.get('type') == 'array':
                picked = reading.fanned(name, _options(node(prop['items'])) or {}, answers, threshold)
                _put(reading.args, name, [option for option, yes in picked.items() if yes])
                continue
            answer = answers.get(name)
            question = self.questions[name]
            if isinstance(question, NoulQuestion) and isinstance(answer, NoulAnswer):
                if (scale := _bound(prop)) is not None:
                    _put(reading.args, name, answer.noul * scale)
                else:
                    yes, reading.confidence[name] = verdict(answer.noul, threshold)
                    _put(reading.args, name, yes)
            elif isinstance(question, ChoiceQuestion) and isinstance(answer, ChoiceAnswer):
                if answer.choice not in none_option:
                    _put(reading.args, name, _labels(_options(prop) or {}).get(answer.choice, answer.choice))
                elif 'default' in declared:
                    _slot(reading.args, name)  # left out: its default applies
                else:
                    _put(reading.args, name, None)
                reading.confidence[name] = answer.confidence
                reading.probabilities[name] = dict(answer.probabilities)
            elif isinstance(question, ScoreQuestion) and isinstance(answer, ScoreAnswer):
                # The score sits between levels: the nearest one, a half going up.
                _put(reading.args, name, min(int(answer.score + 0.5), max(answer.probabilities)))
                reading.confidence[name] = answer.confidence
                reading.probabilities[name] = {str(level): p for level, p in answer.probabilities.items()}
                reading.scores[name] = answer.score
            else:
                raise UnexpectedModelBehavior(f'Unexpected answer from the model for output field {name!r}: {answer!r}')
        _drop_unanswered(reading.args, self.leaves, self.defaulted, '')
        details = {'confidence': reading.confidence, 'probabilities': reading.probabilities, 'scores': reading.scores}
        return reading.args, details
