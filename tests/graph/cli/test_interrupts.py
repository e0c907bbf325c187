"""Where a second Ctrl-C lands decides what it does: in the node's own code it raises `KeyboardInterrupt` there;
between the node's steps (the event loop waiting, Edgewise's code, anyio's, `contextlib`'s) it cancels the node
through the event loop, so that no store call or cancel scope is left half done."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from types import FrameType

import anyio
import anyio.lowlevel
import pytest

import edgewise.graph.cli._runs as runs_module
from edgewise.graph.cli._runs import _Interrupts

pytestmark = pytest.mark.anyio


def frame_in(filename: str) -> FrameType:
    """A frame whose code comes from `filename`, as the handler is given one."""
    namespace: dict[str, object] = {'sys': sys}
    exec(compile('frame = sys._getframe()', filename, 'exec'), namespace)
    frame = namespace['frame']
    assert isinstance(frame, FrameType)
    return frame


NODE_CODE = os.path.join(os.sep, 'home', 'someone', 'project', 'flows.py')
BETWEEN_STEPS = {
    'a store call': os.path.normpath(
        os.path.join(os.path.dirname(runs_module.__file__), '..', 'persistence', 'sqlite.py')
    ),
    'the graph run': os.path.join(os.path.dirname(os.path.dirname(runs_module.__file__)), 'graph.py'),
    'the handler itself': runs_module.__file__,
    'anyio': os.path.join(os.path.dirname(anyio.__file__), '_core', '_tasks.py'),
    'contextlib': contextlib.__file__,
}


async def test_a_first_ctrl_c_only_asks_to_stop_after_the_node(capsys: pytest.CaptureFixture[str]) -> None:
    interrupts = _Interrupts(anyio.CancelScope(), anyio.lowlevel.current_token())

    interrupts.handle(signal.SIGINT, frame_in(NODE_CODE))

    assert (interrupts.stop, interrupts.cancelled) == (True, False)
    assert not interrupts.run_scope.cancel_called
    assert capsys.readouterr().out == ' (stopping after this node; Ctrl-C again to interrupt it)'


async def test_a_second_ctrl_c_in_the_nodes_own_code_interrupts_it_where_it_is() -> None:
    interrupts = _Interrupts(anyio.CancelScope(), anyio.lowlevel.current_token(), stop=True)

    with pytest.raises(KeyboardInterrupt):
        interrupts.handle(signal.SIGINT, frame_in(NODE_CODE))

    assert interrupts.cancelled
    assert not interrupts.run_scope.cancel_called


@pytest.mark.parametrize('where', list(BETWEEN_STEPS))
async def test_a_second_ctrl_c_between_the_nodes_steps_cancels_it_through_the_loop(where: str) -> None:
    with anyio.CancelScope() as run_scope:
        interrupts = _Interrupts(run_scope, anyio.lowlevel.current_token(), stop=True)
        interrupts.handle(signal.SIGINT, frame_in(BETWEEN_STEPS[where]))  # raises nothing
        assert interrupts.cancelled
        await anyio.sleep_forever()  # the node's next await: cancelled by the handler's thread
    assert run_scope.cancelled_caught


async def test_a_ctrl_c_while_the_cancellation_is_on_its_way_and_the_loop_waits_does_nothing() -> None:
    interrupts = _Interrupts(anyio.CancelScope(), anyio.lowlevel.current_token(), stop=True, cancelled=True)

    interrupts.handle(signal.SIGINT, frame_in(os.path.join(os.path.dirname(__file__), 'selectors.py')))

    assert not interrupts.run_scope.cancel_called


@pytest.mark.parametrize('where', ['a store call', 'the graph run'])
async def test_code_between_steps_still_busy_at_the_next_ctrl_c_is_interrupted_where_it_is(where: str) -> None:
    interrupts = _Interrupts(anyio.CancelScope(), anyio.lowlevel.current_token(), stop=True, cancelled=True)

    with pytest.raises(KeyboardInterrupt):
        interrupts.handle(signal.SIGINT, frame_in(BETWEEN_STEPS[where]))
