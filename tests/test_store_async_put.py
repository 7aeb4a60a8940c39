"""``MessageStore.async_put_message`` (RocketMQ's ``asyncPutMessage``): puts awaited on an asyncio
loop share group-commit rounds run on that loop, with the same guarantees as the blocking put."""

from __future__ import annotations

import asyncio
import threading

from pymq_ref.formats.batch import BatchEntry, encode_batch
from pymq_ref.formats.message import MessageRecord
from pymq_ref.store.commit_log import PutMessageStatus
from pymq_ref.store.store_config import FlushDiskType
from store_helpers import fail_first_flush, msg, open_store

SYNC = FlushDiskType.SYNC_FLUSH


def _sync_store(tmp_path, **kw):
    return open_store(tmp_path, threads=True, flush_disk_type=SYNC, mapped_file_size_commit_log=64 * 1024, **kw)


def _end(result) -> int:
    return result.append_result.wrote_offset + result.append_result.wrote_bytes


def test_sixteen_async_writers_share_rounds_and_every_put_ok_is_on_disk(tmp_path):
    store = _sync_store(tmp_path, sync_flush_timeout=20_000)
    queue = store.commit_log.queue
    uncovered, results = [], []

    async def writer(k):
        for i in range(40):
            r = await store.async_put_message(msg(k * 1000 + i, queue_id=k % 4, size=300))
            results.append(r)
            if queue.flushed_where < _end(r):
                uncovered.append((k, i))

    async def main():
        await asyncio.gather(*(writer(k) for k in range(16)))

    asyncio.run(main())
    rounds = store.group_commit.rounds
    assert [r.status for r in results] == [PutMessageStatus.PUT_OK] * 640
    assert uncovered == []
    # one round serves every writer that appended in the same loop turn (a roll may add one)
    assert rounds <= 640 // 8
    store.do_reput()
    stored = [store.get_max_offset_in_queue("T", q) for q in range(4)]
    assert stored == [160] * 4
    store.shutdown()


def test_async_and_blocking_puts_on_one_store_are_all_flushed(tmp_path):
    store = _sync_store(tmp_path, sync_flush_timeout=20_000)
    queue = store.commit_log.queue
    statuses, uncovered = [], []

    def check(r):
        statuses.append(r.status)
        if queue.flushed_where < _end(r):
            uncovered.append(r)

    def blocking(k):
        for i in range(30):
            check(store.put_message(msg(k * 1000 + i, size=200)))

    async def async_writer(k):
        for i in range(30):
            check(await store.async_put_message(msg(k * 1000 + i, size=200)))

    async def main():
        await asyncio.gather(*(async_writer(k) for k in range(8, 16)))

    threads = [threading.Thread(target=blocking, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    asyncio.run(main())
    for t in threads:
        t.join()
    store.shutdown()
    assert statuses == [PutMessageStatus.PUT_OK] * (4 * 30 + 8 * 30)
    assert uncovered == []


def test_async_put_writes_the_same_bytes_as_put_message(tmp_path):
    """Deterministic mode (no threads): same messages, same clock, same CommitLog bytes."""
    messages = [msg(i, queue_id=i % 2, size=40 + i) for i in range(30)]
    blocking = open_store(tmp_path / "a", flush_disk_type=SYNC)
    for m in messages:
        assert blocking.put_message(m).ok
    awaited = open_store(tmp_path / "b", flush_disk_type=SYNC)

    async def main():
        return [await awaited.async_put_message(m) for m in messages]

    assert all(r.ok for r in asyncio.run(main()))
    assert awaited.commit_log.queue.flushed_where == awaited.commit_log.max_offset
    a = blocking.commit_log.get_data(0, blocking.commit_log.max_offset)
    b = awaited.commit_log.get_data(0, awaited.commit_log.max_offset)
    blocking.shutdown()
    awaited.shutdown()
    assert a == b


def test_failed_flush_answers_every_waiter_of_the_round_and_the_next_round_recovers(tmp_path):
    store = _sync_store(tmp_path, sync_flush_timeout=5000)
    queue = store.commit_log.queue
    fail_first_flush(queue)

    async def main():
        first = await asyncio.gather(*(store.async_put_message(msg(k)) for k in range(5)))
        second = await asyncio.gather(*(store.async_put_message(msg(k)) for k in range(5, 10)))
        return first, second

    first, second = asyncio.run(main())
    assert [r.status for r in first] == [PutMessageStatus.FLUSH_DISK_TIMEOUT] * 5
    assert isinstance(store.group_commit.last_error, OSError)
    assert [r.status for r in second] == [PutMessageStatus.PUT_OK] * 5
    assert queue.flushed_where >= max(_end(r) for r in second)
    store.shutdown()


def test_a_cancelled_put_keeps_its_record_and_does_not_disturb_the_round(tmp_path):
    store = _sync_store(tmp_path)

    async def main():
        tasks = [asyncio.ensure_future(store.async_put_message(msg(k))) for k in range(6)]
        await asyncio.sleep(0)  # every task appended and now waits for the round
        tasks[2].cancel()
        return await asyncio.gather(*tasks, return_exceptions=True)

    results = asyncio.run(main())
    assert isinstance(results[2], asyncio.CancelledError)
    assert [r.status for i, r in enumerate(results) if i != 2] == [PutMessageStatus.PUT_OK] * 5
    store.do_reput()
    assert store.get_max_offset_in_queue("T", 0) == 6  # the cancelled one too
    store.shutdown()


def test_async_refusals_batches_and_async_flush(tmp_path):
    store = open_store(tmp_path, threads=True)  # ASYNC_FLUSH: nothing to wait for
    batch = MessageRecord(topic="T", queue_id=1, body=encode_batch([BatchEntry(body=b"one", properties={"UNIQ_KEY": "U1"}),
                                                                BatchEntry(body=b"two", properties={"UNIQ_KEY": "U2"})]),
                          properties={"CLUSTER": "DefaultCluster"}, born_host=msg(0).born_host,
                          store_host=msg(0).store_host)

    async def main():
        ok = await store.async_put_message(msg(1))
        many = await store.async_put_messages(batch)
        too_big = await store.async_put_message(msg(2, size=store.config.max_message_size + 1))
        return ok, many, too_big

    ok, many, too_big = asyncio.run(main())
    assert ok.status is PutMessageStatus.PUT_OK
    assert many.status is PutMessageStatus.PUT_OK and many.append_result.msg_num == 2
    assert too_big.status is PutMessageStatus.MESSAGE_ILLEGAL and "body length" in too_big.error
    store.shutdown()
    closed = asyncio.run(store.async_put_message(msg(3)))
    assert closed.status is PutMessageStatus.SERVICE_NOT_AVAILABLE
