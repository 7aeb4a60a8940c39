"""A real RocketMQ 4.9.4 name server + broker in a temporary folder, with a recording relay in front
of the broker, for the recorders of ``tools/rocketmq_broker_admin/`` and ``tools/rocketmq_broker_diff/``.

Why a "mirror" registration: ``mqadmin`` reaches a broker at the address the name server holds for
it, and 4.9.4 always registers ``brokerIP1:listenPort`` (it binds every interface, so nothing can
sit on that port in front of it). So the real broker registers with no reachable name server, and
:func:`mirror_registration` registers it with the real name server under the relay's address,
with the topic table the broker itself answers to GET_ALL_TOPIC_CONFIG. Everything a client then
sends to "the broker" goes through ``pymq proxy``, which records both directions unchanged.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "rocketmq_namesrv"))
from procs import start, stop, wait_port, port_free  # noqa: E402

from pymq_ref.formats.beans import DataVersion  # noqa: E402
from pymq_ref.remoting import headers as H  # noqa: E402
from pymq_ref.remoting.bodies import RegisterBrokerBody, TopicConfigSerializeWrapper, decode_json  # noqa: E402
from pymq_ref.remoting.bodies.route import encode_register_body  # noqa: E402
from pymq_ref.remoting.codes import RequestCode as R  # noqa: E402
from pymq_ref.remoting.command import RemotingCommand  # noqa: E402
from pymq_ref.remoting.transport import RemotingClient  # noqa: E402

PY = sys.executable
CLUSTER, BROKER_NAME = "DefaultCluster", "broker-a"


class RealBroker:
    """Ports: ``ns`` (name server), ``broker`` (its listenPort; also ``broker-2`` and ``broker+1``
    are bound), ``proxy`` (the relay in front of the broker); all on 127.0.0.1."""

    def __init__(self, realrmq: str, ns: int, broker: int, proxy: int, capture: str, *,
                 flush: str = "ASYNC_FLUSH", extra_conf: str = "", conf: str | None = None, proxy_on: bool = True):
        self.run_sh = os.path.join(realrmq, "run.sh")
        self.ns, self.broker, self.proxy, self.capture = ns, broker, proxy, capture
        self.work = tempfile.mkdtemp(prefix="rmq-broker-")
        self.store = os.path.join(self.work, "store")
        self.env = dict(os.environ, RMQ_USER_HOME=self.work)
        self.flush, self.extra_conf, self.conf, self.proxy_on = flush, extra_conf, conf, proxy_on
        self.procs: list[subprocess.Popen] = []
        self.counter = 0

    @property
    def proxy_addr(self) -> str:
        return f"127.0.0.1:{self.proxy}"

    @property
    def ns_addr(self) -> str:
        return f"127.0.0.1:{self.ns}"

    def start(self) -> "RealBroker":
        for port in (self.ns, self.broker, self.broker - 2, self.broker + 1, self.proxy):
            if not port_free(port):
                raise SystemExit(f"port {port} is busy")
        with open(os.path.join(self.work, "namesrv.conf"), "w") as f:
            f.write(f"listenPort={self.ns}\n")
        with open(os.path.join(self.work, "broker.conf"), "w") as f:
            if self.conf is not None:  # the caller's settings, with our ports and paths
                f.write(f"{self.conf}namesrvAddr=127.0.0.1:{self.proxy + 1}\nlistenPort={self.broker}\n"
                        f"haListenPort={self.broker + 1}\nstorePathRootDir={self.store}\n"
                        f"storePathCommitLog={self.store}/commitlog\n")
            else:
                self._default_conf(f)
        self._spawn()
        return self

    def _default_conf(self, f) -> None:
        # namesrvAddr: a port of ours nobody listens on (see the module docstring)
        f.write(f"brokerClusterName={CLUSTER}\nbrokerName={BROKER_NAME}\nbrokerId=0\n"
                f"namesrvAddr=127.0.0.1:{self.proxy + 1}\nbrokerIP1=127.0.0.1\nlistenPort={self.broker}\n"
                f"haListenPort={self.broker + 1}\nbrokerRole=ASYNC_MASTER\nflushDiskType={self.flush}\n"
                f"storePathRootDir={self.store}\nstorePathCommitLog={self.store}/commitlog\n"
                f"mappedFileSizeCommitLog=1048576\nmappedFileSizeConsumeQueue=6000\n"
                f"autoCreateTopicEnable=true\n{self.extra_conf}")

    def _spawn(self) -> None:
        self.procs.append(start([self.run_sh, "namesrv", "-c", os.path.join(self.work, "namesrv.conf")],
                                os.path.join(self.work, "ns.log"), self.env))
        self.procs.append(start([self.run_sh, "broker", "-c", os.path.join(self.work, "broker.conf")],
                                os.path.join(self.work, "broker.log"), self.env))
        if self.proxy_on:
            self.procs.append(start([PY, "-m", "pymq_ref.cli", "proxy", "--listen", self.proxy_addr, "--to",
                                     f"127.0.0.1:{self.broker}", "--jsonl", self.capture, "--raw"],
                                    os.path.join(self.work, "proxy.log")))
        wait_port(self.ns, 90)
        wait_port(self.broker, 90)
        if self.proxy_on:
            wait_port(self.proxy, 30)

    def stop(self) -> None:
        for proc in reversed(self.procs):
            stop(proc)
        self.procs.clear()

    async def mirror_registration(self, client: RemotingClient) -> None:
        """Register the real broker with the real name server under the relay's address."""
        got = await client.invoke(f"127.0.0.1:{self.broker}", RemotingCommand(R.GET_ALL_TOPIC_CONFIG), 10)
        wrapper = decode_json(TopicConfigSerializeWrapper, got.body)
        self.counter += 1
        body = encode_register_body(RegisterBrokerBody(
            TopicConfigSerializeWrapper(wrapper.topic_config_table, wrapper.data_version or DataVersion()), []), False)
        header = H.RegisterBrokerRequestHeader(
            broker_name=BROKER_NAME, broker_addr=self.proxy_addr, cluster_name=CLUSTER,
            ha_server_addr=f"127.0.0.1:{self.broker + 1}", broker_id=0, compressed=False,
            body_crc32=zlib.crc32(body) & 0x7FFFFFFF)
        ans = await client.invoke(self.ns_addr, RemotingCommand(R.REGISTER_BROKER, ext_fields=header.to_ext(),
                                                                 body=body), 10)
        if ans.code != 0:
            raise SystemExit(f"mirror registration refused: {ans.code} {ans.remark}")

    def mqadmin_argv(self, *args: str) -> list[str]:
        return [self.run_sh, "mqadmin", *args]


def clean_output(text: str) -> str:
    """mqadmin's output without the JVM's and logging's noise."""
    lines = [line for line in text.splitlines()
             if line.strip() and not line.startswith(("SLF4J", "WARNING", "Java HotSpot", "OpenJDK"))
             and "Unknown channel option" not in line and "RocketmqClient" not in line]
    return "\n".join(lines)


def workdir(prefix: str) -> str:
    return tempfile.mkdtemp(prefix=prefix)
