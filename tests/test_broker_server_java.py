"""The real RocketMQ 4.9.4 Java client against ``pymq up``: every client mode of the broker server
(skipped without the live build at /tmp/realrmq; see tools/rocketmq_broker_live/README.md).

One ``pymq up`` serves all scenarios (each its own topic and groups): producer sync / async /
oneway / batch / compressed, push consumer concurrently and orderly (two consumers and a
rebalance: LOCK_BATCH_MQ), request-reply, transactions with check-back, retry to ``%RETRY%`` and
the DLQ, delay levels, tag and SQL92 subscriptions, the lite pull consumer with
SEARCH_OFFSET_BY_TIMESTAMP. The store is checked by the doctor afterwards.
"""

from __future__ import annotations

import io

import pytest

from pymq_ref.broker.server.up import UpServer
from pymq_ref.tools.doctor import doctor_main

from broker_server_helpers import SMALL_STORE
from live_java import compile_live_client, run_live_client

SETTINGS = dict(SMALL_STORE, enablePropertyFilter="true", transactionCheckInterval="2000", transactionTimeOut="2000")

SCENARIOS = {  # scenario -> (message count, lines the run must print)
    "sync-push": (10, ["RECEIVED 10 of 10"]),
    "async-oneway-batch": (5, ["ASYNC acked=5", "COMPRESSED SEND_OK",
                               "RECEIVED [a0, a1, a2, a3, a4, b0, b1, b2, b3, b4, o0, o1, o2, o3, o4, z0]"]),
    "request-reply": (3, ["ANSWER reply to question 0", "ANSWER reply to question 2"]),
    "transaction": (3, ["TX-SENT t2 SEND_OK UNKNOW", "RECEIVED [t0, t2]"]),
    "retry-dlq": (1, ["ATTEMPTS 2"]),
    "orderly": (12, ["QUEUE 0 [0, 4, 8]", "QUEUE 3 [3, 7, 11]"]),
    "lite-pull": (8, ["LITE-SUBSCRIBED 8", "LITE-ASSIGNED 8"]),
    "delay": (1, []),
    "tag-sql": (9, ["RECEIVED [s0, s1, s3, s4, s6, s7]", "SQL [s6, s7, s8]"]),
}


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    classes = compile_live_client(tmp_path_factory.mktemp("live-java"))
    root = tmp_path_factory.mktemp("live-up")
    with UpServer(str(root / "store"), namesrv_port=0, broker_port=0, settings=SETTINGS) as up:
        yield classes, up, root
    out = io.StringIO()
    assert doctor_main(str(root / "store"), quiet=True, out=out, err=out) == 0, out.getvalue()


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_java_client_scenario(live, scenario, tmp_path):
    classes, up, _ = live
    count, expected = SCENARIOS[scenario]
    topic = "TJ_" + scenario.replace("-", "_")
    run = run_live_client(classes, up.namesrv_addr, scenario, topic, count, home=tmp_path)
    out = run.stdout
    assert run.returncode == 0 and "DONE ok=true" in out, out[-4000:] + run.stderr[-2000:]
    lines = out.splitlines()
    for line in expected:
        assert line in lines, f"{line!r} not printed:\n{out[-3000:]}"
