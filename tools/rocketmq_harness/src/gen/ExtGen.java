package gen;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import org.apache.rocketmq.common.filter.FilterAPI;
import org.apache.rocketmq.common.message.*;
import org.apache.rocketmq.store.*;
import org.apache.rocketmq.store.config.MessageStoreConfig;

/**
 * Harness: a store written by the real 4.9.4 DefaultMessageStore with enableConsumeQueueExt.
 * args: gen ROOT OUT_JSONL (write 42 messages) | check ROOT OUT_JSONL (reopen) | extend ROOT OUT_JSONL (reopen, put four);
 * then every unit, its ext unit and a pull per tag expression are written to OUT_JSONL
 */
public class ExtGen {
    static final InetSocketAddress STORE_HOST = new InetSocketAddress("127.0.0.1", 10911);
    static final InetSocketAddress BORN_HOST = new InetSocketAddress("127.0.0.1", 54321);
    static final String[][] QUEUES = {{"TopicExt", "0"}, {"TopicExt", "1"}, {"SCHEDULE_TOPIC_XXXX", "2"}};
    static final String[] EXPRESSIONS = {"*", "TagA", "TagB", "TagA || TagC", "TagNone"};

    static MessageStoreConfig config(String root) {
        MessageStoreConfig cfg = Harness.config(root, 64 * 1024, 50 * 20, 100, 200, 20914);
        cfg.setEnableConsumeQueueExt(true);
        cfg.setMappedFileSizeConsumeQueueExt(200);
        cfg.setCheckCRCOnRecover(true);
        return cfg;
    }

    public static void main(String[] args) {
        try {
            DefaultMessageStore store = Harness.open(config(args[1]));
            if (args[0].equals("extend")) {
                for (int i = 40; i < 44; i++) {
                    String tags = i % 4 == 0 ? "TagA" : i % 4 == 1 ? "TagB" : i % 4 == 2 ? "TagC" : null;
                    put(store, "TopicExt", i % 2, tags, "key-" + i, ("ext body " + i).getBytes(StandardCharsets.UTF_8), 0, i);
                }
            }
            if (args[0].equals("gen")) {
                for (int i = 0; i < 40; i++) {
                    String tags = i % 4 == 0 ? "TagA" : i % 4 == 1 ? "TagB" : i % 4 == 2 ? "TagC" : null;
                    put(store, "TopicExt", i % 2, tags, "key-" + i, ("ext body " + i).getBytes(StandardCharsets.UTF_8), 0, i);
                }
                for (int d = 0; d < 2; d++) {
                    put(store, "TopicExt", d, "TagA", "delay-" + d, ("delayed " + d).getBytes(StandardCharsets.UTF_8), 3, 100 + d);
                }
            }
            Harness.awaitDispatch(store);
            Thread.sleep(200);
            StringBuilder sb = new StringBuilder();
            for (String[] q : QUEUES) {
                ConsumeQueue cq = store.findConsumeQueue(q[0], Integer.parseInt(q[1]));
                long max = cq.getMaxOffsetInQueue();
                for (long off = cq.getMinOffsetInQueue(); off < max; off++) {
                    SelectMappedBufferResult b = cq.getIndexBuffer(off);
                    long phy = b.getByteBuffer().getLong(0);
                    int size = b.getByteBuffer().getInt(8);
                    long tags = b.getByteBuffer().getLong(12);
                    b.release();
                    ConsumeQueueExt.CqExtUnit u = cq.getExt(tags);
                    MessageExt m = store.lookMessageByOffset(phy);
                    sb.append(String.format("{\"kind\": \"unit\", \"topic\": \"%s\", \"queueId\": %s, \"queueOffset\": %d, "
                            + "\"commitLogOffset\": %d, \"size\": %d, \"tagsCodeField\": %d, \"isExtAddr\": %b, "
                            + "\"ext\": %s, \"msgTags\": %s, \"keys\": \"%s\", \"storeTimestamp\": %d}\n",
                        q[0], q[1], off, phy, size, tags, ConsumeQueueExt.isExtAddr(tags),
                        u == null ? "null" : String.format("{\"realOffset\": %d, \"size\": %d, \"tagsCode\": %d, \"msgStoreTime\": %d, \"bitMapSize\": %d}",
                            tags - Long.MIN_VALUE, u.getSize(), u.getTagsCode(), u.getMsgStoreTime(), u.getFilterBitMap() == null ? 0 : u.getFilterBitMap().length),
                        m.getTags() == null ? "null" : "\"" + m.getTags() + "\"", m.getKeys(), m.getStoreTimestamp()));
                }
                for (String expr : EXPRESSIONS) {
                    GetMessageResult r = store.getMessage("g", q[0], Integer.parseInt(q[1]), 0, 64,
                        new DefaultMessageFilter(FilterAPI.buildSubscriptionData(q[0], expr)));
                    List<Long> offs = new ArrayList<>();
                    for (java.nio.ByteBuffer bb : r.getMessageBufferList()) offs.add(MessageDecoder.decode(bb.slice(), false).getQueueOffset());
                    sb.append(String.format("{\"kind\": \"pull\", \"topic\": \"%s\", \"queueId\": %s, \"expression\": \"%s\", "
                            + "\"status\": \"%s\", \"nextBeginOffset\": %d, \"queueOffsets\": %s}\n",
                        q[0], q[1], expr.replace("|", "|"), r.getStatus(), r.getNextBeginOffset(), offs));
                    r.release();
                }
            }
            Files.write(Paths.get(args[2]), sb.toString().getBytes(StandardCharsets.UTF_8));
            System.err.println("maxPhy=" + store.getMaxPhyOffset());
            store.shutdown();
            System.exit(0);
        } catch (Throwable t) { t.printStackTrace(); System.exit(1); }
    }

    static int uniq = 0;

    static void put(DefaultMessageStore store, String topic, int queueId, String tags, String keys, byte[] body,
                    int delayLevel, int n) throws Exception {
        Message client = new Message(topic, tags, keys, 0, body, true);
        if (delayLevel > 0) client.setDelayTimeLevel(delayLevel);
        MessageAccessor.putProperty(client, MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX,
            String.format("7F000001%04X%08X%08X%04X", 12345, 0x18B4AAC2, n * 1000, (uniq++) & 0xFFFF));
        MessageExtBrokerInner inner = new MessageExtBrokerInner();
        inner.setTopic(topic);
        inner.setQueueId(queueId);
        inner.setBody(body);
        inner.setFlag(0);
        Map<String, String> props = MessageDecoder.string2messageProperties(MessageDecoder.messageProperties2String(client.getProperties()));
        MessageAccessor.setProperties(inner, props);
        inner.setBornTimestamp(1700000000000L + n * 1000L);
        inner.setBornHost(BORN_HOST);
        inner.setStoreHost(STORE_HOST);
        MessageAccessor.putProperty(inner, MessageConst.PROPERTY_CLUSTER, "DefaultCluster");
        String wait = props.remove(MessageConst.PROPERTY_WAIT_STORE_MSG_OK);
        inner.setPropertiesString(MessageDecoder.messageProperties2String(inner.getProperties()));
        if (wait != null) props.put(MessageConst.PROPERTY_WAIT_STORE_MSG_OK, wait);
        inner.setSysFlag(0);
        inner.setTagsCode(MessageExtBrokerInner.tagsString2tagsCode(null, inner.getTags()));
        PutMessageResult r = store.putMessage(inner);
        if (r == null || !r.isOk()) throw new IllegalStateException("put failed " + n + " " + r);
    }
}
