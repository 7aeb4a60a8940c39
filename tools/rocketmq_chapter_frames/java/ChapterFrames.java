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
 * One small scenario per book chapter, run by the real RocketMQ 4.9.4 Java client so that
 * tools/rocketmq_chapter_frames/record.py can record its frames.
 * Usage: ChapterFrames NAMESRV SCENARIO TOPIC   (SCENARIO: tour | delay | retry | transaction | filter)
 * Prints one line per event and "DONE ok=true|false" last; exits 0 when ok.
 */
public class ChapterFrames {
    static String ns, topic;

    public static void main(String[] args) throws Exception {
        ns = args[0];
        topic = args[2];
        boolean ok;
        try {
            switch (args[1]) {
                case "tour": ok = tour(); break;
                case "delay": ok = delay(); break;
                case "retry": ok = retry(); break;
                case "transaction": ok = transaction(); break;
                case "filter": ok = filter(); break;
                default: System.out.println("unknown scenario " + args[1]); ok = false;
            }
        } catch (Exception e) { // the client's threads would keep the JVM alive: report and exit
            System.out.println("FAILED " + e);
            ok = false;
        }
        System.out.println("DONE ok=" + ok);
        System.out.flush();
        System.exit(ok ? 0 : 1);
    }

    static DefaultMQProducer producer(String group) throws Exception {
        DefaultMQProducer p = new DefaultMQProducer(group);
        p.setNamesrvAddr(ns);
        p.setInstanceName("chapter");
        patient(p);
        p.setSendMsgTimeout(30000);
        p.start();
        return p;
    }

    static DefaultMQPushConsumer consumer(String group, MessageSelector selector) throws Exception {
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group);
        c.setNamesrvAddr(ns);
        c.setInstanceName("chapter");
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        patient(c);
        c.subscribe(topic, selector);
        return c;
    }

    /** A shared, busy machine answers slowly: wait up to 15 s for the name server and broker (4.9.4: 3 s). */
    static void patient(org.apache.rocketmq.client.ClientConfig c) {
        c.setMqClientApiTimeout(15000);
    }

    static Message message(String tag, String key, String body) {
        return new Message(topic, tag, key, body.getBytes(StandardCharsets.UTF_8));
    }

    static void sent(SendResult r) {
        System.out.println("SENT " + r.getSendStatus() + " q=" + r.getMessageQueue().getQueueId()
            + " offset=" + r.getQueueOffset());
    }

    static void recv(String who, MessageExt m) {
        System.out.println("RECV " + who + " topic=" + m.getTopic() + " tags=" + m.getTags() + " key=" + m.getKeys()
            + " reconsume=" + m.getReconsumeTimes() + " body=" + new String(m.getBody(), StandardCharsets.UTF_8));
    }

    /** Chapter 00: one message sent, then received by a push consumer. */
    static boolean tour() throws Exception {
        DefaultMQProducer p = producer("TourProducer");
        sent(p.send(message("TagA", "tour-1", "Hello, RocketMQ")));
        p.shutdown();
        CountDownLatch got = new CountDownLatch(1);
        DefaultMQPushConsumer c = consumer("TourConsumer", MessageSelector.byTag("*"));
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) { recv("TourConsumer", m); got.countDown(); }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        boolean ok = got.await(90, TimeUnit.SECONDS);
        Thread.sleep(6000); // let the consumer commit its offset before it leaves
        c.shutdown();
        return ok;
    }

    /** Chapter 06: a message sent with delay level 2 (5 s) reaches the consumer after the delay. */
    static boolean delay() throws Exception {
        DefaultMQProducer p = producer("DelayProducer");
        Message m = message("TagA", "delay-1", "five seconds later");
        m.setDelayTimeLevel(2);
        long t0 = System.currentTimeMillis();
        sent(p.send(m));
        p.shutdown();
        CountDownLatch got = new CountDownLatch(1);
        DefaultMQPushConsumer c = consumer("DelayConsumer", MessageSelector.byTag("*"));
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt x : msgs) {
                recv("DelayConsumer", x);
                System.out.println("AFTER_MS_AT_LEAST_4000 " + (System.currentTimeMillis() - t0 >= 4000));
                got.countDown();
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        boolean ok = got.await(90, TimeUnit.SECONDS);
        Thread.sleep(6000);
        c.shutdown();
        return ok;
    }

    /** Chapter 07: the consumer fails the message twice; maxReconsumeTimes=1 sends it on to %DLQ%. */
    static boolean retry() throws Exception {
        DefaultMQProducer p = producer("RetryProducer");
        sent(p.send(message("TagA", "retry-1", "please fail me")));
        p.shutdown();
        CountDownLatch got = new CountDownLatch(2);
        DefaultMQPushConsumer c = consumer("RetryConsumer", MessageSelector.byTag("*"));
        c.setMaxReconsumeTimes(1);
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) { recv("RetryConsumer", m); got.countDown(); }
            return ConsumeConcurrentlyStatus.RECONSUME_LATER;
        });
        c.start();
        boolean ok = got.await(120, TimeUnit.SECONDS);
        Thread.sleep(6000); // the second send-back (to %DLQ%) and the offset commit
        c.shutdown();
        return ok;
    }

    /** Chapter 08: one message committed at once, one rolled back, one left UNKNOW and committed on check-back. */
    static boolean transaction() throws Exception {
        TransactionMQProducer p = new TransactionMQProducer("TxProducer");
        p.setNamesrvAddr(ns);
        p.setInstanceName("chapter");
        patient(p);
        p.setSendMsgTimeout(30000);
        CountDownLatch checked = new CountDownLatch(1);
        p.setTransactionListener(new TransactionListener() {
            public LocalTransactionState executeLocalTransaction(Message msg, Object arg) {
                String k = msg.getKeys();
                System.out.println("LOCAL " + k);
                if (k.equals("tx-commit")) return LocalTransactionState.COMMIT_MESSAGE;
                if (k.equals("tx-rollback")) return LocalTransactionState.ROLLBACK_MESSAGE;
                return LocalTransactionState.UNKNOW;
            }
            public LocalTransactionState checkLocalTransaction(MessageExt msg) {
                System.out.println("CHECK " + msg.getKeys());
                checked.countDown();
                return LocalTransactionState.COMMIT_MESSAGE;
            }
        });
        p.start();
        for (String k : new String[] {"tx-commit", "tx-rollback", "tx-unknown"}) {
            TransactionSendResult r = p.sendMessageInTransaction(message("TagA", k, "transactional " + k), null);
            System.out.println("SENT " + r.getSendStatus() + " " + r.getLocalTransactionState());
        }
        boolean ok = checked.await(120, TimeUnit.SECONDS);
        Thread.sleep(3000); // the END_TRANSACTION answering the check
        p.shutdown();
        return ok;
    }

    /** Chapter 09: four messages; one consumer subscribes by tag, another by an SQL92 expression. */
    static boolean filter() throws Exception {
        DefaultMQProducer p = producer("FilterProducer");
        String[] tags = {"TagA", "TagB", "TagA", "TagB"};
        for (int i = 0; i < 4; i++) {
            Message m = message(tags[i], "filter-" + i, "message " + i);
            m.putUserProperty("a", Integer.toString(i));
            sent(p.send(m, (MessageQueueSelector) (mqs, msg, arg) -> mqs.get(0), null)); // all in queue 0
        }
        p.shutdown();
        CountDownLatch tagGot = new CountDownLatch(2), sqlGot = new CountDownLatch(2);
        DefaultMQPushConsumer byTag = consumer("TagConsumer", MessageSelector.byTag("TagA"));
        byTag.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) { recv("TagConsumer", m); tagGot.countDown(); }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        DefaultMQPushConsumer bySql = consumer("SqlConsumer", MessageSelector.bySql("a >= 2"));
        bySql.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) { recv("SqlConsumer", m); sqlGot.countDown(); }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        byTag.start();
        bySql.start();
        boolean ok = tagGot.await(90, TimeUnit.SECONDS) & sqlGot.await(90, TimeUnit.SECONDS);
        Thread.sleep(6000);
        byTag.shutdown();
        bySql.shutdown();
        return ok;
    }
}
