"""Power losses for real: LazyFS killed at random moments under a writer process (see README.md).

Usage::

    driver.py --lazyfs /tmp/lazyfs --workdir /tmp/pl [--losses 70] [--series 10] [--writers 4]
              [--modes SYNC_FLUSH ASYNC_FLUSH ASYNC_FLUSH+POOL] [--seed 1] [--out results.json]

For each flush mode, ``--losses`` power losses in series of ``--series`` on one store (a fresh
store per series): mount LazyFS (``mount.sh``), start ``writer.py`` on the store (four writer
threads and a config persister, the broker's flush threads), let it run a random 0.1–1.2 s, cut
the power (``crash.sh``: LazyFS is killed, so whatever was not synced is gone), kill the writer,
mount again and check the store with :func:`power_loss_checks.check_recovered`: it must open
unattended; every acknowledged message that was synced (all of them under SYNC_FLUSH; under
ASYNC_FLUSH those below the last ``FLUSHED`` offset the writer reported) is there byte for byte
with its ConsumeQueue unit and index entry; what else was acknowledged is lost only as a tail;
the doctor is clean after the restart. Messages kept are checked again after every later loss of
the series.

Prints one line per loss and a summary per mode; ``--out`` writes them as JSON. Exit status 0
when every check passed, 1 otherwise. Needs root (FUSE), /dev/fuse and fusermount3.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO))

from power_loss_checks import MODES, Ack, PowerLossCheckFailed, check_recovered  # noqa: E402


class Writer:
    """``writer.py`` as a subprocess, its output lines collected by a thread."""

    def __init__(self, root: Path, mode: str, start: int, writers: int):
        env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        self.proc = subprocess.Popen([sys.executable, str(HERE / "writer.py"), str(root), mode, str(start), str(writers)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.acks: list[Ack] = []
        self.flushed = 0
        self.persisted = 0
        self.ready = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            if line.startswith("ACK "):
                self.acks.append(Ack.parse(line))
            elif line.startswith("FLUSHED "):
                self.flushed = max(self.flushed, int(line.split()[1]))
            elif line.startswith("PERSISTED "):
                self.persisted = max(self.persisted, int(line.split()[1]))
            elif line.startswith("READY"):
                self.ready.set()

    def kill(self) -> str:
        try:
            self.proc.send_signal(signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        self._reader.join(timeout=10)
        return self.proc.stderr.read()


def mount(lazyfs: Path, root: Path, mnt: Path) -> None:
    subprocess.run([str(lazyfs / "mount.sh"), str(root), str(mnt)], check=True, capture_output=True, timeout=60)


def crash(lazyfs: Path, mnt: Path) -> None:
    subprocess.run([str(lazyfs / "crash.sh"), str(mnt)], check=False, capture_output=True, timeout=60)


def unmount(mnt: Path) -> None:
    subprocess.run(["fusermount3", "-u", str(mnt)], check=False, capture_output=True, timeout=60)
    pid_file = Path(str(mnt).rstrip("/") + ".pid")
    if pid_file.exists():
        try:
            pid = int(pid_file.read_text())
            os.kill(pid, signal.SIGTERM)
        except (ValueError, ProcessLookupError):
            pass
        pid_file.unlink(missing_ok=True)


def run_mode(args, mode: str, rng: random.Random, log) -> dict:
    stats = {"mode": mode, "power_losses": 0, "restarts_attempted": 0, "restarts_unattended": 0,
             "acknowledged": 0, "acknowledged_checked": 0, "acknowledged_kept": 0, "acknowledged_lost_unsynced": 0,
             "files_rebuilt": 0, "doctor_clean": 0, "failures": []}
    base = Path(args.workdir) / mode.replace("+", "_")
    next_id = 0
    for series in range((args.losses + args.series - 1) // args.series):
        root, mnt = base / f"series-{series}" / "root", base / f"series-{series}" / "mnt"
        shutil.rmtree(root.parent, ignore_errors=True)
        root.mkdir(parents=True)
        store = mnt / "store"
        kept: list[Ack] = []
        mount(args.lazyfs, root, mnt)
        try:
            for _ in range(min(args.series, args.losses - stats["power_losses"])):
                writer = Writer(store, mode, next_id, args.writers)
                if not writer.ready.wait(30):
                    err = writer.kill()
                    raise RuntimeError(f"writer did not start: {err[-2000:]}")
                time.sleep(rng.uniform(0.1, 1.2))
                crash(args.lazyfs, mnt)  # the power goes out now
                err = writer.kill()
                stats["power_losses"] += 1
                acks = writer.acks
                next_id = max([a.id for a in acks], default=next_id) + 1
                flushed = writer.flushed
                mount(args.lazyfs, root, mnt)
                all_acked = kept + acks
                must = (lambda a: True) if mode == "SYNC_FLUSH" else (lambda a, f=flushed, old=set(kept): a in old or a.end <= f)
                stats["restarts_attempted"] += 1
                try:
                    result = check_recovered(str(store), mode, all_acked, must, writer.persisted, queries=64)
                except PowerLossCheckFailed as exc:
                    opened = "did not open unattended" not in str(exc)
                    stats["restarts_unattended"] += opened
                    stats["failures"].append(str(exc))
                    log(f"  {mode} loss {stats['power_losses']}: FAILED: {exc}")
                    break
                stats["restarts_unattended"] += 1
                stats["doctor_clean"] += 1
                stats["acknowledged"] += len(acks)
                stats["acknowledged_checked"] += len(all_acked)
                stats["acknowledged_kept"] += len(result.kept)
                stats["acknowledged_lost_unsynced"] += len(result.lost)
                stats["files_rebuilt"] += len(result.repairs)
                log(f"  {mode} loss {stats['power_losses']}: {len(acks)} new acks ({len(all_acked)} checked), "
                    f"{len(result.kept)} kept, {len(result.lost)} lost unsynced, flushed {flushed}, "
                    f"{len(result.repairs)} rebuilt" + (f"; writer: {err.strip().splitlines()[-1]}" if args.verbose and err.strip() else ""))
                kept = result.kept
        finally:
            unmount(mnt)
    return stats


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lazyfs", type=Path, default=Path(os.environ.get("PYMQ_LAZYFS", "/tmp/lazyfs")))
    p.add_argument("--workdir", required=True)
    p.add_argument("--losses", type=int, default=70, help="power losses per mode (default 70)")
    p.add_argument("--series", type=int, default=5, help="power losses per store (default 5)")
    p.add_argument("--writers", type=int, default=4)
    p.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path)
    p.add_argument("--verbose", action="store_true")
    args = p.parse_args(argv)
    if not (args.lazyfs / "mount.sh").exists():
        print(f"no LazyFS at {args.lazyfs} (mount.sh): build it as README.md says", file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    results = []
    failed = 0
    started = time.monotonic()
    for mode in args.modes:
        stats = run_mode(args, mode, rng, lambda s: print(s, flush=True))
        results.append(stats)
        failed += len(stats["failures"])
        print(f"{mode}: {stats['power_losses']} power losses, {stats['acknowledged']} messages acknowledged, "
              f"{stats['acknowledged_checked']} checks of acknowledged messages after a power loss "
              f"({stats['acknowledged_kept']} kept, {stats['acknowledged_lost_unsynced']} lost unsynced), "
              f"unattended restarts {stats['restarts_unattended']}/{stats['restarts_attempted']}, doctor clean "
              f"{stats['doctor_clean']}, {stats['files_rebuilt']} files rebuilt, {len(stats['failures'])} failed",
              flush=True)
    total = sum(s["power_losses"] for s in results)
    print(f"total: {total} power losses in {time.monotonic() - started:.0f} s, {failed} failed")
    if args.out:
        args.out.write_text(json.dumps({"results": results, "seconds": time.monotonic() - started}, indent=2) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
