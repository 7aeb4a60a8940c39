import java.util.concurrent.atomic.AtomicLong;

import org.apache.rocketmq.common.protocol.RequestCode;
import org.apache.rocketmq.common.protocol.header.namesrv.GetRouteInfoRequestHeader;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.netty.NettyRemotingClient;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/**
 * THREADS threads each send GET_ROUTEINFO_BY_TOPIC for TOPIC to the name server at ADDR (the
 * Java client's own NettyRemotingClient, sync calls, as MQClientAPIImpl does) for SECONDS seconds
 * after a 2 s warm-up; prints "requests=N seconds=S errors=E". Usage: RouteBench ADDR TOPIC THREADS SECONDS
 */
public class RouteBench {
    public static void main(String[] args) throws Exception {
        System.setProperty("rocketmq.remoting.version", "401");
        String addr = args[0], topic = args[1];
        int threads = Integer.parseInt(args[2]);
        long seconds = Long.parseLong(args[3]);
        NettyRemotingClient client = new NettyRemotingClient(new NettyClientConfig());
        client.start();
        AtomicLong done = new AtomicLong(), errors = new AtomicLong();
        long[] window = new long[2];
        Thread[] workers = new Thread[threads];
        long warmEnd = System.nanoTime() + 2_000_000_000L;
        long end = warmEnd + seconds * 1_000_000_000L;
        for (int t = 0; t < threads; t++) {
            workers[t] = new Thread(() -> {
                while (System.nanoTime() < end) {
                    GetRouteInfoRequestHeader h = new GetRouteInfoRequestHeader();
                    h.setTopic(topic);
                    try {
                        RemotingCommand r = client.invokeSync(addr, RemotingCommand.createRequestCommand(
                            RequestCode.GET_ROUTEINFO_BY_TOPIC, h), 3000);
                        if (r.getCode() != 0) errors.incrementAndGet();
                    } catch (Exception e) {
                        errors.incrementAndGet();
                    }
                    if (System.nanoTime() > warmEnd) done.incrementAndGet();
                }
            });
            workers[t].start();
        }
        for (Thread w : workers) w.join();
        client.shutdown();
        System.out.println("requests=" + done.get() + " seconds=" + seconds + " errors=" + errors.get());
        System.exit(0);
    }
}
