"""IndexFile.put_keys (and its fast paths) against a plain transcription of ``IndexFile.putKey``.

The reference below writes one field at a time into a bytearray, in the order of RocketMQ 4.9.4
``IndexFile.putKey`` / ``IndexHeader`` setters; the mapped file must hold the same bytes after
any sequence of records (one or more keys each, colliding slots, timestamps going backwards,
an inherited begin time, the file filling up).
"""

from __future__ import annotations

import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from pymq_ref.store.index import IndexFile

HEADER, SLOT, ENTRY = 40, 4, 20
INT_MAX = 2**31 - 1


class ReferenceIndexFile:
    def __init__(self, slots: int, index_num: int, end_phy: int, end_ts: int):
        self.slots, self.index_num = slots, index_num
        self.buf = bytearray(HEADER + slots * SLOT + index_num * ENTRY)
        self.begin_ts = self.end_ts = self.begin_phy = self.end_phy = 0
        self.slot_count, self.count = 0, 1
        if end_phy > 0:  # the constructor's setters write only their own fields
            self.begin_phy = self.end_phy = end_phy
            struct.pack_into(">qq", self.buf, 16, end_phy, end_phy)
        if end_ts > 0:
            self.begin_ts = self.end_ts = end_ts
            struct.pack_into(">qq", self.buf, 0, end_ts, end_ts)

    def _header(self):
        struct.pack_into(">qqqqii", self.buf, 0, self.begin_ts, self.end_ts, self.begin_phy, self.end_phy,
                         self.slot_count, self.count)

    def put_key(self, key_hash: int, phy: int, ts: int) -> bool:
        if self.count >= self.index_num:
            return False
        slot_at = HEADER + (key_hash % self.slots) * SLOT
        (slot_value,) = struct.unpack_from(">i", self.buf, slot_at)
        if slot_value <= 0 or slot_value > self.count:
            slot_value = 0
        if self.begin_ts <= 0:
            diff = 0
        else:
            delta = ts - self.begin_ts
            diff = abs(delta) // 1000 * (1 if delta >= 0 else -1)  # Java long division
            diff = INT_MAX if diff > INT_MAX else max(diff, 0)
        at = HEADER + self.slots * SLOT + self.count * ENTRY
        struct.pack_into(">iqii", self.buf, at, key_hash, phy, diff, slot_value)
        struct.pack_into(">i", self.buf, slot_at, self.count)
        if self.count <= 1:
            self.begin_phy, self.begin_ts = phy, ts
        if slot_value == 0:
            self.slot_count += 1
        self.count += 1
        self.end_phy, self.end_ts = phy, ts
        self._header()
        return True


@settings(max_examples=150, deadline=None)
@given(groups=st.lists(st.tuples(st.lists(st.integers(0, 2**31 - 1), min_size=0, max_size=4),
                                 st.integers(-5_000, 5_000_000)), min_size=1, max_size=25),
       slots=st.sampled_from([1, 3, 7, 101]), index_num=st.integers(2, 40),
       inherited=st.sampled_from([0, 1_700_000_000_000]))
def test_put_keys_matches_put_key_reference(tmp_path_factory, groups, slots, index_num, inherited):
    path = tmp_path_factory.mktemp("idx") / "f"
    ours = IndexFile(str(path), slots, index_num, inherited, inherited)
    ref = ReferenceIndexFile(slots, index_num, inherited, inherited)
    ts = 1_700_000_000_000
    try:
        for n, (hashes, step) in enumerate(groups):
            ts += step
            phy = 1000 * (n + 1)
            expected = sum(1 for h in hashes if ref.put_key(h, phy, ts))
            assert ours.put_keys(hashes, phy, ts) == expected
            assert bytes(ours.mm[:len(ref.buf)]) == bytes(ref.buf)
            assert (ours.index_count, ours.hash_slot_count, ours.begin_timestamp, ours.end_timestamp,
                    ours.begin_phy_offset, ours.end_phy_offset) == (
                ref.count, ref.slot_count, ref.begin_ts, ref.end_ts, ref.begin_phy, ref.end_phy)
    finally:
        ours.close()
