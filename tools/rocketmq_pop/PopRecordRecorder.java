// Writes what RocketMQ 5.1.4's revive-log record classes (PopCheckPoint, AckMsg, BatchAckMsg)
// serialise with fastjson, and what they read back, one JSON object per line on stdout.
// Compiled against the 5.1.4 sources of those three classes (see README.md); not part of pymq_ref.
import com.alibaba.fastjson.JSON;
import org.apache.rocketmq.store.pop.AckMsg;
import org.apache.rocketmq.store.pop.BatchAckMsg;
import org.apache.rocketmq.store.pop.PopCheckPoint;

import java.util.LinkedHashMap;
import java.util.Map;

public class PopRecordRecorder {
    static void emit(String name, String kind, String json, Object back) {
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("name", name);
        line.put("kind", kind);
        line.put("json", json);
        line.put("reserialised", JSON.toJSONString(back));
        System.out.println(JSON.toJSONString(line));
    }

    static PopCheckPoint ck(long so, long pt, long it, int bm, int n, int q, String t, String c, String bn, int... diffs) {
        PopCheckPoint ck = new PopCheckPoint();
        ck.setStartOffset(so); ck.setPopTime(pt); ck.setInvisibleTime(it); ck.setBitMap(bm);
        ck.setNum((byte) n); ck.setQueueId(q); ck.setTopic(t); ck.setCId(c); ck.setBrokerName(bn);
        for (int d : diffs) ck.addDiff(d);
        return ck;
    }

    public static void main(String[] args) {
        PopCheckPoint[] cks = {
            ck(0, 1700000000000L, 30000, 0, 1, 0, "TopicTest", "GID_simple", "broker-a", 0),
            ck(12, 1700000000123L, 60000, 0, 3, 2, "TopicTest", "GID_simple", "broker-a", 0, 1, 4),
            ck(5, 1700000001000L, 20000, 0, 2, 0, "%RETRY%GID_simple_TopicTest", "GID_simple", "broker-a", 0, 1),
            ck(7, 1700000002000L, 10000, 5, 3, 1, "TopicTest", "GID_simple", null),
            ck(0, 1700000003000L, 15000, 0, 0, 3, "T", "G", "b"),
        };
        String[] ckNames = {"ck_one", "ck_three_with_gap", "ck_retry_topic", "ck_no_broker_name_bitmap", "ck_mock_no_diff"};
        for (int i = 0; i < cks.length; i++) {
            String json = JSON.toJSONString(cks[i]);
            PopCheckPoint back = JSON.parseObject(json, PopCheckPoint.class);
            emit(ckNames[i], "ck", json, back);
        }
        AckMsg ack = new AckMsg();
        ack.setAckOffset(13); ack.setStartOffset(12); ack.setConsumerGroup("GID_simple"); ack.setTopic("TopicTest");
        ack.setQueueId(2); ack.setPopTime(1700000000123L); ack.setBrokerName("broker-a");
        String ackJson = JSON.toJSONString(ack);
        emit("ack_one", "ack", ackJson, JSON.parseObject(ackJson, AckMsg.class));
        AckMsg ack2 = new AckMsg();
        ack2.setAckOffset(6); ack2.setStartOffset(5); ack2.setConsumerGroup("GID_simple");
        ack2.setTopic("%RETRY%GID_simple_TopicTest"); ack2.setQueueId(0); ack2.setPopTime(1700000001000L);
        String ack2Json = JSON.toJSONString(ack2);
        emit("ack_retry_no_broker_name", "ack", ack2Json, JSON.parseObject(ack2Json, AckMsg.class));
        String longNames = "{\"ackOffset\":9,\"startOffset\":8,\"consumerGroup\":\"G\",\"topic\":\"T\",\"queueId\":1,\"popTime\":42,\"brokerName\":\"b\"}";
        emit("ack_alternate_names", "ack", longNames, JSON.parseObject(longNames, AckMsg.class));
        BatchAckMsg b = new BatchAckMsg();
        b.setAckOffset(-1); b.setStartOffset(12); b.setConsumerGroup("GID_simple"); b.setTopic("TopicTest");
        b.setQueueId(2); b.setPopTime(1700000000123L); b.setBrokerName("broker-a");
        b.getAckOffsetList().add(12L); b.getAckOffsetList().add(16L);
        String bJson = JSON.toJSONString(b);
        emit("batch_ack", "bAck", bJson, JSON.parseObject(bJson, BatchAckMsg.class));
    }
}
