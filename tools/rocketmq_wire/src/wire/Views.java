package wire;

import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NavigableSet;
import java.util.Random;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The neutral "view" of a Java object (what a reader in any language should reconstruct) and
 * the way back from a view to a Java object. Both directions are driven by the declared Java
 * types, so the view itself carries no type tags (README.md of corpus/frames defines it):
 * beans are objects keyed by Java member names, maps with String keys are objects, other maps
 * are lists of {"key","value"} pairs, collections are lists, byte[] is lower-case hex, enums are
 * names, AtomicLong is a number. A number whose runtime class differs from the declared one is
 * shown as {"$javaType": class, "value": n}.
 */
final class Views {
    private Views() {
    }

    // ------------------------------------------------------------------ object -> view
    static Object view(Object v, Type t) {
        if (v == null) {
            return null;
        }
        Class<?> declared = raw(t);
        if (v instanceof byte[]) {
            return Json.hex((byte[]) v);
        }
        if (v instanceof String || v instanceof Boolean) {
            return v;
        }
        if (v instanceof Character) {
            return v.toString();
        }
        if (v instanceof AtomicLong) {
            return ((AtomicLong) v).get();
        }
        if (v instanceof AtomicInteger) {
            return ((AtomicInteger) v).get();
        }
        if (v instanceof Number) {
            Class<?> want = box(declared);
            if (want != null && Number.class.isAssignableFrom(want) && want != v.getClass()) {
                Map<String, Object> tagged = Json.obj();
                tagged.put("$javaType", v.getClass().getName());
                tagged.put("value", v);
                return tagged;
            }
            return v;
        }
        if (v instanceof Enum) {
            SEEN.add(((Enum<?>) v).getDeclaringClass().getName());
            return ((Enum<?>) v).name();
        }
        if (v instanceof Map) {
            return mapView((Map<?, ?>) v, arg(t, 0), arg(t, 1));
        }
        if (v instanceof Collection) {
            return collectionView((Collection<?>) v, arg(t, 0));
        }
        if (v.getClass().getName().startsWith("java.")) {
            return v.toString();
        }
        return beanView(v);
    }

    /** Classes of the beans and map keys met by view(), for the corpus's coverage list. */
    static final java.util.Set<String> SEEN = new java.util.TreeSet<>();

    static Map<String, Object> beanView(Object v) {
        SEEN.add(v.getClass().getName());
        Map<String, Object> out = Json.obj();
        for (Field f : fields(v.getClass())) {
            try {
                out.put(f.getName(), view(f.get(v), f.getGenericType()));
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        }
        return out;
    }

    private static Object mapView(Map<?, ?> m, Type kt, Type vt) {
        boolean stringKeys = (raw(kt) == String.class || raw(kt) == Object.class);
        for (Object k : m.keySet()) {
            stringKeys &= k instanceof String;
        }
        if (stringKeys) {
            Map<String, Object> out = Json.obj();
            for (Map.Entry<?, ?> e : m.entrySet()) {
                out.put((String) e.getKey(), view(e.getValue(), vt));
            }
            return out;
        }
        List<Object> pairs = Json.list();
        for (Map.Entry<?, ?> e : m.entrySet()) {
            Map<String, Object> p = Json.obj();
            p.put("key", view(e.getKey(), kt));
            p.put("value", view(e.getValue(), vt));
            pairs.add(p);
        }
        return pairs;
    }

    private static Object collectionView(Collection<?> c, Type et) {
        List<Object> out = Json.list();
        boolean identityOrder = false;
        for (Object e : c) {
            out.add(view(e, et));
            identityOrder |= c instanceof java.util.Set && e != null && !overridesHashCode(e.getClass());
        }
        if (identityOrder) {
            // HashSet of objects without hashCode(): Java's order is the identity-hash order,
            // which changes from run to run; the view lists them by their JSON text instead.
            out.sort((a, b) -> Json.write(a).compareTo(Json.write(b)));
        }
        return out;
    }

    static boolean overridesHashCode(Class<?> c) {
        try {
            return c.getMethod("hashCode").getDeclaringClass() != Object.class;
        } catch (NoSuchMethodException e) {
            return false;
        }
    }

    /** Instance fields of a bean, super classes first, declaration order; skips Random (BrokerData). */
    static List<Field> fields(Class<?> c) {
        List<Class<?>> chain = new ArrayList<>();
        for (Class<?> k = c; k != null && k != Object.class; k = k.getSuperclass()) {
            chain.add(0, k);
        }
        List<Field> out = new ArrayList<>();
        for (Class<?> k : chain) {
            for (Field f : k.getDeclaredFields()) {
                if (Modifier.isStatic(f.getModifiers()) || f.isSynthetic() || f.getType() == Random.class) {
                    continue;
                }
                f.setAccessible(true);
                out.add(f);
            }
        }
        return out;
    }

    static Field field(Class<?> c, String name) {
        for (Field f : fields(c)) {
            if (f.getName().equals(name)) {
                return f;
            }
        }
        throw new IllegalArgumentException(c.getName() + " has no field " + name);
    }

    // ------------------------------------------------------------------ view -> object
    @SuppressWarnings({"unchecked", "rawtypes"})
    static Object build(Object jv, Type t, Object existing) throws Exception {
        if (jv == null) {
            return null;
        }
        Class<?> c = raw(t);
        if (c == Object.class || c == String.class) {
            return jv; // Object: an untyped member (Properties values) keeps the catalog's value
        }
        if (c == int.class || c == Integer.class) {
            return ((Number) jv).intValue();
        }
        if (c == long.class || c == Long.class) {
            return ((Number) jv).longValue();
        }
        if (c == short.class || c == Short.class) {
            return ((Number) jv).shortValue();
        }
        if (c == byte.class || c == Byte.class) {
            return ((Number) jv).byteValue();
        }
        if (c == double.class || c == Double.class || c == float.class || c == Float.class) {
            double d = jv instanceof String ? Double.parseDouble((String) jv) : ((Number) jv).doubleValue();
            return (c == float.class || c == Float.class) ? (Object) (float) d : (Object) d;
        }
        if (c == boolean.class || c == Boolean.class) {
            return (Boolean) jv;
        }
        if (c == AtomicLong.class) {
            return new AtomicLong(((Number) jv).longValue());
        }
        if (c.isEnum()) {
            return Enum.valueOf((Class) c, (String) jv);
        }
        if (c == byte[].class) {
            return Json.unhex((String) jv);
        }
        if (c == BigDecimal.class) {
            return new BigDecimal(jv.toString());
        }
        if (c == BigInteger.class) {
            return new BigInteger(jv.toString());
        }
        Map<String, Object> spec = null;
        if (jv instanceof Map && ((Map<String, Object>) jv).containsKey("$type")) {
            spec = (Map<String, Object>) jv;
        }
        if (Map.class.isAssignableFrom(c)) {
            Map<Object, Object> m = (Map<Object, Object>) container(c, spec, existing);
            Object entries = spec != null ? spec.get("$entries") : jv;
            Type kt = arg(t, 0);
            Type vt = arg(t, 1);
            if (entries instanceof Map) {
                for (Map.Entry<String, Object> e : ((Map<String, Object>) entries).entrySet()) {
                    m.put(key(e.getKey(), kt), build(e.getValue(), vt, null));
                }
            } else {
                for (Object p : (List<Object>) entries) {
                    Map<String, Object> pair = (Map<String, Object>) p;
                    m.put(build(pair.get("key"), kt, null), build(pair.get("value"), vt, null));
                }
            }
            return m;
        }
        if (Collection.class.isAssignableFrom(c)) {
            Collection<Object> out = (Collection<Object>) container(c, spec, existing);
            Object items = spec != null ? spec.get("$items") : jv;
            for (Object item : (List<Object>) items) {
                out.add(build(item, arg(t, 0), null));
            }
            return out;
        }
        Object bean = instantiate(c);
        for (Map.Entry<String, Object> e : ((Map<String, Object>) jv).entrySet()) {
            Field f = field(c, e.getKey());
            Object value = build(e.getValue(), f.getGenericType(), f.get(bean));
            if (value == null && f.getType().isPrimitive()) {
                continue;
            }
            f.set(bean, value);
        }
        return bean;
    }

    /** The no-argument constructor, else the first one with zero/null arguments (MessageQueueForC). */
    static Object instantiate(Class<?> c) throws Exception {
        try {
            Constructor<?> ctor = c.getDeclaredConstructor();
            ctor.setAccessible(true);
            return ctor.newInstance();
        } catch (NoSuchMethodException e) {
            Constructor<?> ctor = c.getDeclaredConstructors()[0];
            ctor.setAccessible(true);
            Class<?>[] types = ctor.getParameterTypes();
            Object[] args = new Object[types.length];
            for (int i = 0; i < types.length; i++) {
                args[i] = !types[i].isPrimitive() ? null : types[i] == boolean.class ? (Object) false
                    : types[i] == long.class ? (Object) 0L : types[i] == int.class ? (Object) 0 : (Object) (byte) 0;
            }
            return ctor.newInstance(args);
        }
    }

    private static Object key(String text, Type kt) {
        Class<?> k = raw(kt);
        if (k == Long.class) {
            return Long.valueOf(text);
        }
        if (k == Integer.class) {
            return Integer.valueOf(text);
        }
        return text;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static Object container(Class<?> declared, Map<String, Object> spec, Object existing) throws Exception {
        if (spec != null) {
            Class<?> k = Class.forName((String) spec.get("$type"));
            Object cap = spec.get("$initialCapacity");
            if (cap != null) {
                return k.getConstructor(int.class).newInstance(((Number) cap).intValue());
            }
            return k.getConstructor().newInstance();
        }
        if (existing != null) {
            if (existing instanceof Map) {
                ((Map) existing).clear();
            } else {
                ((Collection) existing).clear();
            }
            return existing;
        }
        if (!declared.isInterface() && !Modifier.isAbstract(declared.getModifiers())) {
            return declared.getConstructor().newInstance();
        }
        if (ConcurrentMap.class.isAssignableFrom(declared)) {
            return new ConcurrentHashMap<>();
        }
        if (SortedMap.class.isAssignableFrom(declared) || NavigableMap.class.isAssignableFrom(declared)) {
            return new TreeMap<>();
        }
        if (Map.class.isAssignableFrom(declared)) {
            return new HashMap<>();
        }
        if (SortedSet.class.isAssignableFrom(declared) || NavigableSet.class.isAssignableFrom(declared)) {
            return new TreeSet<>();
        }
        if (java.util.Set.class.isAssignableFrom(declared)) {
            return new HashSet<>();
        }
        return new ArrayList<>();
    }

    // ------------------------------------------------------------------ types
    static Class<?> raw(Type t) {
        if (t instanceof Class) {
            return (Class<?>) t;
        }
        if (t instanceof ParameterizedType) {
            return (Class<?>) ((ParameterizedType) t).getRawType();
        }
        return Object.class;
    }

    static Type arg(Type t, int i) {
        if (t instanceof ParameterizedType) {
            Type[] a = ((ParameterizedType) t).getActualTypeArguments();
            if (i < a.length) {
                return a[i];
            }
        }
        return Object.class;
    }

    private static Class<?> box(Class<?> c) {
        if (c == int.class) {
            return Integer.class;
        }
        if (c == long.class) {
            return Long.class;
        }
        if (c == double.class) {
            return Double.class;
        }
        if (c == float.class) {
            return Float.class;
        }
        if (c == short.class) {
            return Short.class;
        }
        if (c == byte.class) {
            return Byte.class;
        }
        if (c == Object.class) {
            return null;
        }
        return c;
    }
}
