package dev.usercode;

import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;
import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.service.AiServices;
import dev.langchain4j.service.tool.BeforeToolExecution;

import java.util.function.Consumer;

/** A user's own AiServices agent and its factory, knowing nothing of pyguard (only LangChain4j types). */
public final class UserAgents {
    private UserAgents() {}

    public interface Assistant {
        String chat(String message);
    }

    /** The user's tool: the one pyguard's logistics scenario calls. */
    public static final class Tools {
        @Tool("Get the shipment status of an order")
        public String get_shipment_status(@P("orderId") String orderId) {
            return "Order " + orderId + ": in transit, last scan Memphis hub.";
        }
    }

    public static Assistant create(ChatModel model, Consumer<BeforeToolExecution> beforeTool, int maxRoundTrips) {
        return AiServices.builder(Assistant.class)
                .chatModel(model)
                .tools(new Tools())
                .chatMemory(MessageWindowChatMemory.withMaxMessages(200))
                .beforeToolExecution(beforeTool)
                .maxToolCallingRoundTrips(maxRoundTrips)
                .build();
    }
}
