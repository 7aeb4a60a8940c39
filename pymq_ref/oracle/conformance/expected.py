"""The answers the real RocketMQ 4.9.4 gave to the scenarios, as recorded (see
``tools/rocketmq_conformance/README.md``): per scenario, per step, the normalized answer and its
frame's bytes. Loading only; no I/O besides reading the package's data file.
"""

from __future__ import annotations

import json
import os

#: The recording shipped with the package.
DEFAULT_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "rocketmq-4.9.4.json")


def load(path: str | None = None) -> dict:
    """``{"recorded_from": ..., "scenarios": {id: {"status", "reason", "steps": {...}}}}``."""
    with open(path or DEFAULT_PATH, encoding="utf-8") as f:
        return json.load(f)


def save(path: str, scenarios: dict, recorded_from: str) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"recorded_from": recorded_from, "scenarios": scenarios}, f, ensure_ascii=False, indent=1,
                  sort_keys=True)
        f.write("\n")
