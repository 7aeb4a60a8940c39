"""Free TCP ports on 127.0.0.1 for tests, benchmarks and loopback clusters.

``$PYMQ_PORT_RANGE`` (``first-last``) confines the search to a range, for machines where each user
owns one; otherwise the kernel picks. A port found free may still be taken before it is bound:
callers bind at once and say clearly when they cannot.
"""

from __future__ import annotations

import os
import socket


def free_port(first: int = 0, last: int = 0) -> int:
    """A port free on 127.0.0.1: the first in ``[first, last]`` (an assigned range), else any."""
    for port in (range(first, last + 1) if first else [0]):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return s.getsockname()[1]
    raise OSError(f"no free port in [{first}, {last}]")


def free_ports(n: int, spacing: int = 1) -> list[int]:
    """``n`` distinct free ports, at least ``spacing`` apart (a broker also binds its neighbours:
    VIP ``-2``, HA ``+1``), from ``$PYMQ_PORT_RANGE`` when it is set, else any."""
    first, _, last = os.environ.get("PYMQ_PORT_RANGE", "").partition("-")
    out: list[int] = []
    while len(out) < n:
        if first:
            port = free_port(max([int(first)] + [p + spacing for p in out]), int(last))
        else:
            port = free_port()
            if any(abs(port - p) < spacing or port == p for p in out):
                continue
        out.append(port)
    return out
