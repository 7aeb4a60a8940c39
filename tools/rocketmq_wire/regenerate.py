"""Rebuild the golden frame corpus (corpus/frames/) from the real RocketMQ 4.9.4 encoders.

    tools/rocketmq_wire/build.sh                       # or let this script build
    /work/main/.venv/bin/python tools/rocketmq_wire/regenerate.py [--no-build]

Steps: list the 4.9.4 protocol classes from the source tree ($RMQ_SRC), let ``wire.Schema``
describe them by reflection (corpus/frames/schemas.json), turn the case lists of
``catalog_*.py`` into corpus/frames/catalog.json, run ``wire.HeaderFrames``, ``wire.FrameDecode``
and ``wire.Bodies`` on it, and write every frame, body and expected view under corpus/frames/
(README.md there describes the layout). The whole corpus directory is rewritten; running the
script twice gives identical files. Work happens in a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
OUT = REPO / "corpus" / "frames"
sys.path.insert(0, str(HERE))

import catalog_body_decode  # noqa: E402
import catalog_bodies  # noqa: E402
import catalog_decode  # noqa: E402
import catalog_headers  # noqa: E402

RMQ_SRC = Path(os.environ.get("RMQ_SRC", "/tmp/src/rocketmq-all-4.9.4"))
COMMON = "common/src/main/java/org/apache/rocketmq/common"
CLASS_SOURCES = [  # (folder or file under RMQ_SRC) whose classes the corpus covers
    f"{COMMON}/protocol/header", f"{COMMON}/protocol/body", f"{COMMON}/protocol/route",
    f"{COMMON}/protocol/heartbeat", f"{COMMON}/protocol/topic", f"{COMMON}/admin",
    f"{COMMON}/DataVersion.java", f"{COMMON}/TopicConfig.java", f"{COMMON}/PlainAccessConfig.java",
    f"{COMMON}/subscription/SubscriptionGroupConfig.java", f"{COMMON}/message/MessageQueue.java",
    f"{COMMON}/message/MessageQueueForC.java", f"{COMMON}/consumer/ConsumeFromWhere.java",
    "namesrv/src/main/java/org/apache/rocketmq/namesrv/kvconfig/KVConfigSerializeWrapper.java",
    "store/src/main/java/org/apache/rocketmq/store/schedule/DelayOffsetSerializeWrapper.java",
    "client/src/main/java/org/apache/rocketmq/client/consumer/store/OffsetSerializeWrapper.java",
]


def java(main: str, *args: object) -> None:
    done = subprocess.run([str(HERE / "run.sh"), main, *map(str, args)], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"rocketmq wire: {main} failed:\n{done.stdout}{done.stderr[-4000:]}")


def jsonl(path: Path) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    broken = [r for r in rows if "harnessError" in r]
    if broken:
        sys.exit("rocketmq wire: the recorder failed (not RocketMQ):\n" + "\n".join(
            f"{r['name']}: {r['harnessError']}" for r in broken[:5]))
    return rows


def dump(doc) -> str:
    return json.dumps(doc, indent=1, ensure_ascii=True) + "\n"


def class_names() -> list[str]:
    names = []
    for rel in CLASS_SOURCES:
        p = RMQ_SRC / rel
        files = sorted(p.rglob("*.java")) if p.is_dir() else [p]
        for f in files:
            parts = f.relative_to(RMQ_SRC).parts
            start = parts.index("java") + 1
            names.append(".".join(parts[start:])[: -len(".java")])
    return names


def frame_fields(frame: bytes) -> dict:
    """The length fields of a frame, as a reader sees them."""
    total, word = struct.unpack_from(">iI", frame)
    return {"totalLength": total, "serializeType": word >> 24, "headerLength": word & 0xFFFFFF,
            "bodyLength": total - 4 - (word & 0xFFFFFF)}


# -- writers -----------------------------------------------------------------------------------
def write_headers(catalog: dict, results: list[dict], out: Path) -> list[dict]:
    index = []
    for case, res in zip(catalog["headers"], results):
        assert case["name"] == res["name"]
        name, files, frames = case["name"], {}, {}
        for st, f in res["frames"].items():
            entry = dict(f)
            if "hex" in f:
                raw = bytes.fromhex(f["hex"])
                fname = f"{name}.{st.lower()}.bin"
                (out / fname).write_bytes(raw)
                files[st] = fname
                entry = {"file": fname, **frame_fields(raw), **f}
                if st == "JSON":
                    h = entry["headerLength"]
                    entry["headerText"] = raw[8:8 + h].decode("utf-8", "replace")
            frames[st] = entry
        expected = {"case": name, "input": case, "frames": frames, "decoded": res["decoded"]}
        (out / f"{name}.expected.json").write_text(dump(expected))
        index.append({"case": name, "kind": case["kind"], "code": case["code"],
                      "requestCode": case.get("requestCode"), "headerClass": case["headerClass"],
                      "files": files, "expected": f"{name}.expected.json"})
    return index


def write_decode(catalog: dict, results: list[dict], out: Path) -> list[dict]:
    index = []
    for case, res in zip(catalog["decode"], results):
        assert case["name"] == res["name"]
        name = case["name"]
        raw = b"".join(bytes.fromhex(c) for c in case["chunks"])
        (out / f"{name}.bin").write_bytes(raw)
        (out / f"{name}.expected.json").write_text(dump({"case": name, "input": case, **{
            k: v for k, v in res.items() if k != "name"}}))
        index.append({"case": name, "decodeAs": case.get("decodeAs"), "input": f"{name}.bin",
                      "appendZeroBytes": case.get("appendZeroBytes", 0), "expected": f"{name}.expected.json"})
    return index


def python_zlib_note(raw: bytes) -> dict:
    plain = zlib.decompress(raw)
    return {"plainHex": plain.hex(), "pythonZlibCompressLevel9Same": zlib.compress(plain, 9) == raw}


def write_bodies(catalog: dict, results: list[dict], out: Path) -> list[dict]:
    index = []
    for case, res in zip(catalog["bodies"], results):
        assert case["name"] == res["name"]
        name, files, encs = case["name"], {}, {}
        for enc, e in res["encodings"].items():
            entry = dict(e)
            if "hex" in e:
                raw = bytes.fromhex(e["hex"])
                fname = f"{name}.{enc}.bin"
                (out / fname).write_bytes(raw)
                files[enc] = fname
                entry = {"file": fname, **e}
                if enc == "compressed":
                    entry.update(python_zlib_note(raw))
                else:
                    entry["text"] = raw.decode("utf-8")
            encs[enc] = entry
        expected = {"case": name, "class": case["class"], "input": case, "value": res["value"],
                    "classesSeen": res["classesSeen"], "encodings": encs}
        (out / f"{name}.expected.json").write_text(dump(expected))
        index.append({"case": name, "class": case["class"], "codes": case["codes"], "files": files,
                      "expected": f"{name}.expected.json"})
    return index


def write_body_decode(catalog: dict, results: list[dict], out: Path) -> list[dict]:
    index = []
    for case, res in zip(catalog["bodyDecode"], results):
        assert case["name"] == res["name"]
        name = case["name"]
        raw = bytes.fromhex(case["hex"]) if "hex" in case else case["text"].encode("utf-8")
        (out / f"{name}.bin").write_bytes(raw)
        doc = {"case": name, "class": case["class"], "input": case, **{k: v for k, v in res.items() if k != "name"}}
        if "reencoded" in res:
            doc["reencodedText"] = bytes.fromhex(res["reencoded"]).decode("utf-8")
        (out / f"{name}.expected.json").write_text(dump(doc))
        index.append({"case": name, "class": case["class"], "decoder": case["decoder"], "input": f"{name}.bin",
                      "expected": f"{name}.expected.json"})
    return index


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-build", action="store_true", help="use the classes build.sh made before")
    args = ap.parse_args()
    if not args.no_build:
        subprocess.run([str(HERE / "build.sh")], check=True)
    with tempfile.TemporaryDirectory(prefix="rocketmq-wire-") as tmp:
        work = Path(tmp)
        (work / "classes.txt").write_text("".join(f"c {n}\n" for n in class_names()))
        java("wire.Schema", work / "classes.txt", work / "schemas.json")
        schema = json.loads((work / "schemas.json").read_text())
        catalog = {
            "headers": catalog_headers.build(schema),
            "decode": catalog_decode.DECODE,
            "bodies": catalog_bodies.BODIES,
            "bodyDecode": catalog_body_decode.BODY_DECODE,
        }
        cat_path = work / "catalog.json"
        cat_path.write_text(dump(catalog))
        java("wire.HeaderFrames", cat_path, work / "headers.jsonl")
        java("wire.FrameDecode", cat_path, work / "decode.jsonl")
        java("wire.Bodies", "bodies", cat_path, work / "bodies.jsonl")
        java("wire.Bodies", "bodyDecode", cat_path, work / "bodyDecode.jsonl")

        for sub in ("headers", "decode", "bodies", "body-decode"):
            shutil.rmtree(OUT / sub, ignore_errors=True)
            (OUT / sub).mkdir(parents=True)
        index = {
            "rocketmq": "4.9.4", "fastjson": "1.2.69",
            "headers": write_headers(catalog, jsonl(work / "headers.jsonl"), OUT / "headers"),
            "decode": write_decode(catalog, jsonl(work / "decode.jsonl"), OUT / "decode"),
            "bodies": write_bodies(catalog, jsonl(work / "bodies.jsonl"), OUT / "bodies"),
            "bodyDecode": write_body_decode(catalog, jsonl(work / "bodyDecode.jsonl"), OUT / "body-decode"),
            "headerClasses": sorted(n for n, c in schema["classes"].items() if c["kind"] == "header"),
            "bodyClasses": sorted(n for n, c in schema["classes"].items() if c["kind"] == "body"),
        }
        (OUT / "catalog.json").write_text(dump(catalog))
        (OUT / "schemas.json").write_text(dump(schema))
        (OUT / "index.json").write_text(dump(index))
    print(f"golden frames: {len(index['headers'])} header cases, {len(index['decode'])} decode cases, "
          f"{len(index['bodies'])} body cases, {len(index['bodyDecode'])} body-decode cases in {OUT}")


if __name__ == "__main__":
    main()
