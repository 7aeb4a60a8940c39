package gen;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.common.sysflag.MessageSysFlag;
import org.apache.rocketmq.store.DefaultMessageStore;
import org.apache.rocketmq.store.SelectMappedBufferResult;
import org.apache.rocketmq.store.config.FlushDiskType;
import org.apache.rocketmq.store.config.MessageStoreConfig;
import org.apache.rocketmq.store.stats.BrokerStatsManager;

/** What every harness program does with a store: configure it, open it, wait for the reput. */
final class Harness {
    private Harness() { }

    /** ASYNC_FLUSH store at {@code root} with the given geometry; the HA port is per program (runs may overlap). */
    static MessageStoreConfig config(String root, int commitLog, int consumeQueue, int hashSlots, int indexNum, int haPort) {
        MessageStoreConfig cfg = new MessageStoreConfig();
        cfg.setStorePathRootDir(root);
        cfg.setMappedFileSizeCommitLog(commitLog);
        cfg.setMappedFileSizeConsumeQueue(consumeQueue);
        cfg.setMaxHashSlotNum(hashSlots);
        cfg.setMaxIndexNum(indexNum);
        cfg.setFlushDiskType(FlushDiskType.ASYNC_FLUSH);
        cfg.setHaListenPort(haPort);
        return cfg;
    }

    /** The geometry from the command line: {@code args[from..from+3]} = commitLog, consumeQueue, hashSlots, indexNum. */
    static MessageStoreConfig config(String root, String[] args, int from, int haPort) {
        return config(root, Integer.parseInt(args[from]), Integer.parseInt(args[from + 1]), Integer.parseInt(args[from + 2]),
            Integer.parseInt(args[from + 3]), haPort);
    }

    /** A store as the broker builds it (no-op arrival listener), without starting it. */
    static DefaultMessageStore create(MessageStoreConfig cfg) throws Exception {
        return new DefaultMessageStore(cfg, new BrokerStatsManager("DefaultCluster", true),
            (topic, queueId, logicOffset, tagsCode, msgStoreTime, filterBitMap, properties) -> { }, new BrokerConfig());
    }

    /** load() (recovery), start(), and the reput caught up. */
    static DefaultMessageStore open(MessageStoreConfig cfg) throws Exception {
        DefaultMessageStore store = create(cfg);
        if (!store.load()) throw new IllegalStateException("load failed");
        store.start();
        awaitDispatch(store);
        return store;
    }

    /** The properties text of the record at {@code phy} exactly as stored (before any decoding into a map). */
    static String storedPropertiesText(DefaultMessageStore store, long phy) {
        SelectMappedBufferResult raw = store.getCommitLogData(phy);
        ByteBuffer rb = raw.getByteBuffer().slice();
        byte[] rec = new byte[rb.getInt(0)];
        rb.get(rec);
        raw.release();
        ByteBuffer r = ByteBuffer.wrap(rec);
        int sysFlag = r.getInt(36);
        int bornHost = (sysFlag & MessageSysFlag.BORNHOST_V6_FLAG) == 0 ? 8 : 20;
        int storeHost = (sysFlag & MessageSysFlag.STOREHOSTADDRESS_V6_FLAG) == 0 ? 8 : 20;
        int pos = 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 + bornHost + 8 + storeHost + 4 + 8;
        pos += 4 + r.getInt(pos);              // body
        pos += 1 + (rec[pos] & 0xff);          // topic
        int length = r.getShort(pos) & 0xffff;
        return new String(rec, pos + 2, length, StandardCharsets.UTF_8);
    }

    /** One JSON object per line, in order. */
    static void writeJsonl(List<Map<String, Object>> rows, String path) throws IOException {
        StringBuilder sb = new StringBuilder();
        for (Map<String, Object> o : rows) { FixtureGen.json(sb, o); sb.append('\n'); }
        Files.write(Paths.get(path), sb.toString().getBytes(StandardCharsets.UTF_8));
    }

    static void awaitDispatch(DefaultMessageStore store) throws InterruptedException {
        long t0 = System.currentTimeMillis();
        while (store.dispatchBehindBytes() != 0) {
            Thread.sleep(10);
            if (System.currentTimeMillis() - t0 > 5000) throw new IllegalStateException("dispatch stuck");
        }
    }
}
