package com.example.logistics;

import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.service.AiServices;

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
}
