"""Where a consumer keeps its consume offsets (``client/consumer/store/``).

* :class:`RemoteBrokerOffsetStore` — clustering: offsets live on the broker that holds the queue
  (QUERY_CONSUMER_OFFSET to read, UPDATE_CONSUMER_OFFSET one-way to persist); the client keeps a
  memory copy and pushes it every 5 s, on queue removal and on shutdown.
* :class:`LocalFileOffsetStore` — broadcasting: every client consumes everything, so offsets are
  its own and live in a JSON file (``OffsetSerializeWrapper``:
  ``<dir>/<clientId>/<group>/offsets.json``, the previous copy kept as ``offsets.json.bak``).

``read_offset(mq, READ_FROM_MEMORY | READ_FROM_STORE | MEMORY_FIRST_THEN_STORE)`` answers ``-1`` when
the store has no offset for the queue, ``-2`` on any other failure (``computePullFromWhere`` then
skips the queue this round).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from pymq_ref.formats.message_queue import MessageQueue
from pymq_ref.remoting.bodies.bean import decode_json, encode_json
from pymq_ref.remoting.bodies.consumer import OffsetSerializeWrapper
from pymq_ref.remoting.errors import RemotingError

from .. import requests as R
from ..errors import MQBrokerError, MQClientError

log = logging.getLogger("pymq_ref.client")

READ_FROM_MEMORY, READ_FROM_STORE, MEMORY_FIRST_THEN_STORE = "READ_FROM_MEMORY", "READ_FROM_STORE", "MEMORY_FIRST_THEN_STORE"


class _MemoryOffsets:
    def __init__(self):
        self.offset_table: dict[MessageQueue, int] = {}

    def update_offset(self, mq: MessageQueue, offset: int, increase_only: bool) -> None:
        old = self.offset_table.get(mq)
        if old is None or not increase_only or offset > old:
            self.offset_table[mq] = offset

    def remove_offset(self, mq: MessageQueue) -> None:
        self.offset_table.pop(mq, None)

    def clone_offset_table(self, topic: str) -> dict[MessageQueue, int]:
        return {mq: o for mq, o in self.offset_table.items() if mq.topic == topic}


class RemoteBrokerOffsetStore(_MemoryOffsets):
    def __init__(self, instance, group: str):
        super().__init__()
        self.instance = instance
        self.group = group

    async def load(self) -> None:
        pass

    def _addr(self, mq: MessageQueue) -> str | None:
        return self.instance.find_broker_address_in_subscribe(mq.broker_name, 0, True)

    async def _addr_refreshing(self, mq: MessageQueue) -> str:
        addr = self._addr(mq)
        if addr is None:
            await self.instance.update_topic_route(mq.topic)
            addr = self._addr(mq)
        if addr is None:
            raise MQClientError(f"The broker[{mq.broker_name}] not exist", 10003)
        return addr

    async def read_offset(self, mq: MessageQueue, how: str) -> int:
        if how in (READ_FROM_MEMORY, MEMORY_FIRST_THEN_STORE):
            off = self.offset_table.get(mq)
            if off is not None:
                return off
            if how == READ_FROM_MEMORY:
                return -1
        try:
            addr = await self._addr_refreshing(mq)
            response = await self.instance.remoting.invoke(addr, R.query_consumer_offset(self.group, mq),
                                                           self.instance.config.mq_client_api_timeout)
            offset = R.read_query_consumer_offset(response, addr)
        except MQBrokerError:
            return -1  # QUERY_NOT_FOUND (22): no offset yet
        except (MQClientError, RemotingError, OSError) as e:
            log.info("read offset of %s for %s failed: %s", mq, self.group, e)
            return -2
        self.update_offset(mq, offset, False)
        return offset

    async def update_consume_offset_to_broker(self, mq: MessageQueue, offset: int, oneway: bool = True) -> None:
        addr = await self._addr_refreshing(mq)
        request = R.update_consumer_offset(self.group, mq, offset, oneway)
        if oneway:
            await self.instance.remoting.invoke_oneway(addr, request)
        else:
            R.check(await self.instance.remoting.invoke(addr, request, self.instance.config.mq_client_api_timeout), addr)

    async def persist(self, mq: MessageQueue) -> None:
        off = self.offset_table.get(mq)
        if off is not None:
            try:
                await self.update_consume_offset_to_broker(mq, off)
            except Exception as e:
                log.info("persist offset of %s for %s failed: %s", mq, self.group, e)

    async def persist_all(self, mqs) -> None:
        """Push the offsets of the queues we own; forget the others (``persistAll``)."""
        for mq, off in list(self.offset_table.items()):
            if mq in mqs:
                try:
                    await self.update_consume_offset_to_broker(mq, off)
                except Exception as e:
                    log.info("persist offset of %s for %s failed: %s", mq, self.group, e)
        for mq in [mq for mq in self.offset_table if mq not in mqs]:
            del self.offset_table[mq]


class LocalFileOffsetStore(_MemoryOffsets):
    def __init__(self, base_dir: str | os.PathLike | None, client_id: str, group: str):
        super().__init__()
        base = Path(base_dir) if base_dir else Path(os.environ.get(
            "rocketmq.client.localOffsetStoreDir", Path.home() / ".rocketmq_offsets"))
        self.path = base / client_id / group / "offsets.json"
        self.group = group

    async def load(self) -> None:
        for path in (self.path, self.path.with_name("offsets.json.bak")):
            try:
                text = path.read_text(encoding="utf-8")
            except FileNotFoundError:
                continue
            if not text.strip():
                continue
            try:
                wrapper = decode_json(OffsetSerializeWrapper, text)
            except ValueError as e:
                raise MQClientError(f"load consumer offset file {path} failed: {e}") from None
            for mq, off in (wrapper.offset_table or {}).items():
                self.offset_table[mq] = int(off)
            return

    async def read_offset(self, mq: MessageQueue, how: str) -> int:
        off = self.offset_table.get(mq)
        if off is not None or how == READ_FROM_MEMORY:
            return -1 if off is None else off
        await self.load()
        return self.offset_table.get(mq, -1)

    async def persist(self, mq: MessageQueue) -> None:
        pass  # the Java store persists on persistAll only

    async def persist_all(self, mqs) -> None:
        if not mqs:
            return
        table = {mq: off for mq, off in self.offset_table.items() if mq in mqs}
        text = encode_json(OffsetSerializeWrapper(offset_table=table))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name("offsets.json.tmp")
        tmp.write_text(text, encoding="utf-8")
        if self.path.exists():
            os.replace(self.path, self.path.with_name("offsets.json.bak"))
        os.replace(tmp, self.path)
