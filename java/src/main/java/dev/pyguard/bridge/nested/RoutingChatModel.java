package dev.pyguard.bridge.nested;

import dev.langchain4j.model.ModelProvider;
import dev.langchain4j.model.chat.Capability;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.ChatRequestOptions;
import dev.langchain4j.model.chat.listener.ChatModelListener;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.pyguard.bridge.GuardedChatModel;

import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The model a sub-agent is built with: a LangChain4j sub-agent keeps one {@link ChatModel} for all its invocations,
 * while each invocation is its own child run with its own guarded model. {@link AgentTree} points this model at the
 * current invocation's model before it starts and back at the base model after it ends.
 */
public final class RoutingChatModel implements ChatModel {

    private final String agentName;
    private final ChatModel base;
    private final AtomicReference<ChatModel> current = new AtomicReference<>();

    public RoutingChatModel(String agentName, ChatModel base) {
        this.agentName = Objects.requireNonNull(agentName, "agentName");
        this.base = Objects.requireNonNull(base, "base ChatModel of sub-agent " + agentName);
    }

    void route(ChatModel target) { current.set(target); }

    ChatModel target() {
        ChatModel c = current.get();
        return c != null ? c : base;
    }

    /** The current invocation's guarded model, or null between invocations. */
    public GuardedChatModel guarded() { return current.get() instanceof GuardedChatModel g ? g : null; }

    public String agentName() { return agentName; }
    public ChatModel base() { return base; }

    @Override public ChatResponse chat(ChatRequest request) { return target().chat(request); }
    @Override public ChatResponse chat(ChatRequest request, ChatRequestOptions options) { return target().chat(request, options); }
    @Override public ChatResponse doChat(ChatRequest request) { return target().chat(request); }
    @Override public List<ChatModelListener> listeners() { return List.of(); }
    @Override public ModelProvider provider() { return base.provider(); }
    @Override public ChatRequestParameters defaultRequestParameters() { return base.defaultRequestParameters(); }
    @Override public Set<Capability> supportedCapabilities() { return base.supportedCapabilities(); }
}
