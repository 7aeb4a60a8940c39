"""Re-run the real RocketMQ 4.9.4 client classes and rewrite tests/data/rocketmq-4.9.4-client-logic/.

    tools/rocketmq_client_logic/build.sh
    .venv/bin/python tools/rocketmq_client_logic/regenerate.py            # rewrite the fixtures
    .venv/bin/python tools/rocketmq_client_logic/regenerate.py --check    # compare, rewrite nothing

The inputs are generated here from fixed seeds (random topics, broker names, client ids, queue
and consumer counts, fault-tolerance scripts), written to a temporary folder, answered by the
Java programs of ``src/clientlogic`` running the unmodified 4.9.4 classes, and each fixture line
holds one input with Java's answer under ``"java"``. Running it twice writes identical files.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parent.parent / "tests" / "data" / "rocketmq-4.9.4-client-logic"

ALLOCATE_SCENARIOS = 1000
GROUP = "GID_client_logic"  # the consumer group passed to allocate (RocketMQ only logs it)
FAULT_SCRIPTS = 300
INT_MAX = 2**31 - 1
INT_MIN = -(2**31)

DIGITS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def positions(at: list[int] | None) -> str | None:
    """A list of positions (< 62) as one character each: [0, 10, 36] -> "0aA"."""
    return None if at is None else "".join(DIGITS[i] for i in at)


# -- names ----------------------------------------------------------------------------------------
# Rooms and name stems mix ASCII with text whose Java (UTF-16) order differs from code-point
# order: U+FF01 sorts after an astral character's high surrogate in Java, before it in Python.
ROOMS = ["hz", "sh", "bj", "a", "A", "z", "机房", "\U0001F600", "\uff01", "room1", "room2"]
STEMS = ["broker", "b", "Broker", "brøker", "经纪人", "\U0001F600b", "\uff01b", "bk_", "x.y"]


def broker_name(rng: random.Random, rooms: list[str], i: int) -> str:
    room, stem = rng.choice(rooms), rng.choice(STEMS) + str(i)
    idc = rng.choice(rooms + ["room1", "idc"])
    r = rng.random()
    if r < 0.25:
        return f"{room}-{stem}"                        # machine-room-nearby style
    if r < 0.50:
        return f"{idc}@{stem}"                         # MACHINE_ROOM style
    if r < 0.60:
        return f"{room}-x@{stem}"                      # both
    if r < 0.85:
        return stem                                    # plain: the whole name is its room
    return rng.choice([f"@{stem}", f"{idc}@", f"{idc}@{stem}@", f"{idc}@@{stem}", f"a@b@{stem}", "@",
                       f"{idc}@{stem}@@", f"-{stem}", "", f"\ud800{stem}", f"{room}-\udc00{stem}"])


def client_id(rng: random.Random, rooms: list[str], i: int) -> str:
    ip = rng.choice(["10.0.0.", "192.168.0.", "172.16.3."]) + str(rng.randint(1, 254))
    r = rng.random()
    if r < 0.10:
        return f"{ip}@{rng.randint(1, 99999)}#{rng.randint(10**11, 10**13)}"
    if r < 0.25:
        return f"{ip}@{rng.randint(1, 99999)}"
    if r < 0.55:
        return f"{rng.choice(rooms)}-{ip}@{rng.choice(['DEFAULT', 'i' + str(i)])}"
    if r < 0.75:
        return f"c{i}"
    if r < 0.97:
        return f"{rng.choice(rooms)}-c{i}"
    return rng.choice([f"-c{i}", f"\U0001F600@{i}", f"\uff01@{i}", f"\ud83d-c{i}"])


def topic_name(rng: random.Random) -> str:
    return rng.choice(["TopicTest", "%RETRY%GID_x", "T", "topic-é", "主题", "\U0001F600t", "\uff01t",
                       "t" + str(rng.randint(0, 999))])


def compositions(rng: random.Random, total: int, parts: int) -> list[int]:
    cuts = sorted(rng.sample(range(1, total), parts - 1)) if parts > 1 else []
    edges = [0, *cuts, total]
    return [b - a for a, b in zip(edges, edges[1:])]


def allocate_scenario(rng: random.Random, n: int) -> dict:
    rooms = rng.sample(ROOMS, rng.randint(1, 4))
    total = 0 if rng.random() < 0.05 else rng.randint(1, 40)
    groups: list[list] | None = []
    if total:
        topics = [topic_name(rng)] + ([topic_name(rng)] if rng.random() < 0.1 else [])
        seen: set[tuple[str, str]] = set()
        for i, count in enumerate(compositions(rng, total, rng.randint(1, min(6, total)))):
            topic = rng.choice(topics)
            name = broker_name(rng, rooms, i)
            while (topic, name) in seen:
                name += "'"
            seen.add((topic, name))
            groups.append([topic, name, count])
    elif rng.random() < 0.4:
        groups = None                                  # mqAll null
    perm = None
    if total and rng.random() < 0.9:                   # a HashSet's order before RebalanceImpl sorts
        perm = list(range(total))
        rng.shuffle(perm)
    ncids = 0 if rng.random() < 0.05 else rng.randint(1, 20)
    cids: list[str] | None = []
    for i in range(ncids):
        cid = client_id(rng, rooms, i)
        while cid in cids:
            cid += "'"
        cids.append(cid)
    if not ncids and rng.random() < 0.4:
        cids = None                                    # cidAll null
    extra: list[str | None] = [client_id(rng, rooms, 99)]  # not a member (unless by chance)
    if rng.random() < 0.08:
        extra.append("")
    if rng.random() < 0.04:
        extra.append(None)
    queues = [[g[0], g[1], q] for g in groups or () for q in range(g[2])]
    config = [rng.choice(queues) if queues and rng.random() < 0.7
              else [topic_name(rng), broker_name(rng, rooms, 7), rng.randint(0, 9)]
              for _ in range(rng.randint(0, 3))]
    idcs = sorted({rng.choice(ROOMS + ["room1", "idc", ""]) for _ in range(rng.randint(0, 3))})
    vnodes = rng.choice([0, 1, 2, 3, 5, 7, 16, 33, 100] + ([-1] if rng.random() < 0.05 else []))
    return {"id": n, "groups": groups, "perm": positions(perm), "cids": cids, "sort": rng.random() < 0.85,
            "extra": extra, "vnodes": vnodes, "hash": [rng.choice([3, 10]), rng.choice(["hashCode", "hashCode&63"])],
            "config": config, "idcs": idcs}


# The strategies every scenario runs, by fixture key (tests/test_client_allocate.py builds the same).
def strategy_specs(s: dict) -> dict[str, list]:
    return {
        "AVG": ["AVG"],
        "AVG_BY_CIRCLE": ["AVG_BY_CIRCLE"],
        "CH10": ["CONSISTENT_HASH", 10, None],
        "CHv": ["CONSISTENT_HASH", s["vnodes"], None],
        "CHh": ["CONSISTENT_HASH", *s["hash"]],
        "CONFIG": ["CONFIG", s["config"]],
        "MACHINE_ROOM": ["MACHINE_ROOM", s["idcs"]],
        "NEARBY_AVG": ["MACHINE_ROOM_NEARBY", ["AVG"], "-"],
        "NEARBY_AVG_BY_CIRCLE": ["MACHINE_ROOM_NEARBY", ["AVG_BY_CIRCLE"], "-"],
        "NEARBY_CH10": ["MACHINE_ROOM_NEARBY", ["CONSISTENT_HASH", 10, None], "-"],
    }


def compact_allocation(scenario: dict, answer: dict, names: dict[str, str]) -> dict:
    """Java's answer in the fixture's form: per strategy and query, the positions as a string, or
    the number of an exception in "errors"; a strategy that answered every query alike (an
    exception, CONFIG's list) as {"all": answer}; a constructor that threw as {"new": number}."""
    errors: list[dict] = []

    def error(e: dict) -> int:
        if e not in errors:
            errors.append(e)
        return errors.index(e)

    results = {}
    for key, got in zip(strategy_specs(scenario), answer["strategies"]):
        if "error" in got:
            results[key] = {"new": error(got["error"])}
            continue
        if names.setdefault(key, got["name"]) != got["name"]:
            sys.exit(f"{key}: getName() {got['name']!r} after {names[key]!r}")
        per = [error(r) if isinstance(r, dict) else positions(r) for r in got["results"]]
        results[key] = {"all": per[0]} if len(per) > 1 and all(r == per[0] for r in per) else per
    return {"mq_order": positions(answer["mq_order"]), "cid_order": positions(answer["cid_order"]),
            "errors": errors, "results": results}


# -- fault tolerance -------------------------------------------------------------------------------
# "Aa" and "BB" share a String.hashCode, so they share a ConcurrentHashMap bin (insertion order).
FAULT_BROKERS = ["broker-a", "broker-b", "broker-c", "broker-d", "Aa", "BB", "经纪人-1", "b\U0001F600"]
LATENCIES = [0, 1, 49, 50, 51, 99, 100, 549, 550, 999, 1000, 1999, 2000, 2999, 3000, 14999, 15000, 30000]
STEPS = [0, 0, 0, 1, 5, 50, 999, 1000, 29999, 30000, 30001, 59999, 60000, 120000, 180000, 599999, 600000, 600001]
TABLES_5X = [[50, 100, 550, 1800, 3000, 5000, 15000], [0, 0, 2000, 5000, 6000, 10000, 30000]]


def counter_start(rng: random.Random) -> int:
    return rng.choice([0, 1, rng.randint(0, INT_MAX), rng.randint(0, INT_MAX), INT_MAX - rng.randint(0, 12), INT_MAX,
                       INT_MIN, INT_MIN + rng.randint(0, 5), -rng.randint(1, 20)])


def fault_script(rng: random.Random, n: int) -> dict:
    brokers = rng.sample(FAULT_BROKERS, rng.randint(1, 5))
    route = [[b, rng.choice([1, 1, 2, 3, 4, 4, 8, 16])] for b in brokers]
    if rng.random() < 0.1:
        route.append([rng.choice([b for b in FAULT_BROKERS if b not in brokers]), 0])  # no writable queue
    others = [b for b in FAULT_BROKERS if b not in brokers]
    known = brokers + rng.sample(others, min(len(others), rng.randint(0, 2)))  # other topics' brokers
    tables = None if rng.random() < 0.85 else rng.choice([TABLES_5X, [[0, 100], [10, 20000]], [[100, 10], [1000, 5]]])
    t = 0
    ops = []
    for _ in range(rng.randint(6, 30)):
        t = rng.choice(STEPS) if rng.random() < 0.9 else rng.randint(0, 700000)  # ms since the previous op
        r = rng.random()
        latency = rng.choice(LATENCIES) if rng.random() < 0.8 else rng.randint(0, 20000)
        if r < 0.06:  # an outage: several brokers fail alike in the same millisecond (equal fault items)
            isolation = rng.random() < 0.7
            for i, b in enumerate(rng.sample(known, min(len(known), rng.randint(2, 4)))):
                ops.append([t if i == 0 else 0, "u", b, latency, isolation])
        elif r < 0.40:
            ops.append([t, "s", rng.choice(known) if rng.random() < 0.5 else None])
        elif r < 0.72:
            ops.append([t, "u", rng.choice(known), latency, rng.random() < 0.45])
        elif r < 0.77:
            ops.append([t, "d", rng.choice(known), latency, rng.choice([-1000, 0, 1, 30000, rng.randint(0, 700000)])])
        elif r < 0.84:
            ops.append([t, "a", rng.choice(known)])
        elif r < 0.87:
            ops.append([t, "r", rng.choice(known)])
        elif r < 0.93:
            ops.append([t, "p"])
        else:
            ops.append([t, "t"])
    return {"id": n, "topic": topic_name(rng), "route": route, "enable": rng.random() < 0.85, "tables": tables,
            "send": counter_start(rng), "worst": counter_start(rng), "t0": rng.randint(0, 10**6), "ops": ops}


def fault_request(script: dict) -> dict:
    """What FaultCheck reads: the publish list expanded from the route (each broker's queues
    0..writeQueueNums-1, in route order) and absolute op times (t0 plus the deltas)."""
    t, ops = script["t0"], []
    for op in script["ops"]:
        t += op[0]
        ops.append([t, *op[1:]])
    return {**script, "mqs": [[b, q] for b, w in script["route"] for q in range(w)], "ops": ops}


def duration_scripts() -> list[dict]:
    rng = random.Random(4941)
    edges = sorted({x + d for x in LATENCIES + [1800, 5000] for d in (-1, 0, 1)} | {-(2**63), -1, 2**63 - 1})
    latencies = edges + [rng.randint(0, 40000) for _ in range(40)]
    return [{"id": i, "kind": "durations", "tables": tables, "latencies": latencies}
            for i, tables in enumerate([None, TABLES_5X, [[0, 100], [10, 20000]], [[100, 10], [1000, 5]]])]


# -- running Java ------------------------------------------------------------------------------------
def dumps(obj) -> str:
    """One JSON line, UTF-8 text unless it holds a lone surrogate (then \\u escapes, as JSON allows)."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(obj, ensure_ascii=True, separators=(",", ":"))
    return text


def java(main: str, inputs: list[dict], work: Path) -> list[dict]:
    src, dst = work / f"{main}.in.jsonl", work / f"{main}.out.jsonl"
    src.write_text("".join(dumps(x) + "\n" for x in inputs), encoding="utf-8")
    done = subprocess.run([str(HERE / "run.sh"), f"clientlogic.{main}", str(src), str(dst)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        sys.exit(f"clientlogic.{main} failed:\n{done.stdout}{done.stderr}")
    sys.stderr.write(done.stderr)
    answers = [json.loads(line) for line in dst.read_text(encoding="utf-8").splitlines()]
    assert [a.pop("id") for a in answers] == [x["id"] for x in inputs]
    return answers


def write(out: Path, name: str, lines: list[dict]) -> None:
    path = out / name
    path.write_text("".join(dumps(x) + "\n" for x in lines), encoding="utf-8")
    print(f"{name}: {len(lines)} lines, {path.stat().st_size} bytes")


def record(out: Path, work: Path) -> None:
    rng = random.Random(20220517)
    scenarios = [allocate_scenario(rng, n) for n in range(ALLOCATE_SCENARIOS)]
    requests = [{**s, "group": GROUP, "perm": s["perm"] and [DIGITS.index(ch) for ch in s["perm"]],
                 "strategies": list(strategy_specs(s).values())} for s in scenarios]
    names: dict[str, str] = {}
    answers = [compact_allocation(s, a, names) for s, a in zip(scenarios, java("AllocateCheck", requests, work))]
    write(out, "allocate.jsonl", [{**s, "java": a} for s, a in zip(scenarios, answers)])
    (out / "names.json").write_text(json.dumps(names, indent=1) + "\n")
    rng = random.Random(4940)
    scripts = [fault_script(rng, n) for n in range(FAULT_SCRIPTS)]
    answers = java("FaultCheck", [fault_request(s) for s in scripts], work)
    write(out, "fault.jsonl", [{**s, "java": a} for s, a in zip(scripts, answers)])
    durations = duration_scripts()
    write(out, "durations.jsonl", [{**s, "java": a} for s, a in zip(durations, java("FaultCheck", durations, work))])


FILES = ("allocate.jsonl", "names.json", "fault.jsonl", "durations.jsonl")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="record into a temporary folder and compare with the committed fixtures; rewrite nothing")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="client-logic-") as tmp:
        work = Path(tmp)
        out = work / "out" if args.check else OUT
        out.mkdir(parents=True, exist_ok=True)
        record(out, work)
        if args.check:
            differ = [name for name in FILES if (out / name).read_bytes() != (OUT / name).read_bytes()]
            if differ:
                sys.exit(f"differ from what RocketMQ 4.9.4 answers now: {', '.join(differ)}")
            print("the fixtures are what RocketMQ 4.9.4 answers")


if __name__ == "__main__":
    main()
