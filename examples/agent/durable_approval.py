"""A durable agent run that waits for a person's approval, given later from another process.

The agent refunds orders; a refund needs approval. One process starts the run: the model asks for a refund,
and the run is stored in SQLite waiting for the approval of that call. Another process (minutes or days
later) gives the answer and the run finishes; the refund runs once, in that process. Offline: the model is a
`FunctionModel` playing the part of an LLM.

    python -m examples.agent.durable_approval request --db refunds.db   # stored, waiting for approval
    edgewise runs show refund-42 --store sqlite:///refunds.db           # lists the pending call
    python -m examples.agent.durable_approval approve --db refunds.db   # or: deny
    # or: edgewise runs resume refund-42 examples.agent.durable_approval:agent --store sqlite:///refunds.db --approve r1

Run with no command, it does both steps, each in a process of its own.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio

from edgewise.agent import Agent, DeferredToolRequests, DeferredToolResults, RunContext, ToolDenied
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

RUN_ID = 'refund-42'


def support_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Asks for the refund, then tells the customer what came of it."""
    if len(messages) == 1:
        return ModelResponse([ToolCallPart('refund', {'order': 'A-1001', 'cents': 4_500}, 'r1')])
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    outcome = next(p for p in last.parts if isinstance(p, ToolReturnPart))
    return ModelResponse([TextPart(f'Dear customer: {outcome.content}')])


agent: Agent[None, Any] = Agent(FunctionModel(support_model), output_type=[str, DeferredToolRequests])


@agent.tool(requires_approval=True)
def refund(ctx: RunContext[None], order: str, cents: int) -> str:
    """Refund an order (a person approves each refund first)."""
    # `ctx.tool_call_id` is the same if the call runs again after a crash: a payment service's idempotency key.
    print(f'refunding {cents / 100:.2f} EUR for {order} (idempotency key {ctx.tool_call_id})')
    return f'order {order} is refunded.'


async def request(db: Path) -> None:
    async with SqliteStatePersistence(db, RUN_ID) as persistence:
        result = await agent.run('Order A-1001 arrived broken, I want my money back.', persistence=persistence)
    assert isinstance(result.output, DeferredToolRequests)
    for call in result.output.approvals:
        print(f'waiting for approval: {call.tool_name}({call.args}) [{call.tool_call_id}]')


async def answer(db: Path, approve: bool) -> None:
    approval = True if approve else ToolDenied('Refunds of opened goods need a manager.')
    async with SqliteStatePersistence(db, RUN_ID) as persistence:
        result = await agent.resume(persistence, deferred_tool_results=DeferredToolResults(approvals={'r1': approval}))
    print(result.output)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('command', nargs='?', choices=['request', 'approve', 'deny'])
    parser.add_argument('--db', type=Path, default=Path('refunds.db'))
    args = parser.parse_args(argv)
    if args.command == 'request':
        anyio.run(request, args.db)
    elif args.command is not None:
        anyio.run(answer, args.db, args.command == 'approve')
    else:  # both steps, each in a process of its own
        args.db.unlink(missing_ok=True)
        for command in ('request', 'approve'):
            step = [sys.executable, '-m', __spec__.name if __spec__ else __name__, command, '--db', str(args.db)]
            subprocess.run(step, check=True)


if __name__ == '__main__':
    main()
