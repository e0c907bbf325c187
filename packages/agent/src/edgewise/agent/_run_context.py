"""`RunContext` under the private module name pydantic-ai gives it (code importing it from there keeps working)."""

from .models._model import AgentDepsT, RunContext, RunContextAgentDepsT

__all__ = ('AgentDepsT', 'RunContext', 'RunContextAgentDepsT')
