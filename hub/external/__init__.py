"""Inverted control: simulators that drive themselves and ask hub's learner for actions.

:class:`ExternalEnv` serves simulators that run their own loop (a game engine, a robot, a
service, a log reader): they call ``start_episode`` / ``get_action`` / ``log_action`` /
``log_returns`` / ``end_episode``, while the learner sees an :class:`~hub.EnvBase` it can
``step`` and ``rollout``. :class:`PolicyServer` serves such an env over TCP (optionally TLS)
with a typed, versioned msgpack protocol, and :class:`PolicyClient` (numpy and msgpack only) is
the simulator's side of it.

Names are imported lazily (:mod:`hub.lazy`): ``hub.external.client`` needs neither torch nor
tensordict.

Example:
    >>> import hub
    >>> from hub.specs import Categorical, Unbounded
    >>> env = hub.external.ExternalEnv(Unbounded((4,)), Categorical(2), max_concurrent=2)
    >>> env.batch_size
    torch.Size([2])
"""

import typing

from hub.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)

if typing.TYPE_CHECKING:  # the public names: read by type checkers and by lazy_exports
    from hub.external.bulk import BulkView  # noqa: F401
    from hub.external.client import PolicyClient  # noqa: F401
    from hub.external.converter import set_spec_converter  # noqa: F401
    from hub.external.env import ExternalEnv  # noqa: F401
    from hub.external.episodes import EpisodeError, ExternalEnvFullError, LearnerGoneError  # noqa: F401
    from hub.external.polling import PollView  # noqa: F401
    from hub.external.protocol import PROTOCOL_VERSION, ProtocolError  # noqa: F401
    from hub.external.server import PolicyServer  # noqa: F401
