"""``hub.to_torchrl``: hub envs used by TorchRL itself: its ``check_env_specs``, its collectors,
its transforms, and a short PPO of its tutorial's shape. Runs where TorchRL is installed
(``tox -e torchrl``: TorchRL 0.14.1 with tensordict 0.14.3)."""

from __future__ import annotations

import functools
import importlib.util

import pytest
import torch

import hub

pytest.importorskip("torchrl")

from torchrl.envs.utils import check_env_specs  # noqa: E402

needs_gymnasium = pytest.mark.skipif(
    importlib.util.find_spec("gymnasium") is None, reason="gymnasium is not installed"
)
needs_envpool = pytest.mark.skipif(
    importlib.util.find_spec("envpool") is None, reason="EnvPool is not installed"
)

CASES = [
    ("hub:Pendulum", {}),
    ("hub:Counting", {"num_envs": 3}),
    pytest.param("gymnasium:CartPole-v1", {}, marks=needs_gymnasium),
    pytest.param("gymnasium:CartPole-v1", {"num_envs": 2}, marks=needs_gymnasium),
    pytest.param(
        "gymnasium:Pendulum-v1", {"num_envs": 2, "batching": "serial"}, marks=needs_gymnasium
    ),
    pytest.param("envpool:CartPole-v1", {"num_envs": 4}, marks=needs_envpool),
]


@pytest.mark.parametrize("uri,kwargs", CASES)
def test_torchrl_check_env_specs(uri: str, kwargs: dict) -> None:
    env = hub.make_env(uri, torchrl=True, **kwargs)
    check_env_specs(env, seed=0)
    data = env.rollout(40, break_when_any_done=False)
    assert data.batch_size == (*env.batch_size, 40)
    env.close()


def test_to_torchrl_keeps_the_hub_env() -> None:
    from torchrl.envs import EnvBase

    hub_env = hub.make_env("hub:Pendulum")
    env = hub.to_torchrl(hub_env)
    assert isinstance(env, EnvBase) and env.hub_env is hub_env
    assert env.batch_locked is False
    assert env.observation_spec["observation"].shape == (3,)


def test_partial_resets_go_through() -> None:
    env = hub.make_env("hub:Counting", num_envs=3, max_steps=5, torchrl=True)
    td = env.reset()
    for _ in range(2):
        td = env.rand_step(td)
        td = hub.step_mdp(td)
    td["_reset"] = torch.tensor([[True], [False], [True]])
    out = env.reset(td)
    assert out["observation"].reshape(-1).tolist() == [0, 2, 0]


@needs_gymnasium
def test_collector_runs_hub_envs() -> None:
    from torchrl.collectors import Collector

    env = hub.make_env("gymnasium:CartPole-v1", num_envs=2, torchrl=True)
    collector = Collector(env, policy=None, frames_per_batch=64, total_frames=192)
    batches = [batch for batch in collector]
    collector.shutdown()
    assert len(batches) == 3
    assert all(batch.numel() == 64 for batch in batches)
    assert (batches[-1]["next", "reward"] == 1).all()


def _collect_then_evaluate(env) -> None:
    """TorchRL's tutorial pattern: the collector closes the env at total_frames, then the
    same env is evaluated."""
    from torchrl.collectors import Collector

    collector = Collector(env, policy=None, frames_per_batch=32, total_frames=64)
    assert sum(batch.numel() for batch in collector) == 64
    collector.shutdown()
    assert env.is_closed
    data = env.rollout(10, break_when_any_done=False)
    assert data.shape[-1] == 10


@needs_gymnasium
@pytest.mark.parametrize("batching", [None, "native", "parallel"])
def test_use_after_the_collector_closed_the_env(batching) -> None:
    from torchrl.envs import GymEnv

    _collect_then_evaluate(GymEnv("CartPole-v1"))  # TorchRL's own env keeps working
    kwargs = {} if batching is None else {"num_envs": 2, "batching": batching}
    env = hub.make_env("gymnasium:CartPole-v1", torchrl=True, seed=3, **kwargs)
    first = env.hub_env
    _collect_then_evaluate(env)
    assert first.is_closed and env.hub_env is not first  # the old one released its resources
    env.close()
    exported = hub.to_torchrl(hub.make_env("gymnasium:CartPole-v1", **kwargs))
    _collect_then_evaluate(exported)
    exported.close()


def test_use_after_close_needs_a_way_to_build_the_env_again() -> None:
    from hub.envs.builtin import CountingEnv

    env = hub.to_torchrl(CountingEnv())
    env.close()
    with pytest.raises(hub.errors.ClosedEnvError, match="reopen"):
        env.reset()
    env = hub.to_torchrl(CountingEnv(max_steps=4), reopen=lambda: CountingEnv(max_steps=4))
    env.close()
    assert env.rollout(10).shape == (4,)


def test_a_reopened_env_is_seeded_with_the_next_seed() -> None:
    env = hub.make_env("hub:Pendulum", torchrl=True)
    env.set_seed(5)
    first = env.reset()["observation"]
    env.close()
    again = env.reset()["observation"]
    fresh = hub.make_env("hub:Pendulum")
    fresh.set_seed(fresh.set_seed(5))
    assert torch.equal(again, fresh.reset()["observation"])
    assert not torch.equal(again, first)


@needs_gymnasium
@pytest.mark.timeout(240)
def test_multi_sync_collector_runs_hub_envs_in_workers() -> None:
    from torchrl.collectors import MultiSyncCollector

    make = functools.partial(hub.make_env, "gymnasium:CartPole-v1", torchrl=True)
    collector = MultiSyncCollector(
        [make, make], policy=None, frames_per_batch=40, total_frames=80, cat_results="stack"
    )
    try:
        batches = [batch for batch in collector]
    finally:
        collector.shutdown()
    assert len(batches) == 2 and all(batch.numel() == 40 for batch in batches)


def test_torchrl_transforms_apply() -> None:
    from torchrl.envs import Compose, DoubleToFloat, RewardSum, StepCounter, TransformedEnv

    env = TransformedEnv(
        hub.make_env("hub:Pendulum", max_steps=20, torchrl=True),
        Compose(DoubleToFloat(), StepCounter(), RewardSum()),
    )
    check_env_specs(env, seed=0)
    data = env.rollout(30)
    assert data["next", "step_count"].max() == 20 and data.shape == (20,)
    assert "episode_reward" in data["next"].keys()


@pytest.mark.slow
def test_a_short_ppo_of_torchrls_tutorial_shape() -> None:
    from tensordict.nn import NormalParamExtractor, TensorDictModule
    from torch import nn
    from torchrl.collectors import Collector
    from torchrl.data.replay_buffers import ReplayBuffer
    from torchrl.data.replay_buffers.samplers import SamplerWithoutReplacement
    from torchrl.data.replay_buffers.storages import LazyTensorStorage
    from torchrl.envs import Compose, StepCounter, TransformedEnv
    from torchrl.modules import ProbabilisticActor, TanhNormal, ValueOperator
    from torchrl.objectives import ClipPPOLoss
    from torchrl.objectives.value import GAE

    torch.manual_seed(0)
    env = TransformedEnv(hub.make_env("hub:Pendulum", torchrl=True), Compose(StepCounter()))
    env.set_seed(0)
    n_act = env.action_spec.shape[-1]
    actor_net = nn.Sequential(
        nn.Linear(3, 32), nn.Tanh(), nn.Linear(32, 2 * n_act), NormalParamExtractor()
    )
    policy = ProbabilisticActor(
        TensorDictModule(actor_net, in_keys=["observation"], out_keys=["loc", "scale"]),
        spec=env.action_spec,
        in_keys=["loc", "scale"],
        distribution_class=TanhNormal,
        distribution_kwargs={"low": env.action_spec.space.low, "high": env.action_spec.space.high},
        return_log_prob=True,
    )
    value = ValueOperator(
        nn.Sequential(nn.Linear(3, 32), nn.Tanh(), nn.Linear(32, 1)), in_keys=["observation"]
    )
    policy(env.reset())
    value(env.reset())
    collector = Collector(env, policy, frames_per_batch=200, total_frames=600)
    buffer = ReplayBuffer(storage=LazyTensorStorage(200), sampler=SamplerWithoutReplacement())
    advantage = GAE(gamma=0.99, lmbda=0.95, value_network=value, average_gae=True)
    loss = ClipPPOLoss(policy, value, clip_epsilon=0.2, entropy_coeff=1e-4)
    optim = torch.optim.Adam(loss.parameters(), 3e-4)
    losses = []
    for batch in collector:
        assert batch.numel() == 200
        for _ in range(2):
            advantage(batch)
            buffer.extend(batch.reshape(-1))
            for _ in range(200 // 50):
                sample = buffer.sample(50)
                out = loss(sample)
                total = out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]
                total.backward()
                optim.step()
                optim.zero_grad()
                losses.append(float(total.detach()))
    collector.shutdown()
    assert len(losses) == 3 * 2 * 4 and all(torch.isfinite(torch.tensor(losses)))
