"""Structured observations: gymnasium ``Tuple`` observations stay tuples through the gymnasium
exports (equal to the raw env's, step for step), and ``Text`` observations keep one string per
sub-env through native batching's partial resets."""

from __future__ import annotations

import numpy as np
import pytest

import hub

gymnasium = pytest.importorskip("gymnasium")


def test_a_tuple_observation_stays_a_tuple_in_the_single_export() -> None:
    raw = gymnasium.make("Blackjack-v1")
    genv = hub.to_gymnasium(hub.make_env("gymnasium:Blackjack-v1"))
    assert genv.observation_space == raw.observation_space
    from gymnasium.utils.env_checker import check_env

    check_env(genv, skip_render_check=True)
    for seed in range(5):
        want, _ = raw.reset(seed=seed)
        have, _ = genv.reset(seed=seed)
        assert isinstance(have, tuple) and have == want and have in genv.observation_space
        done = False
        while not done:
            want, r_want, term, trunc, _ = raw.step(1)
            have, r_have, h_term, h_trunc, _ = genv.step(1)
            assert have == want and r_have == r_want and (h_term, h_trunc) == (term, trunc)
            done = term or trunc


def test_a_tuple_observation_stays_a_tuple_in_the_vector_export() -> None:
    raw = gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make("Blackjack-v1")] * 3)
    venv = hub.to_gymnasium(hub.make_env("gymnasium:Blackjack-v1", num_envs=3))
    assert venv.single_observation_space == raw.single_observation_space
    assert venv.observation_space == raw.observation_space
    want, _ = raw.reset(seed=4)
    have, _ = venv.reset(seed=4)
    assert isinstance(have, tuple)
    for a, b in zip(have, want):
        np.testing.assert_array_equal(a, b)
    actions = np.random.default_rng(0).integers(0, 2, size=(40, 3))
    for action in actions:
        want = raw.step(action)
        have = venv.step(action)
        for a, b in zip(have[0], want[0]):
            np.testing.assert_array_equal(a, b)
        for a, b in zip(have[1:4], want[1:4]):
            np.testing.assert_array_equal(a, b)


@pytest.fixture(scope="module")
def text_env_id():
    from tests.export.text_env import ENV_ID

    return ENV_ID


def text_batch(env_id: str, batching: str) -> hub.EnvBase:
    """Two sub-envs of ``env_id`` batched by ``batching``, seeded with 0."""
    if batching == "parallel":  # the workers import the module that registers the id
        from tests.export.text_env import make_text

        env = hub.ParallelEnv(2, make_text)
        env.set_seed(0)
        return env
    return hub.make_env(f"gymnasium:{env_id}", num_envs=2, batching=batching, seed=0)


def test_text_observations_through_native_partial_resets(text_env_id) -> None:
    """Against a same-step ``SyncVectorEnv``, whose infos hold each episode's last
    observation (gymnasium >= 1.1 in that mode, before 1.0 by default)."""
    import torch

    kwargs: dict = {}
    final = "final_observation"
    if hasattr(gymnasium.vector, "AutoresetMode"):
        kwargs["autoreset_mode"] = gymnasium.vector.AutoresetMode.SAME_STEP
        final = "final_obs"
    elif gymnasium.__version__ >= "1":
        pytest.skip("gymnasium 1.0's vector envs have no same-step mode to compare with")
    raw = gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make(text_env_id)] * 2, **kwargs)
    env = hub.make_env(f"gymnasium:{text_env_id}", num_envs=2, seed=0)
    td = env.reset()
    obs, _ = raw.reset(seed=0)
    assert td.get("mission").tolist() == list(obs["mission"])
    action = torch.zeros(2, 2, dtype=torch.bool)
    action[:, 0] = True
    partial = 0
    for _ in range(12):
        td["action"] = action
        out, td = env.step_and_maybe_reset(td)
        obs, _, terminated, truncated, info = raw.step(np.zeros(2, dtype=np.int64))
        done = terminated | truncated
        partial += int(done.any() and not done.all())
        last = [info[final][i]["mission"] if d else obs["mission"][i] for i, d in enumerate(done)]
        assert out["next"].get("mission").tolist() == last  # the episodes' true last steps
        assert td.get("mission").tolist() == list(obs["mission"])  # then the new first ones
    assert partial > 0


@pytest.mark.parametrize("batching", ["native", "serial", "parallel"])
def test_text_observations_through_batches_and_rollouts(text_env_id, batching: str) -> None:
    env = text_batch(text_env_id, batching)
    data = env.rollout(12, break_when_any_done=False)
    env.close()
    first = data.get("mission").tolist()
    last = data.get(("next", "mission")).tolist()
    done = data.get(("next", "done")).reshape(2, 12).tolist()
    for row in range(2):
        for t in range(12):
            # each step adds a "!" to the mission of its own episode, row by row
            assert last[row][t] == first[row][t] + "!"
            if t + 1 < 12 and not done[row][t]:
                assert first[row][t + 1] == last[row][t]
    assert any(any(row) for row in done)


def test_a_text_observation_exports_with_the_backend_text_space(text_env_id) -> None:
    from gymnasium.utils.env_checker import check_env

    raw = gymnasium.make(text_env_id)
    genv = hub.to_gymnasium(hub.make_env(f"gymnasium:{text_env_id}"), observation_keys=None)
    assert genv.observation_space["mission"] == raw.observation_space["mission"]
    check_env(genv, skip_render_check=True)
    want, _ = raw.reset(seed=3)
    have, _ = genv.reset(seed=3)
    for _ in range(9):
        assert have["mission"] == want["mission"] and have in genv.observation_space
        np.testing.assert_array_equal(have["pos"], want["pos"])
        want, _, term, trunc, _ = raw.step(0)
        have, _, h_term, h_trunc, _ = genv.step(0)
        assert (h_term, h_trunc) == (term, trunc)
        if term or trunc:
            want, _ = raw.reset()
            have, _ = genv.reset()


@pytest.mark.parametrize("batching", ["native", "serial", "parallel"])
def test_a_text_observation_exports_as_a_tuple_of_strings_from_a_batch(
    text_env_id, batching: str
) -> None:
    """As gymnasium's ``SyncVectorEnv`` (next-step autoreset) gives them, step for step."""
    raw = gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make(text_env_id)] * 2)
    venv = hub.to_gymnasium(text_batch(text_env_id, batching))
    assert venv.single_observation_space == raw.single_observation_space
    assert venv.observation_space == raw.observation_space
    want, _ = raw.reset(seed=5)
    have, _ = venv.reset(seed=5)
    for _ in range(10):
        assert isinstance(have["mission"], tuple) and have["mission"] == tuple(want["mission"])
        assert have in venv.observation_space
        np.testing.assert_array_equal(have["pos"], want["pos"])
        want, *_ = raw.step(np.zeros(2, dtype=np.int64))
        have, *_ = venv.step(np.zeros(2, dtype=np.int64))
    venv.close()


def test_a_string_entry_with_no_backend_space_exports_as_printable_text() -> None:
    from hub.export.spaces import spec_to_space, sub_space
    from hub.specs import NonTensor

    space = spec_to_space(NonTensor(example_data=""))
    assert isinstance(space, gymnasium.spaces.Text)
    assert "go to the red ball, then stop." in space and "" in space
    with pytest.raises(hub.errors.SpecConversionError, match="observation_keys"):
        spec_to_space(NonTensor(example_data=3))
    nested = gymnasium.spaces.Dict({"a": gymnasium.spaces.Tuple([gymnasium.spaces.Text(4)])})
    assert isinstance(sub_space(nested, ("a", "0")), gymnasium.spaces.Text)
    assert sub_space(nested, ("a", "1")) is None and sub_space(None, "a") is None
