"""The RocketMQ 4.9.4 name server: route tables (:mod:`.route_info`), the KV config
(:mod:`.kvconfig`), the request processor (:mod:`.processor`) and the server (:mod:`.server`).

Built on :mod:`pymq_ref.remoting` only (and the store's config-file routine for ``kvConfig.json``).
Start one with ``pymq namesrv`` or :class:`~pymq_ref.namesrv.server.NamesrvController`.
"""

from .route_info import BROKER_CHANNEL_EXPIRED_TIME, RouteInfoManager  # noqa: F401
from .server import NamesrvController  # noqa: F401
