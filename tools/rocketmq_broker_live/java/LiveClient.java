import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;

import org.apache.rocketmq.client.consumer.*;
import org.apache.rocketmq.client.consumer.listener.*;
import org.apache.rocketmq.client.producer.*;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.*;
import org.apache.rocketmq.common.MixAll;

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
            case "async-oneway-batch": ok = asyncOnewayBatch(); break;
            case "request-reply": ok = requestReply(); break;
            case "transaction": ok = transaction(); break;
            case "retry-dlq": ok = retryDlq(); break;
            case "orderly": ok = orderly(); break;
            case "lite-pull": ok = litePull(); break;
            case "delay": ok = delay(); break;
            case "tag-sql": ok = tagSql(); break;
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

    /** The reply to a request message: the cluster's reply topic and the request's correlation properties. */
    static Message replyTo(MessageExt request, byte[] body) {
        Message reply = new Message(MixAll.getReplyTopic(request.getProperty(MessageConst.PROPERTY_CLUSTER)), body);
        MessageAccessor.putProperty(reply, MessageConst.PROPERTY_MESSAGE_TYPE, MixAll.REPLY_MESSAGE_FLAG);
        for (String k : new String[] {MessageConst.PROPERTY_CORRELATION_ID, MessageConst.PROPERTY_MESSAGE_REPLY_TO_CLIENT,
            MessageConst.PROPERTY_MESSAGE_TTL}) {
            if (request.getProperty(k) != null) MessageAccessor.putProperty(reply, k, request.getProperty(k));
        }
        return reply;
    }

    static String body(MessageExt m) { return new String(m.getBody(), StandardCharsets.UTF_8); }

    /** Wait until the push consumer of the group saw every key of want (or 60 s). */
    static Set<String> consumeKeys(String group, String expr, Set<String> want, int seconds) throws Exception {
        Set<String> got = ConcurrentHashMap.newKeySet();
        CountDownLatch done = new CountDownLatch(1);
        DefaultMQPushConsumer c = pushConsumer(group, expr);
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                System.out.println("RECV " + m.getKeys() + " tags=" + m.getTags() + " len=" + m.getBody().length
                    + " q=" + m.getQueueId() + " off=" + m.getQueueOffset());
                got.add(m.getKeys());
            }
            if (got.containsAll(want)) done.countDown();
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        done.await(seconds, TimeUnit.SECONDS);
        Thread.sleep(1000); // anything unwanted would arrive now
        c.shutdown();
        System.out.println("RECEIVED " + new TreeSet<>(got));
        return got;
    }

    /** async sends, oneway sends, one batch, one compressed body (> 4 KiB); a push consumer gets them all. */
    static boolean asyncOnewayBatch() throws Exception {
        DefaultMQProducer p = producer("PG_" + topic);
        Set<String> want = new HashSet<>();
        CountDownLatch acks = new CountDownLatch(n);
        AtomicInteger okAsync = new AtomicInteger();
        for (int i = 0; i < n; i++) {
            p.send(new Message(topic, "TagA", "a" + i, ("async " + i).getBytes(StandardCharsets.UTF_8)), new SendCallback() {
                public void onSuccess(SendResult r) { okAsync.incrementAndGet(); acks.countDown(); }
                public void onException(Throwable e) { System.out.println("ASYNC-FAIL " + e); acks.countDown(); }
            });
            want.add("a" + i);
        }
        boolean acked = acks.await(30, TimeUnit.SECONDS);
        System.out.println("ASYNC acked=" + okAsync.get());
        for (int i = 0; i < n; i++) {
            p.sendOneway(new Message(topic, "TagA", "o" + i, ("oneway " + i).getBytes(StandardCharsets.UTF_8)));
            want.add("o" + i);
        }
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            batch.add(new Message(topic, "TagA", "b" + i, ("batch " + i).getBytes(StandardCharsets.UTF_8)));
            want.add("b" + i);
        }
        SendResult br = p.send(batch);
        System.out.println("BATCH " + br.getSendStatus() + " q=" + br.getMessageQueue().getQueueId() + " off=" + br.getQueueOffset());
        byte[] big = new byte[8192];
        for (int i = 0; i < big.length; i++) big[i] = (byte) ('a' + i % 7);
        SendResult cr = p.send(new Message(topic, "TagA", "z0", big));
        System.out.println("COMPRESSED " + cr.getSendStatus());
        want.add("z0");
        p.shutdown();
        Set<String> got = consumeKeys("CG_" + topic, "*", want, 60);
        return acked && okAsync.get() == n && br.getSendStatus() == SendStatus.SEND_OK && got.containsAll(want);
    }

    /** DefaultMQProducer.request with a callback: a responder consumer replies (SEND_REPLY_MESSAGE_V2) and the
     *  broker pushes the reply to the requester (PUSH_REPLY_MESSAGE_TO_CLIENT). (4.9.4's synchronous
     *  request(msg, timeout) hands back the request itself once it is sent, so it cannot be used.) */
    static boolean requestReply() throws Exception {
        DefaultMQProducer responderProducer = producer("PG_RESP_" + topic);
        // the topic is created by another producer: the requester's first request must find no route, which
        // makes it send its heartbeat at once (prepareSendRequest) so that the broker can push replies to it
        responderProducer.send(new Message(topic, "TagA", "warm", "creates the topic".getBytes(StandardCharsets.UTF_8)));
        DefaultMQProducer requester = producer("PG_REQ_" + topic);
        DefaultMQPushConsumer responder = pushConsumer("CG_RESP_" + topic, "*");
        responder.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                if (m.getProperty(MessageConst.PROPERTY_MESSAGE_REPLY_TO_CLIENT) == null) continue;
                try {
                    SendResult r = responderProducer.send(replyTo(m, ("reply to " + body(m)).getBytes(StandardCharsets.UTF_8)));
                    System.out.println("REPLIED " + r.getSendStatus());
                } catch (Exception e) {
                    System.out.println("REPLY-FAIL " + e);
                }
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        responder.start();
        AtomicInteger ok = new AtomicInteger();
        CountDownLatch answers = new CountDownLatch(n);
        for (int i = 0; i < n; i++) {
            final String expect = "reply to question " + i;
            requester.request(new Message(topic, "TagA", "r" + i, ("question " + i).getBytes(StandardCharsets.UTF_8)),
                new RequestCallback() {
                    public void onSuccess(Message answer) {
                        String text = new String(answer.getBody(), StandardCharsets.UTF_8);
                        System.out.println("ANSWER " + text);
                        if (text.equals(expect)) ok.incrementAndGet();
                        answers.countDown();
                    }
                    public void onException(Throwable e) { System.out.println("REQUEST-FAIL " + e); answers.countDown(); }
                }, 60000);
        }
        answers.await(90, TimeUnit.SECONDS);
        requester.shutdown();
        responder.shutdown();
        responderProducer.shutdown();
        return ok.get() == n;
    }

    /** t0 committed at once, t1 rolled back, t2 UNKNOW until the broker checks back (then committed). */
    static boolean transaction() throws Exception {
        TransactionMQProducer p = new TransactionMQProducer("PG_TX_" + topic);
        p.setNamesrvAddr(ns);
        p.setInstanceName("tx-" + System.nanoTime());
        AtomicInteger checks = new AtomicInteger();
        p.setTransactionListener(new TransactionListener() {
            public LocalTransactionState executeLocalTransaction(Message msg, Object arg) {
                String k = msg.getKeys();
                return k.equals("t0") ? LocalTransactionState.COMMIT_MESSAGE
                    : k.equals("t1") ? LocalTransactionState.ROLLBACK_MESSAGE : LocalTransactionState.UNKNOW;
            }
            public LocalTransactionState checkLocalTransaction(MessageExt msg) {
                checks.incrementAndGet();
                System.out.println("CHECKED " + msg.getKeys() + " " + msg.getTransactionId());
                return LocalTransactionState.COMMIT_MESSAGE;
            }
        });
        p.start();
        for (int i = 0; i < 3; i++) {
            TransactionSendResult r = p.sendMessageInTransaction(new Message(topic, "TagA", "t" + i, ("tx " + i).getBytes(StandardCharsets.UTF_8)), null);
            System.out.println("TX-SENT t" + i + " " + r.getSendStatus() + " " + r.getLocalTransactionState());
        }
        Set<String> got = consumeKeys("CG_TX_" + topic, "*", new HashSet<>(Arrays.asList("t0", "t2")), 90);
        p.shutdown();
        System.out.println("CHECKS " + checks.get());
        return got.contains("t0") && got.contains("t2") && !got.contains("t1") && checks.get() >= 1;
    }

    /** RECONSUME_LATER twice with maxReconsumeTimes=1: once to %RETRY%, then to %DLQ% (read back with a lite pull consumer). */
    static boolean retryDlq() throws Exception {
        DefaultMQProducer p = producer("PG_" + topic);
        p.send(new Message(topic, "TagA", "d0", "doomed".getBytes(StandardCharsets.UTF_8)));
        p.shutdown();
        String group = "CG_RETRY_" + topic;
        AtomicInteger attempts = new AtomicInteger();
        DefaultMQPushConsumer c = pushConsumer(group, "*");
        c.setMaxReconsumeTimes(1);
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                System.out.println("ATTEMPT " + m.getKeys() + " reconsume=" + m.getReconsumeTimes() + " topic=" + m.getTopic()
                    + " retryTopic=" + m.getProperty("RETRY_TOPIC"));
                attempts.incrementAndGet();
            }
            ctx.setDelayLevelWhenNextConsume(1);
            return ConsumeConcurrentlyStatus.RECONSUME_LATER;
        });
        c.start();
        long deadline = System.currentTimeMillis() + 60000;
        while (attempts.get() < 2 && System.currentTimeMillis() < deadline) Thread.sleep(200);
        Thread.sleep(2000);
        c.shutdown();
        DefaultLitePullConsumer dlq = new DefaultLitePullConsumer("CG_DLQ_READER_" + topic);
        dlq.setNamesrvAddr(ns);
        dlq.setInstanceName("dlq-" + System.nanoTime());
        dlq.start();
        String dlqTopic = MixAll.DLQ_GROUP_TOPIC_PREFIX + group;
        boolean found = false;
        try {
            Collection<MessageQueue> mqs = dlq.fetchMessageQueues(dlqTopic);
            dlq.assign(mqs);
            for (MessageQueue mq : mqs) dlq.seek(mq, 0);
            long end = System.currentTimeMillis() + 20000;
            while (!found && System.currentTimeMillis() < end) {
                for (MessageExt m : dlq.poll(1000)) {
                    System.out.println("DLQ " + m.getKeys() + " reconsume=" + m.getReconsumeTimes() + " topic=" + m.getTopic());
                    found |= "d0".equals(m.getKeys());
                }
            }
        } finally {
            dlq.shutdown();
        }
        System.out.println("ATTEMPTS " + attempts.get());
        return attempts.get() == 2 && found;
    }

    /** Orderly: keys k<i> to queue i%4 in order; two orderly consumers of one group (the second joins, a rebalance). */
    static boolean orderly() throws Exception {
        DefaultMQProducer p = producer("PG_" + topic);
        int sent = 0;
        for (int i = 0; i < n; i++) {
            SendResult r = p.send(new Message(topic, "TagA", "k" + i, String.valueOf(i).getBytes(StandardCharsets.UTF_8)),
                (mqs, msg, arg) -> mqs.get((Integer) arg % mqs.size()), i);
            if (r.getSendStatus() == SendStatus.SEND_OK) sent++;
        }
        p.shutdown();
        Map<Integer, List<Integer>> seen = new ConcurrentHashMap<>();
        AtomicInteger total = new AtomicInteger();
        List<DefaultMQPushConsumer> consumers = new ArrayList<>();
        for (int c = 0; c < 2; c++) {
            DefaultMQPushConsumer pc = pushConsumer("CG_ORDER_" + topic, "*");
            pc.registerMessageListener((MessageListenerOrderly) (msgs, ctx) -> {
                for (MessageExt m : msgs) {
                    seen.computeIfAbsent(m.getQueueId(), q -> Collections.synchronizedList(new ArrayList<>())).add(Integer.parseInt(body(m)));
                    total.incrementAndGet();
                }
                return ConsumeOrderlyStatus.SUCCESS;
            });
            pc.start();
            consumers.add(pc);
            if (c == 0) Thread.sleep(1500);
        }
        long deadline = System.currentTimeMillis() + 60000;
        while (total.get() < n && System.currentTimeMillis() < deadline) Thread.sleep(200);
        for (DefaultMQPushConsumer pc : consumers) pc.shutdown();
        boolean inOrder = true;
        for (Map.Entry<Integer, List<Integer>> e : seen.entrySet()) {
            List<Integer> l = e.getValue();
            for (int i = 1; i < l.size(); i++) if (l.get(i) < l.get(i - 1)) inOrder = false;
            System.out.println("QUEUE " + e.getKey() + " " + l);
        }
        return sent == n && total.get() >= n && inOrder;
    }

    /** DefaultLitePullConsumer: subscribe + poll, then assign + offsetForTimestamp (SEARCH_OFFSET_BY_TIMESTAMP) + seek. */
    static boolean litePull() throws Exception {
        DefaultMQProducer p = producer("PG_" + topic);
        long before = System.currentTimeMillis();
        for (int i = 0; i < n; i++) p.send(new Message(topic, "TagA", "l" + i, ("lite " + i).getBytes(StandardCharsets.UTF_8)));
        p.shutdown();
        DefaultLitePullConsumer c = new DefaultLitePullConsumer("CG_LITE_" + topic);
        c.setNamesrvAddr(ns);
        c.setInstanceName("lite-" + System.nanoTime());
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe(topic, "*");
        c.start();
        Set<String> got = new HashSet<>();
        long end = System.currentTimeMillis() + 40000;
        while (got.size() < n && System.currentTimeMillis() < end) for (MessageExt m : c.poll(1000)) got.add(m.getKeys());
        c.shutdown();
        System.out.println("LITE-SUBSCRIBED " + got.size());
        DefaultLitePullConsumer a = new DefaultLitePullConsumer("CG_LITE_ASSIGN_" + topic);
        a.setNamesrvAddr(ns);
        a.setInstanceName("lite-a-" + System.nanoTime());
        a.setAutoCommit(false);
        a.start();
        Collection<MessageQueue> mqs = a.fetchMessageQueues(topic);
        a.assign(mqs);
        long fromTime = 0;
        for (MessageQueue mq : mqs) {
            long off = a.offsetForTimestamp(mq, before - 60000);
            System.out.println("OFFSET-FOR-TIME q=" + mq.getQueueId() + " " + off);
            fromTime += off;
            a.seek(mq, off);
        }
        Set<String> again = new HashSet<>();
        end = System.currentTimeMillis() + 20000;
        while (again.size() < n && System.currentTimeMillis() < end) for (MessageExt m : a.poll(1000)) again.add(m.getKeys());
        a.shutdown();
        System.out.println("LITE-ASSIGNED " + again.size());
        return got.size() == n && again.size() == n && fromTime == 0;
    }

    /** Delay level 2 (5 s): the consumer gets the message only after it is due. */
    static boolean delay() throws Exception {
        DefaultMQProducer p = producer("PG_" + topic);
        Message m = new Message(topic, "TagA", "late", "later".getBytes(StandardCharsets.UTF_8));
        m.setDelayTimeLevel(2);
        long sentAt = System.currentTimeMillis();
        p.send(m);
        p.shutdown();
        AtomicLong at = new AtomicLong();
        CountDownLatch done = new CountDownLatch(1);
        DefaultMQPushConsumer c = pushConsumer("CG_DELAY_" + topic, "*");
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt x : msgs) {
                System.out.println("RECV " + x.getKeys() + " after " + (System.currentTimeMillis() - sentAt) + " ms, delayLevel=" + x.getProperty("DELAY"));
                at.set(System.currentTimeMillis());
            }
            done.countDown();
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        boolean ok = done.await(60, TimeUnit.SECONDS);
        c.shutdown();
        return ok && at.get() - sentAt >= 4000;
    }

    /** Tag expression "TagA || TagB" and an SQL92 selector "a > 5" (needs enablePropertyFilter=true). */
    static boolean tagSql() throws Exception {
        DefaultMQProducer p = producer("PG_" + topic);
        String[] tags = {"TagA", "TagB", "TagC"};
        for (int i = 0; i < 9; i++) {
            Message m = new Message(topic, tags[i % 3], "s" + i, ("sel " + i).getBytes(StandardCharsets.UTF_8));
            m.putUserProperty("a", String.valueOf(i));
            p.send(m);
        }
        p.shutdown();
        Set<String> tagWant = new HashSet<>(Arrays.asList("s0", "s1", "s3", "s4", "s6", "s7"));
        Set<String> byTag = consumeKeys("CG_TAG_" + topic, "TagA || TagB", tagWant, 40);
        Set<String> sqlWant = new HashSet<>(Arrays.asList("s6", "s7", "s8"));
        Set<String> bySql = new HashSet<>();
        CountDownLatch done = new CountDownLatch(1);
        DefaultMQPushConsumer c = new DefaultMQPushConsumer("CG_SQL_" + topic);
        c.setNamesrvAddr(ns);
        c.setInstanceName("sql-" + System.nanoTime());
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.subscribe(topic, MessageSelector.bySql("a > 5"));
        c.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            synchronized (bySql) { for (MessageExt m : msgs) bySql.add(m.getKeys()); if (bySql.containsAll(sqlWant)) done.countDown(); }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        c.start();
        done.await(40, TimeUnit.SECONDS);
        Thread.sleep(1000);
        c.shutdown();
        System.out.println("SQL " + new TreeSet<>(bySql));
        return byTag.equals(tagWant) && bySql.equals(sqlWant);
    }
}
