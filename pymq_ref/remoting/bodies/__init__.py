"""The JSON bodies of the 4.x protocol as dataclass beans, and their codec (:mod:`.bean`).

:mod:`.route` (route data, cluster info, broker registration), :mod:`.heartbeat`,
:mod:`.consumer` (locks, statistics, offsets, running info), :mod:`.admin`. Every class is
importable from here; ``ALL_BODIES`` maps the Java simple class name to it.
"""

from __future__ import annotations

import dataclasses

from pymq_ref.formats.beans import DataVersion, SubscriptionGroupConfig, TopicConfig

from . import admin, consumer, heartbeat, route
from .admin import *  # noqa: F401,F403
from .bean import BodyError, decode_json, encode_body, encode_json, parse_json
from .consumer import *  # noqa: F401,F403
from .heartbeat import *  # noqa: F401,F403
from .route import *  # noqa: F401,F403

ALL_BODIES: dict[str, type] = {
    name: obj for module in (route, heartbeat, consumer, admin) for name, obj in vars(module).items()
    if dataclasses.is_dataclass(obj) and obj.__module__ == module.__name__}
ALL_BODIES.update(DataVersion=DataVersion, TopicConfig=TopicConfig, SubscriptionGroupConfig=SubscriptionGroupConfig)

__all__ = sorted(ALL_BODIES) + ["ALL_BODIES", "BodyError", "decode_json", "encode_body", "encode_json", "parse_json",
                                "encode_register_body", "decode_register_body"]
