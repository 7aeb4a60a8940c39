"""The conformance kit: does a RocketMQ-compatible name server + broker answer as 4.9.4 does?

In the spirit of h2spec and the Autobahn test suite: a catalogue of scenarios (:mod:`.scenarios`)
— sending (single, batch, compressed, properties, oneway, the binary header), pulling and long
polling, offsets, queries by key and by offset, retry and DLQ, delay levels, transactions with
check-back, tag and SQL92 filters, orderly locks, routes, registration and the KV config on the name
server, errors and malformed requests — played over real sockets against
any broker speaking the 4.x remoting protocol (:mod:`.runner`), each answer compared, modulo time,
hosts and ids (:mod:`.normalize`), with what the real RocketMQ 4.9.4 answered to the same requests
(:mod:`.expected`, recorded by ``tools/rocketmq_conformance/``). Each scenario passes, fails (the
frames that differ are shown as hex views with the differing fields marked: :mod:`.report`) or is
not supported by the broker.

From the shell: ``pymq conformance HOST:PORT --namesrv HOST:PORT [--format text|json|html]``.
From Python::

    from pymq_ref.oracle.conformance import render_text, run_conformance
    results = run_conformance("127.0.0.1:10911", namesrv="127.0.0.1:9876", only="send.*")
    print(render_text(results))

Layering: builds on :mod:`pymq_ref.remoting`, :mod:`pymq_ref.formats` and :mod:`pymq_ref.viz` only —
never on the broker or the clients of this package, so it judges ``pymq up`` as it judges any other
broker.
"""

from __future__ import annotations

import asyncio
import concurrent.futures

from .expected import load as load_expected
from .report import render_html, render_json, render_text, summary
from .runner import FAIL, NOT_SUPPORTED, PASS, Runner, ScenarioResult, StepResult
from .scenarios import SCENARIOS, select

__all__ = ["run_conformance", "Runner", "ScenarioResult", "StepResult", "SCENARIOS", "select", "PASS", "FAIL",
           "NOT_SUPPORTED", "render_text", "render_json", "render_html", "summary", "load_expected"]


def run_conformance(broker: str, namesrv: str | None = None, *, only: str | None = None, skip_slow: bool = False,
                    run_id: str | None = None, expected: dict | None = None, check_timeout: float | None = None,
                    progress=None) -> list[ScenarioResult]:
    """Play the selected scenarios against ``broker`` (and ``namesrv``) and judge them (blocking; from a
    running event loop — a notebook — the kit runs on a loop of its own in a helper thread)."""
    recorded = expected if expected is not None else load_expected()["scenarios"]
    runner = Runner(broker, namesrv, expected=recorded, run_id=run_id, skip_slow=skip_slow,
                    check_timeout=check_timeout, progress=progress)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(runner.run(select(only)))
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, runner.run(select(only))).result()
