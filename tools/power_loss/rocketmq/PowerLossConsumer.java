import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

import org.apache.rocketmq.client.consumer.DefaultLitePullConsumer;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageQueue;

/**
 * Reads every message of TOPIC from offset 0 of each queue and prints one line per message:
 * KEYS queueId queueOffset. Stops after 5 s without a message.
 * Usage: PowerLossConsumer NAMESRV TOPIC
 */
public class PowerLossConsumer {
    public static void main(String[] args) throws Exception {
        DefaultLitePullConsumer consumer = new DefaultLitePullConsumer("PowerLossConsumerGroup");
        consumer.setNamesrvAddr(args[0]);
        consumer.setAutoCommit(false);
        consumer.start();
        Collection<MessageQueue> queues = consumer.fetchMessageQueues(args[1]);
        List<MessageQueue> list = new ArrayList<>(queues);
        consumer.assign(list);
        for (MessageQueue q : list) {
            consumer.seek(q, 0);
        }
        long idleSince = System.currentTimeMillis();
        while (System.currentTimeMillis() - idleSince < 5000) {
            List<MessageExt> msgs = consumer.poll(500);
            if (!msgs.isEmpty()) {
                idleSince = System.currentTimeMillis();
            }
            for (MessageExt m : msgs) {
                System.out.println(m.getKeys() + " " + m.getQueueId() + " " + m.getQueueOffset());
            }
            System.out.flush();
        }
        consumer.shutdown();
    }
}
