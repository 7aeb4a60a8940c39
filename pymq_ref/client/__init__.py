"""The RocketMQ 4.x client side: producers, consumers, rebalance and fault tolerance, over the wire.

This package may depend on ``pymq_ref.remoting`` and ``pymq_ref.formats`` only — never on the
store or the broker, so that it talks to any 4.x broker, the real one included. Decision logic is
pure (sans-IO, clock injected); the I/O is an asyncio core with a small blocking facade.

=====================================  ===========================================================
module                                 what
=====================================  ===========================================================
:mod:`.allocate`                       the consumer's queue allocation strategies (pure)
:mod:`.fault`                          the producer's queue selection and latency fault tolerance (pure)
:mod:`.requests`                       every request the client sends, as pure builders, and their readers
:mod:`.message`                        ``Message``, ``MessageExt``, ``SendResult``, validation
:mod:`.config`                         ``ClientConfig`` and the client id
:mod:`.instance`                       ``MQClientInstance``: connections, routes, heartbeats, timers,
                                       the broker's call-backs
:mod:`.producer`                       ``DefaultMQProducer``: sync / async / oneway, retries, batches,
                                       selectors, compression, request-reply
:mod:`.transaction`                    ``TransactionMQProducer`` and the check-back
:mod:`.rebalance`                      ``RebalanceImpl``: which queues a consumer owns
:mod:`.consumer.push`                  ``DefaultMQPushConsumer``: the pull loop and flow control
:mod:`.consumer.consume`               concurrent and orderly consumption, send-back
:mod:`.consumer.process_queue`         ``ProcessQueue``: cached messages, the offset to commit (pure)
:mod:`.consumer.offset_store`          remote (clustering) and local-file (broadcasting) offsets
:mod:`.consumer.lite_pull`             ``DefaultLitePullConsumer``: subscribe or assign, ``poll``
:mod:`.blocking`                       the same objects behind blocking calls (a loop thread)
:mod:`.cli`                            ``pymq send`` and ``pymq consume``
=====================================  ===========================================================

Every producer and consumer follows ``await start()`` … ``await shutdown()``; ``shutdown`` always
returns and leaves no task behind. A loopback cluster to run them against is
:class:`pymq_ref.tools.cluster.LoopbackCluster`.
"""
