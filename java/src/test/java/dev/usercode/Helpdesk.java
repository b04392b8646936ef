package dev.usercode;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.output.TokenUsage;
import dev.langchain4j.service.AiServices;
import dev.langchain4j.service.MemoryId;
import dev.langchain4j.service.tool.BeforeToolExecution;
import dev.langchain4j.service.tool.ToolExecutor;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import java.util.function.Consumer;

/**
 * A user's help-desk agent, knowing nothing of pyguard: AiServices built once, one chat memory per customer
 * ({@code @MemoryId}), the tools of {@link Mailer.Tools}. Its provider makes two model calls per user turn: the first
 * calls {@code send_email} when the user's message starts with "mail", else {@code get_shipment_status}; the second
 * answers "Answer #k (n messages in memory): " and the tool's result, so a test sees each turn's answer and that the
 * memory holds the conversation.
 */
public final class Helpdesk {
    private Helpdesk() {}

    public interface Agent {
        String chat(@MemoryId String customer, @dev.langchain4j.service.UserMessage String message);
    }

    /** Two model calls per turn: a tool call, then an answer quoting its result. Counts every call. */
    public static final class Provider implements ChatModel {
        private final AtomicInteger calls = new AtomicInteger();
        private final AtomicInteger answers = new AtomicInteger();

        @Override
        public ChatResponse doChat(ChatRequest request) {
            int n = calls.incrementAndGet();
            List<ChatMessage> messages = request.messages();
            ChatMessage last = messages.get(messages.size() - 1);
            AiMessage ai;
            if (last instanceof UserMessage u) {
                String text = u.singleText();
                ai = text.startsWith("mail")
                        ? AiMessage.from(ToolExecutionRequest.builder().id("c" + n).name("send_email")
                                .arguments("{\"body\":\"" + text + "\"}").build())
                        : AiMessage.from(ToolExecutionRequest.builder().id("c" + n).name("get_shipment_status")
                                .arguments("{\"orderId\":\"12345\"}").build());
            } else {
                String result = last instanceof ToolExecutionResultMessage t ? t.text() : "?";
                ai = AiMessage.from("Answer #" + answers.incrementAndGet() + " (" + messages.size()
                        + " messages in memory): " + result);
            }
            return ChatResponse.builder().aiMessage(ai).tokenUsage(new TokenUsage(100, 10)).build();
        }

        public int calls() { return calls.get(); }
    }

    /**
     * The agent: {@code tools} (pyguard's limited executors), the guard's before-tool hook, and {@code memoryIds} for
     * {@code chatRequestTransformer} (null: none).
     */
    public static Agent create(ChatModel model, Map<ToolSpecification, ToolExecutor> tools,
                               Consumer<BeforeToolExecution> beforeTool,
                               BiFunction<ChatRequest, Object, ChatRequest> memoryIds) {
        AiServices<Agent> b = AiServices.builder(Agent.class)
                .chatModel(model)
                .chatMemoryProvider(id -> MessageWindowChatMemory.withMaxMessages(100))
                .tools(tools)
                .beforeToolExecution(beforeTool);
        if (memoryIds != null) b.chatRequestTransformer(memoryIds);
        return b.build();
    }
}
