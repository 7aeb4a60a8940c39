"""``GrpcServer``: the v2 ``MessagingService`` served with grpcio on a thread pool.

Legal call order: ``GrpcServer(broker, "127.0.0.1:8081")`` → ``start()`` (binds; ``port`` is the
bound port, so ``:0`` picks a free one) → ``stop()``. The broker must be started first and
shut down after. Binds 127.0.0.1 unless told otherwise; a request message is at most
``max_receive_message_length`` bytes (what a peer can make it allocate), and at most
``max_concurrent_rpcs`` calls run at once — streams (Telemetry, long-polling ReceiveMessage) hold
a worker thread each, so more are refused with ``RESOURCE_EXHAUSTED`` instead of queueing behind them.
"""

from __future__ import annotations

from concurrent import futures

import grpc
from rocketmq.grpc_protocol import service_pb2_grpc

from .service import GrpcConfig, MessagingService


class GrpcServer:
    def __init__(self, broker, address: str = "127.0.0.1:8081", config: GrpcConfig | None = None,
                 max_workers: int = 64, max_receive_message_length: int = 8 * 1024 * 1024, runner=None,
                 max_concurrent_rpcs: int | None = None):
        self.broker = broker
        self.runner = runner  # see MessagingService.runner
        self.address = address
        self.config = config or GrpcConfig()
        self.max_workers = max_workers
        self.max_receive_message_length = max_receive_message_length
        self.max_concurrent_rpcs = max_concurrent_rpcs if max_concurrent_rpcs is not None else max(1, max_workers - 4)
        self.server: grpc.Server | None = None
        self.service: MessagingService | None = None
        self.port: int | None = None

    def start(self) -> "GrpcServer":
        host, _, port = self.address.rpartition(":")
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=self.max_workers,
                                                             thread_name_prefix="pymq-grpc"),
                                  options=[("grpc.max_receive_message_length", self.max_receive_message_length),
                                           ("grpc.so_reuseport", 0)],
                                  maximum_concurrent_rpcs=self.max_concurrent_rpcs)
        self.port = self.server.add_insecure_port(f"{host or '127.0.0.1'}:{int(port)}")
        if not self.port:
            raise OSError(f"cannot bind the gRPC endpoint {self.address}")
        self.service = MessagingService(self.broker, (host or "127.0.0.1", self.port), self.config,
                                        self.runner)
        service_pb2_grpc.add_MessagingServiceServicer_to_server(self.service, self.server)
        self.server.start()
        return self

    @property
    def endpoint(self) -> str:
        host, _, _ = self.address.rpartition(":")
        return f"{host or '127.0.0.1'}:{self.port}"

    def stop(self, grace: float | None = 1.0) -> None:
        if self.server is not None:
            self.server.stop(grace).wait()
            self.server = None

    def __enter__(self) -> "GrpcServer":
        return self.start() if self.server is None else self

    def __exit__(self, *exc) -> None:
        self.stop()
