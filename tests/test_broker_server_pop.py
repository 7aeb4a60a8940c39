"""5.x POP over the remoting codec: POP_MESSAGE / ACK_MESSAGE / CHANGE_MESSAGE_INVISIBLETIME against
``pymq up`` (real sockets), the records in the body, the revive topic, typed refusals, a held POP."""

from __future__ import annotations

import asyncio
import time

from pymq_ref.broker.server.up import run_up
from pymq_ref.formats import pop
from pymq_ref.formats.message import iter_records
from pymq_ref.remoting.codes import RequestCode5
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.headers.pop import (AckMessageRequestHeader, ChangeInvisibleTimeRequestHeader,
                                           PopMessageRequestHeader)

from broker_server_helpers import SMALL_STORE, RecordingClient, props, send_v2


def pop_request(topic, group="PopG", n=8, invisible=60_000, poll=0):
    return RemotingCommand.request(RequestCode5.POP_MESSAGE, PopMessageRequestHeader(
        consumer_group=group, topic=topic, queue_id=-1, max_msg_nums=n, invisible_time=invisible, poll_time=poll,
        born_time=int(time.time() * 1000), init_mode=0, exp_type="TAG", exp="*"))


def extra_info(response, record) -> str:
    """What a 5.x client builds for a message of a normal topic (``MQClientAPIImpl.processPopResponse``)."""
    ext = response.ext()
    offsets = {tuple(p.split(" ")[:2]): p.split(" ")[2] for p in ext["startOffsetInfo"].split(";")}
    ck = offsets[(pop.NORMAL_TOPIC, str(record.queue_id))]
    return pop.build_extra_info(int(ck), int(ext["popTime"]), int(ext["invisibleTime"]), int(ext["reviveQid"]),
                                record.topic, "broker-a", record.queue_id, record.queue_offset)


def test_pop_ack_and_change_invisible_time_on_the_wire(tmp_path):
    async def main():
        async with run_up(str(tmp_path / "store"), namesrv_port=0, broker_port=0, settings=SMALL_STORE) as up:
            c = RecordingClient()
            try:
                for i in range(3):
                    assert (await c.invoke(up.broker_addr, send_v2("PT", f"p{i}".encode(), queue_id=0,
                                                                   properties=props(TAGS="A")))).code == 0
                for _ in range(250):  # the reput thread dispatches them to the ConsumeQueue
                    if up.broker.broker.get_max_offset("PT", 0) == 3:
                        break
                    await asyncio.sleep(0.02)
                found = await c.invoke(up.broker_addr, pop_request("PT"))
                assert found.remark == "FOUND"
                records = list(iter_records(found.body, with_spans=False))
                assert [r.body for r in records] == [b"p0", b"p1", b"p2"]
                assert found.ext()["msgOffsetInfo"] == "0 0 0,1,2"
                nothing = await c.invoke(up.broker_addr, pop_request("PT"))
                assert (nothing.code, nothing.remark) == (210, "NO_MESSAGE_IN_QUEUE")

                first = records[0]
                ack = AckMessageRequestHeader(consumer_group="PopG", topic="PT", queue_id=0,
                                              extra_info=extra_info(found, first), offset=first.queue_offset)
                assert (await c.invoke(up.broker_addr, RemotingCommand.request(RequestCode5.ACK_MESSAGE, ack))).code == 0
                second = records[1]
                change = ChangeInvisibleTimeRequestHeader(consumer_group="PopG", topic="PT", queue_id=0,
                                                          extra_info=extra_info(found, second),
                                                          offset=second.queue_offset, invisible_time=0)
                changed = await c.invoke(up.broker_addr,
                                         RemotingCommand.request(RequestCode5.CHANGE_MESSAGE_INVISIBLETIME, change))
                assert changed.code == 0 and changed.ext()["invisibleTime"] == "0"
                bad = AckMessageRequestHeader(consumer_group="PopG", topic="PT", queue_id=0, extra_info="x",
                                              offset=0)
                refused = await c.invoke(up.broker_addr, RemotingCommand.request(RequestCode5.ACK_MESSAGE, bad))
                assert refused.code == 13 and "extraInfo" in refused.remark  # MESSAGE_ILLEGAL
                unknown = await c.invoke(up.broker_addr, pop_request("NoSuchTopic"))
                assert unknown.code == 17  # TOPIC_NOT_EXIST

                # the revive log: a CK for the pop, an ACK, then the change's new CK and the old one's ACK
                def revive_tags():
                    b = up.broker.broker
                    out = []
                    for q in range(b.pop.config.revive_queue_num):
                        got = b.store.get_message("x", b.pop.revive_topic, q, 0, 32)
                        out += [r.tags for r in got.records()]
                    return sorted(out)
                for _ in range(200):  # the reput thread dispatches them
                    if len(revive_tags()) == 4:
                        break
                    await asyncio.sleep(0.02)
                assert revive_tags() == ["ack", "ack", "ck", "ck"]

                # p1 was made visible again (invisible time 0): a held POP gets it back as a retry
                back = await c.invoke(up.broker_addr, pop_request("PT", invisible=30_000, poll=8_000), timeout=15)
                assert back.code == 0
                [again] = list(iter_records(back.body, with_spans=False))
                assert (again.body, again.topic, again.reconsume_times) == (b"p1", "PT", 1)
                assert again.properties[pop.POP_CK].split(" ")[4] == pop.RETRY_TOPIC
            finally:
                await c.close()

    asyncio.run(main())
