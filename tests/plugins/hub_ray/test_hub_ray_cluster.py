"""RayEnv on a simulated two-node cluster (ray.cluster_utils.Cluster: a head node and one
added node with a custom resource): actors placed through actor_options land on both nodes,
the data is SerialEnv's, and a killed actor of the added node is created again there."""

from __future__ import annotations

import functools
import os
import signal

import pytest
import torch
from hub_ray import ActorRestartWarning, RayEnv

import hub
from hub.registry import make_env_single

from .ray_helpers import alive_actor_pids, ray_address, require_loopback_only, same_data

pytest.importorskip("gymnasium")

PENDULUM = functools.partial(make_env_single, "hub", "Pendulum")


@pytest.fixture(scope="module")
def cluster():
    import ray
    from ray.cluster_utils import Cluster

    require_loopback_only()
    os.environ.setdefault("RAY_worker_niceness", "0")
    # the machine is shared: Ray's memory monitor would kill these small workers for
    # what other processes use
    os.environ.setdefault("RAY_memory_monitor_refresh_ms", "0")
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "resources": {"head_node": 1}, "include_dashboard": True},
    )
    node = cluster.add_node(num_cpus=1, resources={"added_node": 1})
    ray.init(address=cluster.address, logging_level="warning")
    try:
        with ray_address(cluster.address):
            yield cluster, node
    finally:
        ray.shutdown()
        cluster.shutdown()


# one actor per node: its custom resource places it
PLACEMENT = [{"resources": {"head_node": 0.5}}, {"resources": {"added_node": 0.5}}]


def test_actors_land_on_both_nodes_and_the_data_is_right(cluster):
    _, added = cluster
    env = RayEnv(PENDULUM, 6, envs_per_actor=3, actor_options=PLACEMENT, timeout=120)
    serial = hub.SerialEnv(6, PENDULUM)
    try:
        nodes = [place.node_id for place in env.places]
        assert len(set(nodes)) == 2
        assert nodes[1] == added.node_id
        data = []
        for batched in (env, serial):
            batched.set_seed(0)
            torch.manual_seed(0)
            data.append(batched.rollout(20, break_when_any_done=False))
        assert same_data(data[0], data[1])
    finally:
        env.close()
        serial.close()


def test_a_killed_actor_on_the_added_node_comes_back_there(cluster):
    _, added = cluster
    env = RayEnv(
        PENDULUM, 4, envs_per_actor=2, actor_options=PLACEMENT, max_restarts=1, timeout=120
    )
    old = env.places[1].pid
    try:
        td = env.reset()
        os.kill(old, signal.SIGKILL)
        with pytest.warns(ActorRestartWarning, match=f"node {env.places[0].node_ip}"):
            data, td = env.step_and_maybe_reset(env.rand_action(td))
        assert data["next", "truncated"].squeeze(-1).tolist() == [False, False, True, True]
        assert env.places[1].node_id == added.node_id and env.places[1].pid != old
        data, td = env.step_and_maybe_reset(env.rand_action(td))
        assert not data["next", "done"].any()
    finally:
        pids = [place.pid for place in env.places]
        env.close()
    assert alive_actor_pids(pids + [old]) == []
