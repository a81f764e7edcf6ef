package dev.krecords.interop;

import java.nio.ByteBuffer;

/** Lowercase hex, the byte rendering used throughout the vectors. */
public final class Hex {
    private static final char[] DIGITS = "0123456789abcdef".toCharArray();

    private Hex() {}

    public static String encode(byte[] bytes) {
        return encode(bytes, 0, bytes.length);
    }

    public static String encode(byte[] bytes, int from, int to) {
        char[] out = new char[(to - from) * 2];
        for (int i = from; i < to; i++) {
            out[(i - from) * 2] = DIGITS[(bytes[i] >> 4) & 0xf];
            out[(i - from) * 2 + 1] = DIGITS[bytes[i] & 0xf];
        }
        return new String(out);
    }

    /** Hex of the remaining bytes of {@code buf}; {@code null} for a null buffer. Does not move its position. */
    public static String encode(ByteBuffer buf) {
        if (buf == null) return null;
        return encode(bytes(buf));
    }

    /** The remaining bytes of {@code buf} as an array, without moving its position. */
    public static byte[] bytes(ByteBuffer buf) {
        ByteBuffer dup = buf.duplicate();
        byte[] out = new byte[dup.remaining()];
        dup.get(out);
        return out;
    }

    public static byte[] decode(String hex) {
        if (hex.length() % 2 != 0) throw new IllegalArgumentException("odd-length hex string");
        byte[] out = new byte[hex.length() / 2];
        for (int i = 0; i < out.length; i++) {
            int hi = Character.digit(hex.charAt(2 * i), 16);
            int lo = Character.digit(hex.charAt(2 * i + 1), 16);
            if (hi < 0 || lo < 0) throw new IllegalArgumentException("bad hex digit near position " + 2 * i);
            out[i] = (byte) ((hi << 4) | lo);
        }
        return out;
    }

    /** {@link #decode} that maps a JSON null to {@code null}. */
    public static byte[] decodeNullable(Object hex, String what) {
        if (hex == null) return null;
        if (!(hex instanceof String s)) throw new IllegalArgumentException(what + ": expected a hex string or null");
        return decode(s);
    }
}
