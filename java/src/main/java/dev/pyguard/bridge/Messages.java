package dev.pyguard.bridge;

import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.Content;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.TextContent;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;

import java.util.List;

/** Null-safe text of LangChain4j messages (multi-part contents joined by newlines, non-text parts as placeholders). */
public final class Messages {

    private Messages() {}

    public static String text(ChatMessage m) {
        if (m instanceof ToolExecutionResultMessage t) return textOf(t.contents());
        if (m instanceof UserMessage u) return textOf(u.contents());
        if (m instanceof SystemMessage s) return s.text() == null ? "" : s.text();
        if (m instanceof AiMessage a) return a.text() == null ? "" : a.text();
        return "";
    }

    public static String textOf(List<Content> contents) {
        if (contents == null || contents.isEmpty()) return "";
        if (contents.size() == 1 && contents.get(0) instanceof TextContent tc) return tc.text() == null ? "" : tc.text();
        StringBuilder sb = new StringBuilder();
        for (Content c : contents) {
            if (sb.length() > 0) sb.append('\n');
            if (c instanceof TextContent tc) sb.append(tc.text());
            else sb.append('[').append(c.type()).append(" content]");
        }
        return sb.toString();
    }
}
