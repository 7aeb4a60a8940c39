"""The remoting codec: encode + decode of a SEND_MESSAGE_V2 request and its response, against a raw
baseline doing only ``json`` + ``struct`` on the same fields.

* baseline: the same two frames built by hand — the header's typed values turned into strings, a
  dict of the members dumped by ``json``, the length words packed by ``struct`` — and read back
  with ``struct`` + ``json.loads``, each field turned back into its type; no header classes, no
  validation, no Java ordering, no fastjson escaping rules;
* ours: :class:`~pymq_ref.remoting.command.RemotingCommand` with the typed
  ``SendMessageRequestHeaderV2`` / ``SendMessageResponseHeader`` through
  :func:`pymq_ref.remoting.codec.encode` / ``decode``, then the typed header decoded from the
  ext fields — what a server and a client do per send.

Target: ours >= 0.5x the baseline (round trips per second).
"""

from __future__ import annotations

import json
import struct
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Row, interleaved_best, parser, report  # noqa: E402

from pymq_ref.remoting import headers as H  # noqa: E402
from pymq_ref.remoting.codec import decode, encode  # noqa: E402
from pymq_ref.remoting.command import RemotingCommand  # noqa: E402

BODY = b"x" * 1024
PROPERTIES = "KEYS\x01order-1\x02UNIQ_KEY\x017F0000010001000000000000000001\x02WAIT\x01true\x02TAGS\x01TagA"


def ours(n: int) -> float:
    header = H.SendMessageRequestHeaderV2(producer_group="PG", topic="TopicTest", default_topic="TBW102",
                                          default_topic_queue_nums=4, queue_id=1, sys_flag=0,
                                          born_timestamp=1700000000000, flag=0, properties=PROPERTIES,
                                          reconsume_times=0, unit_mode=False, max_reconsume_times=16, batch=False)
    start = time.perf_counter()
    for i in range(n):
        request = decode(encode(RemotingCommand.request(310, header, BODY, opaque=i))).command
        h = request.header(H.SendMessageRequestHeaderV2)
        response = RemotingCommand.response(0, None, H.SendMessageResponseHeader(
            msg_id="7F00000100002A9F0000000000000000", queue_id=h.queue_id, queue_offset=i),
            opaque=request.opaque, ext_fields={"MSG_REGION": "DefaultRegion", "TRACE_ON": "true"})
        got = decode(encode(response)).command
        got.header(H.SendMessageResponseHeader)
    return n / (time.perf_counter() - start)


def baseline(n: int) -> float:
    """The same frames by hand: typed values to strings, ``json`` + ``struct`` out, then back in and
    every field to its type again — what any encoder of these fields must do, and nothing more."""
    pack, unpack = struct.Struct(">ii").pack, struct.Struct(">ii").unpack_from
    dumps, loads = json.dumps, json.loads
    values = {"a": "PG", "b": "TopicTest", "c": "TBW102", "d": 4, "e": 1, "f": 0, "g": 1700000000000, "h": 0,
              "i": PROPERTIES, "j": 0, "k": False, "l": 16, "m": False}
    ints, bools = ("d", "e", "f", "g", "h", "j", "l"), ("k", "m")
    start = time.perf_counter()
    for i in range(n):
        ext = {k: ("true" if v else "false") if v is True or v is False else str(v) for k, v in values.items()}
        req = dumps({"code": 310, "extFields": ext, "flag": 0, "language": "JAVA", "opaque": i,
                     "serializeTypeCurrentRPC": "JSON", "version": 401}, separators=(",", ":")).encode()
        frame = pack(4 + len(req) + len(BODY), len(req)) + req + BODY
        total, hlen = unpack(frame)
        got = loads(frame[8:8 + hlen])
        body = frame[8 + hlen:]
        ext = got["extFields"]
        typed = {k: int(ext[k]) for k in ints}
        typed.update({k: ext[k] == "true" for k in bools})
        resp = dumps({"code": 0, "extFields": {"MSG_REGION": "DefaultRegion", "msgId": "7F00000100002A9F0000000000000000",
                                               "queueId": str(typed["e"]), "queueOffset": str(i), "TRACE_ON": "true"},
                      "flag": 1, "language": "JAVA", "opaque": got["opaque"], "serializeTypeCurrentRPC": "JSON",
                      "version": 401}, separators=(",", ":")).encode()
        frame = pack(4 + len(resp), len(resp)) + resp
        total, hlen = unpack(frame)
        back = loads(frame[8:8 + hlen])["extFields"]
        int(back["queueId"]), int(back["queueOffset"])
        assert body
    return n / (time.perf_counter() - start)


def main() -> int:
    args = parser(__doc__.splitlines()[0]).parse_args()
    n = 5_000 if args.quick else 40_000
    repeat = args.repeat or (2 if args.quick else 5)
    o, b = interleaved_best(lambda: ours(n), lambda: baseline(n), repeat)
    rows = [Row("SEND_MESSAGE_V2 request + response, encode+decode", o, b, "rt/s", 0.5,
                "ours: typed headers, Java HashMap ext order, fastjson escaping; baseline: json + struct only")]
    return report("bench_codec", "Remoting codec vs raw json + struct (same fields, same frames)", rows,
                  {"round_trips": n, "repeat": repeat, "body_bytes": len(BODY)})


if __name__ == "__main__":
    sys.exit(main())
