"""5.x receive + ack through gRPC against 4.x pull + offset commit through remoting: same broker, same messages.

One ``pymq up --grpc`` (name server, broker, gRPC endpoint on one event loop) holds N messages in one
topic of 4 queues. Two consumer groups read all of them, in turn:

* ours: the v2 API as a SimpleConsumer uses it — ``ReceiveMessage`` (batch 32, invisible 60 s; a POP:
  per-queue lock, a checkpoint record put into the revive topic, offsets committed) and one
  ``AckMessage`` with the batch's receipt handles (an ACK record per message into the revive log);
  grpcio's sync stub;
* baseline: ``PULL_MESSAGE`` (32 per request, queue by queue) + ``UPDATE_CONSUMER_OFFSET`` per batch
  through pymq-ref's remoting client — what a 4.x push consumer does.

Rate = messages consumed per second. Target: ours >= 0.5x. Where the time goes (``--profile``): the
server-side profile of the gRPC path, printed by function.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Row, interleaved_best, parser, report  # noqa: E402

TOPIC = "BenchPop"
QUEUES = 4
BATCH = 32


def _ports(n: int) -> list[int]:
    first, _, last = os.environ.get("PYMQ_PORT_RANGE", "").partition("-")
    out: list[int] = []
    candidates = iter(range(int(first), int(last) + 1)) if first else None
    while len(out) < n:
        port = next(candidates) if candidates else 0
        if port and any(abs(port - p) < 5 for p in out):
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            out.append(s.getsockname()[1])
    return out


def start(store: str):
    from pymq_ref.broker.grpc import GrpcConfig
    from pymq_ref.broker.server.up import UpServer
    ns, broker, grpc_port = _ports(3)
    up = UpServer(store, namesrv_port=ns, broker_port=broker + 2, grpc=f"127.0.0.1:{grpc_port}",
                  settings={"timerWheelEnable": "false"}, grpc_config=GrpcConfig()).start()
    return up


def fill(up, n: int) -> None:
    from pymq_ref.broker.send import SendMessageRequest
    from pymq_ref.formats.beans import TopicConfig
    from pymq_ref.formats.properties import TAGS, UNIQ_KEY, JavaHashMap, encode_properties

    def run():
        b = up.broker
        b.topics.update_topic_config(TopicConfig(TOPIC, read_queue_nums=QUEUES, write_queue_nums=QUEUES))
        for i in range(n):
            props = JavaHashMap()
            props[TAGS] = "TagA"
            props[UNIQ_KEY] = f"{i:032X}"
            b.send_message(SendMessageRequest(topic=TOPIC, body=b"x" * 256, properties=encode_properties(props),
                                              queue_id=i % QUEUES))
    up.call(run, timeout=600)
    while up.call(lambda: sum(up.broker.get_max_offset(TOPIC, q) for q in range(QUEUES))) < n:
        time.sleep(0.05)


def grpc_consume(endpoint: str, group: str, n: int) -> float:
    import grpc
    from rocketmq.grpc_protocol import definition_pb2 as pb
    from rocketmq.grpc_protocol import service_pb2 as spb
    from rocketmq.grpc_protocol import service_pb2_grpc

    with grpc.insecure_channel(endpoint) as channel:
        stub = service_pb2_grpc.MessagingServiceStub(channel)
        req = spb.ReceiveMessageRequest(group=pb.Resource(name=group),
                                        message_queue=pb.MessageQueue(topic=pb.Resource(name=TOPIC), id=0),
                                        batch_size=BATCH, invisible_duration={"seconds": 60})
        got = 0
        start = time.perf_counter()
        while got < n:
            msgs = [r.message for r in stub.ReceiveMessage(req, timeout=30) if r.HasField("message")]
            if not msgs:
                break
            entries = [spb.AckMessageEntry(message_id=m.system_properties.message_id,
                                           receipt_handle=m.system_properties.receipt_handle) for m in msgs]
            ack = stub.AckMessage(spb.AckMessageRequest(group=pb.Resource(name=group), topic=pb.Resource(name=TOPIC),
                                                        entries=entries), timeout=30)
            assert ack.status.code == pb.Code.OK, ack.status
            got += len(msgs)
        elapsed = time.perf_counter() - start
    assert got == n, f"received {got} of {n}"
    return n / elapsed


def pull_consume(addr: str, group: str, n: int) -> float:
    from pymq_ref.formats.message import iter_records
    from pymq_ref.remoting import headers as H
    from pymq_ref.remoting.codes import RequestCode
    from pymq_ref.remoting.command import RemotingCommand
    from pymq_ref.remoting.transport import RemotingClient

    async def main() -> float:
        client = RemotingClient()
        try:
            offsets = [0] * QUEUES
            got = 0
            start = time.perf_counter()
            while got < n:
                progressed = False
                for q in range(QUEUES):
                    r = await client.invoke(addr, RemotingCommand.request(RequestCode.PULL_MESSAGE, H.PullMessageRequestHeader(
                        consumer_group=group, topic=TOPIC, queue_id=q, queue_offset=offsets[q], max_msg_nums=BATCH,
                        sys_flag=0x4, commit_offset=0, suspend_timeout_millis=0, subscription="*", sub_version=0,
                        expression_type="TAG")), timeout=30)
                    if r.code != 0:
                        continue
                    count = sum(1 for _ in iter_records(r.body, with_spans=False))
                    offsets[q] = int(r.ext()["nextBeginOffset"])
                    await client.invoke(addr, RemotingCommand.request(
                        RequestCode.UPDATE_CONSUMER_OFFSET, H.UpdateConsumerOffsetRequestHeader(
                            consumer_group=group, topic=TOPIC, queue_id=q, commit_offset=offsets[q])), timeout=30)
                    got += count
                    progressed = True
                if not progressed:
                    break
            elapsed = time.perf_counter() - start
        finally:
            await client.close()
        assert got == n, f"pulled {got} of {n}"
        return n / elapsed
    return asyncio.run(main())


def profile(up, n: int) -> None:
    """The gRPC path's server-side time by function (cProfile of the broker loop's thread is not
    reachable from here, so the broker work is profiled in-process through the facade)."""
    import cProfile
    import pstats

    from pymq_ref.broker.pop import AckRequest, PopRequest

    def run():
        b = up.broker
        prof = cProfile.Profile()
        prof.enable()
        got = 0
        while got < n:
            res = b.pop_message(PopRequest("ProfileGroup", TOPIC, -1, BATCH, 60_000))
            if not res.messages:
                break
            for m in res.messages:
                b.ack_message(AckRequest("ProfileGroup", m.real_topic, m.queue_id, m.queue_offset, m.extra_info))
            got += len(res.messages)
        prof.disable()
        return prof
    prof = up.call(run, timeout=600)
    pstats.Stats(prof).sort_stats("cumulative").print_stats(18)


def main() -> int:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--profile", action="store_true", help="also print where the broker's time goes (POP + ACK)")
    args = p.parse_args()
    n = 2_000 if args.quick else 10_000
    repeat = args.repeat or (1 if args.quick else 3)
    with tempfile.TemporaryDirectory(prefix="bench_pop_") as tmp:
        up = start(os.path.join(tmp, "store"))
        try:
            fill(up, n)
            endpoint, addr = up.up.grpc.endpoint, up.broker_addr
            rounds = iter(range(1000))
            o, b = interleaved_best(lambda: grpc_consume(endpoint, f"GrpcGroup{next(rounds)}", n),
                                    lambda: pull_consume(addr, f"PullGroup{next(rounds)}", n), repeat)
            if args.profile:
                profile(up, n)
        finally:
            up.stop()
    rows = [Row(f"consume {n} msgs (256 B), batches of {BATCH}", o, b, "msg/s", 0.5,
                "ours: gRPC ReceiveMessage + AckMessage (POP, CK + ACK records); baseline: remoting PULL_MESSAGE "
                "+ UPDATE_CONSUMER_OFFSET")]
    return report("bench_pop", "5.x receive + ack (gRPC, POP) vs 4.x pull + offset commit (remoting), same broker",
                  rows, {"messages": n, "queues": QUEUES, "batch": BATCH, "repeat": repeat})


if __name__ == "__main__":
    sys.exit(main())
