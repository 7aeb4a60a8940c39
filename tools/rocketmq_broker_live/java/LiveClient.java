import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;

import org.apache.rocketmq.client.consumer.*;
import org.apache.rocketmq.client.consumer.listener.*;
import org.apache.rocketmq.client.producer.*;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.*;

/**
 * Scenarios of the RocketMQ 4.9.4 Java client against a name server + broker (the real one or pymq-ref's).
 * Usage: LiveClient NAMESRV SCENARIO TOPIC [N]
 * Prints one line per event ("SENT ...", "RECV ...") and "DONE ok=true|false ..." last; exit 0 when ok.
 */
public class LiveClient {
    static String ns, topic;
    static int n;

    public static void main(String[] args) throws Exception {
        ns = args[0];
        String scenario = args[1];
        topic = args[2];
        n = args.length > 3 ? Integer.parseInt(args[3]) : 10;
        boolean ok;
        switch (scenario) {
            case "sync-push": ok = syncPush(); break;
            default: System.out.println("unknown scenario " + scenario); ok = false;
        }
        System.out.println("DONE ok=" + ok);
        System.out.flush();
        System.exit(ok ? 0 : 1);
    }

    static DefaultMQProducer producer(String group) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer(group);
        p.setNamesrvAddr(ns);
        p.setInstanceName(group + "-" + System.nanoTime());
        p.start();
        return p;
    }

    static DefaultMQPushConsumer pushConsumer(String group, String expr) throws Exception {
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group);
        c.setNamesrvAddr(ns);
        c.setInstanceName(group + "-" + System.nanoTime());
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe(topic, expr);
        return c;
    }

    /** n sync sends, then a push consumer receives all n (by key). */
    static boolean syncPush() throws Exception {
        DefaultMQProducer p = producer("PG_" + topic);
        Set<String> sent = new HashSet<>();
        for (int i = 0; i < n; i++) {
            Message m = new Message(topic, "TagA", "k" + i, ("hello " + i).getBytes(StandardCharsets.UTF_8));
            SendResult r = p.send(m);
            System.out.println("SENT " + r.getSendStatus() + " " + r.getMsgId() + " q=" + r.getMessageQueue().getQueueId()
                + " off=" + r.getQueueOffset());
            if (r.getSendStatus() != SendStatus.SEND_OK) return false;
            sent.add("k" + i);
        }
        p.shutdown();
        Set<String> got = ConcurrentHashMap.newKeySet();
        CountDownLatch done = new CountDownLatch(1);
        DefaultMQPushConsumer c = pushConsumer("CG_" + topic, "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                System.out.println("RECV " + m.getKeys() + " " + new String(m.getBody(), StandardCharsets.UTF_8)
                    + " q=" + m.getQueueId() + " off=" + m.getQueueOffset());
                got.add(m.getKeys());
            }
            if (got.containsAll(sent)) done.countDown();
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        boolean ok = done.await(60, TimeUnit.SECONDS);
        c.shutdown();
        System.out.println("RECEIVED " + got.size() + " of " + sent.size());
        return ok;
    }
}
