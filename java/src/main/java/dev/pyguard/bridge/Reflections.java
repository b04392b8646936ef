package dev.pyguard.bridge;

import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.UserMessage;

import java.util.Map;

/**
 * How a guard reflection enters a request: as a {@link UserMessage} appended after the last tool results, its text
 * starting with {@link #MARKER} and carrying the attribute {@code pyguard.reflection} set to a token object only this
 * class holds.
 *
 * <p>The guard recognises its own message by that token, never by its text: a tool result, a tool name or a task
 * text that starts with the marker is somebody else's text and is treated as such (the text prefix is for the model
 * and for people reading logs). Only a model on the far side of HTTP, which sees text alone, has to go by the marker
 * ({@link #isReflectionText}; pyguard's local test server does).
 *
 * <p>Why a user message: every provider accepts a user turn after tool results, whereas a system message in the middle
 * of a conversation is rejected or silently moved by several (Anthropic, Gemini). The marker makes it plain to the
 * model, to logs and to the scripted model/server that the text comes from the guard, not from the user. It is added
 * to that one request only (it is not written into the agent's chat memory).
 */
public final class Reflections {

    public static final String MARKER = "[pyguard guard] ";
    public static final String ATTRIBUTE = "pyguard.reflection";

    /** The attribute value of a guard reflection: an object nobody outside this class can make or name. */
    private static final Object TOKEN = new Object() {
        @Override public String toString() { return "pyguard-guard-reflection"; }
    };

    private Reflections() {}

    public static UserMessage message(String reflection) {
        return UserMessage.builder()
                .contents(java.util.List.of(dev.langchain4j.data.message.TextContent.from(MARKER + reflection)))
                .attributes(Map.of(ATTRIBUTE, TOKEN))
                .build();
    }

    /** True only for a message made by {@link #message}: by its token, whatever its text says. */
    public static boolean isReflection(ChatMessage m) {
        if (!(m instanceof UserMessage u)) return false;
        return u.attributes() != null && u.attributes().get(ATTRIBUTE) == TOKEN;
    }

    /** For a model that sees only text (over HTTP): the guard's marker at the start. Never used by the guard itself. */
    public static boolean isReflectionText(String text) {
        return text != null && text.startsWith(MARKER);
    }
}
