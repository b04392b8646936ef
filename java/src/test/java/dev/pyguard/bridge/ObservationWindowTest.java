package dev.pyguard.bridge;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32;

import static org.junit.jupiter.api.Assertions.*;

class ObservationWindowTest {

    private static long crcOfCleanUtf8(String s) {
        CRC32 crc = new CRC32();
        crc.update(GuardSensor.clean(s).getBytes(StandardCharsets.UTF_8));
        return crc.getValue();
    }

    @Test
    void aTextOfAtMostTheWindowIsSentWholeAndCleaned() {
        String text = "x".repeat(ObservationWindow.WINDOW_CHARS);
        ObservationWindow w = ObservationWindow.of(text);
        assertSame(text, w.text());
        assertFalse(w.windowed());
        assertEquals(-1, w.wholeChars());
        assertEquals("a\uFFFDb", ObservationWindow.of("a\uD800b").text());
        assertEquals("", ObservationWindow.of(null).text());
        // more UTF-16 units than the window, but no more code points: whole
        String astral = "\uD83D\uDE00".repeat(ObservationWindow.WINDOW_CHARS);
        assertFalse(ObservationWindow.of(astral).windowed());
    }

    @Test
    void aLongerTextIsItsEdgesAndOneLineWithItsSizeAndChecksum() {
        int edge = ObservationWindow.EDGE_CHARS;
        String text = "h".repeat(edge) + "m".repeat(1_000) + "t".repeat(edge);
        ObservationWindow w = ObservationWindow.of(text);
        assertTrue(w.windowed());
        assertEquals(text.length(), w.wholeChars());
        String expected = "h".repeat(edge) + "\n[pyguard window: 1000 characters of " + text.length()
                + " not read here; whole text checksum " + ObservationWindow.inLetters(crcOfCleanUtf8(text)) + "]\n"
                + "t".repeat(edge);
        assertEquals(expected, w.text());
        assertTrue(w.text().length() <= ObservationWindow.WINDOW_CHARS, "a window is read whole by the engine");
    }

    @Test
    void theStreamedChecksumIsTheChecksumOfTheCleanedUtf8WithPairsAcrossSliceBoundaries() {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 70_000; i++) sb.append(i % 3 == 0 ? "\uD83D\uDE00" : i % 3 == 1 ? "é" : "a");
        sb.append('\uDC00').append("z").append('\uD800');  // lone surrogates inside and at the end
        for (int shift = 0; shift < 3; shift++) {
            String s = "x".repeat(shift) + sb;
            assertEquals(crcOfCleanUtf8(s), ObservationWindow.checksum(s), "shift " + shift);
        }
    }

    @Test
    void lettersAreBase26WithAtLeastSeven() {
        assertEquals("aaaaaaa", ObservationWindow.inLetters(0));
        assertEquals("aaaaaba", ObservationWindow.inLetters(26));
        assertEquals(7, ObservationWindow.inLetters(0xFFFFFFFFL).length());
    }

    @Test
    void anEventOfAHugeToolResultCarriesItsWindowNotTheText() {
        String huge = "y".repeat(3_000_000);
        ObservationWindow w = ObservationWindow.of(huge);
        assertTrue(w.text().length() <= ObservationWindow.WINDOW_CHARS);
        assertEquals(3_000_000, w.wholeChars());
        assertTrue(w.text().contains("2869056 characters of 3000000 not read here"), w.text().substring(65_400, 65_600));
    }
}
