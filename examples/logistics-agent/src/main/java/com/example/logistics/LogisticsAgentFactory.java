package com.example.logistics;

import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.service.AiServices;
import dev.langchain4j.service.tool.BeforeToolExecution;

import java.time.Duration;
import java.util.function.Consumer;

/** Builds the agent around whatever ChatModel it is given (a hosted model, a local server, or a test double). */
public final class LogisticsAgentFactory {

    /** LangChain4j's own cap on tool-calling round trips for this agent (its default is 100). */
    public static final int MAX_ROUND_TRIPS = 25;

    private LogisticsAgentFactory() {
    }

    public static LogisticsAgent create(ChatModel model) {
        return create(model, new LogisticsTools());
    }

    public static LogisticsAgent create(ChatModel model, LogisticsTools tools) {
        return create(model, tools, null);
    }

    /**
     * @param beforeTool called before each tool runs, or null. A guard hands one out (pyguard's
     *                   {@code run.before_tool_execution()}): when it has stopped the run, the hook throws, so the tools
     *                   of the model's last response do not run. Typed with LangChain4j's own interfaces only: this
     *                   project does not compile against pyguard.
     */
    public static LogisticsAgent create(ChatModel model, LogisticsTools tools, Consumer<BeforeToolExecution> beforeTool) {
        AiServices<LogisticsAgent> builder = AiServices.builder(LogisticsAgent.class)
                .chatModel(model)
                .tools(tools)
                .maxToolCallingRoundTrips(MAX_ROUND_TRIPS);
        if (beforeTool != null) {
            builder.beforeToolExecution(beforeTool);
        }
        return builder.build();
    }

    /** The production model: any OpenAI-compatible endpoint (OpenAI, a gateway, Ollama's /v1, a local test server). */
    public static ChatModel openAiModel(String baseUrl, String apiKey, String modelName) {
        return OpenAiChatModel.builder()
                .baseUrl(baseUrl)
                .apiKey(apiKey)
                .modelName(modelName)
                .temperature(0.0)
                .maxRetries(0)
                .timeout(Duration.ofSeconds(60))
                .build();
    }
}
