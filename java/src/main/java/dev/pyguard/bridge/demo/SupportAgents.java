package dev.pyguard.bridge.demo;

import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.service.AiServices;
import dev.langchain4j.service.MemoryId;
import dev.langchain4j.service.UserMessage;
import dev.langchain4j.service.tool.BeforeToolExecution;
import dev.langchain4j.service.tool.ToolExecution;
import dev.pyguard.bridge.ToolSet;

import java.util.function.Consumer;

/**
 * An agent built the way a service builds it: once, an AiServices interface with one chat memory per user
 * ({@code @MemoryId}), the tool hooks a guard hands out, and LangChain4j's own round-trip cap. Typed with LangChain4j's
 * interfaces only, like a user's factory (the tests of a guard attached to an agent use it).
 */
public final class SupportAgents {

    /** The agent: one conversation per {@code user}. */
    public interface SupportAgent {
        String chat(@MemoryId String user, @UserMessage String message);
    }

    private SupportAgents() {}

    /**
     * @param before            the guard's before-tool hook, or null
     * @param after             the guard's after-tool hook (counts executed tools), or null
     * @param maxRoundTrips     LangChain4j's own cap on tool-calling round trips per turn
     */
    public static SupportAgent create(ChatModel model, ToolSet tools, Consumer<BeforeToolExecution> before,
                                      Consumer<ToolExecution> after, int maxRoundTrips) {
        AiServices<SupportAgent> b = AiServices.builder(SupportAgent.class)
                .chatModel(model)
                .chatMemoryProvider(id -> MessageWindowChatMemory.withMaxMessages(200))
                .maxToolCallingRoundTrips(maxRoundTrips);
        if (!tools.objects().isEmpty()) b.tools(tools.objects());
        if (!tools.explicitTools().isEmpty()) b.tools(tools.explicitTools());
        if (before != null) b.beforeToolExecution(before);
        if (after != null) b.afterToolExecution(after);
        return b.build();
    }
}
