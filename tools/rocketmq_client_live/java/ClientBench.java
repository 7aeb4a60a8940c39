import java.util.concurrent.*;
import java.util.concurrent.atomic.*;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;

/**
 * The RocketMQ 4.9.4 Java client as the baseline of bench/bench_client.py.
 *   ClientBench NAMESRV send TOPIC THREADS SECONDS BODY_BYTES  -> "sent=N seconds=S errors=E"
 *   ClientBench NAMESRV drain TOPIC GROUP COUNT TIMEOUT_S     -> "consumed=N seconds=S"
 * send: THREADS threads each sync-sending BODY_BYTES messages for SECONDS (after a 1 s warm-up).
 * drain: a push consumer of a new GROUP from the first offset; time from start() until COUNT messages.
 */
public class ClientBench {
    public static void main(String[] args) throws Exception {
        String ns = args[0], mode = args[1], topic = args[2];
        try {
            if (mode.equals("send")) send(ns, topic, Integer.parseInt(args[3]), Integer.parseInt(args[4]), Integer.parseInt(args[5]));
            else drain(ns, topic, args[3], Integer.parseInt(args[4]), Integer.parseInt(args[5]));
        } catch (Throwable e) {
            System.out.println("FAILED " + e);
            e.printStackTrace(System.out);
            System.exit(2); // the client's non-daemon threads would keep the JVM alive
        }
        System.exit(0);
    }

    static void send(String ns, String topic, int threads, int seconds, int size) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer("PG_bench_java");
        p.setNamesrvAddr(ns);
        p.setInstanceName("bench-" + System.nanoTime());
        p.start();
        byte[] body = new byte[size];
        for (int i = 0; i < size; i++) body[i] = (byte) ('a' + i % 26);
        p.send(new Message(topic, body)); // route + connection
        AtomicLong sent = new AtomicLong(), errors = new AtomicLong();
        AtomicBoolean measuring = new AtomicBoolean(false), stop = new AtomicBoolean(false);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        for (int t = 0; t < threads; t++) {
            pool.submit(() -> {
                while (!stop.get()) {
                    try {
                        SendResult r = p.send(new Message(topic, body));
                        if (measuring.get()) {
                            if (r.getSendStatus() == SendStatus.SEND_OK) sent.incrementAndGet(); else errors.incrementAndGet();
                        }
                    } catch (Exception e) {
                        if (measuring.get()) errors.incrementAndGet();
                    }
                }
            });
        }
        Thread.sleep(1000);
        measuring.set(true);
        long start = System.nanoTime();
        Thread.sleep(seconds * 1000L);
        measuring.set(false);
        double elapsed = (System.nanoTime() - start) / 1e9;
        stop.set(true);
        pool.shutdown();
        pool.awaitTermination(30, TimeUnit.SECONDS);
        System.out.println("sent=" + sent.get() + " seconds=" + elapsed + " errors=" + errors.get());
        p.shutdown();
    }

    static void drain(String ns, String topic, String group, int count, int timeout) throws Exception {
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group);
        c.setNamesrvAddr(ns);
        c.setInstanceName("bench-" + System.nanoTime());
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe(topic, "*");
        AtomicLong consumed = new AtomicLong();
        CountDownLatch done = new CountDownLatch(1);
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            if (consumed.addAndGet(msgs.size()) >= count) done.countDown();
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        long start = System.nanoTime();
        c.start();
        done.await(timeout, TimeUnit.SECONDS);
        double elapsed = (System.nanoTime() - start) / 1e9;
        System.out.println("consumed=" + consumed.get() + " seconds=" + elapsed);
        c.shutdown();
    }
}
