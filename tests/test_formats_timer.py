"""5.x timer layouts (TimerLog unit and blank, TimerWheel slot, timercheck) byte for byte, per 5.1.4's source."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pymq_ref.errors import BadMagicError, SizeMismatchError, TruncatedError
from pymq_ref.formats import schemas
from pymq_ref.formats.timer import (DEFAULT_SLOTS_TOTAL, EMPTY_SLOT, SLOT_SIZE, TIMER_LOG_BLANK_MAGIC_CODE,
                                    TIMER_LOG_UNIT_SIZE, TimerCheckpointData, TimerLogBlank, TimerLogUnit,
                                    decode_raw_slot, decode_slot_for, decode_timer_checkpoint,
                                    decode_timer_log_unit, encode_slot, encode_timer_checkpoint,
                                    encode_timer_log_blank, encode_timer_log_unit, is_magic_ok, slot_index,
                                    wheel_length)

I32 = st.integers(-(2**31), 2**31 - 1)
I64 = st.integers(-(2**63), 2**63 - 1)


def test_vectors_section8():
    assert DEFAULT_SLOTS_TOTAL == 604_800 and wheel_length() == 38_707_200
    assert TIMER_LOG_UNIT_SIZE == 52 and SLOT_SIZE == 32
    assert TIMER_LOG_BLANK_MAGIC_CODE == -875286124 and TIMER_LOG_BLANK_MAGIC_CODE & 0xFFFFFFFF == 0xCBD43194


def test_unit_bytes():
    unit = TimerLogUnit(prev_pos=-1, magic=1, curr_write_time_ms=1_700_000_000_000, delayed_delta=5000,
                        offset_py=258, size_py=300, real_topic_hash=-1)
    raw = encode_timer_log_unit(unit)
    assert raw.hex().upper() == ("00000034" "FFFFFFFFFFFFFFFF" "00000001" "0000018BCFE56800" "00001388"
                                 "0000000000000102" "0000012C" "FFFFFFFF" "0000000000000000")
    back = decode_timer_log_unit(raw, base=104)
    assert back.delayed_time_ms == 1_700_000_005_000 and not back.need_roll
    assert [(s.offset, s.length, s.path) for s in back.spans][:3] == [(104, 4, "size"), (108, 8, "prev_pos"),
                                                                       (116, 4, "magic")]
    assert schemas.schema("timer_log_unit").build(schemas.schema("timer_log_unit").parse(raw)) == raw


def test_blank_and_errors():
    raw = encode_timer_log_blank(40)
    assert raw.hex().upper() == "00000028" "0000000000000000" "CBD43194"
    assert decode_timer_log_unit(raw + bytes(24)) == TimerLogBlank(40, decode_timer_log_unit(raw).spans)
    bad = bytearray(encode_timer_log_unit(TimerLogUnit(-1, 1, 0, 0, 0, 0)))
    bad[15] = 0x11
    with pytest.raises(BadMagicError, match="magic"):
        decode_timer_log_unit(bytes(bad))
    bad[15], bad[3] = 0x01, 50
    with pytest.raises(SizeMismatchError):
        decode_timer_log_unit(bytes(bad))
    with pytest.raises(TruncatedError):
        decode_timer_log_unit(bytes(10))
    assert is_magic_ok(7) and is_magic_ok(0) and not is_magic_ok(16)


@given(I64, st.integers(0, 15), I64, I32, I64, I32, I32, I64)
def test_unit_roundtrip_and_schema(prev, magic, write, delta, off, size, h, reserved):
    unit = TimerLogUnit(prev, magic, write, delta, off, size, h, reserved)
    raw = encode_timer_log_unit(unit)
    assert len(raw) == 52
    assert decode_timer_log_unit(raw, with_spans=False) == unit
    parsed = schemas.schema("timer_log_unit").parse(raw)
    assert (parsed.prev_pos, parsed.magic, parsed.offset_py, parsed.reserved) == (prev, magic, off, reserved)


def test_slot_bytes_and_validity():
    raw = encode_slot(1_700_000_003_000, 0, 104, 3, 0, precision_ms=1000)
    assert raw.hex().upper() == "000000006553F103" "0000000000000000" "0000000000000068" "00000003" "00000000"
    assert decode_raw_slot(raw).time_ms == 1_700_000_003_000
    assert schemas.schema("timer_wheel_slot").parse(raw).time_div_precision == 1_700_000_003
    wheel = bytearray(wheel_length(10))
    t = 1_700_000_003_000
    i = slot_index(t, 1000, 10)
    assert i == 1_700_000_003 % 20
    wheel[i * 32:(i + 1) * 32] = raw
    assert decode_slot_for(wheel, t, 1000, 10).last_pos == 104
    assert decode_slot_for(wheel, t + 20_000, 1000, 10) == EMPTY_SLOT  # same index, another round
    assert decode_slot_for(wheel, t + 500, 1000, 10).num == 3  # same second


@given(st.integers(0, 2**40), st.sampled_from([100, 1000, 5000]), st.integers(1, 1000))
def test_slot_index_matches_java(t, precision, slots):
    assert slot_index(t, precision, slots) == (t // precision) % (slots * 2)


def test_checkpoint_layout():
    cp = TimerCheckpointData(1_700_000_000_000, 52 * 7, 9, 9, 0, 1_700_000_000_500, 4)
    raw = encode_timer_checkpoint(cp)
    assert len(raw) == 4096 and raw[56:] == bytes(4040)
    assert raw[:16].hex().upper() == "0000018BCFE56800" "000000000000016C"
    back = decode_timer_checkpoint(raw)
    assert back.counter == 4 and [s.offset for s in back.spans] == [0, 8, 16, 24, 32, 40, 48]
    assert schemas.describe("timer_checkpoint", "last_read_time_ms").startswith("the dequeue position")
