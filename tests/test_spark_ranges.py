"""Byte-range partitioning of CommitLog segments (pymq_ref/spark/ranges.py), without Spark.

The claim: for any cut of a segment into ranges, the union of what each range yields equals
one walk over the whole segment — on clean segments, on damaged ones, and on RocketMQ's own.
"""

from __future__ import annotations

import functools
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pymq_ref.formats.message import BlankRecord, MessageRecord, iter_records
from pymq_ref.spark.ranges import Gap, is_boundary, next_boundary, plan_ranges, walk_range
from pymq_ref.tools.segments import open_readonly
from store_helpers import msg, open_store

REAL = Path(__file__).parent / "data" / "rocketmq-4.9.4" / "store"
SEG = 8192


@functools.cache
def _segments():
    """Segments of 8 KiB written by the real store: full ones (with blanks) and the live one."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        store = open_store(root, mapped_file_size_commit_log=SEG)
        for i in range(120):
            store.put_message(msg(i, topic=f"T{i % 3}", queue_id=i % 2, size=20 + (i * 37) % 400))
        store.shutdown()
        files = sorted((root / "commitlog").iterdir())
        return [(int(f.name), f.read_bytes()) for f in files]


@pytest.fixture
def segments():
    return _segments()


def cut_walk(buf, base, cuts):
    points = [0, *sorted(set(c for c in cuts if 0 < c < len(buf))), len(buf)]
    out = []
    for lo, hi in zip(points, points[1:]):
        out.extend(walk_range(buf, lo, hi, base))
    return out


def test_whole_walk_equals_the_sequential_decoder(segments):
    assert len(segments) >= 3
    for base, buf in segments:
        assert list(walk_range(buf, 0, len(buf), base)) == list(iter_records(buf, base=base))
    for base, buf in segments[:-1]:  # every full segment ends with its END_OF_FILE blank
        assert isinstance(list(walk_range(buf, 0, len(buf), base))[-1], BlankRecord)


def test_every_position_of_a_clean_segment_is_resynchronised_to_the_next_record(segments):
    base, buf = segments[0]
    starts = [r.phy_offset - base for r in walk_range(buf, 0, len(buf), base)]
    assert len(starts) > 5 and isinstance(list(walk_range(buf, 0, len(buf), base))[-1], BlankRecord)
    for pos in range(1, len(buf)):
        expected = next((s for s in starts if s >= pos), None)
        assert next_boundary(buf, pos, len(buf), base) == expected, pos


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_union_of_random_cuts_equals_the_whole_walk(data):
    segments = _segments()
    index = data.draw(st.integers(0, len(segments) - 1))
    base, buf = segments[index]
    cuts = data.draw(st.lists(st.integers(1, len(buf) - 1), max_size=12))
    whole = list(walk_range(buf, 0, len(buf), base))
    assert cut_walk(buf, base, cuts) == whole


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_union_of_random_cuts_equals_the_whole_walk_on_damaged_segments(data):
    segments = _segments()
    base, clean = segments[data.draw(st.integers(0, len(segments) - 1))]
    buf = bytearray(clean)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(buf) - 1))
        length = data.draw(st.integers(1, 64))
        fill = data.draw(st.sampled_from([b"\x00", b"\xff", b"\x5a", None]))
        chunk = bytes(data.draw(st.binary(min_size=length, max_size=length))) if fill is None else fill * length
        buf[at:at + length] = chunk[:len(buf) - at]
    buf = bytes(buf)
    cuts = data.draw(st.lists(st.integers(1, len(buf) - 1), max_size=12))
    whole = list(walk_range(buf, 0, len(buf), base))
    assert cut_walk(buf, base, cuts) == whole
    # the walk covers the written data: records and gaps tile it without overlap
    pos = 0
    for item in whole:
        start = item.position if isinstance(item, Gap) else item.phy_offset - base
        assert start >= pos
        pos = start + (item.length if isinstance(item, Gap) else item.total_size)


def test_damage_is_a_gap_and_the_walk_resumes_at_the_next_record(segments):
    base, clean = segments[0]
    records = [r for r in walk_range(clean, 0, len(clean), base) if isinstance(r, MessageRecord)]
    victim = records[3]
    pos = victim.phy_offset - base
    buf = bytearray(clean)
    buf[pos + 4:pos + 8] = b"\x00\x00\x00\x00"  # magic code gone
    items = list(walk_range(bytes(buf), 0, len(buf), base))
    gaps = [i for i in items if isinstance(i, Gap)]
    assert gaps == [Gap(pos, victim.total_size, gaps[0].reason)] and "magic_code" in gaps[0].reason
    assert [r.phy_offset for r in items if isinstance(r, MessageRecord)] == \
        [r.phy_offset for r in records if r is not victim]


def test_a_record_that_is_not_where_it_says_is_not_a_boundary(segments):
    base, buf = segments[1]
    first = next(walk_range(buf, 0, len(buf), base))
    second = next(walk_range(buf, 1, len(buf), base))
    assert is_boundary(buf, second.phy_offset - base, base)
    assert not is_boundary(buf, second.phy_offset - base, base + 1)  # wrong segment base: nothing self-locates
    assert first.phy_offset == base


def test_zero_tail_is_the_end_not_a_gap(segments):
    base, buf = segments[-1]
    items = list(walk_range(buf, 0, len(buf), base))
    assert items and all(isinstance(i, MessageRecord) for i in items)
    end = items[-1].phy_offset - base + items[-1].total_size
    assert not any(buf[end:])
    assert list(walk_range(buf, end, len(buf), base)) == []


def test_real_rocketmq_segments_under_every_cut_size():
    for path in sorted((REAL / "commitlog").iterdir()):
        with open_readonly(path) as buf:
            base = int(path.name)
            whole = list(walk_range(buf, 0, len(buf), base))
            assert whole == list(iter_records(buf, base=base))
            for step in (1000, 4096, 7777, 30000):
                assert cut_walk(buf, base, range(step, len(buf), step)) == whole, (path.name, step)


def test_plan_ranges_cover_each_file_once(tmp_path):
    paths = []
    for i, size in enumerate((0, 10, 100, 101)):
        p = tmp_path / f"{i:020d}"
        p.write_bytes(b"\0" * size)
        paths.append((str(p), i))
    ranges = plan_ranges(paths, 25)
    for path, _ in paths:
        mine = [(r.start, r.end) for r in ranges if r.path == path]
        size = os.path.getsize(path)
        assert [b for a, b in mine] == [min(size, a + 25) for a, _ in mine]
        assert sum(b - a for a, b in mine) == size
    with pytest.raises(ValueError):
        plan_ranges(paths, 0)
