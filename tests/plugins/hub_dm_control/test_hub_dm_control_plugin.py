"""The plugin as hub sees it: namespace, ids, lazy imports, batching, version dispatch."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

import hub
from tests.plugins.hub_dm_control.dmc_helpers import HAS_DMC, make, needs_dmc


def test_importing_the_plugin_imports_no_backend() -> None:
    code = (
        "import sys, hub, hub_dm_control, hub_dm_control.plugin as p; p.hub_namespaces(); "
        "p.hub_spec_conversions(); hub.list_plugins(); "
        "print(sorted(m for m in ('dm_control', 'dm_env', 'mujoco') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_plugin_is_listed() -> None:
    info = {p.name: p for p in hub.list_plugins()}["dm_control"]
    assert info.error is None and info.namespaces == ("dm_control",)


@needs_dmc
def test_every_suite_task_is_listed() -> None:
    from dm_control import suite

    listed = hub.list_envs("dm_control")
    assert listed == sorted(f"dm_control:{d}/{t}" for d, t in suite.ALL_TASKS)
    assert "dm_control:cheetah/run" in listed


@needs_dmc
def test_every_domain_builds() -> None:
    """One task per domain builds and steps (the suite's domains differ in their specs)."""
    domains = {}
    for uri in hub.list_envs("dm_control"):
        domain = uri.split(":")[1].split("/")[0]
        domains.setdefault(domain, uri)
    for uri in domains.values():
        env = hub.make_env(uri)
        assert env.rand_step()["next", "reward"].shape == torch.Size([1]), uri
        env.close()


@needs_dmc
def test_make_env_batches_with_parallel_env() -> None:
    """make_env(num_envs=4) runs four workers (ParallelEnv); same data as SerialEnv."""
    pytest.importorskip("hub.batching", reason="no batching")
    if not hasattr(hub.batching, "ParallelEnv"):
        pytest.skip("hub.batching.ParallelEnv does not exist yet")
    env = hub.make_env("dm_control:cheetah/run", num_envs=4, seed=0)
    try:
        assert type(env).__name__ == "ParallelEnv" and env.batch_size == torch.Size([4])
        torch.manual_seed(0)
        parallel = env.rollout(10, break_when_any_done=False)
        hub.check_env_specs(env)
    finally:
        env.close()
    serial = hub.make_env("dm_control:cheetah/run", num_envs=4, seed=0, batching="serial")
    torch.manual_seed(0)
    expected = serial.rollout(10, break_when_any_done=False)
    assert parallel.shape == torch.Size([4, 10])
    assert bool((parallel == expected).all())
    # the four workers were seeded differently
    assert not torch.equal(parallel["position"][0], parallel["position"][1])


@needs_dmc
def test_serial_batch_with_time_limit_resets_done_envs() -> None:
    env = make("cartpole/balance", num_envs=2, batching="serial", task_kwargs={"time_limit": 0.05})
    data = env.rollout(8, break_when_any_done=False)  # 5 steps per episode
    assert data["next", "truncated"].squeeze(-1)[:, 4].all()
    assert not data["next", "terminated"].any()


@needs_dmc
def test_version_dispatch() -> None:
    from hub_dm_control import compat

    assert compat.check_runtime.resolve() is compat.check_runtime.implementations[0].function
    assert [i.range for i in compat.free_physics.implementations] == [">=1.0,<1.0.50", ">=1.0.50"]
    compat.check_runtime()  # the installed pair works


@needs_dmc
def test_mujoco_4_is_refused_with_the_fix() -> None:
    from hub_dm_control import compat

    refuse = compat.check_runtime.implementations[1].function
    with pytest.raises(hub.errors.MissingDependencyError, match="mujoco==3.17.0"):
        refuse()


@needs_dmc
def test_old_dm_control_with_numpy_2_is_refused_with_the_fix() -> None:
    import numpy
    from hub_dm_control import compat

    assert [i.range for i in compat.check_numpy.implementations] == [">=1.0,<1.0.21", ">=1.0.21"]
    compat.check_numpy()  # the installed pair works (the tox env dmc-old pins numpy<2)
    refuse = compat.check_numpy.implementations[0].function
    if int(numpy.__version__.split(".")[0]) < 2:
        refuse()  # numpy 1 works with every dm_control
    else:
        with pytest.raises(hub.errors.MissingDependencyError, match=r"numpy<2"):
            refuse()


@pytest.mark.skipif(HAS_DMC, reason="dm_control is installed")
def test_missing_backend_names_the_install_line() -> None:
    with pytest.raises(hub.errors.MissingDependencyError, match=r"hub\[dm-control\]"):
        hub.make_env("dm_control:cheetah/run")
