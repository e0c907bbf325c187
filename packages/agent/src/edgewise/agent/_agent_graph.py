"""The agent's graph under the private module name pydantic-ai gives it, for code that imports from there.

The nodes live in `edgewise.agent._loop.nodes`, the run's state and dependencies in `edgewise.agent._run`.
"""

from ._loop.nodes import CallToolsNode, ModelRequestNode, UserPromptNode
from ._run.deps import GraphAgentDeps
from ._run.deps import check_continuation_usage as _check_continuation_usage
from ._run.state import GraphAgentState

__all__ = (
    'CallToolsNode',
    'GraphAgentDeps',
    'GraphAgentState',
    'ModelRequestNode',
    'UserPromptNode',
    '_check_continuation_usage',
)
