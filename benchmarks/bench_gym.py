"""Per-step overhead of hub's GymEnv over raw gymnasium, next to TorchRL's GymEnv, same run.

Two loops on CartPole-v1, each measured against raw gymnasium in the same process:

* ``manual``: ``data, td = env.step_and_maybe_reset(td)`` with fixed actions, against
  ``env.step(a)`` plus ``env.reset()`` at episode ends;
* ``rollout``: ``env.rollout(N, break_when_any_done=False)`` (random actions from the spec),
  against the raw loop with ``env.action_space.sample()``.

The overhead is ``(time per step of the wrapper) - (time per step of raw gymnasium)``, the
minimum over ``--repeats`` timings (the least disturbed one). TorchRL is not a dependency of
hub: it runs in a separate venv (``--peer-python``, built by ``benchmarks/setup_peer_venv.sh``),
in rounds interleaved with hub's so that both see the same machine load.

Usage:
    python benchmarks/bench_gym.py --peer-python .bench-venv/bin/python
    python benchmarks/bench_gym.py --steps 5000 --repeats 5 --rounds 3 --out results.json

Example:
    >>> timings = measure("hub", steps=50, repeats=1)
    >>> sorted(timings)
    ['manual', 'raw_manual', 'raw_rollout', 'rollout']
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

ENV_ID = "CartPole-v1"
# CPU time of the calling thread: on a shared machine, time spent waiting for a CPU is not
# counted (wall-clock time is, and swings with the load of other processes). ``--wall`` uses
# wall-clock time instead.
CLOCK = time.thread_time
RESULTS = Path(__file__).resolve().parent / "results" / "bench_gym.json"


def _raw_manual(steps: int) -> float:
    import gymnasium

    env = gymnasium.make(ENV_ID)
    env.reset(seed=0)
    start = CLOCK()
    for i in range(steps):
        _, _, terminated, truncated, _ = env.step(i % 2)
        if terminated or truncated:
            env.reset()
    return (CLOCK() - start) / steps


def _raw_rollout(steps: int) -> float:
    import gymnasium

    env = gymnasium.make(ENV_ID)
    env.reset(seed=0)
    env.action_space.seed(0)
    sample = env.action_space.sample
    start = CLOCK()
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(sample())
        if terminated or truncated:
            env.reset()
    return (CLOCK() - start) / steps


def _make(lib: str) -> Any:
    if lib == "hub":
        import hub

        return hub.make_env(f"gymnasium:{ENV_ID}")
    from torchrl.envs import GymEnv

    return GymEnv(ENV_ID)


def _manual(env: Any, steps: int) -> float:
    import torch

    actions = [torch.tensor([True, False]), torch.tensor([False, True])]
    td = env.reset()
    start = CLOCK()
    for i in range(steps):
        td.set("action", actions[i % 2])
        _, td = env.step_and_maybe_reset(td)
    return (CLOCK() - start) / steps


def _rollout(env: Any, steps: int) -> float:
    start = CLOCK()
    env.rollout(steps, break_when_any_done=False)
    return (CLOCK() - start) / steps


def measure(lib: str, steps: int = 5000, repeats: int = 5) -> dict[str, float]:
    """Seconds per step (the minimum of ``repeats`` timings) of raw gymnasium and of ``lib``'s
    GymEnv ("hub" or "torchrl"), in both loops."""
    env = _make(lib)
    _manual(env, 200)  # warm up
    _rollout(env, 200)
    _raw_manual(200)
    out: dict[str, list[float]] = {"raw_manual": [], "manual": [], "raw_rollout": [], "rollout": []}
    for _ in range(repeats):
        out["raw_manual"].append(_raw_manual(steps))
        out["manual"].append(_manual(env, steps))
        out["raw_rollout"].append(_raw_rollout(steps))
        out["rollout"].append(_rollout(env, steps))
    return {key: min(values) for key, values in out.items()}


def _versions(lib: str) -> dict[str, str]:
    import gymnasium
    import tensordict
    import torch

    found = {"torch": torch.__version__, "tensordict": tensordict.__version__}
    found["gymnasium"] = gymnasium.__version__
    if lib == "torchrl":
        import torchrl

        found["torchrl"] = torchrl.__version__
    else:
        import hub

        found["hub"] = hub.__version__
    return found


def _child(lib: str, steps: int, repeats: int) -> dict[str, Any]:
    timings = measure(lib, steps, repeats)
    return {"lib": lib, "timings": timings, "versions": _versions(lib)}


def _run(python: str, lib: str, steps: int, repeats: int, wall: bool) -> dict[str, Any]:
    cmd = [python, __file__, "--child", lib, "--steps", str(steps), "--repeats", str(repeats)]
    cmd += ["--wall"] if wall else []
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _source_state() -> dict[str, Any]:
    """The commit of hub measured, and whether hub/ or plugins/ had uncommitted changes."""
    root = Path(__file__).resolve().parents[1]

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    return {
        "commit": git("rev-parse", "HEAD") or None,
        "uncommitted_changes": bool(git("status", "--porcelain", "hub", "plugins")),
    }


def _overheads(result: dict[str, Any]) -> dict[str, float]:
    t = result["timings"]
    return {
        "manual_us": (t["manual"] - t["raw_manual"]) * 1e6,
        "rollout_us": (t["rollout"] - t["raw_rollout"]) * 1e6,
        "raw_manual_us": t["raw_manual"] * 1e6,
        "raw_rollout_us": t["raw_rollout"] * 1e6,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3, help="hub/TorchRL rounds, interleaved")
    parser.add_argument("--peer-python", help="a python with torchrl installed (optional)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--wall", action="store_true", help="wall-clock instead of CPU time")
    parser.add_argument("--child", choices=["hub", "torchrl"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        global CLOCK
        if args.wall:
            CLOCK = time.perf_counter
        print(json.dumps(_child(args.child, args.steps, args.repeats)))
        return 0
    runs: dict[str, list[dict[str, Any]]] = {"hub": [], "torchrl": []}
    versions: dict[str, Any] = {}
    for round_ in range(args.rounds):
        for lib, python in (("hub", sys.executable), ("torchrl", args.peer_python)):
            if python is None:
                continue
            result = _run(python, lib, args.steps, args.repeats, args.wall)
            versions[lib] = result["versions"]
            runs[lib].append(_overheads(result))
            o = runs[lib][-1]
            print(
                f"round {round_ + 1} {lib:8s} manual +{o['manual_us']:7.1f} us/step "
                f"(raw {o['raw_manual_us']:.1f})  rollout +{o['rollout_us']:7.1f} us/step "
                f"(raw {o['raw_rollout_us']:.1f})",
                flush=True,
            )
    summary = {
        lib: {key: statistics.median(r[key] for r in rs) for key in rs[0]}
        for lib, rs in runs.items()
        if rs
    }
    if "torchrl" in summary:
        for loop in ("manual_us", "rollout_us"):
            ratio = summary["hub"][loop] / summary["torchrl"][loop]
            summary["hub"][loop.replace("_us", "_ratio_to_torchrl")] = ratio
    report = {
        "benchmark": "GymEnv CartPole-v1 per-step overhead over raw gymnasium",
        "env": ENV_ID,
        "steps": args.steps,
        "repeats": args.repeats,
        "rounds": args.rounds,
        "clock": "wall (perf_counter)"
        if args.wall
        else "CPU time of the main thread (thread_time)",
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_average": os.getloadavg(),
        },
        "versions": versions,
        "source": _source_state(),
        "median_over_rounds": summary,
        "rounds_data": runs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    for lib, s in summary.items():
        print(
            f"{lib:8s} median overhead: manual +{s['manual_us']:.1f} us, rollout +{s['rollout_us']:.1f} us"
        )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
