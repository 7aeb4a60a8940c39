package gen;

import java.io.File;
import java.net.InetSocketAddress;
import java.nio.file.*;
import java.util.*;
import org.apache.rocketmq.common.message.*;
import org.apache.rocketmq.store.*;

/**
 * Harness: open a COPY of a store written by pymq_ref with the real 4.9.4 DefaultMessageStore
 * (load = recovery, start = reput of anything not yet dispatched), then read everything back.
 * args: ROOT OUT_JSONL commitLogSize cqSize hashSlots indexNum
 */
public class CorpusCheck {
    public static void main(String[] a) {
        try { run(a); } catch (Throwable t) { t.printStackTrace(); System.exit(1); }
    }

    static void run(String[] a) throws Exception {
        String root = a[0];
        boolean abortBefore = new File(root, "abort").exists();
        DefaultMessageStore store = Harness.create(Harness.config(root, a, 2, 20915));
        boolean loaded = store.load();
        List<Map<String, Object>> out = new ArrayList<>();
        Map<String, Object> head = new LinkedHashMap<>();
        head.put("kind", "load");
        head.put("abortBefore", abortBefore);
        head.put("loaded", loaded);
        out.add(head);
        if (loaded) {
            store.start();
            Harness.awaitDispatch(store);
            Thread.sleep(100);
            dump(store, root, head, out);
            store.shutdown();
            // what the shutdown left in the checkpoint: physic, logics and index timestamps (3 longs)
            java.nio.ByteBuffer cp = java.nio.ByteBuffer.wrap(Files.readAllBytes(Paths.get(root, "checkpoint")));
            Map<String, Object> c = new LinkedHashMap<>();
            c.put("kind", "checkpoint");
            c.put("physicMsgTimestamp", cp.getLong(0));
            c.put("logicsMsgTimestamp", cp.getLong(8));
            c.put("indexMsgTimestamp", cp.getLong(16));
            out.add(c);
        }
        Harness.writeJsonl(out, a[1]);
        System.exit(0);
    }

    static void dump(DefaultMessageStore store, String root, Map<String, Object> head, List<Map<String, Object>> out) throws Exception {
        head.put("minPhyOffset", store.getMinPhyOffset());
        head.put("maxPhyOffset", store.getMaxPhyOffset());
        Map<String, Object> queues = new LinkedHashMap<>();
        head.put("queues", queues);
        File cqRoot = new File(root, "consumequeue");
        String[] topics = cqRoot.list();
        Arrays.sort(topics == null ? new String[0] : topics);
        Set<String> queried = new HashSet<>();
        for (String topic : topics == null ? new String[0] : topics) {
            String[] qids = new File(cqRoot, topic).list();
            Arrays.sort(qids);
            for (String qid : qids) {
                int q = Integer.parseInt(qid);
                ConsumeQueue cq = store.findConsumeQueue(topic, q);
                long min = cq.getMinOffsetInQueue(), max = cq.getMaxOffsetInQueue();
                queues.put(topic + "/" + q, Arrays.asList(min, max));
                for (long off = min; off < max; off++) {
                    SelectMappedBufferResult b = cq.getIndexBuffer(off);
                    if (b == null) continue;
                    long phy = b.getByteBuffer().getLong(0);
                    int size = b.getByteBuffer().getInt(8);
                    long tags = b.getByteBuffer().getLong(12);
                    b.release();
                    Map<String, Object> u = new LinkedHashMap<>();
                    u.put("kind", "unit");
                    u.put("topic", topic);
                    u.put("queueId", q);
                    u.put("queueOffset", off);
                    u.put("phyOffset", phy);
                    u.put("size", size);
                    u.put("tagsCode", tags);
                    MessageExt m = store.lookMessageByOffset(phy);
                    if (m == null) { u.put("message", null); out.add(u); continue; }
                    Map<String, Object> mm = new LinkedHashMap<>();
                    mm.put("topic", m.getTopic());
                    mm.put("queueId", m.getQueueId());
                    mm.put("queueOffset", m.getQueueOffset());
                    mm.put("phyOffset", m.getCommitLogOffset());
                    mm.put("storeSize", m.getStoreSize());
                    mm.put("sysFlag", m.getSysFlag());
                    mm.put("flag", m.getFlag());
                    mm.put("bodyCRC", m.getBodyCRC());
                    mm.put("reconsumeTimes", m.getReconsumeTimes());
                    mm.put("preparedTransactionOffset", m.getPreparedTransactionOffset());
                    mm.put("bornTimestamp", m.getBornTimestamp());
                    mm.put("storeTimestamp", m.getStoreTimestamp());
                    mm.put("bornHost", FixtureGen.hostStr((InetSocketAddress) m.getBornHost()));
                    mm.put("storeHost", FixtureGen.hostStr((InetSocketAddress) m.getStoreHost()));
                    mm.put("msgId", m.getMsgId());
                    mm.put("bodyBase64", Base64.getEncoder().encodeToString(m.getBody() == null ? new byte[0] : m.getBody()));
                    mm.put("properties", m.getProperties() == null ? null : new TreeMap<>(m.getProperties()));
                    u.put("message", mm);
                    out.add(u);
                    List<String> keys = new ArrayList<>();
                    if (m.getProperty(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX) != null)
                        keys.add(m.getProperty(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX));
                    if (m.getKeys() != null) for (String k : m.getKeys().split(MessageConst.KEY_SEPARATOR)) if (!k.isEmpty()) keys.add(k);
                    for (String k : keys) {
                        if (!queried.add(topic + "#" + k)) continue;
                        QueryMessageResult qr = store.queryMessage(topic, k, 64, 0, Long.MAX_VALUE);
                        List<Long> offs = new ArrayList<>();
                        for (java.nio.ByteBuffer bb : qr.getMessageBufferList()) offs.add(MessageDecoder.decode(bb.slice(), false).getCommitLogOffset());
                        qr.release();
                        Collections.sort(offs);
                        Map<String, Object> qm = new LinkedHashMap<>();
                        qm.put("kind", "query");
                        qm.put("topic", topic);
                        qm.put("key", k);
                        qm.put("phyOffsets", offs);
                        out.add(qm);
                    }
                }
            }
        }
    }
}
