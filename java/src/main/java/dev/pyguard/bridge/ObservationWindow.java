package dev.pyguard.bridge;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetEncoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32;

/**
 * What the sensor sends of an observation's text: the whole text when it has at most {@link #WINDOW_CHARS} code
 * points, else its window, the part the engine reads: the first and last {@link #EDGE_CHARS} code points with one line
 * between them saying how many were left out, of how many, and the CRC-32 of the whole text's UTF-8 bytes in letters.
 *
 * <p>This is sensing, not policy: the rule and its numbers have one home, {@code pyguard/engine/window.py}, and this is
 * its mirror, written where the text is so that a 50 MB tool result is not copied into the event, across JPype and
 * into Python to be cut there (tests/jvm/test_observation_window.py checks the two give the same window). Texts are
 * cleaned as everywhere in the sensor ({@link GuardSensor#clean}: a lone surrogate becomes U+FFFD), the checksum
 * included, and streamed in slices: what this allocates is the window and one slice, whatever the text's size.
 */
public final class ObservationWindow {

    /** Texts of at most this many code points are sent whole; a window is never longer. */
    public static final int WINDOW_CHARS = 131_072;
    /** A longer text's first and last this many code points make its window, with one line between them. */
    public static final int EDGE_CHARS = (WINDOW_CHARS - 128) / 2;

    private static final int SLICE_CHARS = 1 << 16;
    private static final byte[] REPLACEMENT_UTF8 = {(byte) 0xEF, (byte) 0xBF, (byte) 0xBD};  // U+FFFD
    private static final String LETTERS = "abcdefghijklmnopqrstuvwxyz";

    private final String text;
    private final long wholeChars;

    private ObservationWindow(String text, long wholeChars) {
        this.text = text;
        this.wholeChars = wholeChars;
    }

    /** The text to send for {@code text} (null is ""). */
    public static ObservationWindow of(String text) {
        String s = text == null ? "" : text;
        int n = s.length();
        // a String's length counts UTF-16 units, never fewer than its code points: the common case costs nothing
        int size = n <= WINDOW_CHARS ? n : s.codePointCount(0, n);
        if (size <= WINDOW_CHARS) return new ObservationWindow(GuardSensor.clean(s), -1);
        int headEnd = s.offsetByCodePoints(0, EDGE_CHARS);
        int tailStart = s.offsetByCodePoints(n, -EDGE_CHARS);
        String window = GuardSensor.clean(s.substring(0, headEnd))
                + marker(size - 2L * EDGE_CHARS, size, checksum(s))
                + GuardSensor.clean(s.substring(tailStart));
        return new ObservationWindow(window, size);
    }

    /** The text to send: the whole (cleaned) text, or its window. */
    public String text() { return text; }

    /** True when {@link #text()} is a window of a longer text. */
    public boolean windowed() { return wholeChars >= 0; }

    /** The whole text's length in code points when {@link #windowed()}, else -1. */
    public long wholeChars() { return wholeChars; }

    /** The most UTF-16 units a text of {@code length} units is sent as (sizing the event's buffer). */
    static long sentLength(long length) {
        return Math.min(length, 2L * WINDOW_CHARS);
    }

    static String marker(long leftOut, long size, long checksum) {
        return "\n[pyguard window: " + leftOut + " characters of " + size + " not read here; whole text checksum "
                + inLetters(checksum) + "]\n";
    }

    /** CRC-32 of the cleaned text's UTF-8 bytes, encoded one slice at a time (no slice ends inside a surrogate pair). */
    static long checksum(String s) {
        CharsetEncoder utf8 = StandardCharsets.UTF_8.newEncoder()
                .onMalformedInput(CodingErrorAction.REPLACE)
                .onUnmappableCharacter(CodingErrorAction.REPLACE)
                .replaceWith(REPLACEMENT_UTF8);
        char[] chars = new char[SLICE_CHARS];
        ByteBuffer bytes = ByteBuffer.allocate(3 * SLICE_CHARS);  // UTF-8 takes at most 3 bytes per UTF-16 unit
        CRC32 crc = new CRC32();
        int n = s.length();
        for (int start = 0; start < n; ) {
            int end = Math.min(n, start + SLICE_CHARS);
            if (end < n && Character.isHighSurrogate(s.charAt(end - 1)) && Character.isLowSurrogate(s.charAt(end))) end--;
            s.getChars(start, end, chars, 0);
            utf8.reset();
            bytes.clear();
            CharBuffer in = CharBuffer.wrap(chars, 0, end - start);
            utf8.encode(in, bytes, true);
            utf8.flush(bytes);
            bytes.flip();
            crc.update(bytes);
            start = end;
        }
        return crc.getValue();
    }

    /** {@code value} (non-negative) in base 26 with the letters a-z, at least 7 of them (a 32-bit value's). */
    static String inLetters(long value) {
        StringBuilder out = new StringBuilder();
        while (value > 0 || out.length() < 7) {
            out.append(LETTERS.charAt((int) (value % 26)));
            value /= 26;
        }
        return out.reverse().toString();
    }
}
