package clientlogic;

import com.alibaba.fastjson.JSON;
import com.alibaba.fastjson.JSONArray;
import com.alibaba.fastjson.JSONObject;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.client.consumer.AllocateMessageQueueStrategy;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMachineRoomNearby;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragelyByCircle;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueByConfig;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueByMachineRoom;
import org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueConsistentHash;
import org.apache.rocketmq.common.consistenthash.HashFunction;
import org.apache.rocketmq.common.message.MessageQueue;

/**
 * Runs the unmodified 4.9.4 allocation strategies on the scenarios of an input JSON-lines file
 * (written by regenerate.py) and writes, per scenario, what they answered.
 *
 * <p>A scenario gives the topic's queues as route groups [topic, brokerName, readQueueNums]
 * (expanded to queues 0..n-1, then put in the order "perm" when given), the client ids, whether
 * to sort both lists as RebalanceImpl does, extra current client ids to try besides every member
 * of cidAll, and the strategies to build. Output per scenario: the sorted orders (as positions in
 * the raw lists), each strategy's getName(), and for each current client id either the positions
 * (in mqAll; for CONFIG in its configured list) of the queues returned, in the order returned, or
 * the exception class and message.
 */
public final class AllocateCheck {
    private AllocateCheck() {
    }

    public static void main(String[] args) throws IOException {
        List<String> lines = Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8);
        try (BufferedWriter out = Files.newBufferedWriter(Paths.get(args[1]), StandardCharsets.UTF_8)) {
            for (String line : lines) {
                out.write(Json.of(run(JSON.parseObject(line))));
                out.write('\n');
            }
        }
    }

    static Map<String, Object> run(JSONObject c) {
        List<MessageQueue> raw = null;
        JSONArray groups = c.getJSONArray("groups");
        if (groups != null) {
            raw = new ArrayList<MessageQueue>();
            for (int g = 0; g < groups.size(); g++) {
                JSONArray group = groups.getJSONArray(g);
                for (int q = 0; q < group.getIntValue(2); q++) {
                    raw.add(new MessageQueue(group.getString(0), group.getString(1), q));
                }
            }
            JSONArray perm = c.getJSONArray("perm");
            if (perm != null) {
                List<MessageQueue> permuted = new ArrayList<MessageQueue>();
                for (int i = 0; i < perm.size(); i++) {
                    permuted.add(raw.get(perm.getIntValue(i)));
                }
                raw = permuted;
            }
        }
        List<String> rawCids = null;
        JSONArray cids = c.getJSONArray("cids");
        if (cids != null) {
            rawCids = new ArrayList<String>();
            for (int i = 0; i < cids.size(); i++) {
                rawCids.add(cids.getString(i));
            }
        }
        List<MessageQueue> mqAll = raw == null ? null : new ArrayList<MessageQueue>(raw);
        List<String> cidAll = rawCids == null ? null : new ArrayList<String>(rawCids);
        if (c.getBooleanValue("sort")) {
            if (mqAll != null) {
                Collections.sort(mqAll);
            }
            if (cidAll != null) {
                Collections.sort(cidAll);
            }
        }
        Map<String, Object> result = new LinkedHashMap<String, Object>();
        result.put("id", c.getIntValue("id"));
        result.put("mq_order", positions(mqAll, raw));
        result.put("cid_order", positions(cidAll, rawCids));

        List<String> queries = new ArrayList<String>();
        if (cidAll != null) {
            queries.addAll(cidAll);
        }
        JSONArray extra = c.getJSONArray("extra");
        for (int i = 0; i < extra.size(); i++) {
            queries.add(extra.getString(i));
        }
        String group = c.getString("group");
        List<Object> strategies = new ArrayList<Object>();
        JSONArray specs = c.getJSONArray("strategies");
        for (int s = 0; s < specs.size(); s++) {
            Map<String, Object> answer = new LinkedHashMap<String, Object>();
            AllocateMessageQueueStrategy strategy;
            List<MessageQueue> config = null;
            try {
                JSONArray spec = specs.getJSONArray(s);
                if ("CONFIG".equals(spec.getString(0))) {
                    config = queues(spec.getJSONArray(1));
                }
                strategy = build(spec, config);
            } catch (RuntimeException e) {
                answer.put("error", error(e));
                strategies.add(answer);
                continue;
            }
            answer.put("name", strategy.getName());
            List<Object> perQuery = new ArrayList<Object>();
            for (String cid : queries) {
                try {
                    List<MessageQueue> got = strategy.allocate(group, cid, mqAll, cidAll);
                    perQuery.add(positions(got, config != null ? config : mqAll));
                } catch (RuntimeException e) {
                    perQuery.add(error(e));
                }
            }
            answer.put("results", perQuery);
            strategies.add(answer);
        }
        result.put("strategies", strategies);
        return result;
    }

    static Map<String, Object> error(RuntimeException e) {
        Map<String, Object> err = new LinkedHashMap<String, Object>();
        err.put("class", e.getClass().getSimpleName());
        err.put("message", e.getMessage());
        return err;
    }

    /** Where each element of {@code got} sits in {@code in}, by identity (null for a null list). */
    static List<Object> positions(List<?> got, List<?> in) {
        if (got == null) {
            return null;
        }
        List<Object> at = new ArrayList<Object>();
        for (Object o : got) {
            int found = -1;
            for (int i = 0; i < in.size(); i++) {
                if (in.get(i) == o) {
                    found = i;
                    break;
                }
            }
            if (found < 0) {
                throw new IllegalStateException("returned element not among the inputs: " + o);
            }
            at.add(found);
        }
        return at;
    }

    static List<MessageQueue> queues(JSONArray triples) {
        List<MessageQueue> list = new ArrayList<MessageQueue>();
        for (int i = 0; i < triples.size(); i++) {
            JSONArray t = triples.getJSONArray(i);
            list.add(new MessageQueue(t.getString(0), t.getString(1), t.getIntValue(2)));
        }
        return list;
    }

    static AllocateMessageQueueStrategy build(JSONArray spec, List<MessageQueue> config) {
        String kind = spec.getString(0);
        switch (kind) {
            case "AVG":
                return new AllocateMessageQueueAveragely();
            case "AVG_BY_CIRCLE":
                return new AllocateMessageQueueAveragelyByCircle();
            case "CONSISTENT_HASH":
                return new AllocateMessageQueueConsistentHash(spec.getIntValue(1), hash(spec.getString(2)));
            case "CONFIG": {
                AllocateMessageQueueByConfig s = new AllocateMessageQueueByConfig();
                s.setMessageQueueList(config);
                return s;
            }
            case "MACHINE_ROOM": {
                AllocateMessageQueueByMachineRoom s = new AllocateMessageQueueByMachineRoom();
                JSONArray idcs = spec.getJSONArray(1);
                HashSet<String> set = new HashSet<String>();
                for (int i = 0; i < idcs.size(); i++) {
                    set.add(idcs.getString(i));
                }
                s.setConsumeridcs(set);
                return s;
            }
            case "MACHINE_ROOM_NEARBY":
                return new AllocateMachineRoomNearby(build(spec.getJSONArray(1), null), new PrefixResolver(spec.getString(2)));
            default:
                throw new IllegalStateException("unknown strategy " + kind);
        }
    }

    /** null: the default MD5 hash; "hashCode": String.hashCode() (negative ring positions);
     *  "hashCode&63": only 64 ring positions, so points collide and replace each other. */
    static HashFunction hash(String name) {
        if (name == null) {
            return null;
        }
        switch (name) {
            case "hashCode":
                return key -> (long) key.hashCode();
            case "hashCode&63":
                return key -> (long) (key.hashCode() & 63);
            default:
                throw new IllegalStateException("unknown hash " + name);
        }
    }

    /** The machine room is the text before the first separator (all of it when there is none). */
    static final class PrefixResolver implements AllocateMachineRoomNearby.MachineRoomResolver {
        private final String separator;

        PrefixResolver(String separator) {
            this.separator = separator;
        }

        private String room(String name) {
            int at = name.indexOf(separator);
            return at < 0 ? name : name.substring(0, at);
        }

        @Override
        public String brokerDeployIn(MessageQueue messageQueue) {
            return room(messageQueue.getBrokerName());
        }

        @Override
        public String consumerDeployIn(String clientID) {
            return room(clientID);
        }
    }
}
