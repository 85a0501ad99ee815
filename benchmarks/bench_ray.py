"""batching="ray" against ParallelEnv with as many envs: env-steps per second, start-up and close.

Cases: CartPole-v1 (``gymnasium:CartPole-v1``) and Pong-v5 (``envpool:Pong-v5``), each with
2 Ray actors x K envs (K = 1, 8, 32; each actor batches its K envs natively: gymnasium's vector
env, EnvPool's thread pool) against ``ParallelEnv`` with 2K workers, one env each. A case runs
in a fresh process and reports: ``start_s``, the time from construction to the end of the first
reset (for Ray, with a Ray instance already running: starting one is ``ray_init_s``, measured
once); ``steps_per_s``, env-steps per second over a timed loop of ``step_and_maybe_reset`` with
random actions drawn before the loop; ``close_s``, the time ``close()`` takes. Rounds alternate
the order of the cases. RLlib's env runners are not measured: sampling with them needs an RLlib
algorithm config, its own env registration and the ``ray[rllib]`` dependencies, which hub does
not install.

Ray must not advertise this machine's network address: the script re-runs itself inside a new
network namespace with only loopback (``unshare -rn``) when it sees another interface.

Run:

    .venv/bin/python benchmarks/bench_ray.py --rounds 2 --seconds 4

Writes ``benchmarks/results/ray.json`` (or ``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
ENVS = {"CartPole-v1": "gymnasium:CartPole-v1", "Pong-v5": "envpool:Pong-v5"}
KS = (1, 8, 32)
ACTORS = 2


def loopback_only() -> bool:
    return [name for _, name in socket.if_nameindex()] == ["lo"]


def reexec_isolated() -> None:
    """Run this script again inside a network namespace that has only loopback."""
    command = " ".join(shlex.quote(a) for a in [sys.executable, str(HERE), *sys.argv[1:]])
    os.execvp("unshare", ["unshare", "-rn", "sh", "-c", f"ip link set lo up && exec {command}"])


def timed_loop(env: Any, seconds: float) -> tuple[int, float]:
    """Env-steps and seconds of a ``step_and_maybe_reset`` loop of about ``seconds``."""
    import torch

    td = env.reset()
    actions = [env.rand_action(td.clone())["action"] for _ in range(64)]
    for i in range(10):  # warm-up
        td["action"] = actions[i % 64]
        _, td = env.step_and_maybe_reset(td)
    n = env.batch_size[0]
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for i in range(16):
            td["action"] = actions[(steps // n + i) % 64]
            _, td = env.step_and_maybe_reset(td)
        steps += 16 * n
    torch.manual_seed(0)
    return steps, time.perf_counter() - start


def run_case(impl: str, env_name: str, k: int, seconds: float) -> dict[str, Any]:
    """One case, in this process (a fresh one: see ``main``)."""
    import hub

    hub.list_plugins()  # plugin discovery before the clock starts
    uri = ENVS[env_name]
    n = ACTORS * k
    out: dict[str, Any] = {"impl": impl, "env": env_name, "k": k, "num_envs": n}
    if impl == "ray":
        import ray

        os.environ.setdefault("RAY_worker_niceness", "0")  # as hub_ray.connect does
        # the machine is shared: Ray's memory monitor would kill these small workers for
        # what other processes use
        os.environ.setdefault("RAY_memory_monitor_refresh_ms", "0")
        t0 = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False, logging_level="warning")
        out["ray_init_s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        env = hub.make_env(uri, num_envs=n, batching="ray", envs_per_actor=k)
        env.reset()
        out["start_s"] = time.perf_counter() - t0
    else:
        t0 = time.perf_counter()
        env = hub.make_env(uri, num_envs=n, batching="parallel")
        env.reset()
        out["start_s"] = time.perf_counter() - t0
    steps, secs = timed_loop(env, seconds)
    out["steps_per_s"] = steps / secs
    t0 = time.perf_counter()
    env.close()
    out["close_s"] = time.perf_counter() - t0
    if impl == "ray":
        import ray

        ray.shutdown()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--envs", default=",".join(ENVS))
    parser.add_argument("--ks", default=",".join(map(str, KS)))
    parser.add_argument("--out", default=str(HERE.parent / "results" / "ray.json"))
    parser.add_argument("--case", help=argparse.SUPPRESS)  # impl,env,k: run one case, print JSON
    args = parser.parse_args()
    if not loopback_only():
        reexec_isolated()
    if args.case:
        impl, env_name, k = args.case.split(",")
        print(json.dumps(run_case(impl, env_name, int(k), args.seconds)))
        return
    results = []
    cases = [(e, int(k)) for e in args.envs.split(",") for k in args.ks.split(",")]
    for r in range(args.rounds):
        for env_name, k in cases:
            impls = ("ray", "parallel") if r % 2 == 0 else ("parallel", "ray")
            for impl in impls:
                case = f"{impl},{env_name},{k}"
                command = [
                    sys.executable,
                    str(HERE),
                    "--case",
                    case,
                    "--seconds",
                    str(args.seconds),
                ]
                done = subprocess.run(command, capture_output=True, text=True, timeout=900)
                if done.returncode != 0:
                    print(f"{case}: failed\n{done.stderr[-3000:]}", file=sys.stderr)
                    continue
                result = json.loads(done.stdout.strip().splitlines()[-1])
                result["round"] = r
                results.append(result)
                print(json.dumps(result), flush=True)
    summary = summarize(results)
    for line in summary:
        print(line)
    Path(args.out).write_text(
        json.dumps(
            {
                "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
                "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "rounds": args.rounds,
                "seconds": args.seconds,
                "results": results,
                "summary": summary,
            },
            indent=1,
        )
    )


def summarize(results: list[dict[str, Any]]) -> list[str]:
    """One line per (env, K): the medians over rounds, and Ray's ratio to ParallelEnv."""
    lines = []
    keys = sorted({(r["env"], r["k"]) for r in results})
    for env_name, k in keys:
        med = {}
        for impl in ("ray", "parallel"):
            rows = [r for r in results if (r["env"], r["k"], r["impl"]) == (env_name, k, impl)]
            if rows:
                med[impl] = {
                    m: statistics.median(r[m] for r in rows)
                    for m in ("steps_per_s", "start_s", "close_s")
                }
        if len(med) < 2:
            continue
        ratio = med["ray"]["steps_per_s"] / med["parallel"]["steps_per_s"]
        lines.append(
            f"{env_name} 2x{k}: ray {med['ray']['steps_per_s']:.0f} env-steps/s "
            f"(start {med['ray']['start_s']:.1f} s, close {med['ray']['close_s']:.2f} s), "
            f"ParallelEnv({2 * k}) {med['parallel']['steps_per_s']:.0f} "
            f"(start {med['parallel']['start_s']:.1f} s, close {med['parallel']['close_s']:.2f} s)"
            f": {ratio:.2f}x"
        )
    return lines


if __name__ == "__main__":
    main()
