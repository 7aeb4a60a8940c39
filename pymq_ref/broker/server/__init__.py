"""The broker server: the in-process :class:`~pymq_ref.broker.broker.Broker` facade on the wire.

* :mod:`.controller` — :class:`~.controller.BrokerController` (sockets, dispatch, client tables,
  name-server registration, lifecycle);
* :mod:`.context` — :class:`~.context.BrokerContext`, what every processor gets;
* one module per group of request codes, each with ``handlers(ctx) -> {code: processor}``, listed
  in :data:`PROCESSOR_MODULES` (a plain list of module names; other modules — the mqadmin
  processors — append theirs; a later module's code wins over an earlier one's);
* :mod:`.config` — RocketMQ's ``broker.conf``; :mod:`.up` — ``pymq up`` (name server + broker in one
  process) and its Python API (:class:`~.up.UpServer`, :func:`~.up.run_up`); :mod:`.cli`.
"""

PROCESSOR_MODULES: list[str] = [
    "pymq_ref.broker.server.send",
    "pymq_ref.broker.server.pull",
    "pymq_ref.broker.server.client_manage",
    "pymq_ref.broker.server.consumer_manage",
    "pymq_ref.broker.server.send_back",
    "pymq_ref.broker.server.transaction",
    "pymq_ref.broker.server.lock",
    "pymq_ref.broker.server.reply",
    "pymq_ref.broker.server.pop",
]
