"""Run servers from the command line until Ctrl-C or SIGTERM, then stop them cleanly.

``run_until_signal(start, stop)``: ``start()`` and ``stop()`` are coroutine functions; ``start``
returns what ``ready`` prints. Exit status 0 after a clean stop, 2 when start-up fails (e.g. the
port is taken), with one line saying why. Shared by ``pymq namesrv``, ``pymq proxy``, ``pymq broker``
and ``pymq up``.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from typing import Any, Awaitable, Callable


def configure_logging(verbose: int) -> None:
    level = logging.WARNING if verbose <= 0 else (logging.INFO if verbose == 1 else logging.DEBUG)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)


def run_until_signal(start: Callable[[], Awaitable[Any]], stop: Callable[[], Awaitable[None]],
                     ready: Callable[[Any], None] = lambda _: None, *, what: str = "server") -> int:
    async def main() -> int:
        loop = asyncio.get_running_loop()
        stopping = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stopping.set)
        try:
            started = await start()
        except OSError as e:
            print(f"pymq: cannot start the {what}: {e.strerror or e}", file=sys.stderr)
            await stop()
            return 2
        ready(started)
        await stopping.wait()
        print(f"pymq: stopping the {what} ...", file=sys.stderr, flush=True)
        await stop()
        print(f"pymq: {what} stopped", file=sys.stderr, flush=True)
        return 0

    return asyncio.run(main())
