"""Helpers for the broker-server tests (no tests here): small store files, a client that records
what the broker asks it, and request builders."""

from __future__ import annotations

import asyncio

from pymq_ref.remoting import headers as H
from pymq_ref.remoting.codes import RequestCode
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.dispatch import RequestDispatcher
from pymq_ref.remoting.transport import RemotingClient

#: broker.conf settings that keep test stores small (1 MiB CommitLog files, 300-unit ConsumeQueue files)
SMALL_STORE = {"mappedFileSizeCommitLog": str(1024 * 1024), "mappedFileSizeConsumeQueue": str(300 * 20),
               "maxHashSlotNum": "1024", "maxIndexNum": "4096"}


def props(**kv: str) -> str:
    return "".join(f"{k}\x01{v}\x02" for k, v in kv.items())


def send_v2(topic: str, body: bytes, *, queue_id: int = 0, group: str = "PG", properties: str | None = None,
            code: int = RequestCode.SEND_MESSAGE_V2, oneway: bool = False) -> RemotingCommand:
    h = H.SendMessageRequestHeaderV2(producer_group=group, topic=topic, default_topic="TBW102",
                                     default_topic_queue_nums=4, queue_id=queue_id, sys_flag=0, born_timestamp=1,
                                     flag=0, properties=properties if properties is not None else props(WAIT="true"),
                                     reconsume_times=0, unit_mode=False, batch=False)
    return RemotingCommand.request(code, h, body, oneway=oneway)


def pull(group: str, topic: str, queue_id: int, offset: int, *, suspend_ms: int = 0, sys_flag: int | None = None,
         subscription: str = "*") -> RemotingCommand:
    flag = sys_flag if sys_flag is not None else (0x4 | (0x2 if suspend_ms else 0))
    return RemotingCommand.request(RequestCode.PULL_MESSAGE, H.PullMessageRequestHeader(
        consumer_group=group, topic=topic, queue_id=queue_id, queue_offset=offset, max_msg_nums=32, sys_flag=flag,
        commit_offset=0, suspend_timeout_millis=suspend_ms, subscription=subscription, sub_version=0,
        expression_type="TAG"))


class RecordingClient(RemotingClient):
    """A client that answers nothing the broker asks but keeps every request it got."""

    def __init__(self):
        self.received: list[RemotingCommand] = []
        self.arrived = asyncio.Event()
        dispatcher = RequestDispatcher(default=self._record)
        super().__init__(dispatcher)

    def _record(self, request, channel):
        self.received.append(request)
        self.arrived.set()
        return None

    async def wait_for(self, code: int, timeout: float = 10.0) -> RemotingCommand:
        async def find():
            while True:
                for r in self.received:
                    if r.code == code:
                        return r
                self.arrived.clear()
                await self.arrived.wait()
        return await asyncio.wait_for(find(), timeout)
