package clientlogic;

import com.alibaba.fastjson.JSON;
import com.alibaba.fastjson.JSONArray;
import com.alibaba.fastjson.JSONObject;
import java.io.BufferedWriter;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.rocketmq.client.common.ThreadLocalIndex;
import org.apache.rocketmq.client.impl.producer.TopicPublishInfo;
import org.apache.rocketmq.client.latency.LatencyFaultToleranceImpl;
import org.apache.rocketmq.client.latency.MQFaultStrategy;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.common.protocol.route.QueueData;
import org.apache.rocketmq.common.protocol.route.TopicRouteData;

/**
 * Drives the unmodified 4.9.4 MQFaultStrategy, LatencyFaultToleranceImpl and TopicPublishInfo
 * through scripted operations on a virtual clock and writes what they answered.
 *
 * <p>The classes read System.currentTimeMillis(); the script's times are virtual. Between
 * operations the fault table holds virtual start timestamps. For each operation at virtual time
 * v we read the real clock r0, add (r0 - v) to every start timestamp, run the operation, read the
 * clock again and, if it moved, put the state captured before the attempt back and retry; if it
 * did not, every availability test inside the operation compared start timestamps with exactly
 * r0, i.e. with v, and we subtract (r0 - v) again. The two ThreadLocalIndex counters (the
 * publish info's sendWhichQueue and the fault table's whichItemWorst) are set through reflection
 * on this thread to the script's start values.
 */
public final class FaultCheck {
    static final Class<?> FAULT_ITEM;
    static final Method GET_START;
    static final Method SET_START;
    static final Method GET_LATENCY;
    static final Method GET_NAME;
    static final Method COMPUTE;
    static int retries;

    static {
        try {
            FAULT_ITEM = Class.forName("org.apache.rocketmq.client.latency.LatencyFaultToleranceImpl$FaultItem");
            GET_START = accessible(FAULT_ITEM.getMethod("getStartTimestamp"));
            SET_START = accessible(FAULT_ITEM.getMethod("setStartTimestamp", long.class));
            GET_LATENCY = accessible(FAULT_ITEM.getMethod("getCurrentLatency"));
            GET_NAME = accessible(FAULT_ITEM.getMethod("getName"));
            COMPUTE = accessible(MQFaultStrategy.class.getDeclaredMethod("computeNotAvailableDuration", long.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private FaultCheck() {
    }

    public static void main(String[] args) throws Exception {
        List<String> lines = Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8);
        try (BufferedWriter out = Files.newBufferedWriter(Paths.get(args[1]), StandardCharsets.UTF_8)) {
            for (String line : lines) {
                JSONObject script = JSON.parseObject(line);
                Map<String, Object> answer = "durations".equals(script.getString("kind")) ? durations(script) : new Run(script).run();
                out.write(Json.of(answer));
                out.write('\n');
            }
        }
        System.err.println("fault check: " + lines.size() + " scripts, " + retries + " operations retried after a clock tick");
    }

    static Method accessible(Method m) {
        m.setAccessible(true);
        return m;
    }

    static Object field(Object owner, String name) throws ReflectiveOperationException {
        Field f = owner.getClass().getDeclaredField(name);
        f.setAccessible(true);
        return f.get(owner);
    }

    static long[] longs(JSONArray a) {
        long[] out = new long[a.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = a.getLongValue(i);
        }
        return out;
    }

    static MQFaultStrategy strategy(JSONObject script) {
        MQFaultStrategy s = new MQFaultStrategy();
        s.setSendLatencyFaultEnable(script.getBooleanValue("enable"));
        JSONArray tables = script.getJSONArray("tables");
        if (tables != null) {
            s.setLatencyMax(longs(tables.getJSONArray(0)));
            s.setNotAvailableDuration(longs(tables.getJSONArray(1)));
        }
        return s;
    }

    static Map<String, Object> durations(JSONObject script) throws ReflectiveOperationException {
        MQFaultStrategy s = strategy(script);
        List<Object> got = new ArrayList<Object>();
        JSONArray latencies = script.getJSONArray("latencies");
        for (int i = 0; i < latencies.size(); i++) {
            got.add(COMPUTE.invoke(s, latencies.getLongValue(i)));
        }
        Map<String, Object> answer = new LinkedHashMap<String, Object>();
        answer.put("id", script.getIntValue("id"));
        answer.put("durations", got);
        return answer;
    }

    static final class Run {
        final JSONObject script;
        final MQFaultStrategy strategy;
        final LatencyFaultToleranceImpl lft;
        final ConcurrentHashMap<String, Object> table;
        final TopicPublishInfo info;
        final List<MessageQueue> queues = new ArrayList<MessageQueue>();
        final ThreadLocal<Integer> send;
        final ThreadLocal<Integer> worst;

        @SuppressWarnings("unchecked")
        Run(JSONObject script) throws ReflectiveOperationException {
            this.script = script;
            strategy = strategy(script);
            lft = (LatencyFaultToleranceImpl) field(strategy, "latencyFaultTolerance");
            table = (ConcurrentHashMap<String, Object>) field(lft, "faultItemTable");
            String topic = script.getString("topic");
            JSONArray mqs = script.getJSONArray("mqs");
            for (int i = 0; i < mqs.size(); i++) {
                queues.add(new MessageQueue(topic, mqs.getJSONArray(i).getString(0), mqs.getJSONArray(i).getIntValue(1)));
            }
            List<QueueData> queueDatas = new ArrayList<QueueData>();
            JSONArray route = script.getJSONArray("route");
            for (int i = 0; i < route.size(); i++) {
                QueueData qd = new QueueData();
                qd.setBrokerName(route.getJSONArray(i).getString(0));
                qd.setWriteQueueNums(route.getJSONArray(i).getIntValue(1));
                qd.setReadQueueNums(route.getJSONArray(i).getIntValue(1));
                qd.setPerm(6);
                queueDatas.add(qd);
            }
            TopicRouteData routeData = new TopicRouteData();
            routeData.setQueueDatas(queueDatas);
            info = new TopicPublishInfo();
            info.setMessageQueueList(new ArrayList<MessageQueue>(queues));
            info.setTopicRouteData(routeData);
            info.setHaveTopicRouterInfo(true);
            send = (ThreadLocal<Integer>) field(info.getSendWhichQueue(), "threadLocalIndex");
            worst = (ThreadLocal<Integer>) field(field(lft, "whichItemWorst"), "threadLocalIndex");
            send.set(script.getIntValue("send"));
            worst.set(script.getIntValue("worst"));
        }

        Map<String, Object> run() throws ReflectiveOperationException {
            List<Object> outs = new ArrayList<Object>();
            JSONArray ops = script.getJSONArray("ops");
            for (int i = 0; i < ops.size(); i++) {
                outs.add(op(ops.getJSONArray(i)));
            }
            Map<String, Object> answer = new LinkedHashMap<String, Object>();
            answer.put("id", script.getIntValue("id"));
            answer.put("out", outs);
            answer.put("final", snapshotView());
            return answer;
        }

        Object op(JSONArray op) throws ReflectiveOperationException {
            long v = op.getLongValue(0);
            if ("t".equals(op.getString(1))) {  // the table at rest holds virtual times
                return snapshotView();
            }
            while (true) {
                Snapshot before = new Snapshot();
                long r0 = System.currentTimeMillis();
                shift(r0 - v);
                Object answer = apply(op);
                long r1 = System.currentTimeMillis();
                if (r1 != r0) {
                    before.restore();
                    retries++;
                    continue;
                }
                shift(v - r0);
                return answer;
            }
        }

        Object apply(JSONArray op) throws ReflectiveOperationException {
            String kind = op.getString(1);
            switch (kind) {
                case "u":  // MQFaultStrategy.updateFaultItem(broker, latency, isolation)
                    strategy.updateFaultItem(op.getString(2), op.getLongValue(3), op.getBooleanValue(4));
                    return null;
                case "s": {  // MQFaultStrategy.selectOneMessageQueue(info, lastBrokerName)
                    MessageQueue mq = strategy.selectOneMessageQueue(info, op.getString(2));
                    int pos = -1;
                    for (int i = 0; i < info.getMessageQueueList().size(); i++) {
                        if (info.getMessageQueueList().get(i) == mq) {
                            pos = i;
                        }
                    }
                    List<Object> got = new ArrayList<Object>();
                    got.add(pos);
                    got.add(mq.getBrokerName());
                    got.add(mq.getQueueId());
                    return got;
                }
                case "d":  // LatencyFaultToleranceImpl.updateFaultItem(broker, latency, notAvailableDuration)
                    lft.updateFaultItem(op.getString(2), op.getLongValue(3), op.getLongValue(4));
                    return null;
                case "a":
                    return lft.isAvailable(op.getString(2));
                case "r":
                    lft.remove(op.getString(2));
                    return null;
                case "p":
                    return lft.pickOneAtLeast();
                default:
                    throw new IllegalStateException("unknown op " + kind);
            }
        }

        /** [sendWhichQueue value, whichItemWorst value, [[name, currentLatency, startTimestamp]...]]
         *  with the items in the table's iteration order. */
        List<Object> snapshotView() throws ReflectiveOperationException {
            List<Object> items = new ArrayList<Object>();
            Enumeration<Object> e = table.elements();
            while (e.hasMoreElements()) {
                Object item = e.nextElement();
                List<Object> row = new ArrayList<Object>();
                row.add(GET_NAME.invoke(item));
                row.add(GET_LATENCY.invoke(item));
                row.add(GET_START.invoke(item));
                items.add(row);
            }
            List<Object> view = new ArrayList<Object>();
            view.add(send.get());
            view.add(worst.get());
            view.add(items);
            return view;
        }

        void shift(long delta) throws ReflectiveOperationException {
            for (Object item : table.values()) {
                SET_START.invoke(item, (Long) GET_START.invoke(item) + delta);
            }
        }

        /** Everything an operation can change: the counters, the table (in iteration order, which
         *  re-inserting in that order reproduces) and the publish list's queue objects. */
        final class Snapshot {
            final Integer sendValue = send.get();
            final Integer worstValue = worst.get();
            final List<Object[]> items = new ArrayList<Object[]>();
            final List<MessageQueue> listed = new ArrayList<MessageQueue>(info.getMessageQueueList());
            final List<String> brokers = new ArrayList<String>();
            final List<Integer> queueIds = new ArrayList<Integer>();

            Snapshot() throws ReflectiveOperationException {
                Enumeration<Object> e = table.elements();
                while (e.hasMoreElements()) {
                    Object item = e.nextElement();
                    items.add(new Object[] {GET_NAME.invoke(item), GET_LATENCY.invoke(item), GET_START.invoke(item)});
                }
                for (MessageQueue mq : listed) {
                    brokers.add(mq.getBrokerName());
                    queueIds.add(mq.getQueueId());
                }
            }

            void restore() throws ReflectiveOperationException {
                send.set(sendValue);
                worst.set(worstValue);
                table.clear();
                for (Object[] row : items) {
                    lft.updateFaultItem((String) row[0], (Long) row[1], 0L);
                    SET_START.invoke(table.get(row[0]), row[2]);
                }
                for (int i = 0; i < listed.size(); i++) {
                    listed.get(i).setBrokerName(brokers.get(i));
                    listed.get(i).setQueueId(queueIds.get(i));
                }
                info.setMessageQueueList(new ArrayList<MessageQueue>(listed));
            }
        }
    }
}
