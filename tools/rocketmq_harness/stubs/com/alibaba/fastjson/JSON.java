package com.alibaba.fastjson;
import com.alibaba.fastjson.serializer.SerializerFeature;
import java.lang.reflect.*;
import java.util.*;
/**
 * harness stand-in for fastjson. Imitates fastjson 1.2.x output for simple beans/maps
 * (getter-based, fields sorted by name, numeric map keys unquoted, PrettyFormat with tabs).
 * Parsing is not supported (the generator always starts from an empty store).
 */
public abstract class JSON {
    public static String toJSONString(Object o) { return toJSONString(o, false); }
    public static String toJSONString(Object o, SerializerFeature... f) {
        boolean p = false; for (SerializerFeature x : f) if (x == SerializerFeature.PrettyFormat) p = true;
        return toJSONString(o, p);
    }
    public static String toJSONString(Object o, boolean pretty) { StringBuilder sb = new StringBuilder(); write(sb, o, pretty, 0); return sb.toString(); }
    public static <T> T parseObject(String s, Class<T> c) { throw new UnsupportedOperationException("fastjson stub: parse not supported"); }
    public static <T> List<T> parseArray(String s, Class<T> c) { throw new UnsupportedOperationException("fastjson stub: parse not supported"); }

    private static void nl(StringBuilder sb, boolean pretty, int indent) { if (!pretty) return; sb.append('\n'); for (int i = 0; i < indent; i++) sb.append('\t'); }
    private static void str(StringBuilder sb, String s) {
        sb.append('"');
        for (char c : s.toCharArray()) {
            switch (c) { case '"': sb.append("\\\""); break; case '\\': sb.append("\\\\"); break; case '\n': sb.append("\\n"); break; case '\r': sb.append("\\r"); break; case '\t': sb.append("\\t"); break;
                default: if (c < 0x20) sb.append(String.format("\\u%04X", (int) c)); else sb.append(c); }
        }
        sb.append('"');
    }
    private static void write(StringBuilder sb, Object o, boolean pretty, int indent) {
        if (o == null) { sb.append("null"); return; }
        if (o instanceof String) { str(sb, (String) o); return; }
        if (o instanceof Number || o instanceof Boolean) { sb.append(o.toString()); return; }
        if (o instanceof Enum) { str(sb, ((Enum<?>) o).name()); return; }
        if (o instanceof Map) {
            Map<?, ?> m = (Map<?, ?>) o; sb.append('{'); boolean first = true;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                if (e.getValue() == null) continue;
                if (!first) sb.append(',');
                first = false;
                if (e.getKey() instanceof String) { nl(sb, pretty, indent + 1); str(sb, (String) e.getKey()); }
                else sb.append(String.valueOf(e.getKey()));
                sb.append(':'); write(sb, e.getValue(), pretty, indent + 1);
            }
            if (!m.isEmpty()) nl(sb, pretty, indent);
            sb.append('}'); return;
        }
        if (o instanceof Collection) {
            Collection<?> c = (Collection<?>) o; sb.append('['); boolean first = true;
            for (Object x : c) { if (!first) sb.append(','); first = false; nl(sb, pretty, indent + 1); write(sb, x, pretty, indent + 1); }
            if (!c.isEmpty()) nl(sb, pretty, indent);
            sb.append(']'); return;
        }
        // java bean: getters, sorted by property name
        TreeMap<String, Method> props = new TreeMap<>();
        for (Method m : o.getClass().getMethods()) {
            if (m.getParameterCount() != 0 || Modifier.isStatic(m.getModifiers()) || m.getDeclaringClass() == Object.class) continue;
            com.alibaba.fastjson.annotation.JSONField jf = m.getAnnotation(com.alibaba.fastjson.annotation.JSONField.class);
            if (jf != null && !jf.serialize()) continue;
            String n = m.getName(); String p = null;
            if (n.startsWith("get") && n.length() > 3) p = n.substring(3); else if (n.startsWith("is") && n.length() > 2 && (m.getReturnType() == boolean.class)) p = n.substring(2);
            if (p == null) continue;
            p = Character.toLowerCase(p.charAt(0)) + p.substring(1);
            props.put(p, m);
        }
        sb.append('{'); boolean first = true;
        for (Map.Entry<String, Method> e : props.entrySet()) {
            Object v; try { v = e.getValue().invoke(o); } catch (Exception ex) { throw new RuntimeException(ex); }
            if (v == null) continue;
            if (!first) sb.append(','); first = false;
            nl(sb, pretty, indent + 1); str(sb, e.getKey()); sb.append(':'); write(sb, v, pretty, indent + 1);
        }
        if (!first) nl(sb, pretty, indent);
        sb.append('}');
    }
}
