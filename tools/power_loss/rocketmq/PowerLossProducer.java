import java.nio.charset.StandardCharsets;

import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;

/**
 * Sends messages until killed, synchronously, and prints one line per SEND_OK: the recording
 * program of tools/power_loss/record_rocketmq.py cuts the power under it.
 * Usage: PowerLossProducer NAMESRV TOPIC FIRST_ID
 * Line: ACK id queueId queueOffset offsetMsgId
 */
public class PowerLossProducer {
    public static void main(String[] args) throws Exception {
        DefaultMQProducer producer = new DefaultMQProducer("PowerLossProducerGroup");
        producer.setNamesrvAddr(args[0]);
        producer.setSendMsgTimeout(3000);
        producer.setRetryTimesWhenSendFailed(0);
        producer.start();
        String topic = args[1];
        for (long id = Long.parseLong(args[2]); ; id++) {
            StringBuilder body = new StringBuilder("power-loss body " + id + " ");
            while (body.length() < 200) {
                body.append((char) ('a' + id % 26));
            }
            Message msg = new Message(topic, "TagPL", "plk-" + id, body.toString().getBytes(StandardCharsets.UTF_8));
            try {
                SendResult r = producer.send(msg);
                if (r.getSendStatus() == SendStatus.SEND_OK) {
                    System.out.println("ACK " + id + " " + r.getMessageQueue().getQueueId() + " " + r.getQueueOffset()
                        + " " + r.getOffsetMsgId());
                    System.out.flush();
                }
            } catch (Exception e) {
                System.out.println("FAIL " + id + " " + e.getClass().getSimpleName());
                System.out.flush();
                Thread.sleep(100);
            }
        }
    }
}
