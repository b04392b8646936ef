package dev.pyguard.bridge;

import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.UserMessage;

import java.util.Map;

/**
 * How a guard reflection enters a request: as a {@link UserMessage} appended after the last tool results, its text
 * exactly as the guard wrote it, carrying the attribute {@code pyguard.reflection} set to a token object only this
 * class holds.
 *
 * <p>The label that tells the model (and people reading logs) that the message comes from the guard is part of the
 * guard's text, defined once on the Python side ({@code pyguard.engine.reflection.HEADER}); Java adds none of its
 * own, so the model reads one label, not two.
 *
 * <p>The guard recognises its own message by that token, never by its text: a tool result, a tool name or a task
 * text that starts like a guard message is somebody else's text and is treated as such.
 *
 * <p>Why a user message: every provider accepts a user turn after tool results, whereas a system message in the middle
 * of a conversation is rejected or silently moved by several (Anthropic, Gemini). It is added to that one request only
 * (it is not written into the agent's chat memory).
 */
public final class Reflections {

    public static final String ATTRIBUTE = "pyguard.reflection";

    /** The attribute value of a guard reflection: an object nobody outside this class can make or name. */
    private static final Object TOKEN = new Object() {
        @Override public String toString() { return "pyguard-guard-reflection"; }
    };

    private Reflections() {}

    /** The guard's reflection as the message the model receives: {@code reflection} verbatim, marked by the token. */
    public static UserMessage message(String reflection) {
        return UserMessage.builder()
                .contents(java.util.List.of(dev.langchain4j.data.message.TextContent.from(reflection)))
                .attributes(Map.of(ATTRIBUTE, TOKEN))
                .build();
    }

    /** True only for a message made by {@link #message}: by its token, whatever its text says. */
    public static boolean isReflection(ChatMessage m) {
        if (!(m instanceof UserMessage u)) return false;
        return u.attributes() != null && u.attributes().get(ATTRIBUTE) == TOKEN;
    }
}
