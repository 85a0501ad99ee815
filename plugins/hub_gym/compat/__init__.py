"""Every difference between gym and gymnasium versions, one dispatched function each.

One module per concern: :mod:`~hub_gym.compat.reset` (what ``reset`` returns),
:mod:`~hub_gym.compat.step` (4- or 5-tuples), :mod:`~hub_gym.compat.seeding`,
:mod:`~hub_gym.compat.render` (render modes), :mod:`~hub_gym.compat.make` (``make`` arguments,
listing ids) and :mod:`~hub_gym.compat.vector` (vector envs and their autoreset modes). Each
function is a :func:`hub.implement_for` dispatcher over the ``gym`` backend family; an env
resolves them once, when it is built, into a :class:`Compat` bundle, so that its step path never
asks for a version again and keeps the backend it was built with.

Example:
    >>> from hub_gym.compat import resolve_compat
    >>> compat = resolve_compat("gymnasium")
    >>> compat.backend, compat.autoreset_default in ("disabled", "next_step", "same_step")
    ('gymnasium', True)
"""

from hub_gym.compat.bundle import Compat, resolve_compat

__all__ = ["Compat", "resolve_compat"]
