"""pydantic-ai 2.x's private bridge helpers at `edgewise.agent._sync_stream`, which drive asyncio loops handed in.

They act on asyncio loops, tasks and futures by definition, so these tests are synchronous and make their own
asyncio loops (there is nothing to run on trio).
"""

from __future__ import annotations as _annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

from edgewise.agent._streaming.sync_bridge import ExitInfo
from edgewise.agent._sync_stream import _finalize_loop, _request_exit, _run_task_to_completion

NO_ERROR: ExitInfo = (None, None, None)


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    new_loop = asyncio.new_event_loop()
    yield new_loop
    for task in asyncio.all_tasks(new_loop):
        task.cancel()
        new_loop.run_until_complete(asyncio.wait((task,)))
    new_loop.close()


async def several_turns(turns: list[int], count: int = 5) -> None:
    for turn in range(count):
        turns.append(turn)
        await asyncio.sleep(0)


async def wait_forever() -> None:
    await asyncio.Event().wait()


def owner_and_exit(loop: asyncio.AbstractEventLoop) -> tuple[asyncio.Task[None], asyncio.Future[ExitInfo], list[str]]:
    """An owner task that waits for its exit request, then records it (as a bridge's owner exits its stream)."""
    exit_requested: asyncio.Future[ExitInfo] = loop.create_future()
    seen: list[str] = []

    async def hold() -> None:
        info = await exit_requested
        seen.append(f'exited with {info}')

    return loop.create_task(hold()), exit_requested, seen


def test_run_task_to_completion_drives_a_stopped_loop_until_the_task_is_done(loop: asyncio.AbstractEventLoop) -> None:
    turns: list[int] = []
    task = loop.create_task(several_turns(turns))

    _run_task_to_completion(loop, task)

    assert (task.done(), turns, asyncio.all_tasks(loop)) == (True, [0, 1, 2, 3, 4], set())


def test_run_task_to_completion_drives_again_after_a_stale_stop_request(loop: asyncio.AbstractEventLoop) -> None:
    turns: list[int] = []
    task = loop.create_task(several_turns(turns))
    loop.stop()  # left over: it ends the next drive after one turn, with "Event loop stopped before Future completed."

    _run_task_to_completion(loop, task)

    assert (task.done(), turns) == (True, [0, 1, 2, 3, 4])


def test_run_task_to_completion_raises_the_error_of_the_task(loop: asyncio.AbstractEventLoop) -> None:
    async def fail() -> None:
        await asyncio.sleep(0)
        raise ValueError('the stream failed')

    task = loop.create_task(fail())

    with pytest.raises(ValueError, match=r'^the stream failed$'):
        _run_task_to_completion(loop, task)
    assert asyncio.all_tasks(loop) == set()


def test_run_task_to_completion_lets_both_tasks_finish_when_a_base_exception_escapes_the_drive(
    loop: asyncio.AbstractEventLoop,
) -> None:
    async def interrupt() -> None:
        await asyncio.sleep(0)
        raise KeyboardInterrupt

    task = loop.create_task(interrupt())

    with pytest.raises(KeyboardInterrupt):
        _run_task_to_completion(loop, task)
    assert (task.done(), asyncio.all_tasks(loop)) == (True, set())


def test_run_task_to_completion_raises_when_the_loop_runs_in_another_thread() -> None:
    running = asyncio.new_event_loop()
    thread = threading.Thread(target=running.run_forever)
    thread.start()
    try:

        async def start_task() -> asyncio.Task[None]:
            return asyncio.get_running_loop().create_task(wait_forever())

        task = asyncio.run_coroutine_threadsafe(start_task(), running).result()

        with pytest.raises(RuntimeError, match='already running'):
            _run_task_to_completion(running, task)
    finally:

        async def cancel_all() -> None:
            pending = asyncio.all_tasks() - {asyncio.current_task()}
            for pending_task in pending:
                pending_task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(cancel_all(), running).result()
        running.call_soon_threadsafe(running.stop)
        thread.join()
        running.close()
    assert task.cancelled()


def test_request_exit_cancels_the_pumps_then_lets_the_owner_exit() -> None:
    async def scenario() -> tuple[bool, set[asyncio.Task[None]], list[str], ExitInfo]:
        loop = asyncio.get_running_loop()
        owner, exit_requested, seen = owner_and_exit(loop)
        pump = loop.create_task(wait_forever())
        pumps = {pump}
        await asyncio.sleep(0)

        await _request_exit(owner, exit_requested, pumps)

        return pump.cancelled(), pumps, seen, exit_requested.result()

    assert asyncio.run(scenario()) == (True, set(), [f'exited with {NO_ERROR}'], NO_ERROR)


def test_request_exit_retrieves_the_error_of_the_owner_instead_of_raising_it() -> None:
    async def scenario() -> BaseException | None:
        loop = asyncio.get_running_loop()
        exit_requested: asyncio.Future[ExitInfo] = loop.create_future()

        async def fail_on_exit() -> None:
            await exit_requested
            raise RuntimeError('__aexit__ failed')

        owner = loop.create_task(fail_on_exit())
        await _request_exit(owner, exit_requested, set())
        return owner.exception()

    error = asyncio.run(scenario())

    assert isinstance(error, RuntimeError)
    assert str(error) == '__aexit__ failed'


def test_request_exit_keeps_an_exit_already_requested() -> None:
    async def scenario() -> tuple[list[str], bool]:
        loop = asyncio.get_running_loop()
        owner, exit_requested, seen = owner_and_exit(loop)
        error = ValueError('earlier')
        exit_requested.set_result((ValueError, error, None))

        await _request_exit(owner, exit_requested, set())
        await _request_exit(owner, exit_requested, set())  # a second request finds everything done

        return seen, exit_requested.result()[1] is error

    assert asyncio.run(scenario()) == (["exited with (<class 'ValueError'>, ValueError('earlier'), None)"], True)


def test_finalize_loop_shuts_down_on_the_owner_thread_when_no_loop_runs(loop: asyncio.AbstractEventLoop) -> None:
    owner, exit_requested, seen = owner_and_exit(loop)
    pump = loop.create_task(wait_forever())
    pumps = {pump}

    _finalize_loop(loop, owner, exit_requested, pumps, threading.get_ident())

    assert (owner.done(), pump.cancelled(), pumps, seen) == (True, True, set(), [f'exited with {NO_ERROR}'])
    assert asyncio.all_tasks(loop) == set()


def test_finalize_loop_swallows_the_error_of_the_owner(loop: asyncio.AbstractEventLoop) -> None:
    exit_requested: asyncio.Future[ExitInfo] = loop.create_future()

    async def fail_on_exit() -> None:
        await exit_requested
        raise RuntimeError('__aexit__ failed')

    owner = loop.create_task(fail_on_exit())

    _finalize_loop(loop, owner, exit_requested, set(), threading.get_ident())

    assert (owner.done(), repr(owner.exception())) == (True, "RuntimeError('__aexit__ failed')")


def test_finalize_loop_queues_the_exit_when_the_owner_loop_is_running() -> None:
    async def scenario() -> tuple[bool, set[asyncio.Task[None]], list[str]]:
        loop = asyncio.get_running_loop()
        owner, exit_requested, seen = owner_and_exit(loop)
        pump = loop.create_task(wait_forever())
        pumps = {pump}

        _finalize_loop(loop, owner, exit_requested, pumps, threading.get_ident())
        queued = (owner.done(), exit_requested.done())
        await owner

        assert queued == (False, False)
        return pump.cancelled(), pumps, seen

    assert asyncio.run(scenario()) == (True, set(), [f'exited with {NO_ERROR}'])


def test_finalize_loop_queues_the_exit_when_another_loop_runs_in_this_thread(loop: asyncio.AbstractEventLoop) -> None:
    owner, exit_requested, seen = owner_and_exit(loop)

    async def finalize_from_another_loop() -> None:
        _finalize_loop(loop, owner, exit_requested, set(), threading.get_ident())

    asyncio.run(finalize_from_another_loop())
    queued = (owner.done(), exit_requested.done())
    loop.run_until_complete(owner)

    assert (queued, seen) == ((False, False), [f'exited with {NO_ERROR}'])


def test_finalize_loop_queues_the_exit_when_called_from_another_thread(loop: asyncio.AbstractEventLoop) -> None:
    owner, exit_requested, seen = owner_and_exit(loop)

    finalizer = threading.Thread(
        target=_finalize_loop, args=(loop, owner, exit_requested, set(), threading.get_ident())
    )
    finalizer.start()
    finalizer.join()
    queued = (owner.done(), exit_requested.done())
    loop.run_until_complete(owner)

    assert (queued, seen) == ((False, False), [f'exited with {NO_ERROR}'])


def test_finalize_loop_leaves_a_closed_loop_alone() -> None:
    closed = asyncio.new_event_loop()
    exit_requested: asyncio.Future[ExitInfo] = closed.create_future()
    owner: asyncio.Future[None] = closed.create_future()  # stands in for a task that can never run again
    closed.close()

    _finalize_loop(closed, owner, exit_requested, set(), threading.get_ident())

    assert (owner.done(), exit_requested.done()) == (False, False)


def test_finalize_loop_leaves_a_finished_owner_alone(loop: asyncio.AbstractEventLoop) -> None:
    owner, exit_requested, seen = owner_and_exit(loop)
    owner.cancel()
    loop.run_until_complete(asyncio.gather(owner, return_exceptions=True))
    pump = loop.create_task(wait_forever())

    _finalize_loop(loop, owner, exit_requested, {pump}, threading.get_ident())

    assert (exit_requested.done(), pump.cancelled(), seen) == (False, False, [])


def test_finalize_loop_keeps_an_exit_already_requested(loop: asyncio.AbstractEventLoop) -> None:
    owner, exit_requested, seen = owner_and_exit(loop)
    exit_requested.set_result((KeyboardInterrupt, None, None))

    _finalize_loop(loop, owner, exit_requested, set(), threading.get_ident())

    assert (owner.done(), seen) == (True, ["exited with (<class 'KeyboardInterrupt'>, None, None)"])
