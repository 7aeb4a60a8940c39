"""``OS_PAGECACHE_BUSY``: a put that finds the put lock held for more than
``osPageCacheBusyTimeOutMills`` is refused at once instead of queueing (``DefaultMessageStore.isOSPageCacheBusy``)."""

from __future__ import annotations

import threading

import pytest

from pymq_ref.broker.response import BrokerSystemError
from pymq_ref.broker.send import raise_for_put
from pymq_ref.store.clock import ManualClock
from pymq_ref.store.commit_log import PutMessageStatus
from store_helpers import msg, open_store


class StallingDispatcher:
    """A dispatcher that blocks its first call (dispatch runs under the put lock in this mode)."""

    def __init__(self):
        self.entered, self.release = threading.Event(), threading.Event()

    def dispatch(self, req) -> None:
        if not self.entered.is_set():
            self.entered.set()
            assert self.release.wait(10)


def test_a_put_behind_a_stalled_lock_answers_os_pagecache_busy(tmp_path):
    clock = ManualClock(1_700_000_000_000)
    store = open_store(tmp_path, clock)
    stall = StallingDispatcher()
    store.dispatchers.append(stall)
    first = []
    writer = threading.Thread(target=lambda: first.append(store.put_message(msg(0))))
    try:
        writer.start()
        assert stall.entered.wait(10)
        assert store.commit_log.begin_time_in_lock == 1_700_000_000_000
        clock.advance(1000)
        assert not store.is_os_page_cache_busy()  # exactly the timeout: not yet
        clock.advance(1)
        assert store.is_os_page_cache_busy()
        refused = store.put_message(msg(1))
        assert refused.status is PutMessageStatus.OS_PAGECACHE_BUSY and "1000 ms" in refused.error
        assert store.put_messages(msg(2)).status is PutMessageStatus.OS_PAGECACHE_BUSY
        with pytest.raises(BrokerSystemError, match=r"\[PC_SYNCHRONIZED\]broker busy"):
            raise_for_put(refused)
    finally:
        stall.release.set()
        writer.join(10)
    try:
        assert first[0].ok and store.commit_log.begin_time_in_lock == 0
        assert not store.is_os_page_cache_busy()
        assert store.put_message(msg(3)).ok
        assert store.get_max_offset_in_queue("T", 0) == 2  # the refused puts left nothing behind
    finally:
        store.shutdown()


def test_the_lock_time_is_cleared_when_a_put_fails_inside_the_lock(tmp_path):
    store = open_store(tmp_path)
    try:
        def boom(req):
            raise RuntimeError("dispatcher failed")
        store.dispatchers.insert(0, type("Failing", (), {"dispatch": staticmethod(boom)})())
        with pytest.raises(RuntimeError):
            store.put_message(msg(0))
        assert store.commit_log.begin_time_in_lock == 0 and not store.is_os_page_cache_busy()
    finally:
        store.dispatchers.pop(0)
        store.shutdown()
