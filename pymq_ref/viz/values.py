"""Short, deterministic text for a decoded value (the 'value' column of field tables).

Must stay deterministic (no ids, no addresses): nbval compares its output.
"""

from __future__ import annotations

DEFAULT_WIDTH = 60


def format_value(value: object, width: int | None = DEFAULT_WIDTH) -> str:
    """Render a span value: ints in decimal, bytes/str as Python literals, others via ``str``.

    Longer results are cut to ``width`` characters ending in ``...``.
    """
    if value is None:
        text = ""
    elif isinstance(value, bool):
        text = str(value)
    elif isinstance(value, int):
        text = str(value)
    elif isinstance(value, (bytes, bytearray, memoryview)):
        text = repr(bytes(value))
    elif isinstance(value, str):
        text = repr(value)
    elif isinstance(value, dict):
        text = "{" + ", ".join(f"{k!r}: {format_value(v, None)}" for k, v in value.items()) + "}"
    elif isinstance(value, tuple) and hasattr(value, "_fields"):  # NamedTuple (Host): its own str
        text = str(value)
    elif isinstance(value, (list, tuple)):
        text = "[" + ", ".join(format_value(v, None) for v in value) + "]"
    else:
        text = str(value)
    return clip(text, width)


def clip(text: str, width: int | None) -> str:
    """Cut ``text`` to ``width`` characters, marking the cut with ``...``."""
    if width is None or len(text) <= width:
        return text
    return text[: max(width - 3, 0)] + "..."


def ascii_char(byte: int) -> str:
    """The ASCII column's character for a byte: printable ASCII as is, anything else '.'."""
    return chr(byte) if 0x20 <= byte < 0x7F else "."
