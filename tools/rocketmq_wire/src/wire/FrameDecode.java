package wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/**
 * Decode cases (reader tolerance): raw bytes written by hand in the catalog are given to
 * (1) the real NettyDecoder in an EmbeddedChannel, chunk by chunk, as a connection would;
 * (2) a bare Netty LengthFieldBasedFrameDecoder with NettyDecoder's parameters, to see the
 *     framing error NettyDecoder only logs;
 * (3) RemotingCommand.decode(ByteBuffer) on everything after the 4-byte length, then
 *     decodeCommandCustomHeader(decodeAs) — what Java ends up with, or the exception.
 *
 *   wire.FrameDecode CATALOG.json OUT.jsonl
 */
public final class FrameDecode {
    static final int FRAME_MAX_LENGTH = 16777216;

    public static void main(String[] args) throws Exception {
        @SuppressWarnings("unchecked")
        Map<String, Object> catalog = (Map<String, Object>) Json.readFile(args[0]);
        try (PrintStream out = new PrintStream(args[1], StandardCharsets.UTF_8)) {
            for (Object o : (List<?>) catalog.get("decode")) {
                @SuppressWarnings("unchecked")
                Map<String, Object> c = (Map<String, Object>) o;
                out.println(Json.write(Cmds.guarded(c, () -> record(c))));
            }
        }
    }

    static List<byte[]> chunks(Map<String, Object> c) {
        List<byte[]> chunks = new ArrayList<>();
        for (Object h : (List<?>) c.get("chunks")) {
            chunks.add(Json.unhex((String) h));
        }
        Object pad = c.get("appendZeroBytes");
        if (pad != null) {
            byte[] last = chunks.remove(chunks.size() - 1);
            byte[] grown = new byte[last.length + ((Number) pad).intValue()];
            System.arraycopy(last, 0, grown, 0, last.length);
            chunks.add(grown);
        }
        return chunks;
    }

    static Map<String, Object> record(Map<String, Object> c) {
        Map<String, Object> r = Json.obj();
        r.put("name", c.get("name"));
        List<byte[]> chunks = chunks(c);
        r.put("nettyDecoder", Cmds.nettyDecode(chunks));
        r.put("framing", framing(chunks));
        if (!Boolean.FALSE.equals(c.get("direct"))) {
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            for (byte[] b : chunks) {
                all.writeBytes(b);
            }
            byte[] bytes = all.toByteArray();
            Map<String, Object> direct = Json.obj();
            try {
                RemotingCommand cmd = RemotingCommand.decode(ByteBuffer.wrap(bytes, 4, bytes.length - 4).slice());
                direct.put("command", Cmds.commandView(cmd));
                String cls = (String) c.get("decodeAs");
                if (cls != null) {
                    direct.putAll(HeaderFrames.headerDecodes(cmd, cls));
                }
            } catch (Exception e) {
                direct.put("error", Json.error(e));
            }
            r.put("decode", direct);
        }
        return r;
    }

    /** Netty's frame decoder alone (NettyDecoder's super class, same arguments): frame sizes or the error. */
    static Map<String, Object> framing(List<byte[]> chunks) {
        EmbeddedChannel ch = new EmbeddedChannel(new LengthFieldBasedFrameDecoder(FRAME_MAX_LENGTH, 0, 4, 0, 4));
        List<Object> frames = Json.list();
        Map<String, Object> r = Json.obj();
        try {
            for (byte[] chunk : chunks) {
                ch.writeInbound(Unpooled.wrappedBuffer(chunk));
                for (ByteBuf f = ch.readInbound(); f != null; f = ch.readInbound()) {
                    frames.add(f.readableBytes());
                    f.release();
                }
            }
        } catch (Exception e) {
            r.put("error", Json.error(e));
        }
        r.put("frameLengths", frames);
        ch.finishAndReleaseAll();
        return r;
    }
}
