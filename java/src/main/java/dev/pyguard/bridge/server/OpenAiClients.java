package dev.pyguard.bridge.server;

import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.model.openai.OpenAiStreamingChatModel;

import java.time.Duration;

/** LangChain4j's real {@link OpenAiChatModel}, configured so that no failure can hang a run: a timeout, bounded retries. */
public final class OpenAiClients {

    private OpenAiClients() {}

    /**
     * @param timeoutMs  the HTTP timeout (connect and read), at least 1
     * @param maxRetries retries after a failed call (0 = none; LangChain4j's default is 2)
     * @param apiKey     any non-empty string for a local server
     */
    public static OpenAiChatModel chatModel(String baseUrl, String modelName, long timeoutMs, int maxRetries, String apiKey) {
        if (timeoutMs < 1) throw new IllegalArgumentException("timeoutMs=" + timeoutMs + " must be positive: a run must never hang");
        if (maxRetries < 0) throw new IllegalArgumentException("maxRetries=" + maxRetries + " must be >= 0");
        return OpenAiChatModel.builder()
                .baseUrl(baseUrl)
                .apiKey(apiKey == null || apiKey.isBlank() ? "pyguard-local" : apiKey)
                .modelName(modelName)
                .timeout(Duration.ofMillis(timeoutMs))
                .maxRetries(maxRetries)
                .build();
    }

    public static OpenAiChatModel chatModel(String baseUrl, String modelName) {
        return chatModel(baseUrl, modelName, 10_000, 0, null);
    }

    /** LangChain4j's real {@link OpenAiStreamingChatModel} (server-sent events), with a timeout. It asks for usage
     * in the stream ({@code stream_options.include_usage}, LangChain4j's default). */
    public static OpenAiStreamingChatModel streamingChatModel(String baseUrl, String modelName, long timeoutMs, String apiKey) {
        if (timeoutMs < 1) throw new IllegalArgumentException("timeoutMs=" + timeoutMs + " must be positive: a run must never hang");
        return OpenAiStreamingChatModel.builder()
                .baseUrl(baseUrl)
                .apiKey(apiKey == null || apiKey.isBlank() ? "pyguard-local" : apiKey)
                .modelName(modelName)
                .timeout(Duration.ofMillis(timeoutMs))
                .build();
    }
}
