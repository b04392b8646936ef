package dev.pyguard.bridge.demo;

import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;

import java.nio.charset.StandardCharsets;

/**
 * Tools that misbehave on purpose, for the bad-input tests: one throws, one returns 5 MB, one returns nothing, one
 * returns text decoded from bytes that are not valid UTF-8 (plus an unpaired surrogate, what a careless byte-to-char
 * conversion produces in Java).
 */
public class HazardTools {

    public static final int BIG_SIZE = 5 * 1024 * 1024;

    /** The bytes {@link #binaryOutput()} decodes: invalid UTF-8 sequences. */
    public static final byte[] BAD_BYTES = {(byte) 0xC3, (byte) 0x28, (byte) 0xFF, (byte) 0xFE, 0x41, (byte) 0xE2, (byte) 0x82};

    @Tool(name = "throwing_tool", value = "Query the warehouse API")
    public String throwingTool(@P("query") String query) {
        throw new IllegalStateException("warehouse API down (503) for query " + query);
    }

    @Tool(name = "huge_output", value = "Export the full event log")
    public String hugeOutput(@P("what to export") String what) {
        StringBuilder sb = new StringBuilder(BIG_SIZE);
        String line = "event 0000000 scanned at hub; ";
        while (sb.length() + line.length() <= BIG_SIZE) sb.append(line);
        while (sb.length() < BIG_SIZE) sb.append('.');
        return sb.toString();
    }

    @Tool(name = "empty_output", value = "List pending alerts")
    public String emptyOutput(@P("region") String region) {
        return "";
    }

    @Tool(name = "binary_output", value = "Read the raw label printer log")
    public String binaryOutput(@P("printer id") String printer) {
        return "utf8:" + new String(BAD_BYTES, StandardCharsets.UTF_8)
                + " latin1:" + new String(BAD_BYTES, StandardCharsets.ISO_8859_1)
                + " lone:\uD800 end";
    }
}
