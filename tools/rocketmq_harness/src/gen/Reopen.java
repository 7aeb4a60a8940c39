package gen;
import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.store.*;
import org.apache.rocketmq.store.config.*;
import org.apache.rocketmq.store.stats.BrokerStatsManager;
/** Harness: reopen a COPY of a fixture store with the same settings and print what RocketMQ recovers. */
public class Reopen {
    public static void main(String[] a) {
        try {
            MessageStoreConfig cfg = new MessageStoreConfig();
            cfg.setStorePathRootDir(a[0]);
            cfg.setMappedFileSizeCommitLog(64 * 1024);
            cfg.setMappedFileSizeConsumeQueue(1000);
            cfg.setMaxHashSlotNum(100);
            cfg.setMaxIndexNum(200);
            cfg.setHaListenPort(20913);
            DefaultMessageStore s = new DefaultMessageStore(cfg, new BrokerStatsManager("DefaultCluster", true), null, new BrokerConfig());
            System.out.println("load=" + s.load());
            System.out.println("minPhy=" + s.getMinPhyOffset() + " maxPhy=" + s.getMaxPhyOffset());
            String[][] qs = {{"TopicTest","0"},{"TopicTest","1"},{"TopicTest","2"},{"TopicTest","3"},{"SCHEDULE_TOPIC_XXXX","2"},{"OtherTopic","0"}};
            for (String[] q : qs) System.out.println(q[0] + "/" + q[1] + " min=" + s.getMinOffsetInQueue(q[0], Integer.parseInt(q[1])) + " max=" + s.getMaxOffsetInQueue(q[0], Integer.parseInt(q[1])));
            System.exit(0);
        } catch (Throwable t) { t.printStackTrace(); System.exit(1); }
    }
}
