package gen;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.*;
import org.apache.rocketmq.common.message.*;
import org.apache.rocketmq.store.*;
import org.apache.rocketmq.store.config.MessageStoreConfig;

/** Harness: a store written by the real 4.9.4 DefaultMessageStore with transientStorePoolEnable. args: ROOT */
public class PoolGen {
    public static void main(String[] args) {
        try {
            MessageStoreConfig cfg = Harness.config(args[0], 4096, 50 * 20, 100, 400, 20916);
            cfg.setTransientStorePoolEnable(true);
            cfg.setTransientStorePoolSize(2);
            DefaultMessageStore store = Harness.open(cfg);
            InetSocketAddress born = new InetSocketAddress("127.0.0.1", 54321), host = new InetSocketAddress("127.0.0.1", 10911);
            for (int i = 0; i < 60; i++) {
                // bodies of varying length, so that each segment's blank starts at a different position
                byte[] body = new byte[100 + (i * 37) % 300];
                Arrays.fill(body, (byte) ('a' + i % 26));
                MessageExtBrokerInner inner = new MessageExtBrokerInner();
                inner.setTopic("TopicPool");
                inner.setQueueId(i % 2);
                inner.setBody(body);
                Map<String, String> props = new HashMap<>();
                props.put(MessageConst.PROPERTY_KEYS, "key-" + i);
                props.put(MessageConst.PROPERTY_TAGS, i % 2 == 0 ? "TagA" : "TagB");
                props.put(MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, String.format("7F000001303918B4AAC2%012X", i));
                props.put(MessageConst.PROPERTY_CLUSTER, "DefaultCluster");
                MessageAccessor.setProperties(inner, props);
                inner.setPropertiesString(MessageDecoder.messageProperties2String(props));
                inner.setBornTimestamp(1700000000000L + i * 1000L);
                inner.setBornHost(born);
                inner.setStoreHost(host);
                inner.setTagsCode(MessageExtBrokerInner.tagsString2tagsCode(null, inner.getTags()));
                PutMessageResult r = store.putMessage(inner);
                if (r == null || !r.isOk()) throw new IllegalStateException("put failed " + i + " " + r);
                Thread.sleep(5);  // let the commit service keep up: a put must not find the pool empty
            }
            long t0 = System.currentTimeMillis();
            while (store.dispatchBehindBytes() != 0 || store.getCommitLog().remainHowManyDataToCommit() > 0) {
                Thread.sleep(10);
                if (System.currentTimeMillis() - t0 > 10000) throw new IllegalStateException("stuck");
            }
            Thread.sleep(300);
            System.err.println("maxPhy=" + store.getMaxPhyOffset() + " pool left=" + store.remainTransientStoreBufferNumbs());
            store.shutdown();
            System.exit(0);
        } catch (Throwable t) { t.printStackTrace(); System.exit(1); }
    }
}
