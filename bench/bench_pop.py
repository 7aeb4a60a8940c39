"""5.x receive + ack through gRPC against 4.x pull + offset commit through remoting: same broker, same messages.

One ``pymq up --grpc`` (name server, broker, gRPC endpoint on one event loop) holds N messages in one
topic of 4 queues. Two consumer groups read all of them, in turn:

* ours: the v2 API as a SimpleConsumer uses it — ``ReceiveMessage`` (batch 32, invisible 60 s; a POP:
  per-queue lock, a checkpoint record put into the revive topic, offsets committed) and one
  ``AckMessage`` with the batch's receipt handles (an ACK record per message into the revive log);
  grpcio's sync stub;
* baseline: ``PULL_MESSAGE`` (32 per request, queue by queue) + ``UPDATE_CONSUMER_OFFSET`` per batch
  through pymq-ref's remoting client — what a 4.x push consumer does.

Rate = messages consumed per second. Target: ours >= 0.5x. The server is ``pymq up --grpc`` in its
own process; the load generator (both clients, in turn) in this one. An informational row measures
the transport alone — a grpcio server with no broker behind it streaming canned messages — which
bounds what any Python gRPC endpoint can reach against the pull path.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Row, interleaved_best, parser, report  # noqa: E402

from pymq_ref.tools.ports import free_ports  # noqa: E402

TOPIC = "BenchPop"
QUEUES = 4
BATCH = 32


_BATCH_ACK_UP = """
import asyncio, signal, sys
from pymq_ref.broker.grpc import GrpcConfig
from pymq_ref.broker.server.up import start_up, stop_up

async def main(store, ns, broker, grpc):
    up = await start_up(store, namesrv_port=ns, broker_port=broker, grpc=grpc,
                        grpc_config=GrpcConfig(enable_batch_ack=True))
    print(up.describe(), flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGINT, stop.set)
    await stop.wait()
    await stop_up(up)

asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]))
"""


def start(store: str, batch_ack: bool = False):
    """``pymq up --grpc`` in its own process (so the server and the load generator each get a core),
    as a user starts it — or, with ``batch_ack``, the same through the Python API with the proxy's
    ``enableBatchAck``; returns (process, broker address, gRPC endpoint)."""
    ns, broker, grpc_port = free_ports(3, spacing=5)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    if batch_ack:
        argv = [sys.executable, "-c", _BATCH_ACK_UP, store, str(ns), str(broker + 2), f"127.0.0.1:{grpc_port}"]
    else:
        argv = [sys.executable, "-m", "pymq_ref.cli", "up", "--store", store, "--namesrv-port", str(ns),
                "--broker-port", str(broker + 2), "--grpc", f"127.0.0.1:{grpc_port}"]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for line in proc.stdout:
        if "gRPC endpoint" in line:
            break
    else:
        raise RuntimeError("pymq up did not start")
    return proc, f"127.0.0.1:{broker + 2}", f"127.0.0.1:{grpc_port}"


def stop(proc) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()


def fill(addr: str, n: int) -> None:
    """N messages of 256 bytes, round robin over 4 queues, sent through the remoting client (the topic
    is auto-created with 4 queues by the first send)."""
    from pymq_ref.remoting import headers as H
    from pymq_ref.remoting.codes import RequestCode
    from pymq_ref.remoting.command import RemotingCommand
    from pymq_ref.remoting.transport import RemotingClient

    def frame(i):
        h = H.SendMessageRequestHeaderV2(producer_group="BenchProducer", topic=TOPIC, default_topic="TBW102",
                                         default_topic_queue_nums=QUEUES, queue_id=i % QUEUES, sys_flag=0,
                                         born_timestamp=1, flag=0,
                                         properties=f"TAGS\x01TagA\x02UNIQ_KEY\x01{i:032X}\x02WAIT\x01true\x02",
                                         reconsume_times=0, unit_mode=False, batch=False)
        return RemotingCommand.request(RequestCode.SEND_MESSAGE_V2, h, b"x" * 256)

    async def main():
        client = RemotingClient()
        try:
            first = await client.invoke(addr, frame(0), timeout=30)
            assert first.code == 0, first
            for chunk in range(1, n, 64):
                rs = await asyncio.gather(*(client.invoke(addr, frame(i), timeout=30)
                                            for i in range(chunk, min(chunk + 64, n))))
                assert all(r.code == 0 for r in rs)
        finally:
            await client.close()
    asyncio.run(main())
    time.sleep(0.5)  # the reput thread dispatches the last ones


def _bare_serve(ready, stop) -> None:
    """A grpcio server with no broker behind it: ReceiveMessage streams ``batch_size`` canned messages,
    AckMessage answers OK — what the transport alone costs (the ceiling of the gRPC path)."""
    from concurrent import futures

    import grpc
    from rocketmq.grpc_protocol import definition_pb2 as pb
    from rocketmq.grpc_protocol import service_pb2 as spb
    from rocketmq.grpc_protocol import service_pb2_grpc

    canned = spb.ReceiveMessageResponse(message=pb.Message(
        topic=pb.Resource(name=TOPIC), body=b"x" * 256,
        system_properties=pb.SystemProperties(message_id="0" * 32, tag="TagA", receipt_handle="0 1 60000 0 0 b 0 0 0")))

    class Bare(service_pb2_grpc.MessagingServiceServicer):
        def ReceiveMessage(self, request, context):
            yield spb.ReceiveMessageResponse(status=pb.Status(code=pb.Code.OK))
            for _ in range(request.batch_size):
                yield canned

        def AckMessage(self, request, context):
            return spb.AckMessageResponse(status=pb.Status(code=pb.Code.OK))

    server = grpc.server(futures.ThreadPoolExecutor(16))
    service_pb2_grpc.add_MessagingServiceServicer_to_server(Bare(), server)
    port = server.add_insecure_port(f"127.0.0.1:{free_ports(1, spacing=5)[0]}")
    server.start()
    ready.put(port)
    stop.wait()
    server.stop(0)


def bare_consume(n: int) -> float:
    import multiprocessing as mp
    ctx = mp.get_context("spawn")
    ready, stop = ctx.Queue(), ctx.Event()
    proc = ctx.Process(target=_bare_serve, args=(ready, stop), daemon=True)
    proc.start()
    try:
        return grpc_consume(f"127.0.0.1:{ready.get(timeout=60)}", "Bare", n)
    finally:
        stop.set()
        proc.join(10)


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
    assert got >= n, f"received {got} of {n}"  # (the bare server always answers full batches)
    return got / elapsed


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


def main() -> int:
    args = parser(__doc__.splitlines()[0]).parse_args()
    n = 2_000 if args.quick else 10_000
    repeat = args.repeat or (2 if args.quick else 3)
    with tempfile.TemporaryDirectory(prefix="bench_pop_") as tmp:
        proc, addr, endpoint = start(os.path.join(tmp, "store"))
        try:
            fill(addr, n)
            rounds = iter(range(1000))
            o, b = interleaved_best(lambda: grpc_consume(endpoint, f"GrpcGroup{next(rounds)}", n),
                                    lambda: pull_consume(addr, f"PullGroup{next(rounds)}", n), repeat)
            bare, b2 = interleaved_best(lambda: bare_consume(n), lambda: pull_consume(addr, f"PullGroup{next(rounds)}", n),
                                        repeat)
        finally:
            stop(proc)
        proc, addr, endpoint = start(os.path.join(tmp, "store2"), batch_ack=True)
        try:
            fill(addr, n)
            ob, b3 = interleaved_best(lambda: grpc_consume(endpoint, f"GrpcGroup{next(rounds)}", n),
                                      lambda: pull_consume(addr, f"PullGroup{next(rounds)}", n), repeat)
        finally:
            stop(proc)
    rows = [Row(f"consume {n} msgs (256 B), batches of {BATCH}", o, b, "msg/s", 0.5,
                "ours: gRPC ReceiveMessage + AckMessage (POP: CK + an ACK record per message); baseline: remoting "
                "PULL_MESSAGE + UPDATE_CONSUMER_OFFSET; server: pymq up --grpc in its own process"),
            Row("the same with enableBatchAck (one bAck record per POP)", ob, b3, "msg/s", None,
                "the 5.x proxy option (default off): an AckMessage's entries become one BatchAckMsg per checkpoint"),
            Row("the transport alone: bare grpcio, canned messages", bare, b2, "msg/s", None,
                "ours: a grpcio server with no broker (stream of 32 canned messages + one AckMessage per batch) — "
                "the ceiling of the gRPC path; baseline: the same pull + commit as above")]
    return report("bench_pop", "5.x receive + ack (gRPC, POP) vs 4.x pull + offset commit (remoting), same broker",
                  rows, {"messages": n, "queues": QUEUES, "batch": BATCH, "repeat": repeat})


if __name__ == "__main__":
    sys.exit(main())
