package dev.pyguard.bridge.scripted;

import dev.langchain4j.model.ModelProvider;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.pyguard.bridge.ToolSet;

import java.util.ArrayList;
import java.util.List;

/**
 * A LangChain4j {@link StreamingChatModel} that plays a {@link Scenario}: the replies of a {@link ScriptedChatModel},
 * streamed. Each reply's text arrives as {@code onPartialResponse} chunks (words with their trailing spaces, at most
 * {@link #CHUNK_CHARS} characters each), then {@code onCompleteResponse} with the whole response and its usage, on
 * the calling thread (deterministic). It only overrides {@code doChat}, so LangChain4j's own {@code chat(...)}
 * (listeners included) drives it.
 */
public final class ScriptedStreamingChatModel implements StreamingChatModel {

    public static final int CHUNK_CHARS = 12;

    private final ScriptedChatModel replies;

    public ScriptedStreamingChatModel(ScriptedChatModel replies) { this.replies = replies; }

    public static ScriptedStreamingChatModel fromJson(String json, Long seed) {
        return new ScriptedStreamingChatModel(ScriptedChatModel.fromJson(json, seed));
    }

    @Override
    public void doChat(ChatRequest request, StreamingChatResponseHandler handler) {
        ChatResponse response;
        try {
            response = replies.doChat(request);
        } catch (RuntimeException e) {
            handler.onError(e);
            return;
        }
        for (String chunk : chunks(response.aiMessage().text())) handler.onPartialResponse(chunk);
        handler.onCompleteResponse(response);
    }

    /** {@code text} cut into streaming chunks whose concatenation is {@code text} (none for null or empty text). */
    public static List<String> chunks(String text) {
        List<String> out = new ArrayList<>();
        if (text == null || text.isEmpty()) return out;
        int start = 0;
        int n = text.length();
        while (start < n) {
            int end = start;
            while (end < n && end - start < CHUNK_CHARS && !Character.isWhitespace(text.charAt(end))) end++;
            while (end < n && Character.isWhitespace(text.charAt(end))) end++;
            if (end == start) end = Math.min(n, start + CHUNK_CHARS);
            if (end < n && Character.isLowSurrogate(text.charAt(end))) end++; // never split a surrogate pair
            out.add(text.substring(start, end));
            start = end;
        }
        return out;
    }

    @Override public ModelProvider provider() { return ModelProvider.OTHER; }

    /** Fresh tools for one run, as the scenario says. */
    public ToolSet newTools() { return replies.newTools(); }

    public ScriptedChatModel replies() { return replies; }
    public Scenario scenario() { return replies.scenario(); }
    public int calls() { return replies.calls(); }
}
