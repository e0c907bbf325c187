"""`TemplateStr`: Handlebars templates (pydantic-handlebars, the `spec` extra) as an agent's instructions and
description, in agent specs (a text holding `{{`), and in the `from_spec` arguments of capabilities; checked against
the agent's deps type when made, rendered from each run's deps."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pydantic_handlebars
import pytest
from logfire.testing import CaptureLogfire
from pydantic import BaseModel, TypeAdapter, ValidationError, computed_field

from edgewise.agent import Agent, TemplateStr
from edgewise.agent.agent.spec import AgentSpec
from edgewise.agent.capabilities import AbstractCapability, Instrumentation
from edgewise.agent.exceptions import SpecError
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, TextPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.tools import RunContext


@dataclass
class Customer:
    name: str
    tier: str = 'basic'


class Account(BaseModel):
    owner: str

    @computed_field
    def initials(self) -> str:
        return ''.join(word[0] for word in self.owner.split())


def _instructions_seen() -> tuple[FunctionModel, list[str | None]]:
    seen: list[str | None] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info.instructions)
        return ModelResponse(parts=[TextPart('done')])

    return FunctionModel(answer), seen


def _sent_instructions(messages: list[ModelMessage]) -> str | None:
    first = messages[0]
    assert isinstance(first, ModelRequest)
    return first.instructions


def test_instructions_are_rendered_from_each_runs_deps() -> None:
    model, seen = _instructions_seen()
    agent = Agent(model, deps_type=Customer, instructions=TemplateStr('Serve {{name}} ({{tier}} tier).'))
    agent.run_sync('hi', deps=Customer('Ada', 'gold'))
    agent.run_sync('hi', deps=Customer('Bo'))
    assert seen == ['Serve Ada (gold tier).', 'Serve Bo (basic tier).']


def test_a_template_checked_against_a_deps_type_refuses_a_name_the_type_lacks() -> None:
    with pytest.raises(pydantic_handlebars.TemplateSchemaError, match='nmae'):
        TemplateStr('Serve {{nmae}}', deps_type=Customer)


def test_a_typed_template_renders_the_deps_as_their_type_serializes() -> None:
    # The type's serialization is what the template sees: its computed fields too.
    assert TemplateStr('{{initials}}', deps_type=Account).render(Account(owner='Cy Young')) == 'CY'


def test_an_untyped_template_renders_from_the_deps_fields_or_from_nothing() -> None:
    template: TemplateStr[Any] = TemplateStr('[{{name}}]')
    assert template.render(Customer('Di')) == '[Di]'
    assert template.render(Customer('Eve')) == '[Eve]'  # the same deps type again: its serializer is kept
    assert template.render({'name': 'Ed'}) == '[Ed]'
    assert template.render() == '[]'
    assert template.render(3) == '[]'  # deps that dump to no mapping have no names to fill in


def test_the_description_keeps_its_source_and_renders_per_run(capfire: CaptureLogfire) -> None:
    model, _ = _instructions_seen()
    agent = Agent(
        model, deps_type=Customer, description=TemplateStr('Helps {{name}}'), capabilities=[Instrumentation()]
    )
    assert agent.description == 'Helps {{name}}'
    assert agent.render_description(Customer('Flo')) == 'Helps Flo'
    agent.run_sync('hi', deps=Customer('Gus'))
    runs = [s for s in capfire.exporter.exported_spans_as_dict() if s['name'] == 'agent run']
    assert [s['attributes']['gen_ai.agent.description'] for s in runs] == ['Helps Gus']
    agent.description = 'Plain'
    assert (agent.description, agent.render_description(Customer('Hal'))) == ('Plain', 'Plain')
    agent.description = None
    assert agent.render_description(Customer('Hal')) is None


def test_an_agent_without_a_description_leaves_it_off_the_run_span(capfire: CaptureLogfire) -> None:
    model, _ = _instructions_seen()
    Agent(model, capabilities=[Instrumentation()]).run_sync('hi')
    runs = [s for s in capfire.exporter.exported_spans_as_dict() if s['name'] == 'agent run']
    assert len(runs) == 1
    assert 'gen_ai.agent.description' not in runs[0]['attributes']


def test_in_a_spec_a_text_holding_braces_is_a_template_and_any_other_stays_a_string() -> None:
    spec = AgentSpec.from_dict(
        {'model': 'test', 'description': 'Plain', 'instructions': ['Serve {{name}}', 'Be brief.']}
    )
    assert spec.description == 'Plain'
    assert type(spec.description) is str
    assert isinstance(spec.instructions, list)
    templated, plain = spec.instructions
    assert isinstance(templated, TemplateStr)
    assert templated.source == 'Serve {{name}}'
    assert type(plain) is str
    # Written out, a template is its source again.
    assert spec.model_dump(mode='json', exclude_defaults=True)['instructions'] == ['Serve {{name}}', 'Be brief.']
    schema = AgentSpec.model_json_schema_with_capabilities()['properties']
    assert {'type': 'string'} in schema['description']['anyOf']
    assert 'TemplateStr' not in str(schema)


def test_a_specs_templates_are_checked_against_its_deps_schema() -> None:
    deps_schema = {'type': 'object', 'properties': {'name': {'type': 'string'}}, 'required': ['name']}
    spec = AgentSpec.from_dict({'model': 'test', 'instructions': 'Serve {{name}}', 'deps_schema': deps_schema})
    assert isinstance(spec.instructions, TemplateStr)
    with pytest.raises(pydantic_handlebars.TemplateSchemaError, match='nom'):
        AgentSpec.from_dict({'model': 'test', 'instructions': 'Serve {{nom}}', 'deps_schema': deps_schema})


def test_from_spec_checks_and_renders_templates_with_the_agents_deps_type() -> None:
    agent = Agent.from_spec(
        {'model': 'test', 'instructions': 'Serve {{name}}', 'description': 'For {{tier}} customers'},
        deps_type=Customer,
    )
    result = agent.run_sync('hi', deps=Customer('Ivy', 'gold'))
    assert _sent_instructions(result.all_messages()) == 'Serve Ivy'
    assert agent.render_description(Customer('Ivy', 'gold')) == 'For gold customers'
    with pytest.raises(pydantic_handlebars.TemplateSchemaError, match='nmae'):
        Agent.from_spec({'model': 'test', 'instructions': 'Serve {{nmae}}'}, deps_type=Customer)


def test_a_spec_read_on_its_own_is_checked_once_an_agent_gives_it_a_deps_type(tmp_path: Path) -> None:
    path = tmp_path / 'agent.yaml'
    AgentSpec(model='test', instructions=TemplateStr('Serve {{nmae}}')).to_file(path, schema_path=None)
    assert 'Serve {{nmae}}' in path.read_text()
    spec = AgentSpec.from_file(path)  # no deps type known yet: the template is only parsed
    assert isinstance(spec.instructions, TemplateStr)
    with pytest.raises(pydantic_handlebars.TemplateSchemaError, match='nmae'):
        Agent.from_spec(spec, deps_type=Customer)
    path.write_text(path.read_text().replace('nmae', 'name'))
    fixed = Agent.from_spec(AgentSpec.from_file(path), deps_type=Customer)
    assert _sent_instructions(fixed.run_sync('hi', deps=Customer('Jo')).all_messages()) == 'Serve Jo'


def test_a_run_spec_uses_the_agents_deps_type() -> None:
    agent = Agent('test', deps_type=Customer)
    result = agent.run_sync('hi', deps=Customer('Kim'), spec={'instructions': 'Now serving {{name}}'})
    assert _sent_instructions(result.all_messages()) == 'Now serving Kim'
    with pytest.raises(pydantic_handlebars.TemplateSchemaError, match='nmae'):
        agent.run_sync('hi', deps=Customer('Kim'), spec={'instructions': 'Now serving {{nmae}}'})
    with agent.override(spec={'instructions': 'Overridden for {{name}}'}):
        result = agent.run_sync('hi', deps=Customer('Lu'))
    assert _sent_instructions(result.all_messages()) == 'Overridden for Lu'


@dataclass
class Greeting(AbstractCapability[Any]):
    text: TemplateStr[Any] | str = 'Hello'

    @classmethod
    def from_spec(cls, text: TemplateStr[Any] | str = 'Hello') -> Greeting:
        return cls(text=text)

    def get_instructions(self) -> Any:
        return self.text


def test_a_capabilitys_from_spec_arguments_hinted_as_templates_become_templates() -> None:
    spec = {'model': 'test', 'capabilities': [{'Greeting': 'Hello {{name}}'}, {'Greeting': {'text': 'Bye'}}]}
    agent = Agent.from_spec(spec, deps_type=Customer, custom_capability_types=[Greeting])
    first, second = agent._capabilities[:2]
    assert isinstance(first, Greeting)
    assert isinstance(first.text, TemplateStr)
    assert first.text.deps_type is Customer
    assert isinstance(second, Greeting)
    assert second.text == 'Bye'
    with pytest.raises(SpecError, match=r"(?s)capability 'Greeting': .*nmae"):
        Agent.from_spec(
            {'model': 'test', 'capabilities': [{'Greeting': 'Hello {{nmae}}'}]},
            deps_type=Customer,
            custom_capability_types=[Greeting],
        )


def test_template_values_compare_by_source_and_deps_type() -> None:
    template: TemplateStr[Any] = TemplateStr('Hi {{name}}')
    assert template == TemplateStr('Hi {{name}}')
    assert hash(template) == hash(TemplateStr('Hi {{name}}'))
    assert template != TemplateStr('Hi {{name}}', deps_type=Customer)
    assert template != 'Hi {{name}}'
    assert (str(template), repr(template)) == ('Hi {{name}}', "TemplateStr('Hi {{name}}')")


def test_bad_template_input_is_refused_clearly() -> None:
    with pytest.raises(TypeError, match='made from a string, not int'):
        TemplateStr(3)  # type: ignore[arg-type]
    with pytest.raises(pydantic_handlebars.HandlebarsParseError):
        TemplateStr('Hi {{#if name}}')
    adapter = TypeAdapter(TemplateStr[Any])
    with pytest.raises(ValidationError, match=r'no `\{\{`'):
        adapter.validate_python('plain text')
    with pytest.raises(ValidationError, match='must be a string, not list'):
        adapter.validate_python(['Hi {{name}}'])
    kept: TemplateStr[Any] = TemplateStr('x {{y}}')
    assert adapter.validate_python(kept) is kept


def test_without_pydantic_handlebars_a_template_says_which_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, 'pydantic_handlebars', None)
    with pytest.raises(ImportError, match=r'pip install "edgewise-agent\[spec\]"'):
        TemplateStr('Hi {{name}}')
    # Plain texts need no template engine.
    assert AgentSpec.from_dict({'model': 'test', 'instructions': 'Be brief.'}).instructions == 'Be brief.'


def test_a_template_is_a_function_of_the_run_context() -> None:
    template: TemplateStr[Customer] = TemplateStr('{{name}}', deps_type=Customer)
    model, _ = _instructions_seen()
    ctx = RunContext(deps=Customer('Mo'), model=model, usage=None)  # type: ignore[arg-type]
    assert template(ctx) == 'Mo'


def test_a_spec_object_gets_the_agents_deps_type_for_every_template_it_holds() -> None:
    spec = AgentSpec(
        model='test', description=TemplateStr('For {{tier}}'), instructions=[TemplateStr('Serve {{name}}'), 'Be brief.']
    )
    agent = Agent.from_spec(spec, deps_type=Customer)
    assert agent.render_description(Customer('Pat', 'gold')) == 'For gold'
    # (Static instructions go first, as the prefix that stays the same from run to run.)
    assert _sent_instructions(agent.run_sync('hi', deps=Customer('Pat')).all_messages()) == 'Be brief.\n\nServe Pat'
    # Without a deps type the spec's templates stay as they were made.
    untyped = Agent.from_spec(spec)
    assert untyped.render_description({'tier': 'any'}) == 'For any'


@dataclass
class Labelled(AbstractCapability[Any]):
    label: str = ''
    text: TemplateStr[Any] | str = ''

    @classmethod
    def from_spec(cls, label: str, text: TemplateStr[Any] | str = '', *, note: str = '') -> Labelled:
        return cls(label=label + note, text=text)


@dataclass
class Unresolvable(AbstractCapability[Any]):
    text: Any = ''

    @classmethod
    def from_spec(cls, text: NoSuchType = '') -> Unresolvable:  # type: ignore[name-defined]  # noqa: F821
        return cls(text=text)


def test_only_arguments_hinted_as_templates_become_templates() -> None:
    spec = {
        'model': 'test',
        'capabilities': [
            {'Labelled': 'a {{name}}'},  # the first positional argument is `label`, a plain `str`
            {'Labelled': {'label': 'b', 'text': 'for {{name}}', 'note': '!'}},
            {'Unresolvable': 'c {{name}}'},  # hints that do not resolve: the arguments go as given
        ],
    }
    agent = Agent.from_spec(spec, deps_type=Customer, custom_capability_types=[Labelled, Unresolvable])
    first, second, third = agent._capabilities[:3]
    assert isinstance(first, Labelled)
    assert first.label == 'a {{name}}'
    assert isinstance(second, Labelled)
    assert second.label == 'b!'
    assert isinstance(second.text, TemplateStr)
    assert second.text.render(Customer('Quinn')) == 'for Quinn'
    assert isinstance(third, Unresolvable)
    assert third.text == 'c {{name}}'
