"""A bad action never reaches EnvPool's C++ side: out-of-range categories and invalid one-hot
rows raise a SpecMismatchError on every path (``step``, ``step_and_maybe_reset``, ``rollout``,
the checks of an asynchronous send, async ``step_send``, a ``ParallelEnv`` of EnvPool envs).

EnvPool indexes with the action it is given: before these checks, ``-100000`` or ``2**31 - 1``
killed the process with SIGSEGV. The crash cases run in a subprocess, so that a crash fails the
test instead of killing pytest.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from functools import partial
from pathlib import Path

import pytest
import torch

import hub
from hub.errors import SpecMismatchError

ROOT = Path(__file__).resolve().parents[3]


def _run(code: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a new interpreter importing this tree's hub and plugins."""
    paths = [str(ROOT), str(ROOT / "plugins"), os.environ.get("PYTHONPATH", "")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in paths if p))
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def _assert_survived(done: subprocess.CompletedProcess, cases: int) -> None:
    assert done.returncode == 0, (
        f"the process died (return code {done.returncode}; -11 is SIGSEGV)\n"
        f"stdout:\n{done.stdout}\nstderr:\n{done.stderr[-3000:]}"
    )
    lines = done.stdout.split()
    assert lines.count("refused") == cases and lines[-1] == "usable", done.stdout


def test_out_of_range_categories_are_refused_not_crashing():
    done = _run(
        """
        import torch, hub
        env = hub.make_env("envpool:Pong-v5", num_envs=2, categorical_action_encoding=True)
        td = env.reset()
        for bad in (-100000, 2**31 - 1, 6, 100, -1, 2**40):
            action = torch.tensor([0, bad])
            for path in ("step", "fused", "rollout", "check_step_input"):
                td.set("action", action)
                try:
                    if path == "step":
                        env.step(td)
                    elif path == "fused":
                        env.step_and_maybe_reset(td)
                    elif path == "rollout":
                        env.rollout(2, policy=lambda t: t.set("action", action))
                    else:
                        env.check_step_input(td)
                    print("accepted", bad, path)
                except hub.errors.SpecMismatchError as err:
                    assert "outside [0, 6)" in str(err), err
                    print("refused")
        td = env.reset()
        td.set("action", torch.tensor([5, 0]))
        env.step_and_maybe_reset(td)
        print("usable")
        """
    )
    _assert_survived(done, cases=6 * 4)


def test_async_step_send_refuses_bad_actions_and_env_ids():
    done = _run(
        """
        import torch, hub
        env = hub.make_env("envpool:CartPole-v1", num_envs=4, batch_size=2,
                           categorical_action_encoding=True)
        td = env.reset()
        for action, ids in (([0, -100000], [0, 1]), ([0, 2], [0, 1]), ([0, 1], [0, 7]),
                            ([0, 1], [-3, 1])):
            bad = td.clone()
            bad.set("action", torch.tensor(action))
            bad.set("env_id", torch.tensor(ids))
            try:
                env.step_send(bad)
                print("accepted", action, ids)
            except hub.errors.SpecMismatchError as err:
                print("refused")
        td.set("action", torch.tensor([1, 0]))
        env.step_send(td)
        env.step_fetch()
        print("usable")
        """
    )
    _assert_survived(done, cases=4)


@pytest.mark.parametrize("path", ["step", "lean", "rollout"])
def test_invalid_one_hot_rows_are_refused(path):
    env = hub.make_env("envpool:Pong-v5", num_envs=2, seed=0)
    good = torch.zeros(2, 6, dtype=torch.bool)
    good[:, 3] = True
    for row in ([0] * 6, [1] * 6, [0, 1, 0, 0, 1, 0]):  # all False, all True, two-hot
        bad = good.clone()
        bad[1] = torch.tensor(row, dtype=torch.bool)
        td = env.reset().set("action", bad)
        with pytest.raises(SpecMismatchError, match=r"exactly one 1 \(rows \[1\]\)"):
            if path == "step":
                env.step(td)
            elif path == "lean":
                env.step_and_maybe_reset(td)
            else:
                env.rollout(2, policy=lambda t, a=bad: t.set("action", a))
    data, _ = env.step_and_maybe_reset(env.reset().set("action", good))
    assert data["next", "observation"].shape[0] == 2
    env.close()


def test_equivalent_one_hot_and_category_dtypes_are_cast():
    """TorchRL's one-hot policies give int64 one-hots; a float one-hot or an int32 category is
    the same action: each gives the data of the bool / int64 action."""
    torch.manual_seed(0)
    ref = hub.make_env("envpool:CartPole-v1", num_envs=3, seed=5)
    actions = ref.full_action_spec["action"].rand((20,))
    want = ref.rollout(20, policy=iter_policy(actions), break_when_any_done=False)
    for dtype in (torch.int64, torch.float32):
        env = hub.make_env("envpool:CartPole-v1", num_envs=3, seed=5)
        got = env.rollout(20, policy=iter_policy(actions.to(dtype)), break_when_any_done=False)
        assert got["action"].dtype == torch.bool
        assert (got == want).all()
        env.close()
    bad = actions[0].to(torch.int64)
    bad[0, 0] = 2  # a value that is no one-hot entry
    with pytest.raises(SpecMismatchError, match="cast to torch.bool"):
        ref.step(ref.reset().set("action", bad))
    ref.close()

    cat = hub.make_env("envpool:CartPole-v1", num_envs=3, categorical_action_encoding=True)
    td = cat.reset().set("action", torch.tensor([1, 0, 1], dtype=torch.int32))
    data, _ = cat.step_and_maybe_reset(td)
    assert data["action"].dtype == torch.int64
    with pytest.raises(SpecMismatchError, match=r"outside \[0, 2\)"):
        cat.step_and_maybe_reset(td.set("action", torch.tensor([1, 2, 1], dtype=torch.int32)))
    cat.close()


def iter_policy(actions: torch.Tensor):
    it = iter(actions)
    return lambda td: td.set("action", next(it))


def test_parallel_env_refuses_a_bad_action_in_the_parent_and_stays_usable():
    make = partial(hub.make_env, "envpool:Pong-v5", num_envs=1, categorical_action_encoding=True)
    env = hub.ParallelEnv(2, make)
    try:
        td = env.reset()
        bad = torch.tensor([[0], [-100000]])
        for step in (env.step, env.step_and_maybe_reset):
            with pytest.raises(SpecMismatchError, match=r"outside \[0, 6\)"):
                step(td.clone().set("action", bad))
        with pytest.raises(SpecMismatchError, match=r"outside \[0, 6\)"):
            env.step_send(td.clone().set("action", torch.tensor([[2**31 - 1], [0]])))
        with pytest.raises(SpecMismatchError):
            env.rollout(3, policy=lambda t: t.set("action", bad))
        # the workers never saw the bad actions: they step on (a dead one would raise)
        data = env.rollout(5, break_when_any_done=False)
        assert data.batch_size[-1] == 5
    finally:
        env.close()
