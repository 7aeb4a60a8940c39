package wire;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.common.MQVersion;
import org.apache.rocketmq.common.protocol.RequestCode;
import org.apache.rocketmq.common.protocol.ResponseCode;
import org.apache.rocketmq.remoting.CommandCustomHeader;
import org.apache.rocketmq.remoting.annotation.CFNotNull;
import org.apache.rocketmq.remoting.annotation.CFNullable;
import org.apache.rocketmq.remoting.protocol.FastCodesHeader;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;

/**
 * Dumps, by reflection on the real 4.9.4 classes, what the catalog is built from: each listed
 * header class's declared fields in getDeclaredFields() order (the order
 * RemotingCommand.makeCustomHeaderToNet puts them into extFields), with @CFNotNull/@CFNullable;
 * each body class's fields (super classes first); RequestCode, ResponseCode and LanguageCode.
 *
 *   wire.Schema CLASSES.txt OUT.json      (CLASSES.txt: "FOLDER fully.qualified.Name" lines; the kind
 *                                        header/body/enum is decided here by reflection)
 */
public final class Schema {
    public static void main(String[] args) throws Exception {
        Map<String, Object> out = Json.obj();
        Map<String, Object> classes = Json.obj();
        for (String line : Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8)) {
            if (line.isBlank()) {
                continue;
            }
            String[] kv = line.trim().split("\\s+");
            Class<?> c = Class.forName(kv[1]);
            String kind = c.isEnum() ? "enum" : CommandCustomHeader.class.isAssignableFrom(c) ? "header" : "body";
            classes.put(kv[1], describe(kind, c));
        }
        out.put("classes", classes);
        out.put("requestCodes", constants(RequestCode.class));
        Map<String, Object> responses = constants(RemotingSysResponseCode.class);
        responses.putAll(constants(ResponseCode.class));
        out.put("responseCodes", responses);
        Map<String, Object> langs = Json.obj();
        for (LanguageCode l : LanguageCode.values()) {
            langs.put(l.name(), (int) l.getCode());
        }
        out.put("languageCodes", langs);
        out.put("currentVersion", MQVersion.CURRENT_VERSION);
        out.put("currentVersionName", MQVersion.getVersionDesc(MQVersion.CURRENT_VERSION));
        write(args[1], Json.write(out));
    }

    private static Map<String, Object> describe(String kind, Class<?> c) {
        Map<String, Object> d = Json.obj();
        d.put("kind", kind);
        if (kind.equals("enum")) {
            List<Object> names = Json.list();
            for (Object e : c.getEnumConstants()) {
                names.add(((Enum<?>) e).name());
            }
            d.put("constants", names);
            return d;
        }
        d.put("simpleName", c.getSimpleName());
        d.put("superclass", c.getSuperclass() == null ? null : c.getSuperclass().getName());
        d.put("fastCodesHeader", FastCodesHeader.class.isAssignableFrom(c));
        List<Object> fields = Json.list();
        Iterable<Field> list = kind.equals("header") ? List.of(c.getDeclaredFields()) : Views.fields(c);
        for (Field f : list) {
            Map<String, Object> fd = Json.obj();
            fd.put("name", f.getName());
            fd.put("type", f.getGenericType().getTypeName());
            fd.put("static", Modifier.isStatic(f.getModifiers()));
            fd.put("transient", Modifier.isTransient(f.getModifiers()));
            if (kind.equals("header")) {
                fd.put("notNull", f.getAnnotation(CFNotNull.class) != null);
                fd.put("nullable", f.getAnnotation(CFNullable.class) != null);
            } else {
                fd.put("declaredBy", f.getDeclaringClass().getName());
            }
            fields.add(fd);
        }
        d.put("fields", fields);
        return d;
    }

    static Map<String, Object> constants(Class<?> c) throws IllegalAccessException {
        Map<String, Object> m = Json.obj();
        for (Field f : c.getDeclaredFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == int.class) {
                m.put(f.getName(), f.getInt(null));
            }
        }
        return m;
    }

    static void write(String path, String text) throws IOException {
        Files.write(Path.of(path), (text + "\n").getBytes(StandardCharsets.UTF_8));
    }
}
