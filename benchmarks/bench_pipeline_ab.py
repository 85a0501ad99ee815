"""Two source trees of hub, stepped side by side: the same loops, each in a fresh process per
tree and round, rounds interleaved, with the raw backend timed in the same process.

It answers "did a change of the step path make any backend slower?": give it the tree before
the change and the tree after (``--tree NAME=PATH``, each a checkout of the repository; the
installed packages are shared). Every case runs one hub loop and the raw library's loop on the
same calls, in CPU time of the process (``time.process_time``: EnvPool's worker threads count,
time spent waiting for a CPU does not), and reports hub's time per step over the raw loop's.
Cases use only hub's public API, so that both trees run the same code.

Usage:
    python benchmarks/bench_pipeline_ab.py --tree before=/path/old --tree after=. --rounds 5

Example:
    >>> sorted(CASES)[:2]
    ['dmc_manual', 'dmc_rollout']
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "pipeline_ab.json"
CLOCK = time.process_time


def _timed(loop: Callable[[], None], steps: int, repeats: int = 3) -> float:
    """Seconds of CPU per call of ``loop``: the best of ``repeats`` timings of ``steps`` calls."""
    best = float("inf")
    for _ in range(repeats):
        start = CLOCK()
        for _ in range(steps):
            loop()
        best = min(best, (CLOCK() - start) / steps)
    return best


# ---------------------------------------------------------------------- gymnasium, one env
def gym_manual(steps: int) -> dict[str, float]:
    """``step_and_maybe_reset`` of one CartPole-v1 against ``step`` + ``reset`` at the ends."""
    import gymnasium
    import torch

    import hub

    raw = gymnasium.make("CartPole-v1")
    raw.reset(seed=0)
    count = [0]

    def raw_loop() -> None:
        count[0] += 1
        _, _, term, trunc, _ = raw.step(count[0] % 2)
        if term or trunc:
            raw.reset()

    env = hub.make_env("gymnasium:CartPole-v1", seed=0, categorical_action_encoding=True)
    actions = [torch.tensor(i % 2) for i in range(2)]
    state = {"td": env.reset(), "i": 0}

    def hub_loop() -> None:
        td = state["td"]
        state["i"] += 1
        td.set("action", actions[state["i"] % 2])
        state["td"] = env.step_and_maybe_reset(td)[1]

    return {"raw": _timed(raw_loop, steps), "hub": _timed(hub_loop, steps)}


def gym_rollout(steps: int) -> dict[str, float]:
    """``rollout(steps)`` of one CartPole-v1 (random actions) against the raw loop with
    ``action_space.sample()``."""
    import gymnasium

    import hub

    raw = gymnasium.make("CartPole-v1")
    raw.reset(seed=0)
    sample = raw.action_space.sample

    def raw_loop() -> None:
        _, _, term, trunc, _ = raw.step(sample())
        if term or trunc:
            raw.reset()

    env = hub.make_env("gymnasium:CartPole-v1", seed=0)
    env.rollout(steps, break_when_any_done=False)

    def hub_rollout() -> None:
        env.rollout(steps, break_when_any_done=False)

    return {"raw": _timed(raw_loop, steps), "hub": _timed(hub_rollout, 1) / steps}


# ---------------------------------------------------------------------- vector envs
def _vector_case(uri: str, width: int, steps: int, raw_step: Callable[[], None]) -> dict:
    import torch

    import hub

    env = hub.make_env(uri, num_envs=width, seed=0, categorical_action_encoding=True)
    torch.manual_seed(0)
    bank = env.full_action_spec["action"].rand((64,))
    state = {"td": env.reset(), "i": 0}

    def hub_loop() -> None:
        td = state["td"]
        state["i"] = (state["i"] + 1) % 64
        td.set("action", bank[state["i"]])
        state["td"] = env.step_and_maybe_reset(td)[1]

    out = {"raw": _timed(raw_step, steps), "hub": _timed(hub_loop, steps)}
    env.close()
    return out


def gym_vector(width: int, steps: int) -> dict[str, float]:
    """``make_env("gymnasium:CartPole-v1", num_envs=W)`` against gymnasium's
    ``SyncVectorEnv`` (next-step autoreset) on the same actions."""
    import gymnasium
    import numpy as np

    raw = gymnasium.make_vec("CartPole-v1", num_envs=width, vectorization_mode="sync")
    raw.reset(seed=0)
    rng = np.random.default_rng(0)
    bank = rng.integers(0, 2, size=(64, width))
    state = {"i": 0}

    def raw_step() -> None:
        state["i"] = (state["i"] + 1) % 64
        raw.step(bank[state["i"]])

    return _vector_case("gymnasium:CartPole-v1", width, steps, raw_step)


def envpool_vector(task: str, width: int, steps: int) -> dict[str, float]:
    """``make_env("envpool:<task>", num_envs=W)`` against EnvPool's gymnasium API (its own
    autoreset) with the same thread count."""
    import envpool
    import numpy as np
    from hub_envpool.threads import default_num_threads

    threads = default_num_threads(width) or 0
    raw = envpool.make_gymnasium(task, num_envs=width, seed=0, num_threads=threads)
    raw.reset()
    n = raw.action_space.n
    bank = np.random.default_rng(0).integers(0, n, size=(64, width)).astype(np.int32)
    state = {"i": 0}

    def raw_step() -> None:
        state["i"] = (state["i"] + 1) % 64
        raw.step(bank[state["i"]])

    return _vector_case(f"envpool:{task}", width, steps, raw_step)


# ---------------------------------------------------------------------- dm_control
def _dmc(kind: str, steps: int) -> dict[str, float]:
    import numpy as np
    from dm_control import suite

    import hub

    raw = suite.load("cheetah", "run", task_kwargs={"random": 0})
    raw.reset()
    spec = raw.action_spec()
    rng = np.random.default_rng(0)

    def raw_loop() -> None:
        ts = raw.step(rng.uniform(spec.minimum, spec.maximum))
        if ts.last():
            raw.reset()

    env = hub.make_env("dm_control:cheetah/run", seed=0)
    if kind == "rollout":
        env.rollout(steps, break_when_any_done=False)

        def hub_loop() -> None:
            env.rollout(steps, break_when_any_done=False)

        return {"raw": _timed(raw_loop, steps), "hub": _timed(hub_loop, 1) / steps}
    state = {"td": env.reset()}

    def hub_manual() -> None:
        state["td"] = env.step_and_maybe_reset(env.rand_action(state["td"]))[1]

    return {"raw": _timed(raw_loop, steps), "hub": _timed(hub_manual, steps)}


CASES: dict[str, Callable[[], dict[str, float]]] = {
    "gym_manual": lambda: gym_manual(3000),
    "gym_rollout": lambda: gym_rollout(3000),
    "gym_vector_8": lambda: gym_vector(8, 1000),
    "gym_vector_64": lambda: gym_vector(64, 300),
    "envpool_cartpole_8": lambda: envpool_vector("CartPole-v1", 8, 1000),
    "envpool_cartpole_64": lambda: envpool_vector("CartPole-v1", 64, 500),
    "envpool_pong_8": lambda: envpool_vector("Pong-v5", 8, 100),
    "dmc_manual": lambda: _dmc("manual", 1000),
    "dmc_rollout": lambda: _dmc("rollout", 1000),
}


def _child(tree: Path, cases: list[str]) -> dict[str, Any]:
    """Run ``cases`` with ``tree``'s hub (the body of one subprocess)."""
    import torch

    torch.set_num_threads(1)
    out = {}
    for name in cases:
        out[name] = CASES[name]()
    return out


def _run_tree(tree: Path, cases: list[str]) -> dict[str, Any]:
    paths = [str(tree), str(tree / "plugins")]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(paths),
        "MUJOCO_GL": os.environ.get("MUJOCO_GL", "egl"),
        "SDL_VIDEODRIVER": "dummy",
    }
    code = (
        f"import sys, json; sys.path[:0] = {paths!r}; "
        "import importlib.util as u; "
        f"s = u.spec_from_file_location('ab', {str(Path(__file__).resolve())!r}); "
        "m = u.module_from_spec(s); s.loader.exec_module(m); "
        f"print(json.dumps(m._child(None, {cases!r})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=1800
    )
    if done.returncode != 0:
        raise RuntimeError(f"{tree}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", action="append", required=True, help="NAME=PATH")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cases", nargs="*", default=sorted(CASES))
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    trees = dict(item.split("=", 1) for item in args.tree)
    runs: dict[str, dict[str, list[dict[str, float]]]] = {
        name: {case: [] for case in args.cases} for name in trees
    }
    for r in range(args.rounds):
        for name, path in trees.items():
            result = _run_tree(Path(path).resolve(), args.cases)
            for case, times in result.items():
                runs[name][case].append(times)
            print(f"round {r + 1}: {name} done", flush=True)
    table = {}
    for case in args.cases:
        row = {}
        for name in trees:
            ratios = [t["hub"] / t["raw"] for t in runs[name][case]]
            hub_us = [1e6 * t["hub"] for t in runs[name][case]]
            row[name] = {
                "hub_over_raw_median": statistics.median(ratios),
                "hub_us_median": statistics.median(hub_us),
                "raw_us_median": statistics.median(1e6 * t["raw"] for t in runs[name][case]),
            }
        table[case] = row
        cells = "  ".join(
            f"{name}: {v['hub_over_raw_median']:.3f}x raw time ({v['hub_us_median']:.1f} us)"
            for name, v in row.items()
        )
        print(f"{case:20s} {cells}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {"trees": trees, "rounds": args.rounds, "load": os.getloadavg(), "cases": table},
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
