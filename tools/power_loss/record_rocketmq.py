"""Record what a power loss leaves of a real RocketMQ 4.9.4 broker's store, and what 4.9.4 then does.

Writes ``tests/data/rocketmq-4.9.4-power-loss/`` (see the README there):

1. LazyFS is mounted; the real 4.9.4 name server and broker (built at ``/tmp/realrmq``, see
   ``tools/REAL_ROCKETMQ.md``) start, the broker's store on LazyFS, SYNC_FLUSH, small files;
   ``mqadmin updateTopic`` creates the topic; the real Java producer (``rocketmq/PowerLossProducer.java``)
   sends messages and prints every SEND_OK.
2. The power goes out (LazyFS killed) while it sends; the broker and name server are killed.
   What LazyFS persisted is the store after the power loss: ``store/``; the acknowledged
   messages: ``acks.jsonl``.
3. The 4.9.4 broker is started on a copy of it: its exit status and the store log lines that
   say why are ``restart.json``.
4. ``pymq doctor`` is run on the store; the files it names as left by the power loss (and only
   those) are deleted from another copy — its minimal fix — the topic is re-created if the power
   loss took ``topics.json``, the broker started, and the real Java consumer
   (``rocketmq/PowerLossConsumer.java``) reads every queue from 0: ``after_fix.json``.

Usage: record_rocketmq.py [--realrmq /tmp/realrmq] [--lazyfs /tmp/lazyfs] [--workdir /tmp/rmq-power-loss]
                          [--seconds 6] [--out tests/data/rocketmq-4.9.4-power-loss]
Ports: name server 21876, broker 21911 (VIP 21909), HA 21912 (all on 127.0.0.1 traffic only).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
NAMESRV_PORT, BROKER_PORT, HA_PORT = 21876, 21911, 21912
TOPIC = "PowerLossTopic"
NAMESRV = f"127.0.0.1:{NAMESRV_PORT}"
GEOMETRY = {"mappedFileSizeCommitLog": 65536, "mappedFileSizeConsumeQueue": 1000, "maxHashSlotNum": 100,
            "maxIndexNum": 400}


def broker_conf(path: Path, store: Path) -> None:
    lines = ["brokerClusterName=DefaultCluster", "brokerName=broker-pl", "brokerId=0", f"namesrvAddr={NAMESRV}",
             "brokerIP1=127.0.0.1", f"listenPort={BROKER_PORT}", f"haListenPort={HA_PORT}",
             "brokerRole=ASYNC_MASTER", "flushDiskType=SYNC_FLUSH", f"storePathRootDir={store}",
             f"storePathCommitLog={store}/commitlog", "autoCreateTopicEnable=false"]
    lines += [f"{k}={v}" for k, v in GEOMETRY.items()]
    path.write_text("\n".join(lines) + "\n")


class Java:
    """One real RocketMQ process (``/tmp/realrmq/run.sh``), its output collected by a thread."""

    def __init__(self, realrmq: Path, home: Path, *args: str, extra_cp: Path | None = None):
        home.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "RMQ_USER_HOME": str(home)}
        if extra_cp:
            env["RMQ_EXTRA_CP"] = str(extra_cp)
        self.proc = subprocess.Popen([str(realrmq / "run.sh"), *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True)
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, text: str, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(text in line for line in self.lines):
                return True
            if self.proc.poll() is not None:
                time.sleep(0.2)
                return any(text in line for line in self.lines)
            time.sleep(0.1)
        return False

    def stop(self, sig=signal.SIGTERM, timeout: float = 30) -> int | None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                pass
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self._thread.join(timeout=5)
        return self.proc.returncode


def wait_port_free(port: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) != 0:
                return
        time.sleep(0.5)
    raise RuntimeError(f"port {port} still in use")


def mqadmin(realrmq: Path, home: Path, *args: str) -> str:
    out = subprocess.run([str(realrmq / "run.sh"), "mqadmin", *args], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "RMQ_USER_HOME": str(home)})
    return out.stdout + out.stderr


def start_broker(realrmq: Path, work: Path, store: Path, name: str) -> tuple[Java, bool]:
    for port in (BROKER_PORT, BROKER_PORT - 2, HA_PORT):
        wait_port_free(port)
    conf = work / f"broker-{name}.conf"
    broker_conf(conf, store)
    broker = Java(realrmq, work / f"home-{name}", "broker", "-c", str(conf))
    booted = broker.wait_for("boot success", 90)
    return broker, booted


def store_log_lines(home: Path, pattern: str) -> list[str]:
    out = []
    for log in sorted((home / "logs" / "rocketmqlogs").glob("*.log")):
        out += [line for line in log.read_text(errors="replace").splitlines() if pattern in line]
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--realrmq", type=Path, default=Path(os.environ.get("PYMQ_REAL_ROCKETMQ", "/tmp/realrmq")))
    p.add_argument("--lazyfs", type=Path, default=Path(os.environ.get("PYMQ_LAZYFS", "/tmp/lazyfs")))
    p.add_argument("--workdir", type=Path, default=Path("/tmp/rmq-power-loss"))
    p.add_argument("--seconds", type=float, default=6.0, help="how long the producer sends before the power goes out")
    p.add_argument("--out", type=Path, default=REPO / "tests" / "data" / "rocketmq-4.9.4-power-loss")
    args = p.parse_args(argv)
    work = args.workdir.resolve()
    shutil.rmtree(work, ignore_errors=True)
    root, mnt, classes = work / "root", work / "mnt", work / "classes"
    root.mkdir(parents=True)
    classes.mkdir()
    subprocess.run(["javac", "-cp", (args.realrmq / "classpath").read_text().strip(), "-d", str(classes),
                    str(HERE / "rocketmq" / "PowerLossProducer.java"), str(HERE / "rocketmq" / "PowerLossConsumer.java")],
                   check=True)
    (work / "namesrv.conf").write_text(f"listenPort={NAMESRV_PORT}\n")
    wait_port_free(NAMESRV_PORT)
    namesrv = Java(args.realrmq, work / "home-namesrv", "namesrv", "-c", str(work / "namesrv.conf"))
    if not namesrv.wait_for("boot success", 60):
        raise RuntimeError("name server did not start:\n" + "\n".join(namesrv.lines[-20:]))
    try:
        # 1-2: the broker on LazyFS, messages, the power loss
        subprocess.run([str(args.lazyfs / "mount.sh"), str(root), str(mnt)], check=True, capture_output=True)
        store = mnt / "store"
        broker, booted = start_broker(args.realrmq, work, store, "live")
        if not booted:
            raise RuntimeError("broker did not start:\n" + "\n".join(broker.lines[-30:]))
        print(mqadmin(args.realrmq, work / "home-admin", "updateTopic", "-n", NAMESRV, "-c", "DefaultCluster",
                      "-t", TOPIC, "-r", "4", "-w", "4").strip().splitlines()[-1])
        time.sleep(2)
        producer = Java(args.realrmq, work / "home-producer", "class", "PowerLossProducer", NAMESRV, TOPIC, "0",
                        extra_cp=classes)
        time.sleep(args.seconds)
        # the power goes out: the broker dies with the machine, and what LazyFS did not persist is gone.
        # (Killing LazyFS first would let the broker go on answering SEND_OK: 4.9.4's MappedFile.flush
        # logs a failed force() and counts the bytes as flushed.)
        broker.stop(signal.SIGKILL)
        subprocess.run([str(args.lazyfs / "crash.sh"), str(mnt)], check=False, capture_output=True)
        producer.stop(signal.SIGKILL)
        acks = [line.split() for line in producer.lines if line.startswith("ACK ")]
        print(f"{len(acks)} messages acknowledged before the power loss")
        out = args.out
        shutil.rmtree(out / "store", ignore_errors=True)
        out.mkdir(parents=True, exist_ok=True)
        shutil.copytree(root / "store", out / "store")
        with open(out / "acks.jsonl", "w") as f:
            for _, i, queue_id, queue_offset, msg_id in acks:
                f.write(json.dumps({"keys": f"plk-{i}", "queueId": int(queue_id), "queueOffset": int(queue_offset),
                                    "offsetMsgId": msg_id}) + "\n")
        # 3: 4.9.4 on the store as the power loss left it
        copy = work / "restart" / "store"
        shutil.copytree(out / "store", copy)
        broker, booted = start_broker(args.realrmq, work, copy, "restart")
        status = broker.stop() if booted else broker.proc.wait(60)
        home = work / "home-restart"
        why = [re.sub(re.escape(str(copy)), "STORE", line.split(" - ", 1)[-1])
               for line in store_log_lines(home, "length not matched")]
        restart = {"booted": booted, "exit_status": status, "length_not_matched": why,
                   "last_output": [line for line in broker.lines if "boot" in line or "xception" in line][-3:]}
        (out / "restart.json").write_text(json.dumps(restart, indent=2) + "\n")
        print("restart:", json.dumps(restart))
        # 4: the doctor's minimal fix, then 4.9.4 again, then the real consumer
        copy = work / "fixed" / "store"
        shutil.copytree(out / "store", copy)
        doctor = subprocess.run([sys.executable, "-m", "pymq_ref.cli", "doctor", str(copy), "--json", "--quiet"],
                                capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
        report = json.loads(doctor.stdout)
        deleted = sorted({f["file"] for f in report["findings"] if f["code"] == "power_loss_leftover"})
        for rel in deleted:
            (copy / rel).unlink()
        broker, booted = start_broker(args.realrmq, work, copy, "fixed")
        recreated = False
        consumed: list[str] = []
        if booted:
            routes = mqadmin(args.realrmq, work / "home-admin", "topicRoute", "-n", NAMESRV, "-t", TOPIC)
            if "brokerName" not in routes:
                recreated = True
                mqadmin(args.realrmq, work / "home-admin", "updateTopic", "-n", NAMESRV, "-c", "DefaultCluster",
                        "-t", TOPIC, "-r", "4", "-w", "4")
                time.sleep(2)
            consumer = Java(args.realrmq, work / "home-consumer", "class", "PowerLossConsumer", NAMESRV, TOPIC,
                            extra_cp=classes)
            consumer.proc.wait(180)
            consumer.stop()
            consumed = sorted(line.split()[0] for line in consumer.lines if line.startswith("plk-"))
            broker.stop()
        acked = sorted(f"plk-{a[1]}" for a in acks)
        after = {"doctor_exit_status": doctor.returncode, "deleted": deleted, "booted": booted,
                 "topic_recreated": recreated, "consumed": len(consumed),
                 "acknowledged_consumed": len(set(acked) & set(consumed)), "acknowledged": len(acked),
                 "acknowledged_missing": sorted(set(acked) - set(consumed))[:20]}
        (out / "after_fix.json").write_text(json.dumps(after, indent=2) + "\n")
        print("after the doctor's fix:", json.dumps(after))
    finally:
        subprocess.run(["fusermount3", "-u", "-z", str(mnt)], capture_output=True)
        namesrv.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
