"""The real RocketMQ 4.9.4 Java client against ``pymq up`` (skipped without the live build)."""

from __future__ import annotations

import pytest

from pymq_ref.broker.server.up import UpServer

from broker_server_helpers import SMALL_STORE
from live_java import compile_live_client, run_live_client


@pytest.fixture(scope="module")
def live_classes(tmp_path_factory):
    return compile_live_client(tmp_path_factory.mktemp("live-java"))


def test_java_producer_sync_sends_and_push_consumer_receives(tmp_path, live_classes):
    with UpServer(str(tmp_path / "store"), namesrv_port=0, broker_port=0, settings=SMALL_STORE) as up:
        run = run_live_client(live_classes, up.namesrv_addr, "sync-push", "TJava1", 20, home=tmp_path / "home")
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        lines = run.stdout.splitlines()
        assert sum(line.startswith("SENT SEND_OK") for line in lines) == 20
        assert "RECEIVED 20 of 20" in lines
        assert up.call(lambda: sum(up.broker.get_max_offset("TJava1", q) for q in range(4))) == 20
