package gen;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import org.apache.rocketmq.common.message.*;
import org.apache.rocketmq.store.*;
import org.apache.rocketmq.store.config.BrokerRole;

/**
 * Harness: delayed messages through the 4.9.4 store and its ScheduleMessageService. Puts the
 * messages of CASES (name, topic, queue, DELAY, properties text with \u0001/\u0002 written as
 * "=" and "&") as the broker does, waits until the schedule service has delivered them all, and
 * writes, per message, the input text, the parked record and the delivered record. args: ROOT CASES OUT
 */
public class DeliverCheck {
    public static void main(String[] a) {
        try {
            DefaultMessageStore store = Harness.open(Harness.config(a[0], 64 * 1024, 50 * 20, 100, 400, 20920));
            store.handleScheduleMessageService(BrokerRole.ASYNC_MASTER);
            List<Map<String, Object>> out = new ArrayList<>();
            List<String[]> cases = new ArrayList<>();
            for (String line : Files.readAllLines(Paths.get(a[1]), StandardCharsets.UTF_8)) cases.add(line.split("\t", -1));
            int n = 0;
            for (String[] c : cases) {
                String text = c[4].replace('=', '\u0001').replace('&', '\u0002');
                MessageExtBrokerInner inner = new MessageExtBrokerInner();
                inner.setTopic(c[1]);
                inner.setQueueId(Integer.parseInt(c[2]));
                inner.setBody(("body " + c[0]).getBytes(StandardCharsets.UTF_8));
                inner.setFlag(n);
                MessageAccessor.setProperties(inner, MessageDecoder.string2messageProperties(text));
                inner.setPropertiesString(text);
                inner.setBornTimestamp(1700000000000L + n);
                inner.setBornHost(new InetSocketAddress("127.0.0.1", 54321));
                inner.setStoreHost(new InetSocketAddress("127.0.0.1", 10911));
                inner.setReconsumeTimes(n % 3);
                inner.setTagsCode(MessageExtBrokerInner.tagsString2tagsCode(null, inner.getTags()));
                PutMessageResult r = store.putMessage(inner);
                if (r == null || !r.isOk()) throw new IllegalStateException("put failed " + c[0] + " " + r);
                Map<String, Object> o = new LinkedHashMap<>();
                o.put("case", c[0]);
                o.put("input", text);
                o.put("parked", record(store, r.getAppendMessageResult().getWroteOffset()));
                out.add(o);
                n++;
            }
            long t0 = System.currentTimeMillis();
            int delivered = 0;
            while (delivered < cases.size()) {
                Thread.sleep(100);
                delivered = countDelivered(store, cases);
                if (System.currentTimeMillis() - t0 > 20000) throw new IllegalStateException("not delivered: " + delivered);
            }
            Harness.awaitDispatch(store);
            // the delivered records, by real topic and queue, in queue order (one per case here)
            for (int i = 0; i < cases.size(); i++) {
                String[] c = cases.get(i);
                ConsumeQueue cq = store.findConsumeQueue(c[1], Integer.parseInt(c[2]));
                for (long off = cq.getMinOffsetInQueue(); off < cq.getMaxOffsetInQueue(); off++) {
                    SelectMappedBufferResult b = cq.getIndexBuffer(off);
                    long phy = b.getByteBuffer().getLong(0);
                    long tags = b.getByteBuffer().getLong(12);
                    b.release();
                    Map<String, Object> rec = record(store, phy);
                    if (("body " + c[0]).equals(rec.get("body"))) {
                        rec.put("cqTagsCode", tags);
                        out.get(i).put("delivered", rec);
                    }
                }
            }
            Harness.writeJsonl(out, a[2]);
            store.shutdown();
            System.exit(0);
        } catch (Throwable t) { t.printStackTrace(); System.exit(1); }
    }

    static int countDelivered(DefaultMessageStore store, List<String[]> cases) {
        Map<String, Long> seen = new HashMap<>();
        for (String[] c : cases) seen.merge(c[1] + "/" + c[2], 1L, Long::sum);
        int done = 0;
        for (Map.Entry<String, Long> e : seen.entrySet()) {
            String[] tq = e.getKey().split("/");
            long max = store.getMaxOffsetInQueue(tq[0], Integer.parseInt(tq[1]));
            done += (int) Math.min(max, e.getValue());
        }
        return done;
    }

    /** The record at {@code phy}: its fields and its properties text exactly as stored. */
    static Map<String, Object> record(DefaultMessageStore store, long phy) {
        MessageExt m = store.lookMessageByOffset(phy);
        Map<String, Object> o = new LinkedHashMap<>();
        o.put("topic", m.getTopic());
        o.put("queueId", m.getQueueId());
        o.put("sysFlag", m.getSysFlag());
        o.put("flag", m.getFlag());
        o.put("reconsumeTimes", m.getReconsumeTimes());
        o.put("bornTimestamp", m.getBornTimestamp());
        o.put("body", new String(m.getBody(), StandardCharsets.UTF_8));
        o.put("propertiesString", Harness.storedPropertiesText(store, phy));
        return o;
    }
}
