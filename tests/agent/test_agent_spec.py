"""Agent specs: `Agent.from_spec` / `Agent.from_file` build agents from a dict, JSON or YAML; a spec given to a run
or an override adds to it; capabilities are built by name from the registry; bad specs fail naming what is wrong."""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pydantic
import pytest

from edgewise.agent import Agent, AgentSpec, RunContext
from edgewise.agent.agent.spec import get_capability_registry, load_capability_from_nested_spec
from edgewise.agent.capabilities import (
    CAPABILITY_TYPES,
    AbstractCapability,
    IncludeToolReturnSchemas,
    Instrumentation,
    PrepareTools,
    ToolSearch,
)
from edgewise.agent.exceptions import SpecError, UnexpectedModelBehavior, UserError
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel

pytestmark = pytest.mark.anyio


def _instructions_seen(seen: list[str | None]) -> FunctionModel:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        request = messages[-1]
        assert isinstance(request, ModelRequest)
        seen.append(request.instructions)
        return ModelResponse(parts=[TextPart('done')])

    return FunctionModel(answer)


def _always_invalid_output(calls: list[int]) -> FunctionModel:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls.append(1)
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, '{"wrong": 1}')])

    return FunctionModel(answer)


@dataclass
class Answer:
    value: int


@dataclass
class Shout(AbstractCapability[Any]):
    """A custom capability: adds an instruction."""

    word: str = 'HEY'

    def get_instructions(self) -> str:
        return f'Say {self.word}.'


async def test_an_agent_from_a_dict_takes_the_spec_fields() -> None:
    seen: list[str | None] = []
    agent = Agent.from_spec(
        {
            'model': 'test',
            'name': 'helper',
            'instructions': ['Be brief.', 'Be kind.'],
            'model_settings': {'temperature': 0.5},
            'metadata': {'team': 'a'},
            'end_strategy': 'exhaustive',
        },
        model=_instructions_seen(seen),
    )
    result = await agent.run('hi')
    assert (agent.name, agent.end_strategy, agent.model_settings) == ('helper', 'exhaustive', {'temperature': 0.5})
    assert result.metadata == {'team': 'a'}
    assert seen == ['Be brief.\nBe kind.']


async def test_arguments_win_over_the_spec_and_add_instructions_and_capabilities() -> None:
    seen: list[str | None] = []
    agent = Agent.from_spec(
        {'model': 'test', 'name': 'spec-name', 'instructions': 'From the spec.', 'model_settings': {'seed': 1}},
        model=_instructions_seen(seen),
        name='arg-name',
        instructions='From the argument.',
        model_settings={'temperature': 0.1},
        capabilities=[Shout()],
    )
    await agent.run('hi')
    assert agent.name == 'arg-name'
    assert agent.model_settings == {'seed': 1, 'temperature': 0.1}
    assert seen == ['From the spec.\nFrom the argument.\nSay HEY.']


def test_a_spec_without_a_model_needs_the_model_argument() -> None:
    with pytest.raises(UserError, match='`model` must be provided either in the spec or as a keyword argument'):
        Agent.from_spec({'name': 'no-model'})


async def test_spec_retries_set_the_budgets_and_an_argument_overrides_one() -> None:
    calls: list[int] = []
    agent = Agent.from_spec(
        {'model': 'test', 'retries': {'output': 3, 'tools': 4}},
        model=_always_invalid_output(calls),
        output_type=Answer,
        retries={'output': 0},
    )
    with pytest.raises(UnexpectedModelBehavior, match=r'Exceeded maximum output retries \(0\)'):
        await agent.run('hi')
    assert calls == [1]


async def test_an_output_schema_gives_the_output_type() -> None:
    schema = {'type': 'object', 'properties': {'city': {'type': 'string'}}, 'required': ['city']}
    agent = Agent.from_spec({'model': 'test', 'output_schema': schema}, model=TestModel())
    result = await agent.run('where?')
    assert result.output == {'city': 'a'}


async def test_capabilities_are_built_by_name_in_all_three_forms() -> None:
    agent = Agent.from_spec(
        {
            'model': 'test',
            'capabilities': [
                'IncludeToolReturnSchemas',
                {'ToolSearch': {'max_results': 3}},
                {'NativeTool': {'kind': 'web_search'}},
                {'Instrumentation': {'include_content': False}},
            ],
        }
    )
    include, search, native, instrumentation = agent._capabilities
    assert include == IncludeToolReturnSchemas()
    assert search == ToolSearch(max_results=3)
    assert type(native).__name__ == 'NativeTool'
    assert isinstance(instrumentation, Instrumentation)
    assert instrumentation.settings.include_content is False


async def test_custom_capability_types_can_be_named() -> None:
    seen: list[str | None] = []
    agent = Agent.from_spec(
        {'capabilities': [{'Shout': 'HELLO'}]}, model=_instructions_seen(seen), custom_capability_types=[Shout]
    )
    await agent.run('hi')
    assert seen == ['Say HELLO.']


def test_an_unknown_capability_names_itself_and_the_valid_choices() -> None:
    with pytest.raises(SpecError, match=r"Capability 'Shout' is not in the provided `custom_capability_types`") as info:
        Agent.from_spec({'model': 'test', 'capabilities': ['Shout']})
    assert "'ToolSearch'" in str(info.value)
    assert isinstance(info.value, ValueError)


def test_bad_capability_arguments_name_the_capability() -> None:
    with pytest.raises(SpecError, match=r"Failed to instantiate capability 'ToolSearch': .*'colour'"):
        Agent.from_spec({'model': 'test', 'capabilities': [{'ToolSearch': {'colour': 'red'}}]})


def test_a_malformed_spec_names_the_field() -> None:
    with pytest.raises(pydantic.ValidationError, match='end_strategy'):
        Agent.from_spec({'model': 'test', 'end_strategy': 'whenever'})
    with pytest.raises(pydantic.ValidationError, match='Expected a single key containing the class name'):
        AgentSpec.from_dict({'capabilities': [{'ToolSearch': {}, 'NativeTool': {}}]})


def test_capabilities_taking_functions_cannot_come_from_specs() -> None:
    assert PrepareTools.get_serialization_name() is None
    assert {'NativeTool', 'IncludeToolReturnSchemas', 'Instrumentation', 'ToolSearch'} | {
        'ImageGeneration',
        'Thinking',
        'WebFetch',
        'WebSearch',
        'XSearch',
    } <= set(CAPABILITY_TYPES)
    taking_objects = {'PrepareTools', 'PrepareOutputTools', 'ProcessHistory', 'Hooks', 'Toolset', 'UseThreadExecutor'}
    assert not taking_objects & set(CAPABILITY_TYPES)
    with pytest.raises(ValueError, match='Custom capability class PrepareTools has opted out of serialization'):
        get_capability_registry([PrepareTools])
    with pytest.raises(ValueError, match='must be subclasses of AbstractCapability'):
        get_capability_registry([Answer])  # type: ignore[list-item]


def test_a_nested_capability_spec_uses_the_default_registry_outside_a_spec() -> None:
    assert load_capability_from_nested_spec({'ToolSearch': {'max_results': 2}}) == ToolSearch(max_results=2)
    with pytest.warns(DeprecationWarning, match="'BuiltinTool' is deprecated, use 'NativeTool'"):
        tool = load_capability_from_nested_spec({'BuiltinTool': {'kind': 'web_search'}})
    assert type(tool).__name__ == 'NativeTool'


def test_json_and_yaml_files_load_alike(tmp_path: Path) -> None:
    data = {'model': 'test', 'name': 'filed', 'capabilities': [{'ToolSearch': {'max_results': 4}}]}
    (tmp_path / 'agent.json').write_text(json.dumps(data))
    (tmp_path / 'agent.yml').write_text('model: test\nname: filed\ncapabilities:\n  - ToolSearch: {max_results: 4}\n')
    from_json = Agent.from_file(tmp_path / 'agent.json')
    from_yaml = Agent.from_file(tmp_path / 'agent.yml')
    assert from_json.name == from_yaml.name == 'filed'
    assert from_json._capabilities == from_yaml._capabilities == [ToolSearch(max_results=4)]
    (tmp_path / 'agent.txt').write_text('{}')
    with pytest.raises(ValueError, match=r"Could not infer format for filename 'agent\.txt'"):
        Agent.from_file(tmp_path / 'agent.txt')
    assert Agent.from_file(tmp_path / 'agent.txt', fmt='json', model='test').model == 'test'


@pytest.mark.parametrize('fmt', ['json', 'yaml'])
def test_a_spec_written_to_a_file_reads_back_with_its_schema(tmp_path: Path, fmt: str) -> None:
    spec = AgentSpec.from_dict(
        {
            'model': 'test',
            'instructions': 'Be brief.',
            'capabilities': ['IncludeToolReturnSchemas', {'ToolSearch': {'max_results': 2}}],
        }
    )
    path = tmp_path / f'agent.{fmt}'
    spec.to_file(path)
    text = path.read_text()
    assert 'agent_schema.json' in text
    assert 'IncludeToolReturnSchemas' in text
    assert 'end_strategy' not in text
    assert AgentSpec.from_file(path).model_dump(exclude={'json_schema_path'}) == spec.model_dump(
        exclude={'json_schema_path'}
    )
    schema = json.loads((tmp_path / 'agent_schema.json').read_text())
    assert schema['properties']['$schema'] == {'type': 'string'}
    names = json.dumps(schema['properties']['capabilities'])
    assert all(name in names for name in CAPABILITY_TYPES)


@pytest.mark.parametrize(
    ('name', 'text', 'kind'), [('agent.json', '[{"model": "test"}]', 'list'), ('agent.yaml', '', 'NoneType')]
)
def test_a_spec_file_that_holds_no_object_is_refused(tmp_path: Path, name: str, text: str, kind: str) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(UserError, match=f'^Agent spec must parse to an object, got {kind}$'):
        AgentSpec.from_file(tmp_path / name)


@pytest.mark.parametrize('fmt', ['json', 'yaml'])
def test_an_absolute_schema_path_in_the_spec_folder_is_referenced_relatively(tmp_path: Path, fmt: str) -> None:
    (tmp_path / 'schemas').mkdir()
    AgentSpec(model='test').to_file(tmp_path / f'agent.{fmt}', schema_path=tmp_path / 'schemas' / 'spec.json')
    text = (tmp_path / f'agent.{fmt}').read_text()
    expected = (
        '{\n  "$schema": "schemas/spec.json",'
        if fmt == 'json'
        else '# yaml-language-server: $schema=schemas/spec.json\n'
    )
    assert text.startswith(expected)
    assert (tmp_path / 'schemas' / 'spec.json').exists()


def test_an_absolute_schema_path_elsewhere_is_referenced_as_it_is(tmp_path: Path) -> None:
    (tmp_path / 'specs').mkdir()
    schema = tmp_path / 'agent_schema.json'
    AgentSpec(model='test').to_file(tmp_path / 'specs' / 'agent.json', schema_path=schema)
    assert json.loads((tmp_path / 'specs' / 'agent.json').read_text())['$schema'] == str(schema)


def test_save_schema_writes_the_schema_once(tmp_path: Path) -> None:
    path = tmp_path / 'schema.json'
    AgentSpec._save_schema(path)
    written = path.read_text()
    assert json.loads(written) == json.loads(json.dumps(AgentSpec.model_json_schema_with_capabilities()))
    path.write_text(written)  # the same content: left alone
    before = path.stat().st_mtime_ns
    AgentSpec._save_schema(path)
    assert path.stat().st_mtime_ns == before
    path.write_text('{}')
    AgentSpec._save_schema(path)
    assert path.read_text() == written


async def test_a_run_spec_adds_to_the_run() -> None:
    seen: list[str | None] = []
    agent = Agent(_instructions_seen(seen), instructions='Agent.', metadata={'a': 1, 'b': 1})
    result = await agent.run(
        'hi',
        instructions='Run.',
        metadata={'b': 2},
        spec={'instructions': 'Spec.', 'metadata': {'a': 3, 'b': 3, 'c': 3}},
    )
    assert seen == ['Agent.\nRun.\nSpec.']
    assert result.metadata == {'a': 3, 'b': 2, 'c': 3}


@pytest.mark.parametrize(
    ('run', 'override', 'budget'),
    [
        ({'spec': {'retries': {'output': 2}}}, None, 2),
        ({'retries': 1, 'spec': {'retries': {'output': 2}}}, None, 1),
        ({}, {'spec': {'retries': {'output': 2}}}, 2),
        ({'retries': 3}, {'retries': 0, 'spec': {'retries': {'output': 2}}}, 0),
    ],
    ids=['spec-over-agent', 'run-over-spec', 'override-spec', 'override-argument-over-its-spec'],
)
async def test_output_retry_budget_precedence(
    run: dict[str, Any], override: dict[str, Any] | None, budget: int
) -> None:
    calls: list[int] = []
    agent = Agent(_always_invalid_output(calls), output_type=Answer, retries={'output': 5})
    with (
        agent.override(**(override or {})),
        pytest.raises(UnexpectedModelBehavior, match=rf'Exceeded maximum output retries \({budget}\)'),
    ):
        await agent.run('hi', **run)
    assert len(calls) == budget + 1


async def test_an_override_spec_replaces_the_capabilities_and_fills_unset_fields() -> None:
    seen: list[str | None] = []
    agent = Agent(_instructions_seen(seen), capabilities=[Shout('AGENT')], name='agent')
    spec = {'name': 'spec', 'instructions': 'Spec.', 'capabilities': [{'ToolSearch': {}}]}
    with agent.override(spec=spec, name='explicit'):
        assert agent.name == 'explicit'
        await agent.run('hi')
    await agent.run('hi')
    assert seen == ['Spec.', 'Say AGENT.']


async def test_a_run_spec_model_is_used_when_the_run_gives_none() -> None:
    agent = Agent()
    result = await agent.run('hi', spec={'model': 'test'})
    assert result.output == 'success (no tool calls)'


def test_agent_only_fields_of_a_run_spec_warn_and_are_ignored() -> None:
    agent = Agent(TestModel(), end_strategy='early')
    with pytest.warns(
        UserWarning, match="AgentSpec field 'end_strategy' is not supported at run/override time"
    ) as caught:
        agent.run_sync('hi', spec={'end_strategy': 'exhaustive'})
    line = inspect.currentframe().f_lineno - 1  # type: ignore[union-attr]  # the line above
    # At the application's line, past `run_sync`'s event loop and the run's setup.
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, line)]


def test_a_run_spec_sets_the_tool_budget_of_the_run() -> None:
    seen: list[int] = []
    agent = Agent(TestModel(call_tools=['probe']))

    @agent.tool
    def probe(ctx: RunContext[None]) -> str:
        seen.append(ctx.max_retries)
        return 'ok'

    agent.run_sync('hi', spec={'retries': {'tools': 3}})
    agent.run_sync('hi', spec={'retries': {'tools': 3}}, retries={'tools': 5})  # the run's own budget wins
    assert seen == [3, 5]


def test_deprecated_spec_fields_warn_and_still_apply() -> None:
    with pytest.warns(DeprecationWarning, match=r"`AgentSpec.output_retries` is deprecated, use `retries=\{'output'"):
        agent = Agent.from_spec({'model': 'test', 'output_retries': 4, 'retries': {'tools': 2}})
    assert (agent._max_tool_retries, agent._max_output_retries) == (2, 4)


async def test_a_capability_from_a_spec_sees_the_run_context() -> None:
    seen: list[str | None] = []

    @dataclass
    class Greet(AbstractCapability[str]):
        def get_instructions(self) -> Any:
            def greet(ctx: RunContext[str]) -> str:
                return f'Greet {ctx.deps}.'

            return greet

    agent = Agent.from_spec(
        {'capabilities': ['Greet']}, model=_instructions_seen(seen), deps_type=str, custom_capability_types=[Greet]
    )
    await agent.run('hi', deps='Ada')
    assert seen == ['Greet Ada.']
