"""The RocketMQ 5.x gRPC endpoint (``apache.rocketmq.v2.MessagingService``) on the broker facade.

* :mod:`.convert` — protobuf ⇄ records, as the 5.1.4 proxy converts them (pure);
* :mod:`.service` — :class:`MessagingService`: one facade call per RPC;
* :mod:`.server` — :class:`GrpcServer`: grpcio on a thread pool (``pymq up --grpc``).

The protobuf stubs are imported from the ``rocketmq-python-client`` package
(``rocketmq.grpc_protocol``); this package holds no generated code.
"""

from .server import GrpcServer
from .service import GrpcConfig, MessagingService

__all__ = ["GrpcServer", "GrpcConfig", "MessagingService"]
