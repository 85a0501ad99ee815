"""``hub serve TARGET``: serve an ExternalEnv to PolicyClients and step it with a policy.

TARGET is ``module:attr`` naming an ``ExternalEnv`` (or a function returning one), or an env
URI whose specs the served env copies (simulators that implement that env connect to it).
``--weights`` gives local-inference clients a policy to fetch; with ``--local-view bulk`` their
transitions are read whole (``take_transitions``) beside the stepped remote clients. Beyond
loopback the server needs a token and TLS (``--tls-cert``/``--tls-key``; ``--plaintext`` to
serve without, behind a TLS tunnel or on a trusted network).

Example:
    >>> from click.testing import CliRunner
    >>> CliRunner().invoke(serve, ["--help"]).exit_code
    0
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from hub.cli.errors import CliError
from hub.cli.output import echo_json, json_option
from hub.errors import HubError

INTERRUPTED_EXIT_CODE = 130


@click.command(short_help="Serve an ExternalEnv to PolicyClients and step it with a policy.")
@click.argument("target")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option(
    "--port",
    "-p",
    type=click.IntRange(0, 65535),
    default=0,
    help="Port (0: a free one, printed).",
)
@click.option(
    "--token",
    default=None,
    envvar="HUB_SERVE_TOKEN",
    help="Shared secret of clients (required beyond loopback; not empty).",
)
@click.option(
    "--tls-cert",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="PEM certificate (chain) to serve TLS with; needs --tls-key.",
)
@click.option(
    "--tls-key",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="PEM private key of --tls-cert.",
)
@click.option(
    "--plaintext",
    is_flag=True,
    help="Serve beyond loopback without TLS (behind a TLS tunnel or on a network you trust).",
)
@click.option(
    "--max-connections",
    type=click.IntRange(min=1),
    default=None,
    help="Connections at once (default: what the file-descriptor limit allows).",
)
@click.option(
    "--max-concurrent",
    type=click.IntRange(min=1),
    default=16,
    show_default=True,
    help="Episodes at once (when TARGET is a URI).",
)
@click.option(
    "--policy",
    default=None,
    metavar="MODULE:ATTR",
    help="The learner's policy for remote-inference clients, td -> td (default: random).",
)
@click.option(
    "--weights",
    default=None,
    metavar="MODULE:ATTR",
    help="A torch.nn.Sequential (Linear, ReLU, Tanh) that local-inference clients fetch.",
)
@click.option(
    "--local-view",
    type=click.Choice(["step", "bulk"]),
    default="step",
    show_default=True,
    help="Local-inference clients' transitions: stepped with the others, or read whole.",
)
@click.option(
    "--episodes",
    type=click.IntRange(min=1),
    default=None,
    help="Stop after this many episodes ended (default: run until Ctrl-C).",
)
@json_option
def serve(
    target: str,
    host: str,
    port: int,
    token: str | None,
    tls_cert: str | None,
    tls_key: str | None,
    plaintext: bool,
    max_connections: int | None,
    max_concurrent: int,
    policy: str | None,
    weights: str | None,
    local_view: str,
    episodes: int | None,
    as_json: bool,
) -> None:
    """Serve TARGET on HOST:PORT and step it: each ended episode's return is counted.

    \b
    Examples:
      hub serve hub:Pendulum --port 9900
      hub serve mygame.server:make_env --policy mygame.learner:policy --token "$SECRET"
      hub serve hub:Pendulum --host 0.0.0.0 --token "$SECRET" --tls-cert c.pem --tls-key k.pem
      hub serve gymnasium:CartPole-v1 --weights mygame.learner:net --local-view bulk
    """
    from hub.external import PolicyServer

    env = _build(target, max_concurrent)
    act = _load(policy) if policy else None
    net = _load(weights) if weights else None
    if callable(net) and not hasattr(net, "named_children"):
        net = net()  # a function that builds the network
    try:
        server = PolicyServer(
            env,
            host=host,
            port=port,
            token=token,
            policy=net,
            local_view=local_view,
            tls_cert=tls_cert,
            tls_key=tls_key,
            plaintext_ok=plaintext,
            max_connections=max_connections,
        )
    except HubError as err:
        env.close()
        raise CliError(str(err)) from err
    _log_refusals()
    click.echo(f"hub: serving on {server.address[0]}:{server.address[1]}", err=True)
    interrupted = False
    try:
        returns = _learn(env, act, episodes, bulk=local_view == "bulk")
    except KeyboardInterrupt:
        interrupted, returns = True, []
    finally:
        server.close()
        env.close()
    summary = {
        "episodes": len(returns),
        "mean_return": sum(returns) / len(returns) if returns else None,
    }
    if as_json:
        echo_json(summary)
    else:
        click.echo(f"episodes: {summary['episodes']}, mean return: {summary['mean_return']}")
    if interrupted:
        sys.exit(INTERRUPTED_EXIT_CODE)


def _log_refusals() -> None:
    """Print the server's log lines (refused peers, accept errors) on stderr."""
    import logging

    logger = logging.getLogger("hub.external.server")
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("hub serve: %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)


def _load(spec: str) -> Any:
    module_name, _, attr = spec.partition(":")
    try:
        value: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError, ValueError) as err:
        raise CliError(f"cannot load {spec!r}: {err}. Give MODULE:ATTR.") from err
    return value


def _build(target: str, max_concurrent: int) -> Any:
    from hub.external import ExternalEnv

    try:
        value = _load(target)
    except CliError:
        value = None  # not MODULE:ATTR: an env URI
    if value is not None:
        if callable(value) and not isinstance(value, ExternalEnv):
            try:
                value = value()
            except TypeError as err:
                raise CliError(f"calling {target}() failed: {err}") from err
        if not isinstance(getattr(value, "base_env", value), ExternalEnv):
            raise CliError(f"{target} gives a {type(value).__name__}, not an ExternalEnv.")
        return value
    from hub.registry import make_env

    with make_env(target) as model:
        observation = model.observation_spec.clone()
        action, reward = model.action_spec.clone(), model.reward_spec.clone()
    return ExternalEnv(observation, action, reward_spec=reward, max_concurrent=max_concurrent)


def _learn(env: Any, policy: Any, episodes: int | None, bulk: bool = False) -> list[float]:
    """Step until ``episodes`` episodes ended; the returns of those that did (with ``bulk``,
    the bulk view's episodes too, read whole between steps)."""
    import torch

    base = getattr(env, "base_env", env)
    returns: list[float] = []
    bulk_returns = _EpisodeReturns()
    running = torch.zeros(env.batch_size[0])
    td = env.reset()
    while episodes is None or len(returns) < episodes:
        if bulk:
            idle = base.is_idle()
            returns.extend(bulk_returns.add(base.take_transitions(timeout=0.05 if idle else 0.0)))
            if idle:
                continue
        td = policy(td) if policy is not None else env.rand_action(td)
        data, td = env.step_and_maybe_reset(td)
        valid = data["next", "valid"]
        running += torch.where(valid, data["next", "reward"].reshape(valid.shape[0], -1).sum(-1), 0)
        ended = valid & data["next", "done"].reshape(valid.shape)
        returns.extend(running[ended].tolist())
        running[ended] = 0.0
    return returns


class _EpisodeReturns:
    """Sums the bulk view's rewards per episode; the returns of those that ended."""

    def __init__(self) -> None:
        self.running: dict[int, float] = {}

    def add(self, data: Any) -> list[float]:
        n = data.shape[0]
        if not n:
            return []
        rewards = data["next", "reward"].reshape(n, -1).sum(-1).tolist()
        done = data["next", "done"].reshape(n).tolist()
        ended = []
        for episode, reward, end in zip(data["episode"].tolist(), rewards, done, strict=True):
            total = self.running.pop(episode, 0.0) + reward
            if end:
                ended.append(total)
            else:
                self.running[episode] = total
        return ended
