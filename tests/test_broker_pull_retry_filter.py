"""``filterSupportRetry``: a pull of ``%RETRY%<group>`` applies the group's SQL92 filter of each
message's original topic (``ExpressionForRetryMessageFilter``, 4.9.4; off by default)."""

from __future__ import annotations

import pytest

from broker_helpers import make_broker, wire
from pymq_ref.broker.config import BrokerConfig
from pymq_ref.broker.filter import RetryMessageFilter, TagMessageFilter
from pymq_ref.broker.pull import FLAG_SUBSCRIPTION


def broker(root, support: bool):
    cfg = BrokerConfig(enable_property_filter=True, filter_support_retry=support,
                       total_physical_memory_size=16 * 1024 ** 3)
    return make_broker(root, config=cfg)


def send_and_fail(b, topic, values):
    """Send one message per value of property ``a``, then send each back (level 3: 10 s)."""
    for a in values:
        r = b.send_message(topic=topic, body=f"a={a}".encode(), queue_id=0, properties=wire(("TAGS", "A"), ("a", a)))
        b.consumer_send_msg_back(offset=r.commit_log_offsets[0], group="CG")


def pull_values(b, topic, subscription="*", expression_type="TAG"):
    r = b.pull_message(consumer_group="CG", topic=topic, queue_id=0, queue_offset=0, sys_flag=FLAG_SUBSCRIPTION,
                       subscription=subscription, expression_type=expression_type)
    return [m.properties["a"] for m in r.records()]


@pytest.mark.parametrize("support,expected", [(False, ["1", "7", "3", "9"]), (True, ["7", "9"])])
def test_retry_pull_uses_the_original_topics_sql_filter(tmp_path, support, expected):
    with broker(tmp_path, support) as b:
        b.register_subscription("CG", "T", "a > 5", "SQL92")  # what the heartbeat registers
        send_and_fail(b, "T", ["1", "7", "3", "9"])
        b.scheduler.advance(11_000)  # the delay service puts them into %RETRY%CG
        assert pull_values(b, "%RETRY%CG") == expected
        assert pull_values(b, "T", "a > 5", "SQL92") == ["7", "9"]  # the topic itself: unchanged


def test_retry_filter_passes_without_a_sql_subscription(tmp_path):
    with broker(tmp_path, True) as b:
        b.register_subscription("CG", "T", "A", "TAG")  # TAG: no filter data, everything passes
        b.register_subscription("CG", "U", "a >", "SQL92")  # does not compile: no filter data either
        send_and_fail(b, "T", ["1", "2"])
        send_and_fail(b, "U", ["3"])
        b.scheduler.advance(11_000)
        assert pull_values(b, "%RETRY%CG") == ["1", "2", "3"]


def test_the_flag_selects_the_filter_class(tmp_path):
    with broker(tmp_path / "on", True) as b:
        f = b.puller.build_message_filter("%RETRY%CG", "*", "TAG")
        assert isinstance(f, RetryMessageFilter) and f.is_retry_topic
        b.register_subscription("CG", "T", "a > 5", "SQL92")
        assert f.is_matched_by_commit_log({"RETRY_TOPIC": "T", "a": "6"})
        assert not f.is_matched_by_commit_log({"RETRY_TOPIC": "T", "a": "5"})
        assert f.is_matched_by_commit_log({"RETRY_TOPIC": "Other", "a": "5"})
    with broker(tmp_path / "off", False) as b:
        assert isinstance(b.puller.build_message_filter("%RETRY%CG", "*", "TAG"), TagMessageFilter)
