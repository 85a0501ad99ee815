"""Names to envs: ``make_env``, ``list_envs``, ``list_plugins``, and the spec-conversion registry.

Example:
    >>> from hub.registry import parse_uri
    >>> parse_uri("hub:Pendulum")
    ('hub', 'Pendulum')
"""

from __future__ import annotations

from hub.external.converter import set_spec_converter
from hub.registry.conversions import (
    convert_spec,
    find_spec_conversion,
    register_spec_conversion,
    spec_conversions,
    unregister_spec_conversion,
)
from hub.registry.keywords import (
    Keywords,
    check_keywords,
    keywords_of,
    unexpected_keyword,
    unknown_keyword_error,
)
from hub.registry.make import (
    batching_strategies,
    list_envs,
    list_plugins,
    make_env,
    make_env_batch,
    make_env_single,
)
from hub.registry.uris import RESOLUTION_ORDER, parse_uri, resolution_order, resolve

# the layer below cannot call convert_spec; hand it down (docs/design.md, "ExternalEnv's spaces")
set_spec_converter(convert_spec)

__all__ = [
    "Keywords",
    "RESOLUTION_ORDER",
    "batching_strategies",
    "check_keywords",
    "convert_spec",
    "find_spec_conversion",
    "keywords_of",
    "list_envs",
    "list_plugins",
    "make_env",
    "make_env_batch",
    "make_env_single",
    "parse_uri",
    "register_spec_conversion",
    "resolution_order",
    "resolve",
    "spec_conversions",
    "unexpected_keyword",
    "unknown_keyword_error",
    "unregister_spec_conversion",
]
