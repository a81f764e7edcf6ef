package dev.krecords.interop;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A deliberately small JSON reader and writer, so the vectors do not depend on a JSON library's
 * formatting choices (the generator's output must be byte-for-byte reproducible).
 *
 * <p>Model: {@code null}, {@link Boolean}, {@link Long} (every integer we use fits in 64 bits),
 * {@link String}, {@link List} and {@link Map} (a {@link LinkedHashMap}, so key order is kept).
 * Fractional numbers are rejected: nothing in the vectors needs them.
 *
 * <p>Layout written: objects and arrays nested at most {@code expandDepth} levels deep are spread
 * over lines with two-space indentation; anything deeper is written on one line. With depth 3 a
 * vector file shows one record or one batch per line, which keeps diffs readable.
 */
public final class Json {
    private Json() {}

    // ------------------------------------------------------------------ writing

    /** Writes {@code value} with the layout described in the class comment, ending with a newline. */
    public static String write(Object value, int expandDepth) {
        StringBuilder out = new StringBuilder();
        write(out, value, 0, expandDepth);
        out.append('\n');
        return out.toString();
    }

    private static void write(StringBuilder out, Object value, int depth, int expandDepth) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof Boolean || value instanceof Long || value instanceof Integer
                || value instanceof Short || value instanceof Byte) {
            out.append(value);
        } else if (value instanceof String s) {
            writeString(out, s);
        } else if (value instanceof Map<?, ?> map) {
            boolean expand = depth < expandDepth && !map.isEmpty();
            out.append('{');
            int i = 0;
            for (Map.Entry<?, ?> e : map.entrySet()) {
                if (i++ > 0) out.append(expand ? "," : ", ");
                if (expand) newline(out, depth + 1);
                writeString(out, (String) e.getKey());
                out.append(": ");
                write(out, e.getValue(), depth + 1, expandDepth);
            }
            if (expand) newline(out, depth);
            out.append('}');
        } else if (value instanceof List<?> list) {
            boolean expand = depth < expandDepth && !list.isEmpty();
            out.append('[');
            for (int i = 0; i < list.size(); i++) {
                if (i > 0) out.append(expand ? "," : ", ");
                if (expand) newline(out, depth + 1);
                write(out, list.get(i), depth + 1, expandDepth);
            }
            if (expand) newline(out, depth);
            out.append(']');
        } else {
            throw new IllegalArgumentException("cannot write " + value.getClass() + " as JSON");
        }
    }

    private static void newline(StringBuilder out, int depth) {
        out.append('\n');
        for (int i = 0; i < depth; i++) out.append("  ");
    }

    private static void writeString(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
                    else out.append(c); // non-ASCII is written as UTF-8 text
                }
            }
        }
        out.append('"');
    }

    // ------------------------------------------------------------------ reading

    /** Parses one JSON document; trailing non-whitespace is an error. */
    public static Object parse(String text) {
        Parser p = new Parser(text);
        p.skipWs();
        Object v = p.value();
        p.skipWs();
        if (p.pos != text.length()) throw p.error("trailing characters");
        return v;
    }

    private static final class Parser {
        private final String s;
        private int pos;

        Parser(String s) {
            this.s = s;
        }

        IllegalArgumentException error(String what) {
            return new IllegalArgumentException("JSON: " + what + " at character " + pos);
        }

        void skipWs() {
            while (pos < s.length() && Character.isWhitespace(s.charAt(pos))) pos++;
        }

        void expect(char c) {
            if (pos >= s.length() || s.charAt(pos) != c) throw error("expected '" + c + "'");
            pos++;
        }

        Object value() {
            if (pos >= s.length()) throw error("unexpected end");
            char c = s.charAt(pos);
            switch (c) {
                case '{': return object();
                case '[': return array();
                case '"': return string();
                case 't': literal("true"); return Boolean.TRUE;
                case 'f': literal("false"); return Boolean.FALSE;
                case 'n': literal("null"); return null;
                default:
                    if (c == '-' || (c >= '0' && c <= '9')) return number();
                    throw error("unexpected character '" + c + "'");
            }
        }

        void literal(String word) {
            if (!s.startsWith(word, pos)) throw error("expected " + word);
            pos += word.length();
        }

        Map<String, Object> object() {
            expect('{');
            Map<String, Object> map = new LinkedHashMap<>();
            skipWs();
            if (pos < s.length() && s.charAt(pos) == '}') {
                pos++;
                return map;
            }
            while (true) {
                skipWs();
                String key = string();
                skipWs();
                expect(':');
                skipWs();
                if (map.put(key, value()) != null) throw error("duplicate key " + key);
                skipWs();
                if (pos < s.length() && s.charAt(pos) == ',') {
                    pos++;
                    continue;
                }
                expect('}');
                return map;
            }
        }

        List<Object> array() {
            expect('[');
            List<Object> list = new ArrayList<>();
            skipWs();
            if (pos < s.length() && s.charAt(pos) == ']') {
                pos++;
                return list;
            }
            while (true) {
                skipWs();
                list.add(value());
                skipWs();
                if (pos < s.length() && s.charAt(pos) == ',') {
                    pos++;
                    continue;
                }
                expect(']');
                return list;
            }
        }

        String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (true) {
                if (pos >= s.length()) throw error("unterminated string");
                char c = s.charAt(pos++);
                if (c == '"') return b.toString();
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                if (pos >= s.length()) throw error("unterminated escape");
                char e = s.charAt(pos++);
                switch (e) {
                    case '"', '\\', '/' -> b.append(e);
                    case 'b' -> b.append('\b');
                    case 'f' -> b.append('\f');
                    case 'n' -> b.append('\n');
                    case 'r' -> b.append('\r');
                    case 't' -> b.append('\t');
                    case 'u' -> {
                        if (pos + 4 > s.length()) throw error("short \\u escape");
                        b.append((char) Integer.parseInt(s.substring(pos, pos + 4), 16));
                        pos += 4;
                    }
                    default -> throw error("bad escape \\" + e);
                }
            }
        }

        Long number() {
            int start = pos;
            if (s.charAt(pos) == '-') pos++;
            while (pos < s.length() && Character.isDigit(s.charAt(pos))) pos++;
            if (pos < s.length() && ".eE".indexOf(s.charAt(pos)) >= 0)
                throw error("fractional numbers are not supported");
            String digits = s.substring(start, pos);
            BigInteger big = new BigInteger(digits);
            if (big.bitLength() > 63) throw error("integer out of 64-bit range: " + digits);
            return big.longValue();
        }
    }

    // ------------------------------------------------------------------ typed access helpers

    /** A JSON object as a map, or an error naming {@code what}. */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> obj(Object v, String what) {
        if (v instanceof Map) return (Map<String, Object>) v;
        throw new IllegalArgumentException(what + ": expected a JSON object, got " + describe(v));
    }

    @SuppressWarnings("unchecked")
    public static List<Object> arr(Object v, String what) {
        if (v instanceof List) return (List<Object>) v;
        throw new IllegalArgumentException(what + ": expected a JSON array, got " + describe(v));
    }

    /** Integer field; {@code dflt} when the key is absent. A present JSON null is an error. */
    public static long lng(Map<String, Object> m, String key, long dflt) {
        if (!m.containsKey(key)) return dflt;
        Object v = m.get(key);
        if (v instanceof Long l) return l;
        throw new IllegalArgumentException(key + ": expected an integer, got " + describe(v));
    }

    public static long lng(Map<String, Object> m, String key) {
        if (!m.containsKey(key)) throw new IllegalArgumentException("missing field " + key);
        return lng(m, key, 0);
    }

    /** Integer field that may be absent or null. */
    public static Long optLng(Map<String, Object> m, String key) {
        Object v = m.get(key);
        if (v == null) return null;
        if (v instanceof Long l) return l;
        throw new IllegalArgumentException(key + ": expected an integer or null, got " + describe(v));
    }

    public static boolean bool(Map<String, Object> m, String key, boolean dflt) {
        Object v = m.get(key);
        if (v == null) return dflt;
        if (v instanceof Boolean b) return b;
        throw new IllegalArgumentException(key + ": expected a boolean, got " + describe(v));
    }

    public static String str(Map<String, Object> m, String key, String dflt) {
        Object v = m.get(key);
        if (v == null) return dflt;
        if (v instanceof String s) return s;
        throw new IllegalArgumentException(key + ": expected a string, got " + describe(v));
    }

    private static String describe(Object v) {
        return v == null ? "null" : v.getClass().getSimpleName();
    }
}
