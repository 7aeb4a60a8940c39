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

Where this client knowingly differs from the 4.9.4 Java client (``client/src/main/java/org/apache/
rocketmq/client/``), none of it visible in the requests it sends:

* after a rebalance change the consumer heartbeats *before* it starts pulling the new queues
  (4.9.4 races the two, so its first pulls often meet SUBSCRIPTION_NOT_LATEST and wait 3 s);
* the latency fault strategy's fallback queue is a new ``MessageQueue`` (4.9.4 changes the one in the
  publish list in place); the round-robin counter is one per topic, not one per sending thread;
* the UNIQ_KEY's "class loader hash" is per producer object, its counter per producer;
* the client IP is the address of the default route (no interface enumeration);
* plain listeners run in a thread pool of ``consume_thread_max``; coroutine listeners on the loop;
* orderly consumption hands a message over ``max_reconsume_times`` to CONSUMER_SEND_MSG_BACK (the
  broker then sends it to the DLQ), re-publishing it only if that fails;
* a message dropped for exceeding ``consume_timeout`` moves the committed offset at once (4.9.4 waits
  for the next consumption or empty pull to do the same);
* not implemented: namespaces, ACL signatures, message trace, CONSUME_MESSAGE_DIRECTLY,
  RESET_CONSUMER_CLIENT_OFFSET / GET_CONSUMER_STATUS_FROM_CLIENT, the consume thread-pool adjuster.
"""
