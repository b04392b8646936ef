package dev.pyguard.bridge.scripted;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.pyguard.bridge.Messages;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * What identifies a model request for a recording: the SHA-256 (first 16 hex digits) of its messages (type and text;
 * an assistant message's tool calls by name and arguments) and the names of the tools offered. Tool call ids are left
 * out: a real provider and the scripted model that replays it number their calls differently.
 */
public final class RequestDigest {

    private RequestDigest() { }

    public static String of(ChatRequest request) {
        StringBuilder sb = new StringBuilder();
        List<String> tools = new ArrayList<>();
        if (request.toolSpecifications() != null) {
            for (ToolSpecification t : request.toolSpecifications()) tools.add(t.name());
        }
        tools.sort(null);
        sb.append("tools:").append(String.join(",", tools)).append('\n');
        for (ChatMessage m : request.messages()) {
            sb.append(m.type()).append(':').append(Messages.text(m).replace("\n", "\\n"));
            if (m instanceof AiMessage a && a.hasToolExecutionRequests()) {
                for (ToolExecutionRequest r : a.toolExecutionRequests()) {
                    sb.append(" call ").append(r.name()).append(' ').append(r.arguments());
                }
            }
            sb.append('\n');
        }
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(sb.toString().getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(hash).substring(0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /** The request's last message, its type and text cut to 120 characters (what a drift message shows). */
    public static String lastMessage(ChatRequest request) {
        List<ChatMessage> messages = request.messages();
        if (messages.isEmpty()) return "(no message)";
        ChatMessage m = messages.get(messages.size() - 1);
        String text = Messages.text(m);
        return m.type() + " '" + (text.length() > 120 ? text.substring(0, 117) + "..." : text) + "'";
    }
}
