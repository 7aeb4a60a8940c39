package gen;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import org.apache.rocketmq.common.message.*;
import org.apache.rocketmq.store.*;
import org.apache.rocketmq.store.config.MessageStoreConfig;

/** Harness: put edge-case messages (CASES file: name, topic, property value, body length per line) and print each result. args: ROOT CASES OUT */
public class PutCheck {
    public static void main(String[] a) {
        try {
            MessageStoreConfig cfg = Harness.config(a[0], 65536, 300000 * 20, 5000000, 5000000 * 4, 20919);
            cfg.setMaxMessageSize(100000);
            DefaultMessageStore store = Harness.open(cfg);
            StringBuilder sb = new StringBuilder();
            for (String line : Files.readAllLines(Paths.get(a[1]), StandardCharsets.UTF_8)) {
                String[] c = line.split("\t", -1);
                MessageExtBrokerInner inner = new MessageExtBrokerInner();
                inner.setTopic(c[1]);
                inner.setQueueId(0);
                inner.setBody(new byte[Integer.parseInt(c[3])]);
                Map<String, String> props = new HashMap<>();
                props.put("X", c[2]);
                MessageAccessor.setProperties(inner, props);
                inner.setPropertiesString(MessageDecoder.messageProperties2String(props));
                inner.setBornTimestamp(1700000000000L);
                inner.setBornHost(new InetSocketAddress("127.0.0.1", 54321));
                inner.setStoreHost(new InetSocketAddress("127.0.0.1", 10911));
                PutMessageResult r = store.putMessage(inner);
                Map<String, Object> o = new LinkedHashMap<>();
                o.put("case", c[0]);
                o.put("status", r.getPutMessageStatus().name());
                AppendMessageResult ar = r.getAppendMessageResult();
                o.put("appendStatus", ar == null ? null : ar.getStatus().name());
                o.put("wroteOffset", ar == null ? null : ar.getWroteOffset());
                o.put("wroteBytes", ar == null ? null : ar.getWroteBytes());
                o.put("maxPhyOffset", store.getMaxPhyOffset());
                FixtureGen.json(sb, o);
                sb.append('\n');
            }
            Files.write(Paths.get(a[2]), sb.toString().getBytes(StandardCharsets.UTF_8));
            store.shutdown();
            System.exit(0);
        } catch (Throwable t) { t.printStackTrace(); System.exit(1); }
    }
}
