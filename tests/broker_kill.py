"""One kill -9 trial of a ``pymq broker`` process under load with SYNC_FLUSH (no tests here; used by
``tests/test_broker_wire_reliability.py``).

A trial: start ``pymq broker -c broker.conf`` (a small store: 64 KiB CommitLog files, so the load
rolls files), create a topic, have four connections send messages as fast as the broker acknowledges
them, SIGKILL the process at a random moment, then recover the store the way the broker does at
start (``MessageStore.open``) and check that every acknowledged message is there — at the CommitLog
offset its answer named, with its body and key, and in its ConsumeQueue at the queue offset its
answer named — shut it down cleanly and run the doctor on it. Optionally the broker process itself
is started again and must serve the acknowledged messages to a pull.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
from dataclasses import dataclass, field

from pymq_ref.broker.server.config import parse_broker_conf
from pymq_ref.formats.msgid import parse_offset_msg_id
from pymq_ref.formats.properties import encode_properties
from pymq_ref.remoting import headers as H
from pymq_ref.remoting.codes import RequestCode as R
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.errors import RemotingError
from pymq_ref.remoting.transport import RemotingClient
from pymq_ref.store.message_store import MessageStore
from pymq_ref.tools.doctor import DoctorOptions, run_doctor

TOPIC = "KillTopic"
QUEUES = 4
SMALL = {"mappedFileSizeCommitLog": 64 * 1024, "mappedFileSizeConsumeQueue": 60 * 20, "maxHashSlotNum": 64,
         "maxIndexNum": 512}


def broker_conf(store: str, port: int) -> str:
    lines = {"brokerClusterName": "DefaultCluster", "brokerName": "broker-kill", "brokerIP1": "127.0.0.1",
             "listenPort": port, "flushDiskType": "SYNC_FLUSH", "brokerRole": "ASYNC_MASTER",
             "storePathRootDir": store, "autoCreateTopicEnable": "true", **SMALL}
    return "".join(f"{k}={v}\n" for k, v in lines.items())


@dataclass
class Acked:
    key: str
    body: bytes
    phy_offset: int
    queue_id: int
    queue_offset: int


@dataclass
class TrialResult:
    trial: int
    acked: list[Acked] = field(default_factory=list)
    errors_after_kill: int = 0
    missing: list[str] = field(default_factory=list)
    doctor_findings: dict = field(default_factory=dict)
    served_after_restart: int | None = None


def send_request(key: str, body: bytes, queue_id: int, topic: str = TOPIC) -> RemotingCommand:
    h = H.SendMessageRequestHeaderV2(producer_group="KillProducer", topic=topic, default_topic="TBW102",
                                     default_topic_queue_nums=QUEUES, queue_id=queue_id, sys_flag=0,
                                     born_timestamp=1_700_000_000_000, flag=0,
                                     properties=encode_properties({"KEYS": key, "UNIQ_KEY": key, "WAIT": "true"}),
                                     reconsume_times=0, unit_mode=False, batch=False)
    return RemotingCommand(R.SEND_MESSAGE_V2, ext_fields=h.to_ext(), body=body)


class BrokerProcess:
    """A ``pymq broker -c CONF`` process: forked by the :class:`Zygote` (already past its imports), or
    started as a plain subprocess. Only what a test needs: its pid, whether it runs, kill and term."""

    def __init__(self, pid: int, popen: subprocess.Popen | None = None):
        self.pid, self.popen = pid, popen

    def poll(self):
        if self.popen is not None:
            return self.popen.poll()
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return -1
        return None

    def signal(self, sig: int) -> None:
        try:
            os.killpg(self.pid, sig)
        except ProcessLookupError:
            pass

    def wait(self, timeout: float) -> None:
        if self.popen is not None:
            self.popen.wait(timeout)
            return
        import time
        deadline = time.monotonic() + timeout
        while self.poll() is None:
            if time.monotonic() > deadline:
                raise TimeoutError(f"process {self.pid} still runs")
            time.sleep(0.01)


class Zygote:
    """A helper process that imported pymq_ref once and forks a ``pymq broker`` per request (each in
    its own session, output to a log) — what makes 50 kill -9 trials affordable. It holds no sockets
    and reaps its children itself; the test kills them by pid."""

    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--zygote"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
        self.started: list[BrokerProcess] = []

    def start(self, conf_path: str, log_path: str, argv: list[str] | None = None) -> BrokerProcess:
        """Fork ``pymq broker -c conf_path`` (or ``pymq ARGV``), output to ``log_path``."""
        words = argv if argv is not None else ["broker", "-c", conf_path]
        self.proc.stdin.write(("\t".join([log_path, *words]) + "\n").encode())
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the zygote died")
        self.started.append(BrokerProcess(int(line)))
        return self.started[-1]

    def close(self) -> None:
        """Stop the zygote, and SIGKILL any broker it forked that still runs (a failed test's)."""
        for proc in self.started:
            if proc.poll() is None:
                proc.signal(signal.SIGKILL)
        self.proc.stdin.close()
        self.proc.wait(10)


def zygote_main() -> None:
    import importlib

    import pymq_ref.broker.server.controller  # noqa: F401 - imported once, before any fork
    import pymq_ref.broker.server.up  # noqa: F401
    import pymq_ref.cli
    import pymq_ref.tools.internal_error  # noqa: F401
    import pymq_ref.tools.serve  # noqa: F401
    from pymq_ref.broker.server import PROCESSOR_MODULES
    for name in PROCESSOR_MODULES:
        importlib.import_module(name)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped automatically
    for line in sys.stdin:
        log_path, *words = line.rstrip("\n").split("\t")
        pid = os.fork()
        if pid == 0:
            os.setsid()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            devnull = os.open(os.devnull, os.O_RDONLY)
            os.dup2(devnull, 0)
            code = 70
            try:
                code = pymq_ref.cli.main(words)
            finally:
                os._exit(code or 0)
        sys.stdout.write(f"{pid}\n")
        sys.stdout.flush()


ZYGOTE: Zygote | None = None


def start_broker(conf_path: str, log_path: str) -> BrokerProcess:
    if ZYGOTE is not None:
        return ZYGOTE.start(conf_path, log_path)
    popen = subprocess.Popen([sys.executable, "-m", "pymq_ref.cli", "broker", "-c", conf_path],
                             stdout=open(log_path, "ab"), stderr=subprocess.STDOUT, start_new_session=True,
                             env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    return BrokerProcess(popen.pid, popen)


async def wait_listening(port: int, proc: BrokerProcess, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("pymq broker exited before listening")
        try:
            _, w = await asyncio.open_connection("127.0.0.1", port)
            w.close()
            return
        except OSError:
            await asyncio.sleep(0.05)
    raise RuntimeError(f"pymq broker did not listen on {port} within {timeout} s")


def kill(proc: BrokerProcess) -> None:
    proc.signal(signal.SIGKILL)
    proc.wait(10)


async def run_trial(trial: int, root: str, port: int, *, restart: bool = False, seed: int = 0) -> TrialResult:
    rng = random.Random(seed * 1000 + trial)
    store = os.path.join(root, f"trial-{trial}")
    os.makedirs(store, exist_ok=True)
    conf_path = os.path.join(root, f"trial-{trial}.conf")
    with open(conf_path, "w") as f:
        f.write(broker_conf(store, port))
    result = TrialResult(trial)
    proc = start_broker(conf_path, os.path.join(root, f"trial-{trial}.log"))
    addr = f"127.0.0.1:{port}"
    clients: list[RemotingClient] = []
    try:
        await wait_listening(port, proc)
        admin = RemotingClient(name="kill-admin")
        clients.append(admin)
        created = await admin.invoke(addr, RemotingCommand(R.UPDATE_AND_CREATE_TOPIC, ext_fields=H.CreateTopicRequestHeader(
            topic=TOPIC, default_topic="TBW102", read_queue_nums=QUEUES, write_queue_nums=QUEUES, perm=6,
            topic_filter_type="SINGLE_TAG", topic_sys_flag=0, order=False).to_ext()), 10)
        assert created.code == 0, created
        killed = asyncio.Event()

        async def sender(n: int) -> None:
            client = RemotingClient(name=f"kill-sender-{n}")
            clients.append(client)
            i = 0
            while True:
                key = f"t{trial}-s{n}-{i}"
                body = f"{key} ".encode() * rng.randint(1, 40)
                q = (n + i) % QUEUES
                try:
                    ans = await client.invoke(addr, send_request(key, body, q), 5)
                except (RemotingError, OSError, asyncio.TimeoutError):
                    if killed.is_set():
                        result.errors_after_kill += 1
                        return
                    raise
                if ans.code != 0:
                    raise AssertionError(f"send refused before the kill: {ans.code} {ans.remark}")
                ext = ans.ext()
                result.acked.append(Acked(key, body, parse_offset_msg_id(ext["msgId"])[1], int(ext["queueId"]),
                                          int(ext["queueOffset"])))
                i += 1

        tasks = [asyncio.ensure_future(sender(n)) for n in range(4)]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 20
        while not result.acked and loop.time() < deadline and not any(t.done() for t in tasks):
            await asyncio.sleep(0.005)  # a loaded machine may take a while to answer the first send
        await asyncio.sleep(rng.uniform(0.1, 0.5))
        kill(proc)  # blocks this loop until the process is gone: every sender is waiting for an answer
        killed.set()
        await asyncio.gather(*tasks)
    finally:
        for c in clients:
            await c.close()
        if proc.poll() is None:
            kill(proc)
    verify(result, store, parse_broker_conf(open(conf_path).read()))
    if restart:
        result.served_after_restart = await serve_after_restart(result, conf_path, root, trial, port)
    report = run_doctor(store, doctor_options())
    result.doctor_findings = dict(report.by_code)
    return result


def doctor_options() -> DoctorOptions:
    return DoctorOptions(commitlog_file_size=SMALL["mappedFileSizeCommitLog"], cq_file_size=SMALL["mappedFileSizeConsumeQueue"],
                         hash_slots=SMALL["maxHashSlotNum"], index_num=SMALL["maxIndexNum"])


def verify(result: TrialResult, store: str, settings) -> None:
    """Recover the store as the broker does at start and look every acknowledged message up."""
    with MessageStore.open(settings.store) as ms:
        ms.do_reput()
        for a in result.acked:
            rec = ms.look_message_by_offset(a.phy_offset)
            ok = (rec is not None and rec.body == a.body and rec.properties.get("UNIQ_KEY") == a.key
                  and rec.queue_id == a.queue_id and rec.queue_offset == a.queue_offset
                  and ms.get_commit_log_offset_in_queue(TOPIC, a.queue_id, a.queue_offset) == a.phy_offset)
            if not ok:
                result.missing.append(a.key)


async def serve_after_restart(result: TrialResult, conf_path: str, root: str, trial: int, port: int) -> int:
    """Start the broker process again on the recovered store; pull every queue from 0; count the
    acknowledged keys served; stop it with SIGTERM (a clean shutdown)."""
    proc = start_broker(conf_path, os.path.join(root, f"trial-{trial}-restart.log"))
    client = RemotingClient(name="kill-restart")
    served: set[str] = set()
    try:
        await wait_listening(port, proc)
        from pymq_ref.formats.message import iter_records
        for q in range(QUEUES):
            offset = 0
            while True:
                ans = await client.invoke(f"127.0.0.1:{port}", RemotingCommand(R.PULL_MESSAGE, ext_fields=H.PullMessageRequestHeader(
                    consumer_group="KillCheck", topic=TOPIC, queue_id=q, queue_offset=offset, max_msg_nums=32,
                    sys_flag=0x4, commit_offset=0, suspend_timeout_millis=0, subscription="*", sub_version=0,
                    expression_type="TAG").to_ext()), 10)
                if ans.code != 0:
                    break
                served.update(r.properties.get("UNIQ_KEY") for r in iter_records(ans.body))
                offset = int(ans.ext()["nextBeginOffset"])
    finally:
        await client.close()
        proc.signal(signal.SIGTERM)
        proc.wait(30)
    return len({a.key for a in result.acked} & served)


if __name__ == "__main__" and sys.argv[1:] == ["--zygote"]:
    zygote_main()
