package dev.pyguard.bridge;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.ChatMessageDeserializer;
import dev.langchain4j.data.message.ChatMessageSerializer;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.memory.ChatMemory;
import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.service.AiServices;
import dev.langchain4j.service.TokenStream;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;

/**
 * AiServices agents whose chat memory pyguard holds ({@link ConversationAgent}): blocking (a {@link ChatModel}, the
 * interface returns the answer) or streaming (a {@link StreamingChatModel}, the interface returns a
 * {@link TokenStream}: {@code onPartialResponse / onCompleteResponse / onError / start}). Each may start from a
 * conversation read back from {@link ConversationAgent#memoryJson()} (a resumed run).
 *
 * <p>The guard is wired as in {@link Agents#aiServices}: the guarded model acts before each model call, and the tool
 * hooks keep the tools of the last response from running when a stop is pending (for a stream, through
 * {@code TokenStream.beforeToolExecution / onToolExecuted}).
 */
public final class ConversationAgents {

    private ConversationAgents() {}

    /** A fresh chat memory holding {@code memoryJson}'s messages (none when null or blank). */
    public static ChatMemory memory(String memoryJson) {
        ChatMemory memory = MessageWindowChatMemory.withMaxMessages(Agents.CONVERSATION_MESSAGES);
        if (memoryJson != null && !memoryJson.isBlank()) {
            List<ChatMessage> messages;
            try {
                messages = ChatMessageDeserializer.messagesFromJson(memoryJson);
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("the conversation JSON cannot be read as LangChain4j messages: "
                        + GuardSensor.describe(e) + "; pass what ConversationAgent.memoryJson() wrote", e);
            }
            for (ChatMessage m : messages) memory.add(m);
        }
        return memory;
    }

    /** The messages as JSON, cut before a last AI message whose tool calls have no results. */
    public static String toJson(List<ChatMessage> messages) {
        List<ChatMessage> kept = new ArrayList<>(messages);
        for (int i = kept.size() - 1; i >= 0; i--) {
            if (kept.get(i) instanceof AiMessage ai && ai.hasToolExecutionRequests()) {
                Set<String> answered = new HashSet<>();
                for (ChatMessage m : kept.subList(i + 1, kept.size())) {
                    if (m instanceof ToolExecutionResultMessage t) answered.add(t.id());
                }
                for (ToolExecutionRequest r : ai.toolExecutionRequests()) {
                    if (!answered.contains(r.id())) {
                        kept = new ArrayList<>(kept.subList(0, i));
                        break;
                    }
                }
                break;
            }
        }
        return ChatMessageSerializer.messagesToJson(kept);
    }

    /** {@code tools} null: the model's own ({@link ToolSet#ownedBy}), so that Python builds the agent in one call. */
    public static ConversationAgent blocking(ChatModel model, ToolSet tools, int maxToolCallingRoundTrips,
                                             String systemMessage, String memoryJson) {
        checkRoundTrips(maxToolCallingRoundTrips);
        if (tools == null) tools = ToolSet.ownedBy(model);
        ChatMemory memory = memory(memoryJson);
        AiServices<ToolAssistant> b = AiServices.builder(ToolAssistant.class)
                .chatModel(model)
                .chatMemory(memory)
                .maxToolCallingRoundTrips(maxToolCallingRoundTrips);
        addTools(b, tools, systemMessage);
        addToolHooks(b, model);
        ToolAssistant assistant = b.build();
        return agent(false, memory, model, assistant::chat);
    }

    /**
     * An AiServices agent built once for many runs (a guard attached to it for its lifetime): each run, on any thread,
     * has a chat memory of its own, dropped when the run ends. {@code tools} null: the model's own.
     */
    public static GuardedAgent perRun(ChatModel model, ToolSet tools, int maxToolCallingRoundTrips, String systemMessage) {
        checkRoundTrips(maxToolCallingRoundTrips);
        if (tools == null) tools = ToolSet.ownedBy(model);
        AiServices<MemoryAssistant> b = AiServices.builder(MemoryAssistant.class)
                .chatModel(model)
                .chatMemoryProvider(id -> MessageWindowChatMemory.withMaxMessages(Agents.CONVERSATION_MESSAGES))
                .maxToolCallingRoundTrips(maxToolCallingRoundTrips);
        addTools(b, tools, systemMessage);
        addToolHooks(b, model);
        MemoryAssistant assistant = b.build();
        return new GuardedAgent() {
            @Override public String style() { return "aiservices"; }
            @Override public AgentRunResult run(String task) { return runTurns(List.of(task)); }
            @Override public AgentRunResult runTurns(List<String> userMessages) {
                if (userMessages.isEmpty()) throw new IllegalArgumentException("a conversation needs at least one user message");
                long t0 = System.nanoTime();
                Object id = new Object();
                try {
                    String answer = null;
                    for (String message : userMessages) answer = assistant.chat(id, message);
                    return AgentRunResult.answered(style(), model, t0, answer, 0);
                } catch (Throwable e) {
                    return ended(style(), model, t0, e);
                } finally {
                    assistant.evictChatMemory(id);
                }
            }
        };
    }

    /**
     * @param tools    null: the model's own ({@link ToolSet#ownedBy})
     * @param partials receives every partial response (token chunk) as it streams, or null
     */
    public static ConversationAgent streaming(StreamingChatModel model, ToolSet tools, int maxToolCallingRoundTrips,
                                              String systemMessage, String memoryJson, Consumer<String> partials) {
        checkRoundTrips(maxToolCallingRoundTrips);
        if (tools == null) tools = ToolSet.ownedBy(model);
        ChatMemory memory = memory(memoryJson);
        AiServices<StreamingAssistant> b = AiServices.builder(StreamingAssistant.class)
                .streamingChatModel(model)
                .chatMemory(memory)
                .maxToolCallingRoundTrips(maxToolCallingRoundTrips);
        addTools(b, tools, systemMessage);
        StreamingAssistant assistant = b.build();
        GuardedStreamingChatModel g = model instanceof GuardedStreamingChatModel gm ? gm : null;
        return agent(true, memory, g == null ? null : g.actuator(), message -> stream(assistant.chat(message), g, partials));
    }

    /** One user message's answer: a blocking chat, or a stream run to its end. */
    private interface Turn {
        String answer(String message) throws Throwable;
    }

    /** The conversation agent over {@code memory}: one {@code turn} per user message; {@code counters} for the result. */
    private static ConversationAgent agent(boolean streaming, ChatMemory memory, ChatModel counters, Turn turn) {
        return new ConversationAgent() {
            @Override public String style() { return "aiservices"; }
            @Override public boolean streaming() { return streaming; }
            @Override public String memoryJson() { return toJson(memory.messages()); }
            @Override public AgentRunResult run(String task) { return runTurns(List.of(task)); }
            @Override public AgentRunResult runTurns(List<String> userMessages) {
                if (userMessages.isEmpty()) throw new IllegalArgumentException("a conversation needs at least one user message");
                long t0 = System.nanoTime();
                try {
                    String answer = null;
                    // one turn per user message, one chat memory: LangChain4j's cap applies to each turn
                    for (String message : userMessages) answer = turn.answer(message);
                    return AgentRunResult.answered(style(), counters, t0, answer, 0);
                } catch (Throwable e) {
                    return ended(style(), counters, t0, e);
                }
            }
        };
    }

    /** Runs one TokenStream to its end: the final answer, or the stream's error thrown. */
    private static String stream(TokenStream ts, GuardedStreamingChatModel g, Consumer<String> partials) throws Throwable {
        CompletableFuture<String> done = new CompletableFuture<>();
        ts = ts.onPartialResponse(partials != null ? partials : t -> { })
                .onCompleteResponse(r -> done.complete(r.aiMessage() == null ? null : r.aiMessage().text()))
                .onError(done::completeExceptionally);
        if (g != null) ts = ts.beforeToolExecution(g::beforeToolExecution).onToolExecuted(g::afterToolExecution);
        ts.start();
        try {
            return done.get();
        } catch (ExecutionException e) {
            throw e.getCause() == null ? e : e.getCause();
        }
    }

    private static AgentRunResult ended(String style, ChatModel model, long t0, Throwable e) {
        if (GuardStopException.findIn(e) == null && Agents.exceededRoundTrips(e)) {
            return AgentRunResult.exhausted(style, model, t0, e, 0);
        }
        return AgentRunResult.ofError(style, model, t0, e, 0);
    }

    private static void addTools(AiServices<?> b, ToolSet tools, String systemMessage) {
        if (!tools.objects().isEmpty()) b.tools(tools.objects());
        if (!tools.explicitTools().isEmpty()) b.tools(tools.explicitTools());
        if (systemMessage != null && !systemMessage.isBlank()) b.systemMessageProvider(id -> systemMessage);
    }

    /** The guard's tool hooks, when the model is a guarded one. */
    private static void addToolHooks(AiServices<?> b, ChatModel model) {
        if (model instanceof ToolGuard g) {
            b.beforeToolExecution(g::beforeToolExecution);
            b.afterToolExecution(g::afterToolExecution);
        }
    }

    private static void checkRoundTrips(int n) {
        if (n < 1) throw new IllegalArgumentException("maxToolCallingRoundTrips=" + n + " must be at least 1");
    }
}
