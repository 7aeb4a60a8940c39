import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.*;
import org.apache.rocketmq.client.producer.*;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.*;

/**
 * The benchmark client of bench/bench_broker.py (the same program against the real 4.9.4 broker and pymq-ref's).
 *   BrokerBench NAMESRV send TOPIC THREADS SECONDS BODY_BYTES   -> "RATE <msg/s> SENT <n> FAILED <n>"
 *   BrokerBench NAMESRV fill TOPIC COUNT BODY_BYTES              -> "FILLED <n>"  (16 sending threads)
 *   BrokerBench NAMESRV drain TOPIC COUNT                        -> "RATE <msg/s> RECEIVED <n>" (push consumer)
 */
public class BrokerBench {
    public static void main(String[] a) throws Exception {
        String ns = a[0], mode = a[1], topic = a[2];
        switch (mode) {
            case "send": send(ns, topic, Integer.parseInt(a[3]), Double.parseDouble(a[4]), Integer.parseInt(a[5])); break;
            case "fill": fill(ns, topic, Integer.parseInt(a[3]), Integer.parseInt(a[4])); break;
            case "drain": drain(ns, topic, Integer.parseInt(a[3])); break;
            default: throw new IllegalArgumentException(mode);
        }
        System.exit(0);
    }

    static DefaultMQProducer producer(String ns, String group) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer(group);
        p.setNamesrvAddr(ns);
        p.setInstanceName(group + System.nanoTime());
        p.setSendMsgTimeout(10000);
        p.start();
        return p;
    }

    static void send(String ns, String topic, int threads, double seconds, int size) throws Exception {
        DefaultMQProducer p = producer(ns, "PG_BENCH");
        byte[] body = new byte[size];
        Arrays.fill(body, (byte) 'x');
        p.send(new Message(topic, body)); // warm-up: route, connection
        AtomicLong ok = new AtomicLong(), failed = new AtomicLong();
        long start = System.nanoTime(), end = start + (long) (seconds * 1e9);
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            ts[t] = new Thread(() -> {
                while (System.nanoTime() < end) {
                    try {
                        SendResult r = p.send(new Message(topic, body));
                        if (r.getSendStatus() == SendStatus.SEND_OK) ok.incrementAndGet(); else failed.incrementAndGet();
                    } catch (Exception e) {
                        failed.incrementAndGet();
                    }
                }
            });
            ts[t].start();
        }
        for (Thread t : ts) t.join();
        double took = (System.nanoTime() - start) / 1e9;
        System.out.println("RATE " + (long) (ok.get() / took) + " SENT " + ok.get() + " FAILED " + failed.get());
        p.shutdown();
    }

    static void fill(String ns, String topic, int count, int size) throws Exception {
        DefaultMQProducer p = producer(ns, "PG_FILL");
        byte[] body = new byte[size];
        Arrays.fill(body, (byte) 'y');
        p.send(new Message(topic, body));
        AtomicInteger stored = new AtomicInteger(1);
        Thread[] ts = new Thread[16];
        for (int t = 0; t < ts.length; t++) {
            ts[t] = new Thread(() -> {
                while (stored.get() < count) { // may overshoot by a few: the drain waits for at least count
                    try {
                        if (p.send(new Message(topic, body)).getSendStatus() == SendStatus.SEND_OK) stored.incrementAndGet();
                    } catch (Exception e) {
                        // retried by the loop
                    }
                }
            });
            ts[t].start();
        }
        for (Thread t : ts) t.join();
        System.out.println("FILLED " + stored.get());
        p.shutdown();
    }

    static void drain(String ns, String topic, int count) throws Exception {
        AtomicLong got = new AtomicLong();
        CountDownLatch done = new CountDownLatch(1);
        DefaultMQPushConsumer c = new DefaultMQPushConsumer("CG_DRAIN_" + System.nanoTime());
        c.setNamesrvAddr(ns);
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe(topic, "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            if (got.addAndGet(msgs.size()) >= count) done.countDown();
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        long start = System.nanoTime();
        c.start();
        boolean ok = false;
        long seen = -1, lastProgress = System.nanoTime();
        while (!ok) { // stop after 15 s without progress rather than waiting for ever
            ok = done.await(1, TimeUnit.SECONDS);
            if (got.get() != seen) { seen = got.get(); lastProgress = System.nanoTime(); }
            else if (System.nanoTime() - lastProgress > 15_000_000_000L) break;
        }
        double took = (System.nanoTime() - start) / 1e9;
        System.out.println("RATE " + (long) (got.get() / took) + " RECEIVED " + got.get() + (ok ? "" : " TIMEOUT"));
        c.shutdown();
    }
}
