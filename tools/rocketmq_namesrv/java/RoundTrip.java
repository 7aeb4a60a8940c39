import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;

/**
 * A producer sends N messages to TOPIC and a push consumer of GROUP receives them, both finding the
 * broker through the name server at NAMESRV. Prints one line per send and a summary; exits 0 when
 * every message came back within 90 s. Usage: RoundTrip NAMESRV TOPIC GROUP N
 */
public class RoundTrip {
    public static void main(String[] args) throws Exception {
        String namesrv = args[0], topic = args[1], group = args[2];
        int n = Integer.parseInt(args[3]);
        DefaultMQProducer producer = new DefaultMQProducer(group + "_P");
        producer.setNamesrvAddr(namesrv);
        producer.start();
        for (int i = 0; i < n; i++) {
            SendResult r = producer.send(new Message(topic, "TagA", "key-" + i, ("round trip " + i).getBytes("UTF-8")));
            System.out.println("sent " + i + " " + r.getSendStatus() + " queue " + r.getMessageQueue().getQueueId());
        }
        producer.shutdown();
        CountDownLatch latch = new CountDownLatch(n);
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer(group);
        consumer.setNamesrvAddr(namesrv);
        consumer.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        consumer.subscribe(topic, "*");
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> {
            for (MessageExt m : msgs) {
                latch.countDown();
            }
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        consumer.start();
        boolean all = latch.await(90, TimeUnit.SECONDS);
        consumer.shutdown();
        System.out.println("received " + (n - latch.getCount()) + " of " + n);
        System.exit(all ? 0 : 1);
    }
}
