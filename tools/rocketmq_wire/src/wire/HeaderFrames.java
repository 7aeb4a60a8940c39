package wire;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.common.UtilAll;
import org.apache.rocketmq.common.protocol.header.SendMessageRequestHeaderV2;
import org.apache.rocketmq.remoting.CommandCustomHeader;
import org.apache.rocketmq.remoting.protocol.FastCodesHeader;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * Header cases: each catalog case becomes a RemotingCommand built the way 4.9.4 builds one
 * (createRequestCommand(code, header), or createResponseCommand(HeaderClass) + fields + setCode +
 * markResponseType), is encoded in each serialize type through NettyEncoder, and the frame is
 * decoded again with NettyDecoder + decodeCommandCustomHeader. One JSON line per case.
 *
 *   wire.HeaderFrames CATALOG.json OUT.jsonl
 */
public final class HeaderFrames {
    public static void main(String[] args) throws Exception {
        @SuppressWarnings("unchecked")
        Map<String, Object> catalog = (Map<String, Object>) Json.readFile(args[0]);
        try (PrintStream out = new PrintStream(args[1], StandardCharsets.UTF_8)) {
            for (Object o : (List<?>) catalog.get("headers")) {
                @SuppressWarnings("unchecked")
                Map<String, Object> c = (Map<String, Object>) o;
                out.println(Json.write(Cmds.guarded(c, () -> record(c))));
            }
        }
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> record(Map<String, Object> c) {
        Map<String, Object> r = Json.obj();
        r.put("name", c.get("name"));
        Map<String, Object> frames = Json.obj();
        Map<String, Object> decoded = Json.obj();
        for (Object st : (List<Object>) c.get("serializeTypes")) {
            Map<String, Object> f = Json.obj();
            frames.put((String) st, f);
            byte[] unpooled;
            try {
                unpooled = Cmds.unpooledEncode(command(c, (String) st));
            } catch (Exception e) {
                f.put("error", Json.error(e));
                f.put("nettyEncoderOutput", hexOrNull(nettyOrNull(c, (String) st)));
                continue;
            }
            byte[] wire = nettyOrNull(c, (String) st);
            f.put("hex", Json.hex(wire));
            f.put("unpooledSame", Arrays.equals(wire, unpooled));
            try {
                byte[] legacy = Cmds.legacyEncode(command(c, (String) st));
                f.put("legacySame", Arrays.equals(wire, legacy));
                if (!Arrays.equals(wire, legacy)) {
                    f.put("legacyHex", Json.hex(legacy));
                }
            } catch (Exception e) {
                f.put("legacyError", Json.error(e));
            }
            decoded.put((String) st, decodeView(wire, (String) (c.get("decodeAs") != null ? c.get("decodeAs") : c.get("headerClass"))));
        }
        r.put("frames", frames);
        r.put("decoded", decoded);
        return r;
    }

    private static byte[] nettyOrNull(Map<String, Object> c, String st) {
        try {
            return Cmds.nettyEncode(command(c, st));
        } catch (Exception e) {
            return null;
        }
    }

    private static String hexOrNull(byte[] b) {
        return b == null ? null : Json.hex(b);
    }

    @SuppressWarnings("unchecked")
    static RemotingCommand command(Map<String, Object> c, String serializeType) throws Exception {
        int code = ((Number) c.get("code")).intValue();
        String cls = (String) c.get("headerClass");
        Map<String, Object> fields = new java.util.LinkedHashMap<>((Map<String, Object>) c.get("fields"));
        // "$bodyCrc32": the field gets UtilAll.crc32(body), as BrokerOuterAPI#registerBrokerAll sets bodyCrc32
        String crcField = null;
        for (Map.Entry<String, Object> e : fields.entrySet()) {
            if ("$bodyCrc32".equals(e.getValue())) {
                crcField = e.getKey();
            }
        }
        if (crcField != null) {
            fields.remove(crcField);
        }
        RemotingCommand cmd;
        if ("request".equals(c.get("kind"))) {
            cmd = RemotingCommand.createRequestCommand(code, Cmds.header(cls, fields));
        } else {
            Class<? extends CommandCustomHeader> k =
                cls == null ? null : Class.forName(cls).asSubclass(CommandCustomHeader.class);
            cmd = RemotingCommand.createResponseCommand(k);
            if (cmd.readCustomHeader() != null) {
                Cmds.setFields(cmd.readCustomHeader(), fields);
            }
            cmd.setCode(code);
            cmd.markResponseType();
        }
        cmd.setOpaque(((Number) c.get("opaque")).intValue());
        cmd.setRemark((String) c.get("remark"));
        if (c.containsKey("language")) {
            cmd.setLanguage(Cmds.language(c.get("language")));
        }
        if (c.containsKey("version")) {
            cmd.setVersion(((Number) c.get("version")).intValue());
        }
        if (Boolean.TRUE.equals(c.get("oneway"))) {
            cmd.markOnewayRPC();
        }
        if (c.containsKey("flag")) {
            cmd.setFlag(((Number) c.get("flag")).intValue());
        }
        Map<String, Object> extras = (Map<String, Object>) c.get("extFields");
        if (extras != null) {
            for (Map.Entry<String, Object> e : extras.entrySet()) {
                cmd.addExtField(e.getKey(), (String) e.getValue());
            }
        }
        Map<String, Object> body = (Map<String, Object>) c.get("body");
        if (body != null) {
            cmd.setBody(Bodies.bodyBytes(body));
        }
        if (crcField != null) {
            Map<String, Object> crc = Json.obj();
            crc.put(crcField, UtilAll.crc32(cmd.getBody()));
            Cmds.setFields(cmd.readCustomHeader(), crc);
        }
        cmd.setSerializeTypeCurrentRPC(SerializeType.valueOf(serializeType));
        return cmd;
    }

    static Map<String, Object> decodeView(byte[] frame, String headerClass) {
        Map<String, Object> m = Json.obj();
        RemotingCommand d = Cmds.nettyDecodeOne(frame);
        if (d == null) {
            m.put("command", null);
            return m;
        }
        m.put("command", Cmds.commandView(d));
        if (headerClass != null) {
            m.putAll(headerDecodes(d, headerClass));
        }
        return m;
    }

    /** decodeCommandCustomHeader (fast path where the class has one, and the reflective path). */
    static Map<String, Object> headerDecodes(RemotingCommand d, String headerClass) {
        Map<String, Object> m = Json.obj();
        try {
            Class<? extends CommandCustomHeader> k = Class.forName(headerClass).asSubclass(CommandCustomHeader.class);
            try {
                CommandCustomHeader h = d.decodeCommandCustomHeader(k);
                m.put("header", Cmds.headerView(h));
                if (h instanceof SendMessageRequestHeaderV2) {
                    m.put("v1", Cmds.headerView(SendMessageRequestHeaderV2.createSendMessageRequestHeaderV1((SendMessageRequestHeaderV2) h)));
                }
            } catch (Exception e) {
                m.put("headerError", Json.error(e));
            }
            if (FastCodesHeader.class.isAssignableFrom(k)) {
                try {
                    m.put("headerReflective", Cmds.headerView(d.decodeCommandCustomHeader(k, false)));
                } catch (Exception e) {
                    m.put("headerReflectiveError", Json.error(e));
                }
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            m.put("headerError", Json.error(e));
        }
        return m;
    }
}
