"""Views of whole store files for the book: the spans of an IndexFile, and its slot chains as a graph.

An IndexFile is a hash table on disk (see the book's reference appendix, §IndexFile): a header, ``hash_slot_num``
slots holding
the number of the newest entry of their bucket, then entries that each point back to the previous
entry of the same bucket. These helpers draw what :mod:`pymq_ref.formats.index_file` decodes:

* :func:`index_spans` — header, slot and entry spans, ready for :func:`pymq_ref.viz.hexview`;
* :func:`index_chain_diagram` — every non-empty slot and the chain of entries hanging from it,
  as a ``graphviz.Digraph`` (needs the ``dot`` binary to render).

Read-only views over a buffer (a mapped file, ``bytes``): nothing here opens, writes or parses
anything itself.
"""

from __future__ import annotations

from typing import Mapping

from pymq_ref.formats.index_file import (INDEX_ENTRY_SIZE, decode_index_entry, decode_index_header, decode_slot,
                                         entry_position)
from pymq_ref.formats.spans import Span


def index_spans(buf, hash_slot_num: int, *, all_slots: bool = False, entry_zero: bool = True) -> list[Span]:
    """Spans of an IndexFile in ``buf``: the header, the slots (non-empty ones unless
    ``all_slots``) and every written entry (numbers 1 .. indexCount-1). ``entry_zero`` adds a
    blank span for the never-written entry 0."""
    header = decode_index_header(buf)
    spans = list(header.spans)
    for slot in range(hash_slot_num):
        value, span = decode_slot(buf, slot)
        if all_slots or value:
            spans.append(span)
    if entry_zero:
        spans.append(Span(entry_position(0, hash_slot_num), INDEX_ENTRY_SIZE, "entry[0] (never written)", "blank"))
    for number in range(1, header.effective_index_count):
        spans.extend(decode_index_entry(buf, entry_position(number, hash_slot_num), number=number).spans)
    return spans


def index_chains(buf, hash_slot_num: int) -> dict[int, list[int]]:
    """``{slot: [entry numbers, newest first]}`` for every non-empty slot, following ``prev_index``
    exactly as the query walk does (stops at 0, at an out-of-range number or at a self-loop)."""
    header = decode_index_header(buf, with_spans=False)
    count = header.effective_index_count
    chains: dict[int, list[int]] = {}
    for slot in range(hash_slot_num):
        cur, _ = decode_slot(buf, slot, with_spans=False)
        if cur <= 0 or cur >= count:
            continue
        chain: list[int] = []
        while 0 < cur < count and cur not in chain:
            chain.append(cur)
            cur = decode_index_entry(buf, entry_position(cur, hash_slot_num), with_spans=False).prev_index
        chains[slot] = chain
    return chains


def index_chain_diagram(buf, hash_slot_num: int, *, labels: Mapping[int, str] | None = None,
                        title: str | None = None):
    """The slot table and its chains: ``slot i -> newest entry -> ... -> oldest entry``.

    ``labels`` maps entry numbers to a caption (e.g. the key that produced the entry); each entry
    node also shows its key hash and CommitLog offset.
    """
    from pymq_ref.viz.diagrams import digraph
    from pymq_ref.viz.palette import kind_colour

    labels = labels or {}
    g = digraph("index_chains", rankdir="LR", title=title)
    chains = index_chains(buf, hash_slot_num)
    # one record node: with rankdir=LR its fields stack vertically, like the slot table on disk
    fields = "|".join(f"<s{slot}> slot {slot}: {chains.get(slot, [0])[0]}" for slot in range(hash_slot_num))
    g.node("slots", fields, shape="record", style="filled", fillcolor=kind_colour("link"))
    for slot, chain in chains.items():
        previous = f"slots:s{slot}"
        for number in chain:
            entry = decode_index_entry(buf, entry_position(number, hash_slot_num), with_spans=False)
            caption = labels.get(number)
            text = f"entry {number}" + (f"\\n{caption}" if caption else "") + \
                f"\\nhash {entry.key_hash}\\nphy {entry.phy_offset}, +{entry.time_diff} s"
            g.node(f"e{number}", text, fillcolor=kind_colour("hash"))
            g.edge(previous, f"e{number}", label="head" if previous.startswith("slots") else "prev")
            previous = f"e{number}"
    return g
