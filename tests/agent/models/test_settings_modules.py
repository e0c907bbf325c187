"""Each provider's settings class belongs to the public module of its provider, whose name prefixes its keys."""

from __future__ import annotations

import importlib

import pytest

from edgewise.agent.settings import ModelSettings


@pytest.mark.parametrize(
    ('module_name', 'class_name'),
    [
        ('edgewise.agent.models.anthropic', 'AnthropicModelSettings'),
        ('edgewise.agent.models.google', 'GoogleModelSettings'),
        ('edgewise.agent.models.openai', 'OpenAIResponsesModelSettings'),
        ('edgewise.agent.models.openai', 'OpenAIChatModelSettings'),
    ],
)
def test_settings_class_lives_in_its_providers_module_and_prefixes_its_keys(module_name: str, class_name: str) -> None:
    settings_class = getattr(importlib.import_module(module_name), class_name)
    assert settings_class.__module__ == module_name
    prefix = module_name.rsplit('.', 1)[-1] + '_'
    own_keys = set(settings_class.__annotations__) - set(ModelSettings.__annotations__)
    assert own_keys
    assert sorted(key for key in own_keys if not key.startswith(prefix)) == []
