"""pymq_ref.remoting.replay without a server: pairing a capture's requests with their answers, the
pulls it does not replay, the server requests it waits for, END_TRANSACTION's offsets taken from
this server's answers, and port masking."""

from __future__ import annotations

from pymq_ref.remoting.codec import encode
from pymq_ref.remoting.codes import RequestCode, ResponseCode
from pymq_ref.remoting.command import RemotingCommand
from pymq_ref.remoting.replay import (Exchange, ServerRequest, adapt, conversation, exchange_table, mask_ports)


def rec(seq, conn, direction, kind, cmd):
    return {"seq": seq, "conn": conn, "direction": direction, "kind": kind, "code": cmd.code,
            "opaque": cmd.opaque, "frame_hex": encode(cmd).hex()}


def test_conversation_pairs_by_connection_and_opaque_and_skips_held_pulls():
    send = RemotingCommand.request(RequestCode.SEND_MESSAGE_V2, {"b": "T"}, b"x", opaque=5)
    pull_held = RemotingCommand.request(RequestCode.PULL_MESSAGE, {"topic": "T"}, opaque=5)
    pull_lost = RemotingCommand.request(RequestCode.PULL_MESSAGE, {"topic": "T"}, opaque=6)
    notify = RemotingCommand.request(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, {"consumerGroup": "G"}, oneway=True,
                                     opaque=9)
    offset = RemotingCommand.request(RequestCode.UPDATE_CONSUMER_OFFSET, {"topic": "T"}, oneway=True, opaque=7)
    records = [
        rec(1, 1, "c2s", "request", send),
        rec(2, 2, "c2s", "request", pull_held),                       # same opaque, other connection
        rec(3, 1, "s2c", "response", RemotingCommand.response(0, opaque=5)),
        rec(4, 2, "s2c", "oneway", notify),
        rec(5, 2, "c2s", "request", pull_lost),
        rec(6, 2, "s2c", "response", RemotingCommand.response(ResponseCode.PULL_NOT_FOUND, opaque=5)),
        rec(7, 2, "c2s", "oneway", offset),
    ]
    conv = conversation(list(reversed(records)))  # order comes from seq
    codes = [ex.request.code for ex in conv.exchanges]
    assert codes == [RequestCode.SEND_MESSAGE_V2, RequestCode.PULL_MESSAGE, RequestCode.PULL_MESSAGE,
                     RequestCode.UPDATE_CONSUMER_OFFSET]
    assert conv.exchanges[0].recorded.code == ResponseCode.SUCCESS and conv.exchanges[0].skipped is None
    assert conv.exchanges[1].recorded.code == ResponseCode.PULL_NOT_FOUND and conv.exchanges[1].skipped
    assert conv.exchanges[2].recorded is None and conv.exchanges[2].skipped       # never answered
    assert conv.exchanges[3].recorded is None and conv.exchanges[3].skipped is None
    assert [(i, sr.conn, sr.command.code) for i, sr in conv.server_requests] == [
        (2, 2, RequestCode.NOTIFY_CONSUMER_IDS_CHANGED)]
    table = exchange_table(conv.exchanges)
    assert "(not replayed: long poll)" in table and "(oneway)" in table


def end(from_check: bool, **ext):
    fields = {"producerGroup": "PG", "commitLogOffset": "999", "tranStateTableOffset": "9", "commitOrRollback": "8",
              "msgId": "UNIQ1", "fromTransactionCheck": "true" if from_check else "false", **ext}
    return Exchange({"conn": 1}, RemotingCommand.request(RequestCode.END_TRANSACTION, fields, oneway=True))


def test_end_transaction_takes_its_offsets_from_this_servers_send_answer():
    send = RemotingCommand.request(RequestCode.SEND_MESSAGE_V2, {"b": "T", "i": "KEYS\x01k\x02UNIQ_KEY\x01UNIQ1"})
    ours = RemotingCommand.response(0, None, {"msgId": "7F00000100007A2B00000000000004D2", "queueOffset": "3"}, opaque=1)
    sent = Exchange({"conn": 1}, send, ours=ours)
    got = adapt(end(False), [sent], [])
    assert got.ext_fields["commitLogOffset"] == str(0x4D2) and got.ext_fields["tranStateTableOffset"] == "3"
    assert got.ext_fields["commitOrRollback"] == "8" and got.is_oneway
    other = adapt(end(False, msgId="UNIQ2"), [sent], [])       # no send of that message: as recorded
    assert other.ext_fields["commitLogOffset"] == "999"


def test_end_transaction_after_a_check_takes_the_checks_offsets():
    check = RemotingCommand.request(RequestCode.CHECK_TRANSACTION_STATE,
                                    {"commitLogOffset": "1551", "tranStateTableOffset": "3", "msgId": "UNIQ1"},
                                    oneway=True)
    got = adapt(end(True), [], [ServerRequest(1, check)])
    assert (got.ext_fields["commitLogOffset"], got.ext_fields["tranStateTableOffset"]) == ("1551", "3")
    assert adapt(end(True), [], []).ext_fields["commitLogOffset"] == "999"   # no check yet: as recorded


def test_other_requests_go_as_recorded_and_ports_are_masked():
    pull = Exchange({"conn": 1}, RemotingCommand.request(RequestCode.PULL_MESSAGE, {"topic": "T"}))
    assert adapt(pull, [], []) is pull.request
    assert mask_ports("broker 127.0.0.1:40123, ns localhost:9876") == "broker 127.0.0.1:<port>, ns localhost:<port>"
