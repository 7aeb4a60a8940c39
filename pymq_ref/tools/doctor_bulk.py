"""The doctor's checks of a whole chunk of records at once, for the healthy case.

A sound store answers every check the same way: each record's ConsumeQueue unit is
``(offset, size, tagsCode)`` where its queue offset says, and its index entries are the next
entries of the index files, in order, with the timeDiffs ``putKey`` writes. :func:`units_match`
and :func:`entries_match` verify that for a chunk of :class:`~pymq_ref.tools.doctor_walk.Rec`
with numpy (a few array operations instead of a Python call per record) and, only when *every*
record of the chunk passes, mark the units and entries as matched exactly as the per-record checks
would. When anything differs they change nothing and answer False: the doctor then runs the
per-record checks on that chunk, which find and explain the difference. So the findings are those
of the per-record checks whatever the store holds.

Read-only: buffers come from the doctor's :class:`~pymq_ref.tools.readonly_maps.ReadOnlyMaps`, and
no numpy view on one outlives the function that made it.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from ..formats.index_file import INT_MAX

_CQ_DTYPE = np.dtype([("phy", ">i8"), ("size", ">i4"), ("tags", ">i8")])
_ENTRY_DTYPE = np.dtype([("hash", ">i4"), ("phy", ">i8"), ("diff", ">i4"), ("prev", ">i4")])
_ELIGIBLE = (0x0, 0x8)


def units_match(doctor, chunk) -> bool:
    """Do the ConsumeQueue units of every eligible record of ``chunk`` (a
    :class:`~pymq_ref.tools.doctor_walk.Chunk`) say what they should? If so, mark them matched
    (``doctor.queues``) and answer True."""
    kind = chunk.sys_flag & 0xC
    groups: dict = defaultdict(list)
    topics, queue_ids = chunk.topics, chunk.queue_id.tolist()
    for i in np.nonzero((kind == 0x0) | (kind == 0x8))[0].tolist():
        groups[(topics[i], queue_ids[i])].append(i)
    marks = []
    for key, members in groups.items():
        q = doctor.queues.get(key)
        if q is None or not q.segments or not q.file_size:
            return False
        sel = np.array(members, np.int64)
        byte = chunk.queue_offset[sel] * 20
        if int(byte.min()) < q.start or int(byte.max()) >= q.end:
            return False
        seg_no = (byte - q.start) // q.file_size
        for i in np.unique(seg_no).tolist():
            if i >= len(q.segments):
                return False
            seg = q.segments[i]
            if seg.base != q.start + i * q.file_size or seg.size != q.file_size:
                return False
            part = seg_no == i
            at = (byte[part] - seg.base) // 20
            units = np.frombuffer(doctor.maps.get(seg.path), _CQ_DTYPE, q.file_size // 20)[at]  # (a copy)
            rows = sel[part]
            if not (np.array_equal(units["phy"], chunk.phy[rows]) and np.array_equal(units["size"], chunk.size[rows])
                    and np.array_equal(units["tags"], chunk.tags_code[rows])):
                return False
        index = (byte - q.start) // 20
        if len(np.unique(index)) != len(index):
            return False
        marks.append((q, index))
    for q, index in marks:
        matched = np.frombuffer(q.matched, np.uint8)
        q.matched_count += int(len(index) - np.count_nonzero(matched[index]))
        matched[index] = 1
        del matched
    return True


def _time_diffs(ts: np.ndarray, begin: int) -> np.ndarray:
    """:func:`pymq_ref.formats.index_file.time_diff_seconds` of each store timestamp."""
    if begin <= 0:
        return np.zeros(len(ts), np.int64)
    delta = ts - begin
    diff = np.where(delta >= 0, delta // 1000, -((-delta) // 1000))  # Java truncates toward zero
    return np.clip(diff, 0, INT_MAX)


def entries_match(check, chunk) -> bool:
    """Are the index entries of ``chunk``'s records (in log order) the next entries after the
    cursor of :class:`~pymq_ref.tools.doctor_index.IndexCheck` ``check``, with the right key
    hashes, offsets and timeDiffs? If so, mark them, count them, move the cursor, and answer True."""
    counts = chunk.key_counts
    total = int(counts.sum())
    if not total or check.first_phy is None:
        return True
    keyed = chunk.phy[counts > 0]
    if int(keyed.min()) < check.first_phy or int(keyed.max()) > check.last_phy:
        return False
    want_phy = np.repeat(chunk.phy, counts)
    want_hash = chunk.hashes
    want_ts = np.repeat(chunk.store_timestamp, counts)
    views = check.views
    fi, n = check._cursor
    blocks = []  # (view, first entry number, count, begin of entry 1's put or None)
    taken = 0
    while taken < total:
        if fi >= len(views):
            return False
        view = views[fi]
        if n >= view.count:
            fi, n = fi + 1, 1
            continue
        count = min(view.count - n, total - taken)
        entries = np.frombuffer(view.buffer(), _ENTRY_DTYPE, count, view.entry_offset(n))
        got_hash, got_phy, got_diff = entries["hash"].astype(np.int64), entries["phy"].astype(np.int64), \
            entries["diff"].astype(np.int64)
        del entries
        part = slice(taken, taken + count)
        if not (np.array_equal(got_phy, want_phy[part]) and np.array_equal(got_hash, want_hash[part])):
            return False
        # timeDiffs: entry 1 was put against what the file was created with, later ones against entry 1's record
        ts = want_ts[part]
        checked = count
        if n == 1:
            first = view.first_begin
            if first is None:
                checked -= 1
            elif got_diff[0] != _time_diffs(ts[:1], first)[0]:
                return False
            if count > 1 and not np.array_equal(got_diff[1:], _time_diffs(ts[1:], view.begin)):
                return False
        elif not np.array_equal(got_diff, _time_diffs(ts, view.begin)):
            return False
        blocks.append((view, n, count, checked))
        taken += count
        n += count
    for view, first, count, checked in blocks:
        view.marked[first:first + count] = b"\x01" * count
        check.times_checked += checked
    check.matched += total
    check._cursor = (fi, n)
    return True


def chains_sound(buf, slots: int, count: int, first_entry_at: int, hash_slot_count: int) -> bool:
    """Does one index file pass every structural check of ``IndexCheck._check_chains``? Every
    non-empty slot heads a chain of entries of that slot, linked strictly backwards, no entry is
    reached twice or never, no timeDiff is negative, and the header counts the non-empty slots.
    With numpy: each entry must be reached exactly once, as a slot's head or as one later entry's
    ``prev`` of the same slot (then, since ``prev`` only points back, every chain ends at a head)."""
    from ..formats.index_file import INDEX_HEADER_SIZE

    slot_heads = np.frombuffer(buf, ">i4", slots, INDEX_HEADER_SIZE).astype(np.int64)
    used = np.nonzero(slot_heads)[0]
    if len(used) != hash_slot_count:
        return False
    if count <= 1:
        return not len(used)
    heads = slot_heads[used]
    if int(heads.min()) < 1 or int(heads.max()) >= count:
        return False
    entries = np.frombuffer(buf, _ENTRY_DTYPE, count - 1, first_entry_at + 20)  # entries 1 .. count-1
    slot_of = entries["hash"].astype(np.int64) % slots
    prev = entries["prev"].astype(np.int64)
    negative = bool((entries["diff"] < 0).any())
    del entries
    if negative or not np.array_equal(slot_of[heads - 1], used):
        return False
    number = np.arange(1, count)
    linked = prev != 0
    if bool(((prev[linked] < 1) | (prev[linked] >= number[linked])).any()):
        return False
    if not np.array_equal(slot_of[prev[linked] - 1], slot_of[linked]):
        return False
    reached = np.bincount(np.concatenate([heads, prev[linked]]), minlength=count)[1:]
    return bool((reached == 1).all())
