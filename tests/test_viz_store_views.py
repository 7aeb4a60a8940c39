"""IndexFile views: spans cover header/slots/entries; chains follow prev_index like the query walk."""

from __future__ import annotations

from pymq_ref.formats.hashing import index_key_hash
from pymq_ref.formats.index_file import entry_position, slot_position
from pymq_ref.store.index import IndexFile
from pymq_ref.viz import hexview
from pymq_ref.viz.store_views import index_chain_diagram, index_chains, index_spans

SLOTS, ENTRIES = 4, 8


def _index(tmp_path, keys):
    f = IndexFile(str(tmp_path / "20231114221320000"), SLOTS, ENTRIES)
    for n, key in enumerate(keys):
        assert f.put_key(key, 100 * n, 1_700_000_000_000 + 1000 * n)
    return f


def test_chains_match_slots_and_prev_links(tmp_path):
    keys = [f"T#k{n}" for n in range(6)]
    f = _index(tmp_path, keys)
    chains = index_chains(f.mm, SLOTS)
    expected: dict[int, list[int]] = {}
    for number, key in enumerate(keys, start=1):
        expected.setdefault(index_key_hash(key) % SLOTS, []).insert(0, number)
    assert chains == expected
    # every chain's walk is what select_phy_offset walks: newest first
    for key in keys:
        slot = index_key_hash(key) % SLOTS
        same_hash = [n for n in chains[slot] if index_key_hash(keys[n - 1]) == index_key_hash(key)]
        assert f.select_phy_offset(key, 32, 0, 2**63 - 1) == [100 * (n - 1) for n in same_hash]
    f.close()


def test_spans_cover_header_slots_entries(tmp_path):
    f = _index(tmp_path, ["T#a", "T#b", "T#c"])
    spans = index_spans(f.mm, SLOTS)
    paths = [s.path for s in spans]
    assert paths[:6] == ["begin_timestamp", "end_timestamp", "begin_phy_offset", "end_phy_offset",
                         "hash_slot_count", "index_count"]
    assert "entry[0] (never written)" in paths
    assert [p for p in paths if p.endswith(".prev_index")] == [f"entry[{n}].prev_index" for n in (1, 2, 3)]
    slot_spans = [s for s in spans if s.path.startswith("slot[")]
    assert all(s.value != 0 and s.offset == slot_position(int(s.path[5:-1])) for s in slot_spans)
    assert len(index_spans(f.mm, SLOTS, all_slots=True)) == len(spans) + SLOTS - len(slot_spans)
    entry3 = next(s for s in spans if s.path == "entry[3].key_hash")
    assert entry3.offset == entry_position(3, SLOTS)
    assert "entry[3].phy_offset" in hexview(f.mm, spans).text()
    f.close()


def test_diagram_has_one_edge_per_link(tmp_path):
    f = _index(tmp_path, [f"T#k{n}" for n in range(5)])
    g = index_chain_diagram(f.mm, SLOTS, labels={1: "T#k0"})
    src = g.source
    chains = index_chains(f.mm, SLOTS)
    assert src.count('label=head') == len(chains)
    assert src.count('label=prev') == sum(len(c) - 1 for c in chains.values())
    assert "T#k0" in src
    f.close()


def test_empty_and_corrupt_links_do_not_loop(tmp_path):
    f = IndexFile(str(tmp_path / "20231114221320000"), SLOTS, ENTRIES)
    assert index_chains(f.mm, SLOTS) == {}
    assert f.put_key("T#a", 0, 1_700_000_000_000) and f.put_key("T#a", 10, 1_700_000_000_000)
    # make entry 1 point at entry 2 (a cycle): the walk must stop
    pos = entry_position(1, SLOTS) + 16
    f.mm[pos:pos + 4] = (2).to_bytes(4, "big")
    slot = index_key_hash("T#a") % SLOTS
    assert index_chains(f.mm, SLOTS) == {slot: [2, 1]}
    f.close()
