"""Model prices kept current: pydantic-ai 2.68's `pydantic_ai.prices`.

Costs (`RequestUsage.cost`, `RunUsage.cost`, `UsageLimits(cost_limit=...)`) come from genai-prices' price list, with
the `prices` extra. The list bundled with the installed genai-prices knows the models released before it; call
`update_in_background()` when the application starts to price newer ones too.

A `PriceUpdater` fetches the newest list over httpx, parses it with genai-prices and makes it the list every cost is
read from, at once and then every `update_interval` seconds. All updaters of the process share one daemon thread
(it runs while any is started, with the settings of the one started last), so starting one at each application
start is cheap. A failed download is logged to the `genai-prices` logger and the last good list stays in use. The
thread is a plain thread, not an anyio task: the updates run whether or not an event loop runs, and never on it.
"""

from __future__ import annotations as _annotations

import json
import logging
import threading
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import httpx

from ._cost import genai_prices_module

__all__ = ('update_in_background',)

DEFAULT_UPDATE_URL = (
    'https://raw.githubusercontent.com/pydantic/genai-prices/refs/heads/main/prices/new_data/v2/data.json'
)
"""Where genai-prices publishes its newest price list (the address its own updater reads)."""

logger = logging.getLogger('genai-prices')


@dataclass
class PriceUpdater:
    """Keeps the price list current while started: `start()` it when the application starts, `stop()` it (or leave
    the `with` block) when it ends. The download happens in the background; `wait()` waits for its outcome."""

    update_interval: float = 3600
    """Seconds between downloads."""
    url: str = DEFAULT_UPDATE_URL
    """Where the price list (genai-prices' JSON format) is downloaded from."""
    request_timeout: httpx.Timeout = field(default_factory=lambda: httpx.Timeout(10, connect=5))
    """The timeout of each download."""
    _started: bool = field(default=False, init=False, repr=False, compare=False)

    def start(self, *, wait: bool | float = False) -> None:
        """Count this updater in, so the shared thread runs (with this updater's settings from its next download).

        Args:
            wait: `True` waits up to 30 seconds for the outcome of a download, a number that many seconds; a
                failed download is then raised (see `wait`).

        Raises:
            ImportError: genai-prices (the `prices` extra) is not installed.
        """
        genai_prices_module()
        with _shared.lock:
            if not self._started:
                _shared.acquire(self)
                self._started = True
        if wait:
            self.wait(30 if wait is True else wait)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until a download has an outcome (at once when one has): `True` when the last download updated the
        prices, `False` when the wait timed out, this updater is not started, or every updater stopped first. A
        blocking call: from async code, call it through `anyio.to_thread.run_sync`.

        Raises:
            Exception: the error of the last download, when it failed (until one succeeds).
        """
        if not self._started:
            return False
        return _shared.wait(timeout)

    def stop(self) -> None:
        """Count this updater out; the thread ends after its current download once no updater is started. The
        prices downloaded stay in use. Nothing happens for an updater not started."""
        with _shared.lock:
            if self._started:
                self._started = False
                _shared.release()

    def __enter__(self) -> PriceUpdater:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def fetch(self) -> Any:
        """Download and parse the price list: a genai-prices `DataSnapshot` (blocking).

        Raises:
            httpx.HTTPError: the download failed or answered an error status.
            ValueError: the answer is not a price list.
        """
        response = httpx.get(self.url, timeout=self.request_timeout, follow_redirects=True)
        response.raise_for_status()
        raw = json.loads(response.content)
        if not isinstance(raw, list):
            raise ValueError(f'The price list at {self.url} is not a JSON array of providers.')
        module = genai_prices_module()
        providers = module.types._providers_from_raw(raw)
        return module.data_snapshot.DataSnapshot(providers, from_auto_update=True)


@dataclass(eq=False)
class _SharedThread:
    """The one download thread of the process; `lock` guards every field and is never held while blocking."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    started: int = 0
    settings: PriceUpdater | None = None
    thread: threading.Thread | None = None
    wake: threading.Event = field(default_factory=threading.Event)
    done: threading.Condition = field(init=False)
    outcome: tuple[int, BaseException | None] = (0, None)
    """How many downloads ended since the thread started, and the error of the last one (`None`: it succeeded)."""

    def __post_init__(self) -> None:
        self.done = threading.Condition(self.lock)

    def acquire(self, updater: PriceUpdater) -> None:
        self.settings = updater
        self.started += 1
        if self.thread is None:
            self.outcome = (0, None)
            self.wake.clear()
            self.thread = threading.Thread(target=self._run, name='edgewise:price-updates', daemon=True)
            self.thread.start()

    def release(self) -> None:
        self.started -= 1
        if not self.started:
            self.settings = None
            self.wake.set()

    def wait(self, timeout: float | None) -> bool:
        with self.done:
            if not self.done.wait_for(lambda: self.outcome[0] > 0 or self.thread is None, timeout):
                return False
            downloads, error = self.outcome
        if not downloads:  # every updater stopped before a download ended
            return False
        if error is not None:
            raise error
        return True

    def _run(self) -> None:
        while True:
            with self.lock:
                updater = self.settings
                if updater is None:
                    self.thread = None
                    self.done.notify_all()
                    return
                self.wake.clear()
            error: BaseException | None = None
            try:
                snapshot = updater.fetch()
                genai_prices_module().data_snapshot.set_custom_snapshot(snapshot)
                logger.info('Model prices updated from %s (%d providers)', updater.url, len(snapshot.providers))
            except Exception as failure:
                error = failure
                logger.error(
                    'Updating model prices from %s failed (%s): %s', updater.url, type(failure).__name__, failure
                )
            with self.done:
                self.outcome = (self.outcome[0] + 1, error)
                self.done.notify_all()
            self.wake.wait(updater.update_interval)


_shared = _SharedThread()


def update_in_background(*, url: str = DEFAULT_UPDATE_URL, update_interval: float = 3600) -> PriceUpdater:
    """Download the newest model prices now and every `update_interval` seconds after, in a background thread.

    Nothing waits for the downloads; one that fails is logged (to the `genai-prices` logger) and the last good
    prices stay in use. Every updater of the process shares the one thread. Call `stop()` on the updater returned
    when the application ends (or use it as a context manager), `wait()` to wait for a download's outcome.

    Args:
        url: Where the price list is downloaded from (genai-prices' JSON format); an Edgewise addition, for a
            mirror of your own.
        update_interval: Seconds between downloads (an Edgewise addition).

    Raises:
        ImportError: genai-prices (the `prices` extra) is not installed.
    """
    updater = PriceUpdater(url=url, update_interval=update_interval)
    updater.start()
    return updater
