"""The instructions of the deferred capabilities a run has loaded, stated in the history as pydantic-ai 2.68 states
them: never in the instructions' prefix (so a load does not break the provider's prompt cache) but as the block
`capability:<id>`, an `InstructionDeltaPart` on the request holding the load (after the model's `load_capability`
return, or the `CapabilityLoadDeltaPart` of a load from code), and another one each time the text changes.

The `before_model_request` hooks see each block in `instruction_parts`, marked `'via_history'`; what they leave
there is what is stated. A history whose load return carries the instructions (an earlier Edgewise's) has them stated
already. A compaction unloads the capabilities (as in pydantic-ai 2.x): nothing before it is stated any more, and a
block stated for a capability no longer loaded is withdrawn. `Model.prepare_messages` renders
the statements as system prompts (`models._instruction_history`).
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Collection
from typing import Any

from .._messages.capability_loading import LoadedBlocks, loaded_block_capability_id, loaded_block_id
from .._messages.instructions import InstructionDeltaPart, InstructionPart, instruction_text_hash
from .._messages.model_messages import ModelMessage, ModelRequest
from .._run.deps import GraphAgentDeps
from ..models import ModelRequestParameters
from ..tools import RunContext
from ..toolsets._deferred_capability_loader import capability_instructions

__all__ = ('blocks_for_hooks', 'blocks_after_hooks', 'loaded_blocks', 'state_loaded_blocks')


async def loaded_blocks(
    deps: GraphAgentDeps[Any, Any], run_ctx: RunContext[Any], known: dict[str, str] | None = None
) -> dict[str, str]:
    """The text of each loaded deferred capability's block by capability id (`''` for one without instructions),
    those in `known` taken from there."""
    blocks: dict[str, str] = {}
    for capability_id, capability in run_ctx.capabilities.items():
        if capability_id in deps.loaded_capability_ids and capability.defer_loading is True:
            if known is not None and capability_id in known:
                blocks[capability_id] = known[capability_id]
            else:
                blocks[capability_id] = await capability_instructions(deps.toolset, capability, run_ctx)
    return blocks


def blocks_for_hooks(params: ModelRequestParameters, blocks: dict[str, str]) -> ModelRequestParameters:
    """`params` with the blocks after the request's own, marked `'via_history'` (as 2.68 shows them to the hooks)."""
    parts = [InstructionPart(text, id=loaded_block_id(key), dynamic=True) for key, text in blocks.items() if text]
    if not parts:
        return params
    return dataclasses.replace(
        params,
        instruction_parts=[*(params.instruction_parts or []), *parts],
        instruction_visibility={str(part.id): 'via_history' for part in parts},
    )


def blocks_after_hooks(
    params: ModelRequestParameters, blocks: dict[str, str]
) -> tuple[ModelRequestParameters, dict[str, str]]:
    """`params` as the model is sent them (the `'via_history'` blocks taken out, `instruction_visibility` back to
    `None`) and the blocks as the hooks left them: a block a hook changed is stated as changed, one it emptied is
    withdrawn; one it took out altogether (a hook that builds `instruction_parts` anew) is stated as it was."""
    prefix: list[InstructionPart] = []
    changed: dict[str, list[str]] = {}
    for part in params.instruction_parts or ():
        capability_id = loaded_block_capability_id(part.id) if part.id is not None else None
        if params.instruction_visibility_of(part) == 'via_history' and capability_id in blocks:
            changed.setdefault(capability_id, []).append(part.content.strip())
        else:
            prefix.append(part)
    stated = {key: '\n\n'.join(filter(None, changed[key])) if key in changed else text for key, text in blocks.items()}
    return dataclasses.replace(params, instruction_parts=prefix or None, instruction_visibility=None), stated


def state_loaded_blocks(
    messages: list[ModelMessage], blocks: dict[str, str], request: ModelRequest, *, eager: Collection[str] = ()
) -> bool:
    """Record on `request` (the request being sent) an `InstructionDeltaPart` for each loaded block whose text is not
    the one the model last got, in load order; whether it recorded one. A block stated for a capability the run no
    longer has loaded is withdrawn (as in pydantic-ai 2.68), unless the capability is among `eager`: the run has it,
    no longer deferred, and its instructions are in the prefix now (the block is left as it is)."""
    loaded = LoadedBlocks.of(messages)
    changes: list[InstructionDeltaPart] = []
    for capability_id, previous in loaded.values.items():
        if capability_id not in blocks and (capability_id in eager or previous is None):
            continue
        text = blocks.get(capability_id) or None
        if text == previous:
            continue
        # The first statement after a load goes in full: a diff only against a text the history stated itself.
        diffable = previous is not None and text is not None and capability_id in loaded.by_change
        base_hash = instruction_text_hash(previous) if diffable and previous is not None else None
        changes.append(InstructionDeltaPart(id=loaded_block_id(capability_id), content=text, base_hash=base_hash))
    if changes:
        request.parts = [*request.parts, *changes]
    return bool(changes)
