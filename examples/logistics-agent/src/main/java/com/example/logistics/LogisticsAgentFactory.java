package com.example.logistics;

import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.service.AiServices;

import java.time.Duration;

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
        return AiServices.builder(LogisticsAgent.class)
                .chatModel(model)
                .tools(tools)
                .maxToolCallingRoundTrips(MAX_ROUND_TRIPS)
                .build();
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
