package gen;

import java.io.*;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.common.UtilAll;
import org.apache.rocketmq.common.message.*;
import org.apache.rocketmq.common.sysflag.MessageSysFlag;
import org.apache.rocketmq.store.*;
import org.apache.rocketmq.store.config.FlushDiskType;
import org.apache.rocketmq.store.config.MessageStoreConfig;
import org.apache.rocketmq.store.stats.BrokerStatsManager;

/**
 * Harness: drives the real, unmodified RocketMQ 4.9.4 DefaultMessageStore.
 * Mimics what the 4.9.4 client (DefaultMQProducerImpl) + broker (SendMessageProcessor) do before
 * calling MessageStore#putMessage / putMessages.
 */
public class FixtureGen {
    static final String CLUSTER = "DefaultCluster";
    static final long BORN_BASE = 1700000000000L;
    static final InetSocketAddress STORE_HOST = new InetSocketAddress("127.0.0.1", 10911);
    static final InetSocketAddress BORN_HOST = new InetSocketAddress("127.0.0.1", 54321);

    static int uniqCounter = 0;

    static String uniq(int i) {
        // deterministic stand-in for MessageClientIDSetter.createUniqID(): ip(4) pid(2) clhash(4) timediff(4) counter(2)
        return String.format("7F000001%04X%08X%08X%04X", 12345, 0x18B4AAC2, i * 1000, (uniqCounter++) & 0xFFFF);
    }

    static byte[] body(int i) {
        int m = i % 10;
        int len;
        if (m == 0) len = 0;
        else if (m == 1) len = 5;
        else if (m == 2) len = 17;
        else len = 1024 + (i * 211) % 2048; // 1 KiB .. 3 KiB
        StringBuilder sb = new StringBuilder();
        String seed = "msg-" + i + "|";
        while (sb.length() < len) sb.append(seed).append((char) ('a' + (sb.length() / seed.length()) % 26));
        return sb.substring(0, len).getBytes(StandardCharsets.US_ASCII);
    }

    /** result record for messages.jsonl */
    static List<Map<String, Object>> out = new ArrayList<>();

    public static void main(String[] args) {
        try { run(args); } catch (Throwable t) { t.printStackTrace(); System.exit(1); }
    }

    static void run(String[] args) throws Exception {
        String root = args[0];
        MessageStoreConfig cfg = new MessageStoreConfig();
        cfg.setStorePathRootDir(root);
        cfg.setMappedFileSizeCommitLog(64 * 1024);
        cfg.setMappedFileSizeConsumeQueue(50 * 20);
        cfg.setMaxHashSlotNum(100);
        cfg.setMaxIndexNum(200);
        cfg.setFlushDiskType(FlushDiskType.ASYNC_FLUSH);
        cfg.setHaListenPort(20912);
        BrokerConfig bc = new BrokerConfig();
        bc.setBrokerClusterName(CLUSTER);
        DefaultMessageStore store = new DefaultMessageStore(cfg, new BrokerStatsManager(CLUSTER, true),
            (topic, queueId, logicOffset, tagsCode, msgStoreTime, filterBitMap, properties) -> { }, bc);
        if (!store.load()) throw new IllegalStateException("load failed");
        store.start();

        int seq = 0;
        // 1. plain messages
        for (int i = 0; i < 120; i++) {
            String tags = (i % 3 == 0) ? "TagA" : (i % 3 == 1) ? "TagB" : null;
            String keys = (i % 7 == 3) ? ("key-" + i + " alt-" + i) : ("key-" + i);
            int queue = (i % 2 == 0) ? 0 : 1 + (i / 2) % 3;
            Message m = new Message("TopicTest", tags, keys, 0, body(i), true);
            if (i % 25 == 5) MessageAccessor.putProperty(m, "userProp", "value-" + i);
            put(store, seq++, "plain", m, queue, BORN_HOST, STORE_HOST, 0, 0, i);
        }
        // 2. unicode
        {
            Message m = new Message("TopicTest", "订单", "你好", 0, "你好，世界 ✓ 🚀 héllo".getBytes(StandardCharsets.UTF_8), true);
            put(store, seq++, "unicode", m, 1, BORN_HOST, STORE_HOST, 0, 0, 1000);
            Message m2 = new Message("TopicTest", "TagA", "ключ schlüssel", 0, "Grüße aus Köln".getBytes(StandardCharsets.UTF_8), true);
            MessageAccessor.putProperty(m2, "备注", "值 ✓ émoji 🚀");
            put(store, seq++, "unicode", m2, 2, BORN_HOST, STORE_HOST, 0, 0, 1001);
        }
        // 3. IPv6 born host, then IPv6 born + store host
        {
            Message m = new Message("TopicTest", "TagB", "key-ipv6-born", 0, "born over ipv6".getBytes(StandardCharsets.UTF_8), true);
            put(store, seq++, "ipv6-born", m, 3, new InetSocketAddress("::1", 50000), STORE_HOST, 0, 0, 1002);
            Message m2 = new Message("TopicTest", "TagA", "key-ipv6-both", 0, "born and stored over ipv6".getBytes(StandardCharsets.UTF_8), true);
            put(store, seq++, "ipv6-born-store", m2, 0, new InetSocketAddress("fe80::1", 50001), new InetSocketAddress("::1", 10911), 0, 0, 1003);
        }
        // 4. flag / reconsumeTimes / compressed (client-style zlib, sysFlag COMPRESSED|ZLIB)
        {
            Message m = new Message("TopicTest", "TagB", "key-flag", 7, "flag=7 reconsume=2".getBytes(StandardCharsets.UTF_8), true);
            put(store, seq++, "flag-reconsume", m, 1, BORN_HOST, STORE_HOST, 0, 2, 1004);
            StringBuilder sb = new StringBuilder();
            for (int k = 0; k < 400; k++) sb.append("compressible line ").append(k % 10).append('\n');
            byte[] raw = sb.toString().getBytes(StandardCharsets.US_ASCII);
            byte[] z = UtilAll.compress(raw, 5);
            Message m2 = new Message("TopicTest", "TagA", "key-compressed", 0, z, true);
            put(store, seq++, "compressed-zlib", m2, 2, BORN_HOST, STORE_HOST,
                MessageSysFlag.COMPRESSED_FLAG | MessageSysFlag.COMPRESSION_ZLIB_TYPE, 0, 1005);
        }
        // 5. delayed messages (DELAY=3)
        for (int d = 0; d < 3; d++) {
            Message m = new Message("TopicTest", "TagDelay", "key-delay-" + d, 0, ("delayed " + d).getBytes(StandardCharsets.UTF_8), true);
            m.setDelayTimeLevel(3);
            put(store, seq++, "delay", m, d, BORN_HOST, STORE_HOST, 0, 0, 1006 + d);
        }
        // 6. one batch of 3 messages on TopicTest queue 3
        seq = putBatch(store, seq);
        // 7. a second topic, so consumequeue has more than one topic directory
        for (int i = 0; i < 3; i++) {
            Message m = new Message("OtherTopic", i == 1 ? null : "TagX", "other-" + i, 0, ("other " + i).getBytes(StandardCharsets.UTF_8), true);
            put(store, seq++, "other-topic", m, 0, BORN_HOST, STORE_HOST, 0, 0, 1020 + i);
        }

        long t0 = System.currentTimeMillis();
        while (store.dispatchBehindBytes() != 0) {
            Thread.sleep(10);
            if (System.currentTimeMillis() - t0 > 5000) throw new IllegalStateException("dispatch stuck");
        }
        Thread.sleep(200);
        verify(store);
        System.err.println("maxPhyOffset=" + store.getMaxPhyOffset() + " elapsed since start ok; shutting down");
        store.shutdown();
        writeJsonl(args[1]);
        System.err.println("wrote " + out.size() + " records");
        System.exit(0);
    }

    static void put(DefaultMessageStore store, int seq, String kind, Message clientMsg, int queueId,
                    InetSocketAddress born, InetSocketAddress storeHost, int clientSysFlag, int reconsume, int idSeed) throws Exception {
        // ---- client side (DefaultMQProducerImpl.sendKernelImpl) ----
        MessageAccessor.putProperty(clientMsg, MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, uniq(idSeed));
        String headerProps = MessageDecoder.messageProperties2String(clientMsg.getProperties());
        long bornTs = BORN_BASE + idSeed * 1000L;

        // ---- broker side (SendMessageProcessor.asyncSendMessage) ----
        MessageExtBrokerInner msgInner = new MessageExtBrokerInner();
        msgInner.setTopic(clientMsg.getTopic());
        msgInner.setQueueId(queueId);
        msgInner.setBody(clientMsg.getBody());
        msgInner.setFlag(clientMsg.getFlag());
        Map<String, String> origProps = MessageDecoder.string2messageProperties(headerProps);
        MessageAccessor.setProperties(msgInner, origProps);
        msgInner.setBornTimestamp(bornTs);
        msgInner.setBornHost(born);
        msgInner.setStoreHost(storeHost);
        msgInner.setReconsumeTimes(reconsume);
        MessageAccessor.putProperty(msgInner, MessageConst.PROPERTY_CLUSTER, CLUSTER);
        if (origProps.containsKey(MessageConst.PROPERTY_WAIT_STORE_MSG_OK)) {
            String w = origProps.remove(MessageConst.PROPERTY_WAIT_STORE_MSG_OK);
            msgInner.setPropertiesString(MessageDecoder.messageProperties2String(msgInner.getProperties()));
            origProps.put(MessageConst.PROPERTY_WAIT_STORE_MSG_OK, w);
        } else {
            msgInner.setPropertiesString(MessageDecoder.messageProperties2String(msgInner.getProperties()));
        }
        // SendMessageProcessor.sendMessage / preSend: sysFlag from header, tagsCode from TAGS
        msgInner.setSysFlag(clientSysFlag);
        msgInner.setTagsCode(MessageExtBrokerInner.tagsString2tagsCode(null, msgInner.getTags()));

        String origTopic = msgInner.getTopic();
        int origQueue = msgInner.getQueueId();
        PutMessageResult r = store.putMessage(msgInner);
        if (r == null || !r.isOk()) throw new IllegalStateException("put failed seq=" + seq + " " + r);
        AppendMessageResult a = r.getAppendMessageResult();

        Map<String, Object> o = new LinkedHashMap<>();
        o.put("seq", seq);
        o.put("kind", kind);
        o.put("batch", false);
        o.put("putStatus", r.getPutMessageStatus().name());
        o.put("topic", msgInner.getTopic());
        o.put("queueId", msgInner.getQueueId());
        o.put("originalTopic", origTopic);
        o.put("originalQueueId", origQueue);
        o.put("physicalOffset", a.getWroteOffset());
        o.put("wroteBytes", a.getWroteBytes());
        o.put("msgId", a.getMsgId());
        o.put("queueOffset", a.getLogicsOffset());
        o.put("storeTimestamp", a.getStoreTimestamp());
        o.put("bornTimestamp", bornTs);
        o.put("bornHost", hostStr(born));
        o.put("storeHost", hostStr(storeHost));
        o.put("sysFlag", msgInner.getSysFlag());
        o.put("flag", msgInner.getFlag());
        o.put("bodyCRC", msgInner.getBodyCRC());
        o.put("reconsumeTimes", msgInner.getReconsumeTimes());
        o.put("preparedTransactionOffset", msgInner.getPreparedTransactionOffset());
        o.put("tags", msgInner.getTags());
        o.put("keys", msgInner.getKeys());
        o.put("uniqKey", msgInner.getProperty(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX));
        o.put("tagsCodeAtPut", msgInner.getTagsCode());
        o.put("bodyLength", msgInner.getBody().length);
        o.put("bodyBase64", Base64.getEncoder().encodeToString(msgInner.getBody()));
        o.put("propertiesString", msgInner.getPropertiesString());
        o.put("properties", orderedProps(msgInner.getPropertiesString()));
        out.add(o);
    }

    static int putBatch(DefaultMessageStore store, int seq) throws Exception {
        // ---- client side (DefaultMQProducer.batch + sendKernelImpl) ----
        List<Message> msgs = new ArrayList<>();
        for (int k = 0; k < 3; k++) {
            Message m = new Message("TopicTest", k == 2 ? null : "TagBatch", "batch-key-" + k, 0,
                ("batch member " + k).getBytes(StandardCharsets.UTF_8), true);
            MessageAccessor.putProperty(m, MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, uniq(1010 + k));
            msgs.add(m);
        }
        MessageBatch mb = MessageBatch.generateFromList(msgs);
        mb.setBody(mb.encode());
        String headerProps = MessageDecoder.messageProperties2String(mb.getProperties());
        long bornTs = BORN_BASE + 1010 * 1000L;
        int queueId = 3;

        // ---- broker side (SendMessageProcessor.asyncSendBatchMessage) ----
        MessageExtBatch meb = new MessageExtBatch();
        meb.setTopic("TopicTest");
        meb.setQueueId(queueId);
        meb.setSysFlag(0);
        meb.setFlag(mb.getFlag());
        MessageAccessor.setProperties(meb, MessageDecoder.string2messageProperties(headerProps));
        meb.setBody(mb.getBody());
        meb.setBornTimestamp(bornTs);
        meb.setBornHost(BORN_HOST);
        meb.setStoreHost(STORE_HOST);
        meb.setReconsumeTimes(0);
        MessageAccessor.putProperty(meb, MessageConst.PROPERTY_CLUSTER, CLUSTER);

        PutMessageResult r = store.putMessages(meb);
        if (r == null || !r.isOk()) throw new IllegalStateException("batch put failed " + r);
        AppendMessageResult a = r.getAppendMessageResult();
        String[] ids = a.getMsgId().split(",");
        String batchProps = MessageDecoder.messageProperties2String(meb.getProperties());
        long[] phy = new long[ids.length];
        for (int k = 0; k < ids.length; k++) phy[k] = MessageDecoder.decodeMessageId(ids[k]).getOffset();
        for (int k = 0; k < msgs.size(); k++) {
            Message m = msgs.get(k);
            String own = MessageDecoder.messageProperties2String(m.getProperties());
            // what CommitLog.MessageExtEncoder.encode(MessageExtBatch) stores: own props [+ 0x02] + batch props
            String stored = own.isEmpty() ? batchProps : (own.endsWith("\u0002") ? own + batchProps : own + "\u0002" + batchProps);
            long size = (k + 1 < ids.length ? phy[k + 1] : a.getWroteOffset() + a.getWroteBytes()) - phy[k];
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("seq", seq++);
            o.put("kind", "batch");
            o.put("batch", true);
            o.put("batchIndex", k);
            o.put("batchWroteOffset", a.getWroteOffset());
            o.put("batchWroteBytes", a.getWroteBytes());
            o.put("batchMsgNum", a.getMsgNum());
            o.put("putStatus", r.getPutMessageStatus().name());
            o.put("topic", meb.getTopic());
            o.put("queueId", queueId);
            o.put("originalTopic", meb.getTopic());
            o.put("originalQueueId", queueId);
            o.put("physicalOffset", phy[k]);
            o.put("wroteBytes", size);
            o.put("msgId", ids[k]);
            o.put("queueOffset", a.getLogicsOffset() + k);
            o.put("storeTimestamp", a.getStoreTimestamp());
            o.put("bornTimestamp", bornTs);
            o.put("bornHost", hostStr(BORN_HOST));
            o.put("storeHost", hostStr(STORE_HOST));
            o.put("sysFlag", meb.getSysFlag());
            o.put("flag", m.getFlag());
            o.put("bodyCRC", UtilAll.crc32(m.getBody()));
            o.put("reconsumeTimes", 0);
            o.put("preparedTransactionOffset", 0L);
            o.put("tags", m.getTags());
            o.put("keys", m.getKeys());
            o.put("uniqKey", m.getProperty(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX));
            o.put("tagsCodeAtPut", MessageExtBrokerInner.tagsString2tagsCode(null, m.getTags()));
            o.put("bodyLength", m.getBody().length);
            o.put("bodyBase64", Base64.getEncoder().encodeToString(m.getBody()));
            o.put("propertiesString", stored);
            o.put("properties", orderedProps(stored));
            out.add(o);
        }
        return seq;
    }


    /** read everything back through RocketMQ's own classes (consume queue, commitlog decode, index query) */
    static void verify(DefaultMessageStore store) throws Exception {
        int problems = 0;
        for (Map<String, Object> o : out) {
            String topic = (String) o.get("topic");
            int q = (Integer) o.get("queueId");
            long qo = ((Number) o.get("queueOffset")).longValue();
            long phy = ((Number) o.get("physicalOffset")).longValue();
            ConsumeQueue cq = store.findConsumeQueue(topic, q);
            SelectMappedBufferResult sb = cq.getIndexBuffer(qo);
            java.nio.ByteBuffer bb = sb.getByteBuffer();
            long cqPhy = bb.getLong(0); int cqSize = bb.getInt(8); long cqTags = bb.getLong(12);
            sb.release();
            Map<String, Object> cqe = new LinkedHashMap<>();
            cqe.put("file", String.format("consumequeue/%s/%d/%020d", topic, q, (qo * 20) / 1000 * 1000));
            cqe.put("byteOffsetInFile", (qo * 20) % 1000);
            cqe.put("commitLogOffset", cqPhy); cqe.put("size", cqSize); cqe.put("tagsCode", cqTags);
            o.put("consumeQueueEntry", cqe);
            if (cqPhy != phy || cqSize != ((Number) o.get("wroteBytes")).intValue()) { problems++; System.err.println("CQ mismatch " + o.get("seq")); }
            if (!Boolean.TRUE.equals(o.get("batch")) && cqTags != ((Number) o.get("tagsCodeAtPut")).longValue() && !"delay".equals(o.get("kind"))) { problems++; System.err.println("tags mismatch " + o.get("seq")); }

            MessageExt me = store.lookMessageByOffset(phy);
            List<String> diffs = new ArrayList<>();
            if (!me.getTopic().equals(topic)) diffs.add("topic");
            if (me.getQueueId() != q) diffs.add("queueId");
            if (me.getQueueOffset() != qo) diffs.add("queueOffset");
            if (me.getCommitLogOffset() != phy) diffs.add("phy");
            if (me.getStoreSize() != ((Number) o.get("wroteBytes")).intValue()) diffs.add("size");
            if (me.getSysFlag() != (Integer) o.get("sysFlag")) diffs.add("sysFlag");
            if (me.getFlag() != (Integer) o.get("flag")) diffs.add("flag");
            if (me.getBodyCRC() != (Integer) o.get("bodyCRC")) diffs.add("bodyCRC");
            if (me.getStoreTimestamp() != ((Number) o.get("storeTimestamp")).longValue()) diffs.add("storeTs");
            if (me.getBornTimestamp() != ((Number) o.get("bornTimestamp")).longValue()) diffs.add("bornTs");
            if (me.getReconsumeTimes() != (Integer) o.get("reconsumeTimes")) diffs.add("reconsume");
            if (!hostStr((InetSocketAddress) me.getBornHost()).equals(o.get("bornHost"))) diffs.add("bornHost");
            if (!hostStr((InetSocketAddress) me.getStoreHost()).equals(o.get("storeHost"))) diffs.add("storeHost");
            if (!me.getMsgId().equals(o.get("msgId"))) diffs.add("msgId " + me.getMsgId());
            if (!Base64.getEncoder().encodeToString(me.getBody() == null ? new byte[0] : me.getBody()).equals(o.get("bodyBase64"))) diffs.add("body");
            if (!me.getProperties().equals(MessageDecoder.string2messageProperties((String) o.get("propertiesString")))) diffs.add("props");
            // raw properties bytes as stored
            SelectMappedBufferResult raw = store.getCommitLogData(phy);
            java.nio.ByteBuffer rb = raw.getByteBuffer().slice();
            int total = rb.getInt(0);
            byte[] rec = new byte[total]; rb.get(rec); raw.release();
            java.nio.ByteBuffer r2 = java.nio.ByteBuffer.wrap(rec);
            int sf = r2.getInt(36);
            int bhl = (sf & MessageSysFlag.BORNHOST_V6_FLAG) == 0 ? 8 : 20;
            int shl = (sf & MessageSysFlag.STOREHOSTADDRESS_V6_FLAG) == 0 ? 8 : 20;
            int pos = 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 + bhl + 8 + shl + 4 + 8;
            int bl = r2.getInt(pos); pos += 4 + bl;
            int tl = rec[pos] & 0xff; pos += 1 + tl;
            int pl = r2.getShort(pos) & 0xffff; pos += 2;
            String propsRaw = new String(rec, pos, pl, StandardCharsets.UTF_8);
            if (!propsRaw.equals(o.get("propertiesString"))) diffs.add("rawProps[" + propsRaw + "]");
            if (pos + pl != total) diffs.add("trailing");
            o.put("rocketmqDecodeCheck", diffs.isEmpty() ? "ok" : diffs.toString());
            if (!diffs.isEmpty()) { problems++; System.err.println("decode mismatch seq=" + o.get("seq") + " " + diffs); }

            // index lookups
            List<String> idxKeys = new ArrayList<>();
            idxKeys.add((String) o.get("uniqKey"));
            if (o.get("keys") != null) idxKeys.addAll(Arrays.asList(((String) o.get("keys")).split(MessageConst.KEY_SEPARATOR)));
            Map<String, Object> hits = new LinkedHashMap<>();
            for (String k : idxKeys) {
                QueryMessageResult qr = store.queryMessage(topic, k, 64, 0, Long.MAX_VALUE);
                boolean found = false;
                for (java.nio.ByteBuffer b : qr.getMessageBufferList()) {
                    MessageExt x = MessageDecoder.decode(b.slice(), false);
                    if (x != null && x.getCommitLogOffset() == phy) found = true;
                }
                qr.release();
                hits.put(topic + "#" + k, found);
                if (!found) { problems++; System.err.println("index miss seq=" + o.get("seq") + " key=" + k); }
            }
            o.put("indexKeys", hits);
        }
        System.err.println("verify problems=" + problems);
    }

    static List<List<String>> orderedProps(String s) {
        List<List<String>> l = new ArrayList<>();
        if (s == null || s.isEmpty()) return l;
        for (String kv : s.split("\u0002", -1)) {
            int p = kv.indexOf('\u0001');
            l.add(Arrays.asList(kv.substring(0, p), kv.substring(p + 1)));
        }
        return l;
    }

    static String hostStr(InetSocketAddress a) {
        String h = a.getAddress().getHostAddress();
        return (h.contains(":") ? "[" + h + "]" : h) + ":" + a.getPort();
    }

    // ---------------- tiny JSON writer ----------------
    static void json(StringBuilder sb, Object v) {
        if (v == null) sb.append("null");
        else if (v instanceof String) {
            String s = (String) v; sb.append('"');
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                if (c == '"') sb.append("\\\"");
                else if (c == '\\') sb.append("\\\\");
                else if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
                else sb.append(c);
            }
            sb.append('"');
        } else if (v instanceof Number || v instanceof Boolean) sb.append(v);
        else if (v instanceof Map) {
            sb.append('{'); boolean f = true;
            for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                if (!f) sb.append(", "); f = false;
                json(sb, e.getKey().toString()); sb.append(": "); json(sb, e.getValue());
            }
            sb.append('}');
        } else if (v instanceof List) {
            sb.append('['); boolean f = true;
            for (Object x : (List<?>) v) { if (!f) sb.append(", "); f = false; json(sb, x); }
            sb.append(']');
        } else throw new IllegalArgumentException(v.getClass().toString());
    }

    static void writeJsonl(String path) throws IOException {
        Harness.writeJsonl(out, path);
    }
}
