"""Steps per second of hub's DMControlEnv against the raw dm_control loop and TorchRL's DMControlEnv.

cheetah/run (dm_control's suite, one env, no pixels). Each library runs in its own child
process, and every child also times the raw dm_control loop, so that each ratio is *paired*: the
wrapper's steps/s divided by raw dm_control's, measured seconds apart in the same process. hub
and TorchRL children alternate over ``--rounds`` (the order flips every round), so both see the
same machine load; the figures are medians over rounds of the best of ``--repeats`` timings.

Loops (the same for every library):

* ``raw``: ``env.step(a)`` with actions drawn beforehand, ``env.reset()`` after ``LAST`` (the
  loop of the anchor measurement in ``research/anchor-bench.md``);
* ``rollout``: ``env.rollout(N, break_when_any_done=False)`` with the library's random actions
  (TorchRL's 0.066x of raw was measured with this loop);
* ``manual``: ``data, td = env.step_and_maybe_reset(td)`` with actions drawn beforehand;
* ``step``: ``env.step(td)`` alone, resetting at episode ends (the wrapper's own cost);
* ``floor_rollout`` (hub's child only): the least TensorDict rollout on the same dm_control
  calls with hub's output (``_floor_rollout``): what any TensorDict env can reach.

TorchRL is not a dependency of hub: it runs in the peer venv (``--peer-python``, see
``benchmarks/setup_peer_venv.sh``), hub in the running interpreter. Times are the CPU time of the
measuring thread (``time.thread_time``, torch limited to one thread); ``--wall`` uses
``time.perf_counter``.

Usage:
    MUJOCO_GL=egl python benchmarks/bench_dm_control.py --peer-python /tmp/benchvenv/bin/python
    python benchmarks/bench_dm_control.py --steps 3000 --repeats 3 --rounds 3

Example:
    >>> per_step = measure("hub", steps=30, repeats=1)
    >>> sorted(per_step)
    ['manual', 'raw', 'rollout', 'step']
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

DOMAIN, TASK = "cheetah", "run"
CLOCK = time.thread_time
RESULTS = Path(__file__).resolve().parent / "results" / "bench_dm_control.json"
LOOPS = ("rollout", "manual", "step")


def _raw(steps: int) -> float:
    import numpy as np
    from dm_control import suite

    env = suite.load(DOMAIN, TASK, task_kwargs={"random": 0})
    spec = env.action_spec()
    actions = np.random.default_rng(0).uniform(spec.minimum, spec.maximum, (steps, *spec.shape))
    env.reset()
    step, reset = env.step, env.reset
    start = CLOCK()
    for action in actions:
        if step(action).last():
            reset()
    return (CLOCK() - start) / steps


def _floor_rollout(steps: int) -> float:
    """The least TensorDict rollout on the same dm_control calls, with hub's output.

    Per step: a uniform random float32 action (drawn in one block for the whole rollout, as
    hub's random policy does), handed to ``env.step`` as numpy; the observation arrays as float32 tensors, the reward and discount as ``[1]``
    float32 tensors and the three done flags (``terminated`` where the discount is 0) in a
    ``"next"`` tensordict built without tensordict's checks; the next input a new tensordict of
    the observation, discount and flags (a reset's after ``LAST``); the steps stacked into one
    tensordict at the end. No spec, no action check, no generic dispatch.
    """
    import numpy as np
    import torch
    from dm_control import suite
    from tensordict import TensorDict

    new = getattr(TensorDict, "_new_unsafe", TensorDict)
    scalar = torch.Size(())
    from_numpy = torch.from_numpy
    f32 = np.float32
    false, true = torch.zeros(1, dtype=torch.bool), torch.ones(1, dtype=torch.bool)
    env = suite.load(DOMAIN, TASK, task_kwargs={"random": 0})
    shape = env.action_spec().shape

    def first(ts: Any) -> Any:
        data = {k: from_numpy(v.astype(f32)) for k, v in ts.observation.items()}
        data.update(discount=torch.ones(1), done=false, terminated=false, truncated=false)
        return new(data, batch_size=scalar, device=None)

    start = CLOCK()
    td = first(env.reset())
    out = []
    for action in (torch.rand(steps, *shape) * 2 - 1).unbind(0):
        td.set("action", action)
        ts = env.step(action.numpy())
        nxt = {k: from_numpy(v.astype(f32)) for k, v in ts.observation.items()}
        discount = from_numpy(np.array((ts.discount,), f32))
        if ts.last():
            ended = ts.discount == 0
            flags = {"done": true, "terminated": true if ended else false}
            flags["truncated"] = false if ended else true
        else:
            flags = {"done": false, "terminated": false, "truncated": false}
        following = dict(nxt, discount=discount, **flags)
        nxt.update(following, reward=from_numpy(np.array((ts.reward,), f32)))
        td.set("next", new(nxt, batch_size=scalar, device=None))
        out.append(td)
        td = first(env.reset()) if ts.last() else new(following, batch_size=scalar, device=None)
    torch.stack(out)
    return (CLOCK() - start) / steps


def _make(lib: str) -> Any:
    if lib == "hub":
        import hub

        return hub.make_env(f"dm_control:{DOMAIN}/{TASK}", seed=0)
    from torchrl.envs import DMControlEnv

    env = DMControlEnv(DOMAIN, TASK)
    env.set_seed(0)
    return env


def _actions(env: Any, steps: int) -> list:
    import torch

    torch.manual_seed(0)
    return list(torch.rand(steps, *env.action_spec.shape) * 2 - 1)


def _rollout(env: Any, steps: int) -> float:
    start = CLOCK()
    env.rollout(steps, break_when_any_done=False)
    return (CLOCK() - start) / steps


def _manual(env: Any, steps: int) -> float:
    actions = _actions(env, steps)
    td = env.reset()
    smr = env.step_and_maybe_reset
    start = CLOCK()
    for action in actions:
        td.set("action", action)
        _, td = smr(td)
    return (CLOCK() - start) / steps


def _step(env: Any, steps: int) -> float:
    actions = _actions(env, steps)
    td = env.reset()
    step = env.step
    start = CLOCK()
    for action in actions:
        td.set("action", action)
        if step(td).get(("next", "done")).item():
            td = env.reset()
    return (CLOCK() - start) / steps


def measure(lib: str, steps: int = 3000, repeats: int = 3) -> dict[str, float]:
    """Seconds per step (the best of ``repeats``) of raw dm_control and of ``lib``'s
    DMControlEnv ("hub" or "torchrl") in each loop."""
    import torch

    torch.set_num_threads(1)
    env = _make(lib)
    loops = {"rollout": _rollout, "manual": _manual, "step": _step}
    warm = max(20, steps // 10)
    _raw(warm)
    for loop in loops.values():
        loop(env, warm)
    out: dict[str, list[float]] = {"raw": [], **{name: [] for name in loops}}
    if lib == "hub":
        _floor_rollout(warm)
        out["floor_rollout"] = []
    for _ in range(repeats):
        out["raw"].append(_raw(steps))
        for name, loop in loops.items():
            out[name].append(loop(env, steps))
        if lib == "hub":
            out["floor_rollout"].append(_floor_rollout(steps))
    env.close()
    return {key: min(values) for key, values in out.items()}


def split(steps: int = 3000) -> dict[str, float]:
    """Where a hub rollout step goes (microseconds per step): dm_control's own ``step``, the
    plugin's step closure around it, ``step_and_maybe_reset`` around that (the action checks,
    its dispatch), random actions, ``step_mdp``, resets and the rest of ``rollout`` (stacking).
    Timers wrap each part, so the parts are a little inflated by the timers themselves.

    Example:
        >>> sorted(split(30))[:2]
        ['dm_control step', 'plugin step around it']
    """
    import torch

    torch.set_num_threads(1)
    env = _make("hub")
    names = ("dmc", "_step", "step_and_maybe_reset", "rand_action", "step_mdp", "reset")
    spent = dict.fromkeys(names, 0.0)

    def timed(name: str, fn: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = CLOCK()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[name] += CLOCK() - start

        return wrapper

    from hub.envs import rollout_actions

    env._env.step = timed("dmc", env._env.step)
    # the closure is rebuilt so that it calls the timed step
    env._stepper = timed("_step", env._make_stepper())
    for name in ("step_and_maybe_reset", "step_mdp", "reset"):
        setattr(env, name, timed(name, getattr(env, name)))
    # rollout(policy=None) draws its actions through BlockRandomPolicy (rand_action if the
    # action spec does not allow blocks): time both
    env.rand_action = timed("rand_action", env.rand_action)
    block_call = rollout_actions.BlockRandomPolicy.__call__
    rollout_actions.BlockRandomPolicy.__call__ = timed("rand_action", block_call)
    try:
        env.rollout(steps, break_when_any_done=False)  # the same length: one-time costs here
        spent.update(dict.fromkeys(spent, 0.0))
        start = CLOCK()
        env.rollout(steps, break_when_any_done=False)
        total = CLOCK() - start
    finally:
        rollout_actions.BlockRandomPolicy.__call__ = block_call
    env.close()
    inner = spent["_step"] + spent["step_mdp"] + spent["reset"]
    parts = {
        "dm_control step": spent["dmc"],
        "plugin step around it": spent["_step"] - spent["dmc"],
        "step_and_maybe_reset around them": spent["step_and_maybe_reset"] - inner,
        "random actions": spent["rand_action"],
        "step_mdp": spent["step_mdp"],
        "reset": spent["reset"],
    }
    parts["rest of rollout"] = total - sum(parts.values())
    parts["total"] = total
    return {key: value / steps * 1e6 for key, value in parts.items()}


def _versions(lib: str) -> dict[str, str]:
    from importlib.metadata import version

    names = ["torch", "tensordict", "dm-control", "mujoco", "numpy"]
    names.append("torchrl" if lib == "torchrl" else "hub")
    return {name: version(name) for name in names}


def _run(python: str, lib: str, steps: int, repeats: int, wall: bool) -> dict[str, Any]:
    cmd = [python, __file__, "--child", lib, "--steps", str(steps), "--repeats", str(repeats)]
    cmd += ["--wall"] if wall else []
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _rates(per_step: dict[str, float]) -> dict[str, float]:
    """Steps/s of each loop, and each loop's ratio to the raw loop of the same process."""
    out = {f"{key}_steps_per_s": 1.0 / value for key, value in per_step.items()}
    for loop in LOOPS + ("floor_rollout",):
        if loop in per_step:
            out[f"{loop}_ratio_to_raw"] = per_step["raw"] / per_step[loop]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3, help="hub/TorchRL rounds, interleaved")
    parser.add_argument("--peer-python", help="a python with torchrl installed (optional)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--wall", action="store_true", help="wall-clock instead of CPU time")
    parser.add_argument("--child", choices=["hub", "torchrl", "split"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        global CLOCK
        if args.wall:
            CLOCK = time.perf_counter
        if args.child == "split":
            print(json.dumps({"split_us": split(args.steps), "versions": _versions("hub")}))
            return 0
        per_step = measure(args.child, args.steps, args.repeats)
        print(json.dumps({"per_step_s": per_step, "versions": _versions(args.child)}))
        return 0
    libs = [("hub", sys.executable)] + ([("torchrl", args.peer_python)] if args.peer_python else [])
    runs: dict[str, list[dict[str, float]]] = {lib: [] for lib, _ in libs}
    versions: dict[str, Any] = {}
    load_before = os.getloadavg()
    for round_ in range(args.rounds):
        for lib, python in libs if round_ % 2 == 0 else libs[::-1]:
            result = _run(python, lib, args.steps, args.repeats, args.wall)
            versions[lib] = result["versions"]
            rates = _rates(result["per_step_s"])
            runs[lib].append(rates)
            print(
                f"round {round_ + 1} {lib:8s} raw {rates['raw_steps_per_s']:8.0f}/s  "
                + "  ".join(
                    f"{loop} {rates[f'{loop}_steps_per_s']:7.0f}/s "
                    f"({rates[f'{loop}_ratio_to_raw']:.3f}x)"
                    for loop in LOOPS + ("floor_rollout",)
                    if f"{loop}_steps_per_s" in rates
                ),
                flush=True,
            )
    summary = {
        lib: {key: statistics.median(r[key] for r in rs) for key in rs[0]}
        for lib, rs in runs.items()
    }
    parts = _run(sys.executable, "split", args.steps, args.repeats, args.wall)["split_us"]
    print("hub rollout, us per step: " + ", ".join(f"{k} {v:.1f}" for k, v in parts.items()))
    report = {
        "benchmark": "DMControlEnv cheetah/run steps/s against raw dm_control, paired per process",
        "env": f"{DOMAIN}/{TASK}",
        "steps": args.steps,
        "repeats": args.repeats,
        "rounds": args.rounds,
        "clock": "wall (perf_counter)" if args.wall else "CPU time of the thread (thread_time)",
        "machine": {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_average_before": load_before,
            "load_average_after": os.getloadavg(),
        },
        "versions": versions,
        "median_over_rounds": summary,
        "hub_rollout_split_us_per_step": parts,
        "rounds_data": runs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    for lib, s in summary.items():
        print(
            f"{lib:8s} median: "
            + ", ".join(
                f"{loop} {s[f'{loop}_ratio_to_raw']:.3f}x raw"
                for loop in LOOPS + ("floor_rollout",)
                if f"{loop}_ratio_to_raw" in s
            )
        )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
