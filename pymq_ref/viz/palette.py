"""The book's single palette: one fixed colour per field kind, one per architecture role.

Every view (HTML hex view, field table, legend, graphviz diagrams) takes its colours from
here, so a CRC is the same violet in chapter 01 and in chapter 14. The text view uses the
two-letter :data:`KIND_CODES` instead of colours.

This module holds constants only: no rendering, no imports from the rest of ``viz``.
"""

from __future__ import annotations

from pymq_ref.formats.spans import KINDS

#: Background colour of each field kind (light enough for black text).
KIND_COLOURS: dict[str, str] = {
    "size": "#FFD966",        # amber
    "magic": "#F28B82",       # red
    "crc": "#C9A7EB",         # violet
    "queue": "#8EDBA8",       # mint
    "flag": "#FDBA74",        # orange
    "offset": "#93C5FD",      # sky blue
    "timestamp": "#C5E384",   # lime
    "host": "#F9A8D4",        # pink
    "count": "#E5D3A1",       # sand
    "body": "#E5E7EB",        # pale grey: bodies are big, keep them calm
    "topic": "#7EE0D2",       # teal
    "properties": "#C7D2FE",  # periwinkle
    "hash": "#D4A373",        # tan
    "link": "#67E8F9",        # cyan
    "blank": "#F1F5F9",       # near white: filler
    "code": "#F0ABFC",        # orchid: what a remoting command is
    "text": "#FEF3C7",        # cream: JSON header text, remarks
}

#: Two-letter code of each kind, used by the plain-text view's marker line.
KIND_CODES: dict[str, str] = {
    "size": "sz",
    "magic": "mg",
    "crc": "cr",
    "queue": "qu",
    "flag": "fl",
    "offset": "of",
    "timestamp": "ts",
    "host": "ho",
    "count": "ct",
    "body": "bd",
    "topic": "tp",
    "properties": "pr",
    "hash": "hs",
    "link": "ln",
    "blank": "bl",
    "code": "cd",
    "text": "tx",
}

#: Colour and code for a kind this palette does not know (a bug upstream, but still drawn).
UNKNOWN_COLOUR = "#FCA5A5"
UNKNOWN_CODE = "??"

#: Bytes that no span covers (e.g. the zeros after the last record of a segment).
UNCOVERED_COLOUR = "#FFFFFF"

TEXT_COLOUR = "#111827"
MUTED_COLOUR = "#6B7280"
RULE_COLOUR = "#D1D5DB"
MARK_COLOUR = "#1F2937"  # the thin line drawn where a field starts

MONO_FONT = "ui-monospace, SFMono-Regular, Menlo, Consolas, 'DejaVu Sans Mono', monospace"
SANS_FONT = "system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif"

#: graphviz font (graphviz resolves it through fontconfig; falls back to a sans face).
GRAPH_FONT = "Helvetica"

#: Colours of the architecture roles in diagrams (clients, wire, broker, store, ...).
ROLE_COLOURS: dict[str, str] = {
    "client": "#F9A8D4",    # like hosts: where messages are born and consumed
    "remoting": "#FDBA74",  # the wire
    "broker": "#93C5FD",    # broker services
    "store": "#FFD966",     # the CommitLog and its machinery
    "index": "#8EDBA8",     # derived files: ConsumeQueue, IndexFile
    "namesrv": "#C9A7EB",   # routing
    "spark": "#7EE0D2",     # analytics
    "state": "#E5E7EB",     # a state in a state machine
    "note": "#F1F5F9",
}


def kind_colour(kind: str | None) -> str:
    """Background colour of a field kind (``None``: a byte no span covers)."""
    if kind is None:
        return UNCOVERED_COLOUR
    return KIND_COLOURS.get(kind, UNKNOWN_COLOUR)


def kind_code(kind: str | None) -> str:
    """Two-letter code of a field kind for the text view (``None``: two spaces)."""
    if kind is None:
        return "  "
    return KIND_CODES.get(kind, UNKNOWN_CODE)


def kind_description(kind: str) -> str:
    """What a kind means, from :data:`pymq_ref.formats.spans.KINDS`."""
    return KINDS.get(kind, "unknown kind")


def role_colour(role: str) -> str:
    """Fill colour of an architecture role in diagrams."""
    return ROLE_COLOURS.get(role, ROLE_COLOURS["note"])
