"""Per-step overhead of hub's GymEnv over raw gymnasium, next to TorchRL's GymEnv, same run.

Two loops on CartPole-v1, each measured against raw gymnasium in the same process:

* ``manual``: ``data, td = env.step_and_maybe_reset(td)`` with fixed actions, against
  ``env.step(a)`` plus ``env.reset()`` at episode ends;
* ``rollout``: ``env.rollout(N, break_when_any_done=False)`` (random actions from the spec),
  against the raw loop with ``env.action_space.sample()``;
* ``floor_manual`` / ``floor_rollout`` (hub's child only): the least TensorDict loop on the same
  gymnasium calls with hub's output (``_floor``), the bound of any TensorDict env.

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


def _floor(steps: int, random_actions: bool) -> float:
    """The least TensorDict loop on the same gymnasium calls, with hub's output.

    Per step: the one-hot action in the input tensordict (fixed, or drawn in one block for the
    whole loop as hub's random policy does) read as an index; ``env.step``; the observation as
    a tensor, the reward as a ``[1]`` float32 tensor and the three done flags in a ``"next"``
    tensordict built without tensordict's checks; the next input a new tensordict of the
    observation and flags (a reset's at episode ends). ``random_actions`` (the rollout's
    floor) also keeps every step and stacks them into one tensordict at the end. No spec, no
    action check, no generic dispatch.
    """
    import gymnasium
    import numpy as np
    import torch
    from tensordict import TensorDict

    new = getattr(TensorDict, "_new_unsafe", TensorDict)
    scalar = torch.Size(())
    from_numpy = torch.from_numpy
    false, true = torch.zeros(1, dtype=torch.bool), torch.ones(1, dtype=torch.bool)
    not_done = {"done": false, "terminated": false, "truncated": false}
    env = gymnasium.make(ENV_ID)
    obs, _ = env.reset(seed=0)
    start = CLOCK()
    if random_actions:
        actions = torch.eye(2, dtype=torch.bool)[torch.randint(0, 2, (steps,))].unbind(0)
    else:
        actions = [torch.tensor([True, False]), torch.tensor([False, True])] * (steps // 2)
    td = new(dict(not_done, observation=from_numpy(obs)), batch_size=scalar, device=None)
    out = []
    for action in actions:
        td.set("action", action)
        obs, reward, terminated, truncated, _ = env.step(action.tolist().index(True))
        flags = {
            "done": true if terminated or truncated else false,
            "terminated": true if terminated else false,
            "truncated": true if truncated else false,
        }
        following = dict(flags, observation=from_numpy(obs))
        nxt = dict(following, reward=from_numpy(np.array((reward,), np.float32)))
        td.set("next", new(nxt, batch_size=scalar, device=None))
        if random_actions:
            out.append(td)
        if terminated or truncated:
            obs, _ = env.reset()
            following = dict(not_done, observation=from_numpy(obs))
        td = new(following, batch_size=scalar, device=None)
    if random_actions:
        torch.stack(out)
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
    if lib == "hub":
        _floor(200, False)
        _floor(200, True)
        out.update(floor_manual=[], floor_rollout=[])
    for _ in range(repeats):
        out["raw_manual"].append(_raw_manual(steps))
        out["manual"].append(_manual(env, steps))
        out["raw_rollout"].append(_raw_rollout(steps))
        out["rollout"].append(_rollout(env, steps))
        if lib == "hub":
            out["floor_manual"].append(_floor(steps, False))
            out["floor_rollout"].append(_floor(steps, True))
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
    out = {
        "manual_us": (t["manual"] - t["raw_manual"]) * 1e6,
        "rollout_us": (t["rollout"] - t["raw_rollout"]) * 1e6,
        "raw_manual_us": t["raw_manual"] * 1e6,
        "raw_rollout_us": t["raw_rollout"] * 1e6,
    }
    if "floor_manual" in t:  # the least TensorDict loop on the same calls (hub's child)
        out["floor_manual_us"] = (t["floor_manual"] - t["raw_manual"]) * 1e6
        out["floor_rollout_us"] = (t["floor_rollout"] - t["raw_rollout"]) * 1e6
    return out


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
                f"(raw {o['raw_rollout_us']:.1f})"
                + (
                    f"  floor: manual +{o['floor_manual_us']:.1f}, rollout +{o['floor_rollout_us']:.1f}"
                    if "floor_manual_us" in o
                    else ""
                ),
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
            + (
                f" (floor: manual +{s['floor_manual_us']:.1f} us, rollout +{s['floor_rollout_us']:.1f} us)"
                if "floor_manual_us" in s
                else ""
            )
        )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
