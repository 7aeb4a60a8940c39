"""Tag expressions: FilterAPI rules, the hash check on ConsumeQueue units, the client's string re-check,
a real hash collision ("Aa"/"BB") through a real store, and build_filter / retry filter wiring."""

from __future__ import annotations

import pytest

from pymq_ref.broker.filter import (
    FilterSyntaxError, RetryMessageFilter, Sql92MessageFilter, TagExpressionError, TagMessageFilter,
    UnknownExpressionTypeError, build_filter, compile_sql92, parse_tag_expression,
)
from pymq_ref.broker.filter.message_filter import MessageFilter, is_tag_type
from pymq_ref.broker.filter.tags import java_trim, tags_code_as_int
from pymq_ref.formats.hashing import java_string_hash, tags_code
from pymq_ref.store.message_store import GetMessageStatus, TagFilter
from tests.store_helpers import msg, open_store


def test_sub_all_forms():
    for expr in (None, "", "*"):
        sub = parse_tag_expression(expr)
        assert sub.sub_string == "*" and sub.is_sub_all and not sub.tags and not sub.codes


def test_split_trim_drop_empties():
    sub = parse_tag_expression("TagA || TagB")
    assert sub.tags == ("TagA", "TagB") and sub.codes == (2598919, 2598920)
    assert sub.sub_string == "TagA || TagB" and not sub.is_sub_all
    assert parse_tag_expression(" A ||  || B ||").tags == ("A", "B")
    assert parse_tag_expression("A|||B").tags == ("A", "|B")  # Java split is left to right
    assert parse_tag_expression("A || A").codes == (java_string_hash("A"),)


def test_java_quirks_of_tag_expressions():
    star = parse_tag_expression(" * ")  # not "*": the tag named "*"
    assert not star.is_sub_all and star.tags == ("*",) and star.codes == (42,)
    blank = parse_tag_expression("|| ||")  # split gives ["", " "]: no tag, matches nothing
    assert blank.tags == () and not blank.is_sub_all
    assert not TagMessageFilter(blank).is_matched_by_consume_queue(tags_code("A"))
    with pytest.raises(TagExpressionError) as ei:
        parse_tag_expression("||")  # split gives nothing at all: Java "subString split error"
    assert "split error" in str(ei.value)
    assert java_trim("\u00a0A\u00a0") == "\u00a0A\u00a0" and java_trim("\t\x01A \x1f") == "A"


def test_consume_queue_check_uses_int_value_of_the_long():
    f = build_filter("TAG", "order-created || TagA")
    neg = tags_code("order-created")
    assert neg < 0
    assert f.is_matched_by_consume_queue(neg)
    assert f.is_matched_by_consume_queue(neg & 0xFFFFFFFFFFFFFFFF)  # unsigned view of the same 8 bytes
    assert f.is_matched_by_consume_queue(tags_code("TagA") + (5 << 32))  # only the low 32 bits count
    assert not f.is_matched_by_consume_queue(tags_code("TagB"))
    assert not f.is_matched_by_consume_queue(0)  # a message without tags
    assert f.is_matched_by_consume_queue(None)  # unreadable ext unit: RocketMQ lets it through
    assert tags_code_as_int(0xFFFFFFFF) == -1


def test_hash_collision_aa_bb():
    assert java_string_hash("Aa") == java_string_hash("BB") == 2112
    f = build_filter("TAG", "Aa")  # a 4.9.4 broker: hash check only
    assert f.is_matched_by_consume_queue(tags_code("Aa")) and f.is_matched_by_consume_queue(tags_code("BB"))
    assert f.is_matched_by_commit_log({"TAGS": "BB"})  # the broker delivers the collision ...
    assert not f.is_matched_by_client({"TAGS": "BB"})  # ... and the client drops it by string
    assert f.is_matched_by_client({"TAGS": "Aa"})
    assert not f.is_matched_by_client({})  # a tag set and no TAGS: the client drops it
    end_to_end = build_filter("TAG", "Aa", client_side_tag_check=True)
    assert end_to_end.is_matched_by_commit_log({"TAGS": "Aa"})
    assert not end_to_end.is_matched_by_commit_log({"TAGS": "BB"})
    everything = build_filter("TAG", "*")
    assert everything.is_matched_by_client({}) and everything.is_matched_by_client({"TAGS": "BB"})


def test_drop_in_for_store_tag_filter():
    for expr in ("*", "TagA", "TagA || order-created", "Aa"):
        mine, store = build_filter("TAG", expr), TagFilter(expr)
        assert isinstance(mine, MessageFilter)
        for tag in ("TagA", "TagB", "order-created", "Aa", "BB", None):
            code = tags_code(tag)
            assert mine.is_matched_by_consume_queue(code) == store.is_matched_by_consume_queue(code)


def test_through_a_real_store_with_a_collision(tmp_path):
    store = open_store(tmp_path)
    try:
        tags = ["Aa", "BB", "TagA", None, "Aa", "BB"]
        for i, tag in enumerate(tags):
            m = msg(i)
            props = dict(m.properties)
            if tag is None:
                props.pop("TAGS")
            else:
                props["TAGS"] = tag
            assert store.put_message(m.replace(properties=props)).status.name == "PUT_OK"
        f = build_filter("TAG", "Aa")
        result = store.get_message("G", "T", 0, 0, 32, tag_filter=f)  # the broker's hash check
        assert result.status is GetMessageStatus.FOUND and result.next_begin_offset == len(tags)
        pulled = [r.properties.get("TAGS") for r in result.records()]
        assert pulled == ["Aa", "BB", "Aa", "BB"]  # the collision passes the ConsumeQueue
        kept = [r.properties["TAGS"] for r in result.records() if f.is_matched_by_client(r.properties)]
        assert kept == ["Aa", "Aa"]
        both = build_filter("TAG", "Aa", client_side_tag_check=True)  # broker + client in one
        result = store.get_message("G", "T", 0, 0, 32, tag_filter=both)
        assert [r.properties["TAGS"] for r in result.records()] == ["Aa", "Aa"] and result.next_begin_offset == 6
        result = store.get_message("G", "T", 1, 0, 32, tag_filter=both)
        assert result.status is GetMessageStatus.NO_MESSAGE_IN_QUEUE
        only_bb = store.get_message("G", "T", 0, 1, 1, tag_filter=build_filter("TAG", "Zz"))
        assert only_bb.status is GetMessageStatus.NO_MATCHED_MESSAGE and only_bb.next_begin_offset == 6
        sql = build_filter("SQL92", "TAGS = 'BB' OR TAGS IS NULL")
        assert all(sql.is_matched_by_consume_queue(tags_code(t)) for t in tags)  # SQL92: CQ passes all
        result = store.get_message("G", "T", 0, 0, 32, tag_filter=sql)  # the store evaluates SQL on the record
        assert [r.properties.get("TAGS") for r in result.records()] == ["BB", None, "BB"]
    finally:
        store.shutdown()


def test_build_filter_types_and_errors():
    assert is_tag_type(None) and is_tag_type("") and is_tag_type("TAG") and not is_tag_type("SQL92")
    assert isinstance(build_filter(), TagMessageFilter) and build_filter().expression == "*"
    assert isinstance(build_filter(None, None), TagMessageFilter)
    f = build_filter("SQL92", "a > 1")
    assert isinstance(f, Sql92MessageFilter) and f.is_matched_by_consume_queue(12345)
    for empty in ("", None):
        with pytest.raises(FilterSyntaxError) as ei:
            build_filter("SQL92", empty)
        assert "non-empty" in ei.value.expected
    with pytest.raises(FilterSyntaxError):
        build_filter("SQL92", "a >")
    with pytest.raises(FilterSyntaxError):
        build_filter("SQL92", "a = 1 xyz", strict=True)
    with pytest.raises(UnknownExpressionTypeError):
        build_filter("CLASS", "x")
    with pytest.raises(ValueError):
        build_filter("SQL92", "a > 1", filter_support_retry=True)


def test_sql92_filter_swallows_evaluation_errors_like_the_broker():
    f = build_filter("SQL92", "a > 1")
    assert f.is_matched_by_commit_log({"a": "2"})
    assert not f.is_matched_by_commit_log({"a": "x"})  # NumberFormatException → logged, no match
    assert not f.is_matched_by_commit_log({})  # NULL → no match
    assert not f.is_matched_by_commit_log(None)
    assert f.evaluation_errors == 1 and "NumberFormatException" in f.last_error.reason


def test_retry_filter_uses_the_original_topic_filter():
    registered = {("Orders", "G1"): compile_sql92("amount > 100")}
    lookup = lambda topic, group: registered.get((topic, group))  # noqa: E731
    retry = build_filter("TAG", "*", topic="%RETRY%G1", filter_support_retry=True, lookup=lookup)
    assert isinstance(retry, RetryMessageFilter) and retry.is_retry_topic
    assert retry.is_matched_by_consume_queue(tags_code("x"))
    assert retry.is_matched_by_commit_log({"RETRY_TOPIC": "Orders", "amount": "500"})
    assert not retry.is_matched_by_commit_log({"RETRY_TOPIC": "Orders", "amount": "5"})
    assert not retry.is_matched_by_commit_log({"RETRY_TOPIC": "Orders", "amount": "lots"})
    assert retry.evaluation_errors == 1
    assert retry.is_matched_by_commit_log({"RETRY_TOPIC": "Other", "amount": "5"})  # no filter registered
    assert retry.is_matched_by_commit_log({"amount": "5"})  # no RETRY_TOPIC (Java would NPE)
    plain = build_filter("SQL92", "amount > 100", topic="Orders", filter_support_retry=True, lookup=lookup)
    assert not plain.is_retry_topic and not plain.is_matched_by_commit_log({"amount": "5"})
    tag = build_filter("TAG", "Aa", topic="Orders", filter_support_retry=True, lookup=lookup)
    assert tag.is_matched_by_commit_log({"TAGS": "BB"}) and not tag.is_matched_by_consume_queue(tags_code("x"))
