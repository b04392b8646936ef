package dev.usercode;

import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.output.TokenUsage;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A user's own decorating ChatModel, written apart from pyguard: it counts every call the provider gets and sums the
 * tokens the provider billed (what a user would check pyguard's figures against). Python tests put it between
 * pyguard's guard and the provider's model.
 */
public final class CountingChatModel implements ChatModel {
    private final ChatModel provider;
    private final AtomicInteger calls = new AtomicInteger();
    private final AtomicInteger tokens = new AtomicInteger();

    public CountingChatModel(ChatModel provider) { this.provider = provider; }

    @Override
    public ChatResponse chat(ChatRequest request) {
        calls.incrementAndGet();
        ChatResponse r = provider.chat(request);
        TokenUsage u = r == null ? null : r.tokenUsage();
        if (u != null && u.totalTokenCount() != null) tokens.addAndGet(u.totalTokenCount());
        return r;
    }

    public int calls() { return calls.get(); }

    public int tokens() { return tokens.get(); }
}
