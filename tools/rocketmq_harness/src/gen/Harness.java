package gen;

import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.store.DefaultMessageStore;
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

    static void awaitDispatch(DefaultMessageStore store) throws InterruptedException {
        long t0 = System.currentTimeMillis();
        while (store.dispatchBehindBytes() != 0) {
            Thread.sleep(10);
            if (System.currentTimeMillis() - t0 > 5000) throw new IllegalStateException("dispatch stuck");
        }
    }
}
