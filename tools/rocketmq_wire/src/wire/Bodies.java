package wire;

import com.alibaba.fastjson.JSON;
import com.alibaba.fastjson.serializer.SerializerFeature;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.protocol.body.RegisterBrokerBody;
import org.apache.rocketmq.remoting.protocol.RemotingSerializable;

/**
 * Body cases: a catalog value (a view) is built into the real 4.9.4 class, encoded the ways
 * RocketMQ encodes it, and each encoding decoded again by RocketMQ's own decoder; body-decode
 * cases feed texts written the way other clients write them to fastjson. One JSON line each.
 *
 *   wire.Bodies bodies CATALOG.json OUT.jsonl
 *   wire.Bodies bodyDecode CATALOG.json OUT.jsonl
 *
 * Encodings: default = RemotingSerializable.encode(obj) (fastjson defaults); standard = the name
 * server's route-data call obj.encode(BrowserCompatible, QuoteFieldNames, SkipTransientField,
 * MapSortField) (namesrv/.../processor/DefaultRequestProcessor.java#getRouteInfoByTopic);
 * pretty = obj.toJson(true) (what ConfigManager#persist writes to the config files);
 * compressed = RegisterBrokerBody#encode(true); topicConfigText = TopicConfig#encode().
 */
public final class Bodies {
    public static void main(String[] args) throws Exception {
        @SuppressWarnings("unchecked")
        Map<String, Object> catalog = (Map<String, Object>) Json.readFile(args[1]);
        try (PrintStream out = new PrintStream(args[2], StandardCharsets.UTF_8)) {
            for (Object o : (List<?>) catalog.get(args[0])) {
                @SuppressWarnings("unchecked")
                Map<String, Object> c = (Map<String, Object>) o;
                out.println(Json.write(Cmds.guarded(c, () -> args[0].equals("bodies") ? encodeCase(c) : decodeCase(c))));
            }
        }
    }

    static Object build(Map<String, Object> c) throws Exception {
        return Views.build(c.get("value"), Class.forName((String) c.get("class")), null);
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> encodeCase(Map<String, Object> c) throws Exception {
        Map<String, Object> r = Json.obj();
        r.put("name", c.get("name"));
        Class<?> cls = Class.forName((String) c.get("class"));
        Views.SEEN.clear();
        r.put("value", Views.view(build(c), cls));
        r.put("classesSeen", Json.list());
        ((List<Object>) r.get("classesSeen")).addAll(Views.SEEN);
        Map<String, Object> encs = Json.obj();
        for (Object enc : (List<Object>) c.get("encodings")) {
            Map<String, Object> e = Json.obj();
            try {
                byte[] bytes = encode(build(c), (String) enc);
                byte[] again = encode(build(c), (String) enc);
                e.put("hex", Json.hex(bytes));
                e.put("stable", Arrays.equals(bytes, again));
                try {
                    Object back = decode(bytes, cls, (String) enc);
                    e.put("decoded", Views.view(back, cls));
                    e.put("reencodedSame", Arrays.equals(bytes, encode(back, (String) enc)));
                } catch (Exception ex) {
                    e.put("decodeError", Json.error(ex));
                }
            } catch (Exception ex) {
                e.put("error", Json.error(ex));
            }
            encs.put((String) enc, e);
        }
        r.put("encodings", encs);
        return r;
    }

    static Map<String, Object> decodeCase(Map<String, Object> c) throws Exception {
        Map<String, Object> r = Json.obj();
        r.put("name", c.get("name"));
        Class<?> cls = Class.forName((String) c.get("class"));
        byte[] bytes = c.containsKey("hex") ? Json.unhex((String) c.get("hex"))
            : ((String) c.get("text")).getBytes(StandardCharsets.UTF_8);
        String decoder = (String) c.getOrDefault("decoder", "default");
        try {
            Object back = decode(bytes, cls, decoder);
            r.put("decoded", Views.view(back, cls));
            if (back != null && !Boolean.FALSE.equals(c.get("reencode"))) {
                r.put("reencoded", Json.hex(encode(back, "default")));
            }
        } catch (Exception ex) {
            r.put("error", Json.error(ex));
        }
        return r;
    }

    static byte[] encode(Object obj, String encoding) throws Exception {
        switch (encoding) {
            case "default":
                return RemotingSerializable.encode(obj);
            case "standard":
                if (obj instanceof RemotingSerializable) {
                    return ((RemotingSerializable) obj).encode(SerializerFeature.BrowserCompatible,
                        SerializerFeature.QuoteFieldNames, SerializerFeature.SkipTransientField,
                        SerializerFeature.MapSortField);
                }
                return JSON.toJSONString(obj, SerializerFeature.BrowserCompatible, SerializerFeature.QuoteFieldNames,
                    SerializerFeature.SkipTransientField, SerializerFeature.MapSortField).getBytes(StandardCharsets.UTF_8);
            case "pretty":
                return RemotingSerializable.toJson(obj, true).getBytes(StandardCharsets.UTF_8);
            case "compressed":
                return ((RegisterBrokerBody) obj).encode(true);
            case "topicConfigText":
                return ((TopicConfig) obj).encode().getBytes(StandardCharsets.UTF_8);
            default:
                throw new IllegalArgumentException("unknown encoding " + encoding);
        }
    }

    static Object decode(byte[] bytes, Class<?> cls, String encoding) throws Exception {
        switch (encoding) {
            case "compressed":
                return RegisterBrokerBody.decode(bytes, true);
            case "topicConfigText": {
                TopicConfig t = new TopicConfig();
                if (!t.decode(new String(bytes, StandardCharsets.UTF_8))) {
                    throw new IllegalArgumentException("TopicConfig.decode returned false");
                }
                return t;
            }
            default:
                return RemotingSerializable.decode(bytes, cls);
        }
    }

    @SuppressWarnings("unchecked")
    static byte[] bodyBytes(Map<String, Object> body) throws Exception {
        if (body.containsKey("hex")) {
            return Json.unhex((String) body.get("hex"));
        }
        if (body.containsKey("text")) {
            return ((String) body.get("text")).getBytes(StandardCharsets.UTF_8);
        }
        return encode(build(body), (String) body.getOrDefault("encoding", "default"));
    }
}
