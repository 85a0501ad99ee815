"""Soak test of the batching engine: run for N minutes and watch memory, descriptors, threads
and processes.

The loop keeps one ``ParallelEnv`` (``restart_failed=True``) stepping with
``step_and_maybe_reset`` and one ``SerialEnv`` beside it; every ``--cycle-s`` seconds it also
builds, steps and closes a fresh ``ParallelEnv`` (a create/close cycle) and kills one worker of
the long-lived env with SIGKILL (which it must rebuild). Every ``--sample-s`` seconds it records
the resident memory of this process and of its whole process tree, this process's open
descriptors and OS threads (``/proc``), its child processes and the entries of ``/dev/shm``
(the whole machine's: hub itself puts nothing there). The tree's resident memory sums the
processes' RSS, so pages they share count once per process.

The JSON summary gives the first, last and largest value of each measure, the growth over the
second half of the run (after warm-up), the counts of steps, cycles and restarts, and every
sample.

Run:

    .venv/bin/python benchmarks/soak.py --minutes 5 --out benchmarks/results/soak.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import sys
import time
import warnings
from typing import Any

import psutil


def _sample(start: float, counts: dict[str, int]) -> dict[str, Any]:
    me = psutil.Process()
    children = me.children(recursive=True)
    tree_rss = me.memory_info().rss
    for child in children:
        try:
            tree_rss += child.memory_info().rss
        except psutil.Error:
            pass
    return {
        "t_s": round(time.monotonic() - start, 1),
        "rss_mb": round(me.memory_info().rss / 2**20, 1),
        "tree_rss_mb": round(tree_rss / 2**20, 1),
        "fds": len(os.listdir("/proc/self/fd")),
        "threads": len(os.listdir("/proc/self/task")),
        "children": len(children),
        "dev_shm": len(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else None,
        **counts,
    }


def _summary(samples: list[dict[str, Any]]) -> dict[str, Any]:
    half = samples[len(samples) // 2 :]
    out = {}
    for key in ("rss_mb", "tree_rss_mb", "fds", "threads", "children", "dev_shm"):
        values = [s[key] for s in samples if s[key] is not None]
        if not values:
            continue
        second = [s[key] for s in half if s[key] is not None]
        out[key] = {
            "first": values[0],
            "last": values[-1],
            "max": max(values),
            "growth_second_half": round(second[-1] - second[0], 1),
        }
    return out


def run(minutes: float, uri: str, workers: int, cycle_s: float, sample_s: float) -> dict:
    import hub
    from hub.batching import WorkerRestartWarning

    warnings.simplefilter("ignore", WorkerRestartWarning)
    env = hub.make_env(uri, num_envs=workers, batching="parallel")
    env.restart_failed = True
    serial = hub.make_env(uri, num_envs=workers, batching="serial")
    env.set_seed(0)
    serial.set_seed(0)
    td, std = env.reset(), serial.reset()
    counts = {"steps": 0, "serial_steps": 0, "cycles": 0, "kills": 0}
    start = time.monotonic()
    end = start + minutes * 60
    next_sample = start
    next_cycle = start + cycle_s
    samples = []
    while True:
        now = time.monotonic()
        if now >= next_sample:
            samples.append(_sample(start, counts))
            next_sample += sample_s
        if now >= end:
            break
        if now >= next_cycle:
            next_cycle += cycle_s
            with hub.make_env(uri, num_envs=2, batching="parallel") as fresh:
                fresh.rollout(10, break_when_any_done=False)
            counts["cycles"] += 1
            os.kill(env.worker_pids()[counts["kills"] % workers], signal.SIGKILL)
            counts["kills"] += 1
        for _ in range(100):
            _, td = env.step_and_maybe_reset(env.rand_action(td))
            _, std = serial.step_and_maybe_reset(serial.rand_action(std))
        counts["steps"] += 100
        counts["serial_steps"] += 100
    restarts = list(env.restarts)
    env.close()
    serial.close()
    after = _sample(start, counts)
    return {
        "uri": uri,
        "workers": workers,
        "minutes": minutes,
        "start_method": env.start_method,
        "restarts": restarts,
        "summary": _summary(samples),
        "after_close": after,
        "samples": samples,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--uri", default="hub:Counting")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--cycle-s", type=float, default=5.0)
    parser.add_argument("--sample-s", type=float, default=10.0)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    load_at_start = os.getloadavg()
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    result = run(args.minutes, args.uri, args.workers, args.cycle_s, args.sample_s)
    result["machine"] = {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_at_start": load_at_start,
        "load_at_end": os.getloadavg(),
        "started_utc": started,
        "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    text = json.dumps(result, indent=1)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    summary = {k: v for k, v in result.items() if k != "samples"}
    json.dump(summary, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
