package dev.pyguard.bridge;

import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.UserMessage;

import java.util.Map;

/**
 * How a guard reflection enters a request: as a {@link UserMessage} appended after the last tool results, its text
 * starting with {@link #MARKER} and carrying the attribute {@code pyguard.reflection=true}.
 *
 * <p>Why a user message: every provider accepts a user turn after tool results, whereas a system message in the middle
 * of a conversation is rejected or silently moved by several (Anthropic, Gemini). The marker makes it plain to the
 * model, to logs and to the scripted model/server that the text comes from the guard, not from the user. It is added
 * to that one request only (it is not written into the agent's chat memory).
 */
public final class Reflections {

    public static final String MARKER = "[pyguard guard] ";
    public static final String ATTRIBUTE = "pyguard.reflection";

    private Reflections() {}

    public static UserMessage message(String reflection) {
        return UserMessage.builder()
                .contents(java.util.List.of(dev.langchain4j.data.message.TextContent.from(MARKER + reflection)))
                .attributes(Map.of(ATTRIBUTE, Boolean.TRUE))
                .build();
    }

    public static boolean isReflection(ChatMessage m) {
        if (!(m instanceof UserMessage u)) return false;
        if (Boolean.TRUE.equals(u.attributes() == null ? null : u.attributes().get(ATTRIBUTE))) return true;
        return isReflectionText(Messages.textOf(u.contents()));
    }

    public static boolean isReflectionText(String text) {
        return text != null && text.startsWith(MARKER);
    }
}
