"""Re-run the real RocketMQ 4.9.4 store classes and rewrite what tests/data/rocketmq-4.9.4-*/ records.

    RMQ_SRC=/path/to/rocketmq-all-4.9.4 tools/rocketmq_harness/build.sh
    .venv/bin/python tools/rocketmq_harness/regenerate.py corpus recovery facade retention put-limits

Each step copies a store (written by pymq_ref, or by RocketMQ in ``ext`` and ``pool``), lets the
harness classes (``src/gen``) open it with RocketMQ, and writes RocketMQ's answers — and the
hashes of the bytes it read — where the tests compare pymq_ref with them (each data directory's
README.md says what a step does). Steps over pymq_ref stores (and ``delay``, whose records carry no store time) are deterministic: re-running them
on an unchanged tree rewrites the same files. ``ext`` and ``pool`` make RocketMQ write new
stores, whose store timestamps come from the wall clock, so they rewrite those fixtures.
Work happens in a temporary folder; nothing under corpus/ is touched.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
DATA = REPO / "tests" / "data"
sys.path.insert(0, str(REPO / "tests"))

import facade_calls as F  # noqa: E402
import recovery_scenarios as R  # noqa: E402
from store_helpers import tree_digest  # noqa: E402

CORPUS_CASES_GEOMETRY = ("1024", "100", "8")  # commitlog, consumequeue, hash slots (index num per case)


def java(main: str, *args: object) -> None:
    """Run one harness class; its stderr (RocketMQ's log) is dropped unless it fails."""
    done = subprocess.run([str(HERE / "run.sh"), f"gen.{main}", *map(str, args)], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"rocketmq harness: gen.{main} failed:\n{done.stdout}{done.stderr}")


def write_json(path: Path, doc) -> None:
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


def copy_store(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    (dst / "lock").unlink(missing_ok=True)
    return dst


# -- steps -------------------------------------------------------------------------------------
def step_corpus(work: Path) -> None:
    out = DATA / "rocketmq-4.9.4-reads-corpus"
    pins = {}
    for case in sorted(p for p in (REPO / "corpus").iterdir() if (p / "store").is_dir()):
        geometry = json.loads((case / "expected.json").read_text())["geometry"]
        root = copy_store(case / "store", work / "corpus" / case.name)
        java("CorpusCheck", root, out / f"{case.name}.jsonl", *CORPUS_CASES_GEOMETRY, geometry["max_index_num"])
        pins[case.name] = tree_digest(case / "store", lambda rel: rel != "lock")
    write_json(out / "corpus.sha256.json", pins)


def _bases(work: Path) -> Path:
    bases = work / "bases"
    if not bases.exists():
        for name, build in R.BASES.items():
            build(bases / name)
    return bases


def step_recovery(work: Path) -> None:
    out = DATA / "rocketmq-4.9.4-recovery"
    bases = _bases(work)
    for name in R.BASES:
        write_json(out / f"{name}.sha256.json", tree_digest(bases / name))
    for scenario in R.SCENARIOS:
        root = work / "recovery" / scenario
        R.make(bases, scenario, root)
        java("CorpusCheck", root, out / f"{scenario}.jsonl", "1024", "100", "8", "16")


def step_facade(work: Path) -> None:
    out = DATA / "rocketmq-4.9.4-facade"
    bases = _bases(work)
    F.build_wide(work / "wide")
    write_json(out / "wide.sha256.json", tree_digest(work / "wide"))
    runs = [(f"recovery-{s}", s, None, 40, ("1024", "100", "8", "16"))
            for s in ("clean", "head_segments_deleted", "consume_queues_lost")]
    runs += [(f"wide-r{r}", None, r, r, (str(1 << 20), "1000", "100", "400")) for r in (40, 0)]
    for name, scenario, wide_ratio, ratio, geometry in runs:
        ours, theirs = work / "facade" / name / "ours", work / "facade" / name / "theirs"
        if scenario is not None:
            R.make(bases, scenario, ours)
        else:
            shutil.copytree(work / "wide", ours)
        shutil.copytree(ours, theirs)
        with F.open_store(ours, wide_ratio) as store:  # as the test opens it: the grid's store times
            grid = F.grid_text(F.calls(store))
        (work / f"{name}.grid").write_text(grid)
        java("FacadeCheck", theirs, work / f"{name}.grid", out / f"{name}.jsonl", *geometry, ratio)


def step_retention(work: Path) -> None:
    out = DATA / "rocketmq-4.9.4-retention"
    bases = _bases(work)
    for aged in (1, 3, 8, 9):
        root = work / "retention" / f"aged_{aged}"
        shutil.copytree(bases / "base", root)
        expired = time.time() - 73 * 3600
        for seg in sorted((root / "commitlog").iterdir())[:aged]:
            os.utime(seg, (expired, expired))
        java("RetentionCheck", root, out / f"aged_{aged}.jsonl", "1024", "100", "8", "16")


def step_put_limits(work: Path) -> None:
    import test_put_limits_vs_rocketmq as P

    out = DATA / "rocketmq-4.9.4-put-limits"
    tsv = "".join("\t".join(map(str, case)) + "\n" for case in P.CASES)
    (work / "cases.tsv").write_text(tsv, encoding="utf-8")
    (out / "cases.sha256").write_text(hashlib.sha256(tsv.encode()).hexdigest() + "\n")
    java("PutCheck", work / "puts", work / "cases.tsv", out / "rocketmq.jsonl")
    small = {"multibyte_topic": [("ok", "T", "v", 10), ("unicode_topic", "é" * 64, "v", 10), ("after", "T", "v", 10)],
             "oversized": [("ok", "T", "v", 10), ("big", "T", "v", 100000), ("after", "T", "v", 10)]}
    for name, cases in small.items():
        text = "".join("\t".join(map(str, c)) + "\n" for c in cases)
        (out / f"{name}_cases.tsv").write_text(text, encoding="utf-8")
        java("PutCheck", work / name, out / f"{name}_cases.tsv", out / f"{name}_rocketmq.jsonl")
        reopened = copy_store(work / name, work / f"{name}-reopened")
        java("CorpusCheck", reopened, work / f"{name}.jsonl", "65536", "6000000", "5000000", "20000000")
        first = (work / f"{name}.jsonl").read_text().splitlines()[0]
        (out / f"{name}_reopened.jsonl").write_text(first + "\n")


def step_ext(work: Path) -> None:
    import test_real_rocketmq_ext_store as X

    out = DATA / "rocketmq-4.9.4-ext"
    java("ExtGen", "gen", work / "ext" / "store", work / "ext" / "expected.jsonl")
    shutil.rmtree(out / "store", ignore_errors=True)
    shutil.copytree(work / "ext" / "store", out / "store", ignore=shutil.ignore_patterns("config"))
    shutil.copy(work / "ext" / "expected.jsonl", out / "expected.jsonl")
    ours = work / "ext-extended"
    X.extend(ours)  # from the new store/
    write_json(out / "pymq_extension.sha256.json",
               tree_digest(ours, lambda rel: rel.split("/")[0] in ("commitlog", "consumequeue", "consumequeue_ext", "index")))
    (ours / "lock").unlink(missing_ok=True)
    java("ExtGen", "check", ours, out / "rocketmq_reads_pymq.jsonl")
    for scenario in ("crash", "torn", "crc", "ext_lost"):
        root = copy_store(out / "store", work / "ext-recovery" / scenario)
        X.damage(root, scenario)
        java("ExtGen", "extend", root, out / "recovery" / scenario / "rocketmq.jsonl")
        shutil.rmtree(out / "recovery" / scenario / "consumequeue_ext", ignore_errors=True)
        shutil.copytree(root / "consumequeue_ext", out / "recovery" / scenario / "consumequeue_ext")


def step_pool(work: Path) -> None:
    import test_real_rocketmq_pool_store as P

    out = DATA / "rocketmq-4.9.4-pool"
    java("PoolGen", work / "pool" / "store")
    shutil.rmtree(out / "store", ignore_errors=True)
    shutil.copytree(work / "pool" / "store", out / "store", ignore=shutil.ignore_patterns("config"))
    ours = work / "pool-ours"
    P.write_with_pool(ours)
    write_json(out / "pymq_pool_store.sha256.json",
               tree_digest(ours, lambda rel: rel.split("/")[-2:-1] in (["commitlog"], ["index"], ["0"], ["1"])))
    theirs = copy_store(ours, work / "pool-theirs")
    java("CorpusCheck", theirs, out / "rocketmq_reads_pymq.jsonl", "4096", "1000", "100", "400")


def step_delay(work: Path) -> None:
    out = DATA / "rocketmq-4.9.4-delay"
    java("DeliverCheck", work / "delay", out / "cases.tsv", out / "rocketmq.jsonl")


STEPS = {"corpus": step_corpus, "recovery": step_recovery, "facade": step_facade, "retention": step_retention,
         "put-limits": step_put_limits, "ext": step_ext, "pool": step_pool, "delay": step_delay}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("steps", nargs="+", choices=[*STEPS, "all"], help="what to re-run ('all': every step)")
    args = p.parse_args(argv)
    if not (Path(os.environ.get("HARNESS_CLASSES", REPO / "_build" / "rocketmq-harness")) / "gen").is_dir():
        sys.exit("rocketmq harness: not built; run RMQ_SRC=... tools/rocketmq_harness/build.sh first")
    steps = list(STEPS) if "all" in args.steps else args.steps
    with tempfile.TemporaryDirectory(prefix="rocketmq-harness-") as tmp:
        for name in steps:
            started = time.monotonic()
            STEPS[name](Path(tmp))
            print(f"rocketmq harness: {name} done in {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
