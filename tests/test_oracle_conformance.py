"""The conformance kit (``pymq conformance``): its pure parts, its recording of the real 4.9.4, and
the kit judging pymq up — as it is, behind a relay that corrupts one field, and with a planted bug."""

from __future__ import annotations

import json
import os

import pytest

from pymq_ref.cli import main
from pymq_ref.oracle.conformance import (FAIL, NOT_SUPPORTED, PASS, SCENARIOS, load_expected, render_html, render_json,
                                         render_text, run_conformance, select)
from pymq_ref.oracle.conformance.normalize import differences, normalize, shape
from pymq_ref.oracle.conformance.steps import Compare, Vars
from pymq_ref.remoting.command import RemotingCommand

from conformance_helpers import KIT_SETTINGS, CorruptingRelay, plant_offset_off_by_one

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT = os.path.join(HERE, "data", "rocketmq-4.9.4-conformance")


# -- pure parts --------------------------------------------------------------------------------------------

def test_normalize_replaces_run_names_addresses_and_volatile_values():
    v = Vars("abc123", "127.0.0.1:10911", "127.0.0.1:9876", "broker-a", "DefaultCluster")
    answer = RemotingCommand.response(1, "queueId[9] is illegal, topic:[cf-abc123-bq] consumer:[/127.0.0.1:50123]",
                                      {"msgId": "7F0000010000", "queueId": "9", "MSG_REGION": "DefaultRegion"})
    got = normalize(answer, v, Compare())
    assert got == {"outcome": "answer", "code": 1, "serializeType": "JSON",
                   "remark": "queueId[9] is illegal, topic:[cf-{run}-bq] consumer:[/{address}]",
                   "ext": {"MSG_REGION": "DefaultRegion", "msgId": "<text>", "queueId": "9"}}
    other = normalize(answer.with_(ext_fields={"msgId": "7F00000100002A9F0000000000001234", "queueId": "8",
                                               "MSG_REGION": "DefaultRegion"}), v, Compare())
    assert [str(d) for d in differences(got, other)] == ["ext.msgId: expected '<text>', got '<id>'",
                                                         "ext.queueId: expected '9', got '8'"]
    assert shape("7F00000100002A9F0000000000001234,7F00000100002A9F0000000000001300") == "<id>,<id>"
    assert (shape("1700000000000"), shape(""), shape("x")) == ("<number>", "<empty>", "<text>")
    assert differences(got, got) == []


def test_every_scenario_is_recorded_from_4_9_4_and_passed_there():
    recorded = load_expected()
    assert "RocketMQ 4.9.4" in recorded["recorded_from"]
    table = recorded["scenarios"]
    assert {s.id for s in SCENARIOS} <= set(table)
    assert all(table[s.id]["status"] == PASS for s in SCENARIOS)
    groups = {s.group for s in SCENARIOS}
    assert groups == {"sending", "pulling", "offsets", "queries", "retry and DLQ", "delay levels", "transactions",
                      "filters", "orderly locks", "routes", "errors"}
    # the kit's second pass against the real 4.9.4, compared with the recording: 100 %
    report = json.load(open(os.path.join(REPORT, "report.json")))
    assert report["summary"]["scenarios"] == len(SCENARIOS)
    assert report["summary"]["passed"] == len(SCENARIOS)
    assert "passed, 0 failed, 0 not supported" in open(os.path.join(REPORT, "report.txt")).read()


def test_select_by_id_group_and_pattern():
    assert [s.id for s in select("tx.*")] == ["tx.commit", "tx.rollback", "tx.check_back"]
    assert {s.group for s in select("filters")} == {"filters"}
    assert select(None) == SCENARIOS
    assert select("no-such-thing") == []
    assert {s.id for s in select("send")} == {s.id for s in SCENARIOS if s.id.startswith("send.")}


def test_cli_lists_and_refuses_an_unreachable_broker(capsys):
    assert main(["conformance", "127.0.0.1:1", "--list", "--only", "lock.*"]) == 0
    assert "lock.batch" in capsys.readouterr().out
    assert main(["conformance", "127.0.0.1:1", "-q"]) == 2
    assert "cannot connect to 127.0.0.1:1" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["conformance", "not-an-address"])


# -- live: pymq up ----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def up(tmp_path_factory):
    from pymq_ref.broker.server.up import UpServer
    with UpServer(str(tmp_path_factory.mktemp("conformance") / "store"), namesrv_port=0, broker_port=0,
                  settings=KIT_SETTINGS) as server:
        yield server


#: Where pymq up is not 4.9.4 on purpose (none today: every difference the kit found was fixed).
KNOWN_DEVIATIONS: dict[str, str] = {}


def test_pymq_up_passes_the_kit(up):
    results = run_conformance(up.broker_addr, up.namesrv_addr, check_timeout=20)  # the check-back comes in ~1 s
    report = render_text(results, broker=up.broker_addr, namesrv=up.namesrv_addr, hex_views=False)
    bad = sorted(r.id for r in results if r.status != PASS and r.id not in KNOWN_DEVIATIONS)
    assert not bad, f"pymq up does not pass {bad}:\n{report}"
    assert all(r.status == PASS for r in results)


def test_a_corrupted_field_fails_the_right_scenario_with_marked_frames(up):
    with CorruptingRelay(up.broker_addr, "queueOffset", lambda value: str(int(value) + 1)) as relay:
        results = run_conformance(relay.address, None, only="send.single,send.v1,error.unknown_code")
    by_id = {r.id: r for r in results}
    assert by_id["error.unknown_code"].status == PASS
    for sid in ("send.single", "send.v1"):
        r = by_id[sid]
        assert r.status == FAIL and r.reason == "differs from 4.9.4 at: send"
        (step,) = [s for s in r.steps if not s.ok]
        assert [str(d) for d in step.differences] == ["ext.queueOffset: expected '0', got '1'"]
    text = render_text(results)
    assert "<<< differs: ext.queueOffset" in text
    assert text.count("extFields.queueOffset") >= 4  # both frames' hex views and field tables name it
    html = render_html(results, broker=relay.address)
    assert html.startswith("<!DOCTYPE html>") and "&lt;&lt;&lt; differs:</b> ext.queueOffset" in html
    assert "<script" not in html and "http" not in html.split("</style>")[0]
    doc = json.loads(render_json(results))
    assert doc["summary"] == {"scenarios": 3, "passed": 1, "failed": 2, "not_supported": 0}


def test_a_planted_bug_in_a_processor_fails_the_offsets_scenario(tmp_path):
    from pymq_ref.broker.server.up import UpServer
    out = tmp_path / "report.json"
    with UpServer(str(tmp_path / "store"), namesrv_port=0, broker_port=0, settings=KIT_SETTINGS) as broken:
        broken.call(plant_offset_off_by_one, broken.up.broker)
        status = main(["conformance", broken.broker_addr, "--namesrv", broken.namesrv_addr,
                       "--only", "offsets.consumer,offsets.heartbeat,send.single", "--format", "json",
                       "--output", str(out), "-q"])
    assert status == 1
    doc = json.loads(out.read_text())
    assert doc["compared_with"].startswith("Apache RocketMQ 4.9.4 name server + broker")
    status_of = {s["id"]: s["status"] for s in doc["scenarios"]}
    assert status_of == {"send.single": PASS, "offsets.consumer": FAIL, "offsets.heartbeat": PASS}
    (failed,) = [s for s in doc["scenarios"] if s["status"] == FAIL]
    bad = {step["name"]: step for step in failed["steps"] if not step["ok"]}
    assert set(bad) == {"query", "query again"}
    assert bad["query"]["differences"] == [{"path": "ext.offset", "expected": "1", "actual": "0"}]
    assert bad["query"]["failures"] == ["offset = '0', expected '1'"]
    assert bad["query"]["expected_frame_hex"] and bad["query"]["actual_frame_hex"]


def test_what_a_broker_lacks_is_not_supported_and_fails_the_exit_status(tmp_path, capsys):
    from pymq_ref.broker.server.up import UpServer
    with UpServer(str(tmp_path / "store"), namesrv_port=0, broker_port=0) as plain:  # enablePropertyFilter=false
        argv = ["conformance", plain.broker_addr, "--only", "filter.tag,filter.sql92,namesrv.route", "-q", "--no-hex"]
        assert main(argv) == 1
        out = capsys.readouterr().out
        assert main(argv + ["--allow-not-supported"]) == 0
    assert "PASS  filter.tag" in out
    assert "N/S   filter.sql92" in out and "enablePropertyFilter=false" in out
    assert "N/S   namesrv.route" in out and "needs the name server (--namesrv)" in out
    assert "1 passed, 0 failed, 2 not supported (3 scenarios)" in out


def test_values_that_vary_must_still_have_their_form(up):
    with CorruptingRelay(up.broker_addr, "msgId", lambda value: value.lower()[:31]) as relay:
        (result,) = run_conformance(relay.address, None, only="send.single")
    assert result.status == FAIL
    (step,) = [s for s in result.steps if not s.ok]
    assert (step.name, [str(d) for d in step.differences]) == ("send", ["ext.msgId: expected '<id>', got '<text>'"])


def test_an_answer_that_does_not_decode_is_named(up):
    def bad_serialize_type(frame: bytes) -> bytes:
        return frame[:4] + b"\x05" + frame[5:]
    with CorruptingRelay(up.broker_addr, None, bad_serialize_type) as relay:
        (result,) = run_conformance(relay.address, None, only="error.unknown_code")
    assert result.status == FAIL
    assert "the broker sent a frame that does not decode: frame.serialize_type at offset 4" in result.reason
