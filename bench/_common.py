"""Shared helpers of the benchmarks: timing, the result table, the JSON file in ``_build/bench/``.

Each benchmark measures ours and a baseline *in the same run* and reports the ratio against a
target; nothing here asserts on wall-clock time. Not a benchmark itself (no ``bench_`` prefix).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "_build" / "bench"


@dataclass
class Row:
    name: str
    ours: float
    baseline: float
    unit: str
    target: float | None  # minimum ratio ours/baseline (higher is better), None = informational
    note: str = ""

    @property
    def ratio(self) -> float:
        return self.ours / self.baseline if self.baseline else float("inf")

    @property
    def met(self) -> bool | None:
        return None if self.target is None else self.ratio >= self.target


def parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--quick", action="store_true", help="a short run (smoke test; numbers are noisier)")
    p.add_argument("--repeat", type=int, default=None, help="measurements per side (best is kept)")
    return p


def interleaved_best(ours, baseline, repeat: int, ours_key=None):
    """``(best of ours(), best of baseline())`` over ``repeat`` alternating calls, so that a noisy
    spell of a shared machine hits both sides alike. ``baseline()`` returns a rate; ``ours_key``
    picks the rate to compare when ``ours()`` returns more than one number (its best whole
    result is returned)."""
    pick = ours_key or (lambda r: r)
    best_ours = best_base = None
    for _ in range(repeat):
        o, b = ours(), baseline()
        if best_ours is None or pick(o) > pick(best_ours):
            best_ours = o
        best_base = b if best_base is None else max(best_base, b)
    return best_ours, best_base


def report(bench: str, title: str, rows: list[Row], params: dict) -> int:
    """Print the table, write ``_build/bench/<bench>.json``; returns 0 (targets are reported, not enforced)."""
    print(f"\n{title}")
    header = f"{'case':<46} {'ours':>13} {'baseline':>13} {'ratio':>7} {'target':>7}  status"
    print(header)
    print("-" * len(header))
    for r in rows:
        status = "info" if r.met is None else ("ok" if r.met else "MISSED")
        target = "-" if r.target is None else f">={r.target:g}x"
        print(f"{r.name:<46} {r.ours:>9,.0f} {r.unit:<3} {r.baseline:>9,.0f} {r.unit:<3} {r.ratio:>6.2f}x {target:>7}  {status}")
        if r.note:
            print(f"    {r.note}")
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    doc = {"bench": bench, "title": title, "params": params,
           "machine": {"python": sys.version.split()[0], "platform": platform.platform(), "cpus": os.cpu_count()},
           "rows": [{**asdict(r), "ratio": r.ratio, "met": r.met} for r in rows]}
    (OUT_DIR / f"{bench}.json").write_text(json.dumps(doc, indent=2) + "\n")
    print(f"(written to {(OUT_DIR / f'{bench}.json').relative_to(ROOT)})")
    return 0


def plain_put_rate(msgs, store) -> float:
    """The baseline of the broker-service benchmarks: ``store.put_message`` of ``msgs``, in messages per
    second; the store is shut down and its directory removed afterwards."""
    import shutil

    put = store.put_message
    start = time.perf_counter()
    for m in msgs:
        put(m)
    elapsed = time.perf_counter() - start
    store.shutdown()
    shutil.rmtree(store.root)
    return len(msgs) / elapsed
