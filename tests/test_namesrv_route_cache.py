"""The name server caches encoded routes by the version of its route tables: after every kind of
change, the answer must be what encoding the tables afresh gives."""

from __future__ import annotations

from pymq_ref.namesrv import NamesrvController
from pymq_ref.namesrv.kvconfig import NAMESPACE_ORDER_TOPIC_CONFIG
from pymq_ref.namesrv.scenarios import A_TOPICS, B_TOPICS, register, req
from pymq_ref.remoting import headers as H
from pymq_ref.remoting.bodies import encode_body
from pymq_ref.remoting.codes import RequestCode as R
from pymq_ref.remoting.codes import ResponseCode
from pymq_ref.remoting.command import RemotingCommand


def route(ns: NamesrvController, topic: str, version: int = 401):
    return ns.dispatcher.dispatch(req(R.GET_ROUTEINFO_BY_TOPIC, {"topic": topic}, version=version), None)


def fresh(ns: NamesrvController, topic: str, standard: bool = True) -> bytes | None:
    data = ns.routes.pickup_topic_route_data(topic)
    if data is None:
        return None
    if ns.settings.get("orderMessageEnable") == "true":
        data.order_topic_conf = ns.kv.get(NAMESPACE_ORDER_TOPIC_CONFIG, topic)
    return encode_body(data, standard=standard)


def check(ns: NamesrvController, topic: str) -> bytes | None:
    for version, standard in ((401, True), (373, False)):
        answer = route(ns, topic, version)
        expected = fresh(ns, topic, standard)
        if expected is None:
            assert answer.code == ResponseCode.TOPIC_NOT_EXIST
        else:
            assert (answer.code, answer.body) == (ResponseCode.SUCCESS, expected)
    return route(ns, topic).body


def test_every_change_of_the_tables_reaches_the_next_route_answer(tmp_path):
    ns = NamesrvController(port=0, kv_config_path=str(tmp_path / "kv.json"))
    d = ns.dispatcher
    a, b = object(), object()  # the brokers' connections
    assert d.dispatch(register("broker-a", "127.0.0.1:40911", "C1", 0, A_TOPICS, 1), a).code == 0
    one = check(ns, "TopicShared")
    assert route(ns, "TopicShared").body is one  # answered from the cache

    assert d.dispatch(register("broker-b", "127.0.0.1:41911", "C1", 0, B_TOPICS, 1), b).code == 0
    two = check(ns, "TopicShared")
    assert two != one and b"broker-b" in two

    assert d.dispatch(req(R.WIPE_WRITE_PERM_OF_BROKER, {"brokerName": "broker-b"}), None).code == 0
    wiped = check(ns, "TopicShared")
    assert wiped != two
    assert d.dispatch(req(R.ADD_WRITE_PERM_OF_BROKER, {"brokerName": "broker-b"}), None).code == 0
    assert check(ns, "TopicShared") == two

    ns.settings["orderMessageEnable"] = "true"
    assert d.dispatch(req(R.PUT_KV_CONFIG, {"namespace": NAMESPACE_ORDER_TOPIC_CONFIG, "key": "TopicShared",
                                            "value": "broker-a:4"}), None).code == 0
    assert b'"orderTopicConf":"broker-a:4"' in check(ns, "TopicShared")
    ns.settings["orderMessageEnable"] = "false"
    assert check(ns, "TopicShared") == two

    ns.routes.on_channel_destroy("127.0.0.1:41911", b)  # broker-b's connection closed
    assert b"broker-b" not in check(ns, "TopicShared")

    assert d.dispatch(RemotingCommand.request(R.UNREGISTER_BROKER, H.UnRegisterBrokerRequestHeader(
        broker_name="broker-a", broker_addr="127.0.0.1:40911", cluster_name="C1", broker_id=0)), None).code == 0
    assert check(ns, "TopicShared") is None

    assert d.dispatch(register("broker-a", "127.0.0.1:40911", "C1", 0, A_TOPICS, 2), a).code == 0
    assert check(ns, "TopicA") is not None
    assert d.dispatch(req(R.DELETE_TOPIC_IN_NAMESRV, {"topic": "TopicA"}), None).code == 0
    assert check(ns, "TopicA") is None

    ns.clock = lambda: 10**13  # long after broker-a's last registration
    ns.routes.scan_not_active_broker(ns.clock())
    assert check(ns, "TopicShared") is None
