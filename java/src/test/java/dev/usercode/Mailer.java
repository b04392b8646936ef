package dev.usercode;

import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.output.TokenUsage;
import dev.langchain4j.service.AiServices;
import dev.langchain4j.service.tool.BeforeToolExecution;
import dev.langchain4j.service.tool.ToolExecution;
import dev.langchain4j.service.tool.ToolExecutor;
import dev.langchain4j.agent.tool.ToolSpecification;

import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * A user's mailing agent, knowing nothing of pyguard: tools {@code send_email} (counts the mails really sent) and
 * {@code get_shipment_status}; a provider that sends three mails, one per response, then looks the order up, then
 * answers quoting the tool results it got.
 */
public final class Mailer {
    private Mailer() {}

    public static final class Tools {
        public final AtomicInteger sent = new AtomicInteger();

        @Tool("Send an email to the customer")
        public String send_email(@P("body") String body) {
            return "sent #" + sent.incrementAndGet();
        }

        @Tool("Get the shipment status of an order")
        public String get_shipment_status(@P("orderId") String orderId) {
            return "Order " + orderId + ": in transit.";
        }
    }

    /** The provider: send_email three times, then get_shipment_status, then an answer quoting every tool result. */
    public static final class Provider implements ChatModel {
        private final AtomicInteger calls = new AtomicInteger();

        @Override
        public ChatResponse doChat(ChatRequest request) {
            int n = calls.incrementAndGet();
            AiMessage ai;
            if (n <= 3) {
                ai = AiMessage.from(ToolExecutionRequest.builder().id("m" + n).name("send_email")
                        .arguments("{\"body\":\"update " + n + "\"}").build());
            } else if (n == 4) {
                ai = AiMessage.from(ToolExecutionRequest.builder().id("s1").name("get_shipment_status")
                        .arguments("{\"orderId\":\"12345\"}").build());
            } else {
                StringBuilder seen = new StringBuilder("Done. Tool results:");
                for (ChatMessage m : request.messages()) {
                    if (m instanceof ToolExecutionResultMessage t) seen.append(" | ").append(t.text());
                }
                ai = AiMessage.from(seen.toString());
            }
            return ChatResponse.builder().aiMessage(ai).tokenUsage(new TokenUsage(100, 10)).build();
        }

        public int calls() { return calls.get(); }
    }

    public interface Assistant {
        String chat(String message);
    }

    /** The user's agent with its tools as a map (pyguard's limited executors: {@code run.tools(...)}). */
    public static Assistant create(ChatModel model, Map<ToolSpecification, ToolExecutor> tools,
                                   Consumer<BeforeToolExecution> beforeTool) {
        return AiServices.builder(Assistant.class).chatModel(model).tools(tools).beforeToolExecution(beforeTool).build();
    }

    /** With an after-tool hook too (counts the tools that ran). */
    public static Assistant create(ChatModel model, Map<ToolSpecification, ToolExecutor> tools,
                                   Consumer<BeforeToolExecution> beforeTool, Consumer<ToolExecution> afterTool) {
        return AiServices.builder(Assistant.class).chatModel(model).tools(tools).beforeToolExecution(beforeTool)
                .afterToolExecution(afterTool).build();
    }

    /** The same agent with its tool object as LangChain4j takes it (no limits). */
    public static Assistant create(ChatModel model, Object tools, Consumer<BeforeToolExecution> beforeTool) {
        return AiServices.builder(Assistant.class).chatModel(model).tools(tools).beforeToolExecution(beforeTool).build();
    }

}
