package gen;

import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import org.apache.rocketmq.common.filter.FilterAPI;
import org.apache.rocketmq.common.message.*;
import org.apache.rocketmq.store.*;
import org.apache.rocketmq.store.config.MessageStoreConfig;

/** Harness: run a grid of read calls (GRID, tab-separated) against a COPY of a store. args: ROOT GRID OUT cl cq slots index */
public class FacadeCheck {
    public static void main(String[] a) {
        try { run(a); } catch (Throwable t) { t.printStackTrace(); System.exit(1); }
    }

    static void run(String[] a) throws Exception {
        MessageStoreConfig cfg = Harness.config(a[0], a, 3, 20917);
        if (a.length > 7) cfg.setAccessMessageInMemoryMaxRatio(Integer.parseInt(a[7]));
        DefaultMessageStore store = Harness.open(cfg);
        StringBuilder sb = new StringBuilder();
        for (String line : Files.readAllLines(Paths.get(a[1]), StandardCharsets.UTF_8)) {
            String[] c = line.split("\t");
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("call", line);
            switch (c[0]) {
                case "getMessage": {
                    MessageFilter f = c[5].equals("-") ? null : new DefaultMessageFilter(FilterAPI.buildSubscriptionData(c[1], c[5]));
                    GetMessageResult r = store.getMessage("g", c[1], Integer.parseInt(c[2]), Long.parseLong(c[3]), Integer.parseInt(c[4]), f);
                    o.put("status", r.getStatus().name());
                    o.put("nextBeginOffset", r.getNextBeginOffset());
                    o.put("minOffset", r.getMinOffset());
                    o.put("maxOffset", r.getMaxOffset());
                    List<Long> offs = new ArrayList<>();
                    for (java.nio.ByteBuffer bb : r.getMessageBufferList()) offs.add(MessageDecoder.decode(bb.slice(), false).getQueueOffset());
                    o.put("queueOffsets", offs);
                    r.release();
                    break;
                }
                case "minMax":
                    o.put("min", store.getMinOffsetInQueue(c[1], Integer.parseInt(c[2])));
                    o.put("max", store.getMaxOffsetInQueue(c[1], Integer.parseInt(c[2])));
                    break;
                case "storeTime":
                    o.put("value", store.getMessageStoreTimeStamp(c[1], Integer.parseInt(c[2]), Long.parseLong(c[3])));
                    break;
                case "cqPhy":
                    o.put("value", store.getCommitLogOffsetInQueue(c[1], Integer.parseInt(c[2]), Long.parseLong(c[3])));
                    break;
                case "byTime":
                    o.put("value", store.getOffsetInQueueByTime(c[1], Integer.parseInt(c[2]), Long.parseLong(c[3])));
                    break;
                case "query": {
                    QueryMessageResult r = store.queryMessage(c[1], c[2], Integer.parseInt(c[3]), Long.parseLong(c[4]), Long.parseLong(c[5]));
                    List<Long> offs = new ArrayList<>();
                    for (java.nio.ByteBuffer bb : r.getMessageBufferList()) offs.add(MessageDecoder.decode(bb.slice(), false).getCommitLogOffset());
                    o.put("phyOffsets", offs);
                    o.put("indexLastUpdateTimestamp", r.getIndexLastUpdateTimestamp());
                    o.put("indexLastUpdatePhyoffset", r.getIndexLastUpdatePhyoffset());
                    r.release();
                    break;
                }
                default: throw new IllegalArgumentException(line);
            }
            FixtureGen.json(sb, o);
            sb.append('\n');
        }
        Files.write(Paths.get(a[2]), sb.toString().getBytes(StandardCharsets.UTF_8));
        store.shutdown();
        System.exit(0);
    }
}
