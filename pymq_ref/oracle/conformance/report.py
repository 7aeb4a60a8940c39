"""The conformance report as text, JSON and one self-contained HTML page.

For a failed step the report shows what differs field by field, then the frame 4.9.4 sent and the
frame the broker under test sent as hex views (:mod:`pymq_ref.viz.hexview`, spans from the remoting
decoder), the fields that differ marked ``<<< differs`` in the meaning column. The text form has no
times and no ports unless asked (``timings=True``), so it is stable run after run. Pure: takes
results, returns strings.
"""

from __future__ import annotations

import dataclasses
import html
import json
from collections import Counter

from pymq_ref.remoting.codec import decode
from pymq_ref.viz import htmlview
from pymq_ref.viz.hexview import HexView, hexview

from .runner import FAIL, NOT_SUPPORTED, PASS, ScenarioResult, StepResult

_LABEL = {PASS: "PASS", FAIL: "FAIL", NOT_SUPPORTED: "N/S "}


def summary(results: list[ScenarioResult]) -> dict[str, int]:
    counts = Counter(r.status for r in results)
    return {"scenarios": len(results), "passed": counts[PASS], "failed": counts[FAIL],
            "not_supported": counts[NOT_SUPPORTED]}


def summary_line(results: list[ScenarioResult]) -> str:
    s = summary(results)
    return (f"{s['passed']} passed, {s['failed']} failed, {s['not_supported']} not supported "
            f"({s['scenarios']} scenarios)")


def frame_view(frame: bytes | None, step: StepResult, title: str) -> HexView | None:
    """A hex view of one frame, the fields that differ from the other side marked."""
    if not frame:
        return None
    try:
        decoded = decode(frame, with_spans=True)
    except Exception:  # noqa: BLE001 — show the bytes without fields
        return hexview(frame, (), title=title, max_rows=24, max_field_rows=3)
    from pymq_ref.formats.spans import walk
    paths = {s.path for s in walk(decoded.spans)}
    marks: dict[str, list[str]] = {}
    absent: list[str] = []
    for d in step.differences:
        target = d.frame_field()
        if target not in paths and target.startswith("extFields.") and "extFields" in paths:
            target = "extFields"  # a key only the other frame has: mark the map
        if target in paths:
            marks.setdefault(target, []).append(d.path)
        else:
            absent.append(d.path)

    def meaning(path: str) -> str:
        return "<<< differs: " + ", ".join(marks[path]) if path in marks else ""

    if absent:
        title += " (not in this frame: " + ", ".join(absent) + ")"
    view = hexview(frame, decoded.spans, title=title, max_rows=24, max_field_rows=3)
    return dataclasses.replace(view, meaning=meaning)


def _step_lines(step: StepResult, hex_views: bool) -> list[str]:
    out = [f"    step {step.name!r}:"]
    out += [f"      {d}" for d in step.differences]
    out += [f"      check failed: {f}" for f in step.failures]
    if hex_views and step.differences:
        for frame, who in ((step.expected_frame, "RocketMQ 4.9.4 answered"),
                           (step.actual_frame, "this broker answered")):
            view = frame_view(frame, step, who)
            if view is not None:
                out += ["", *("      " + line if line else "" for line in view.text().splitlines()), ""]
    return out


def render_text(results: list[ScenarioResult], *, broker: str | None = None, namesrv: str | None = None,
                hex_views: bool = True, timings: bool = False) -> str:
    out = []
    if broker:
        out.append(f"pymq conformance: broker {broker}" + (f", name server {namesrv}" if namesrv else "")
                   + ", compared with RocketMQ 4.9.4")
        out.append("")
    width = max([len(r.id) for r in results] + [8])
    for r in results:
        line = f"{_LABEL[r.status]}  {r.id:{width}}  {r.title}"
        if timings:
            line += f"  ({r.seconds:.1f} s)"
        out.append(line)
        if r.status != PASS and r.reason:
            out.append(f"{'':6}{'':{width}}  -> {r.reason}")
        if r.status == FAIL:
            for step in r.steps:
                if not step.ok:
                    out += _step_lines(step, hex_views)
    out += ["", summary_line(results)]
    return "\n".join(out)


def _step_json(step: StepResult, full: bool) -> dict:
    rec = {"name": step.name, "ok": step.ok}
    if full or not step.ok:
        rec.update({"differences": [{"path": d.path, "expected": d.expected, "actual": d.actual}
                                    for d in step.differences],
                    "failures": step.failures, "expected": step.expected, "actual": step.actual,
                    "expected_frame_hex": step.expected_frame.hex() if step.expected_frame else None,
                    "actual_frame_hex": step.actual_frame.hex() if step.actual_frame else None})
    return rec


def render_json(results: list[ScenarioResult], *, broker: str | None = None, namesrv: str | None = None,
                run: str | None = None, full: bool = False, recorded_from: str | None = None) -> str:
    """One document: the summary, then per scenario its status, reason, time and steps (the failed
    steps with their differences, both normalized answers and both frames in hex; ``full``: every step)."""
    doc = {"broker": broker, "namesrv": namesrv, "run": run, "compared_with": recorded_from or "RocketMQ 4.9.4",
           "summary": summary(results),
           "scenarios": [{"id": r.id, "group": r.group, "title": r.title, "status": r.status, "reason": r.reason,
                          "seconds": round(r.seconds, 3), "steps": [_step_json(s, full) for s in r.steps]}
                         for r in results]}
    return json.dumps(doc, ensure_ascii=False, indent=1, default=str)


_CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em;max-width:72em}
table.cf{border-collapse:collapse;width:100%} table.cf td,table.cf th{border-bottom:1px solid #ddd;padding:.3em .5em;
text-align:left;vertical-align:top} .pass{color:#166534;font-weight:600} .fail{color:#b91c1c;font-weight:600}
.ns{color:#92400e;font-weight:600} code{font-size:90%} .cf-mark{color:#b91c1c}
details{margin:.5em 0 1em 0} .diff{font-family:monospace}
"""


def render_html(results: list[ScenarioResult], *, broker: str | None = None, namesrv: str | None = None) -> str:
    """One page, no external resources: the table of scenarios, then each failure with its hex views."""
    esc = html.escape
    cls = {PASS: "pass", FAIL: "fail", NOT_SUPPORTED: "ns"}
    rows = "".join(
        f'<tr><td class="{cls[r.status]}">{esc(r.status)}</td><td><code>{esc(r.id)}</code></td>'
        f"<td>{esc(r.group)}</td><td>{esc(r.title)}</td><td>{esc(r.reason)}</td></tr>" for r in results)
    details = []
    for r in results:
        if r.status != FAIL:
            continue
        parts = [f'<h3 id="{esc(r.id)}"><code>{esc(r.id)}</code>: {esc(r.title)}</h3>']
        for step in r.steps:
            if step.ok:
                continue
            items = "".join(f'<li class="diff">{esc(str(d))}</li>' for d in step.differences)
            items += "".join(f"<li>check failed: {esc(f)}</li>" for f in step.failures)
            parts.append(f"<h4>step {esc(step.name)}</h4><ul>{items}</ul>")
            for frame, who in ((step.expected_frame, "RocketMQ 4.9.4 answered"),
                               (step.actual_frame, "this broker answered")):
                view = frame_view(frame, step, who) if step.differences else None
                if view is not None:
                    marked = view.html().replace("&lt;&lt;&lt; differs:",
                                                 '<b class="cf-mark">&lt;&lt;&lt; differs:</b>')
                    parts.append(f"<details open><summary>{esc(who)}</summary>{marked}</details>")
        details.append("\n".join(parts))
    title = f"pymq conformance: {broker or ''}"
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{esc(title)}</title>"
            f"<style>{_CSS}</style></head><body>\n<h1>{esc(title)}</h1>\n"
            f"<p>broker {esc(broker or '?')}, name server {esc(namesrv or '(none)')}, compared with RocketMQ 4.9.4: "
            f"<b>{esc(summary_line(results))}</b></p>\n"
            f'<table class="cf"><thead><tr><th>status</th><th>scenario</th><th>group</th><th>what</th>'
            f"<th>reason</th></tr></thead><tbody>{rows}</tbody></table>\n"
            + "\n".join(details) + f"\n{htmlview.STYLE if details else ''}\n</body></html>\n")
