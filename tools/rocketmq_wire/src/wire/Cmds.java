package wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.security.MessageDigest;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.remoting.CommandCustomHeader;
import org.apache.rocketmq.remoting.netty.NettyDecoder;
import org.apache.rocketmq.remoting.netty.NettyEncoder;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/**
 * What the recorder programs share about RemotingCommand: building one from a catalog case,
 * encoding it the way the wire does (NettyEncoder in an EmbeddedChannel: no socket, same
 * pipeline code), decoding bytes with the real NettyDecoder, and the views of a command and of
 * a custom header.
 */
final class Cmds {
    /** Bodies longer than this are shown by length and SHA-256 instead of hex. */
    static final int BODY_HEX_LIMIT = 65536;

    private Cmds() {
    }

    @SuppressWarnings("unchecked")
    static CommandCustomHeader header(String className, Map<String, Object> fields) throws Exception {
        if (className == null) {
            return null;
        }
        CommandCustomHeader h = (CommandCustomHeader) Class.forName(className).getDeclaredConstructor().newInstance();
        setFields(h, fields);
        return h;
    }

    static void setFields(Object h, Map<String, Object> fields) throws Exception {
        if (fields == null) {
            return;
        }
        for (Map.Entry<String, Object> e : fields.entrySet()) {
            Field f = h.getClass().getDeclaredField(e.getKey());
            f.setAccessible(true);
            Object v = Views.build(e.getValue(), f.getGenericType(), null);
            if (v == null && f.getType().isPrimitive()) {
                continue;
            }
            f.set(h, v);
        }
    }

    /** Declared non-static fields of a header class, in getDeclaredFields() order, as a view. */
    static Map<String, Object> headerView(Object h) throws IllegalAccessException {
        Map<String, Object> out = Json.obj();
        for (Field f : h.getClass().getDeclaredFields()) {
            if (Modifier.isStatic(f.getModifiers())) {
                continue;
            }
            f.setAccessible(true);
            out.put(f.getName(), Views.view(f.get(h), f.getGenericType()));
        }
        return out;
    }

    static Map<String, Object> commandView(RemotingCommand c) {
        Map<String, Object> v = Json.obj();
        v.put("code", c.getCode());
        v.put("language", c.getLanguage() == null ? null : c.getLanguage().name());
        v.put("version", c.getVersion());
        v.put("opaque", c.getOpaque());
        v.put("flag", c.getFlag());
        v.put("remark", c.getRemark());
        v.put("extFields", Views.view(c.getExtFields(), MAP_STRING_STRING));
        v.put("serializeTypeCurrentRPC", c.getSerializeTypeCurrentRPC() == null ? null : c.getSerializeTypeCurrentRPC().name());
        v.putAll(bodyView(c.getBody()));
        return v;
    }

    static Map<String, Object> bodyView(byte[] body) {
        Map<String, Object> v = Json.obj();
        if (body == null || body.length <= BODY_HEX_LIMIT) {
            v.put("body", body == null ? null : Json.hex(body));
        } else {
            v.put("bodyLength", body.length);
            v.put("bodySha256", sha256(body));
        }
        return v;
    }

    static String sha256(byte[] b) {
        try {
            return Json.hex(MessageDigest.getInstance("SHA-256").digest(b));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static final java.lang.reflect.Type MAP_STRING_STRING;

    static {
        try {
            MAP_STRING_STRING = RemotingCommand.class.getDeclaredField("extFields").getGenericType();
        } catch (NoSuchFieldException e) {
            throw new IllegalStateException(e);
        }
    }

    interface CaseRun {
        Map<String, Object> run() throws Exception;
    }

    /** One case's answer, or the harness failure that regenerate.py refuses to record. */
    static Map<String, Object> guarded(Map<String, Object> c, CaseRun run) {
        try {
            return run.run();
        } catch (Exception | Error e) {
            Map<String, Object> r = Json.obj();
            r.put("name", c.get("name"));
            java.io.StringWriter sw = new java.io.StringWriter();
            e.printStackTrace(new java.io.PrintWriter(sw));
            r.put("harnessError", sw.toString());
            return r;
        }
    }

    static LanguageCode language(Object name) {
        return name == null ? LanguageCode.JAVA : LanguageCode.valueOf((String) name);
    }

    /** Encode through the real NettyEncoder (RemotingCommand.fastEncodeHeader + the body). */
    static byte[] nettyEncode(RemotingCommand cmd) {
        EmbeddedChannel ch = new EmbeddedChannel(new NettyEncoder());
        ch.writeOutbound(cmd);
        ByteBuf out = ch.readOutbound();
        if (out == null) {
            return null;
        }
        byte[] b = new byte[out.readableBytes()];
        out.readBytes(b);
        out.release();
        ch.finishAndReleaseAll();
        return b;
    }

    /** The same path by hand on an Unpooled heap buffer, as the brief of the corpus asks. */
    static byte[] unpooledEncode(RemotingCommand cmd) {
        ByteBuf buf = Unpooled.buffer();
        cmd.fastEncodeHeader(buf);
        if (cmd.getBody() != null) {
            buf.writeBytes(cmd.getBody());
        }
        byte[] b = new byte[buf.readableBytes()];
        buf.readBytes(b);
        return b;
    }

    /** The older whole-frame encoder, RemotingCommand.encode() (makeCustomHeaderToNet always). */
    static byte[] legacyEncode(RemotingCommand cmd) {
        java.nio.ByteBuffer bb = cmd.encode();
        byte[] b = new byte[bb.remaining()];
        bb.get(b);
        return b;
    }

    /** Feed chunks to the real NettyDecoder; what comes out and whether it closed the channel. */
    static Map<String, Object> nettyDecode(List<byte[]> chunks) {
        EmbeddedChannel ch = new EmbeddedChannel(new NettyDecoder());
        List<Object> commands = Json.list();
        int fed = 0;
        for (byte[] chunk : chunks) {
            if (!ch.isOpen()) {
                break;
            }
            ch.writeInbound(Unpooled.wrappedBuffer(chunk));
            fed++;
            for (Object o = ch.readInbound(); o != null; o = ch.readInbound()) {
                commands.add(commandView((RemotingCommand) o));
            }
        }
        Map<String, Object> r = Json.obj();
        r.put("commands", commands);
        r.put("chunksFed", fed);
        r.put("channelOpen", ch.isOpen());
        ch.finishAndReleaseAll();
        return r;
    }

    static RemotingCommand nettyDecodeOne(byte[] frame) {
        EmbeddedChannel ch = new EmbeddedChannel(new NettyDecoder());
        ch.writeInbound(Unpooled.wrappedBuffer(frame));
        RemotingCommand c = ch.readInbound();
        ch.finishAndReleaseAll();
        return c;
    }
}
