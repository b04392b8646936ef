package com.example.logistics;

import dev.langchain4j.service.SystemMessage;

/** The agent's interface: one question in, one answer out. AiServices implements it. */
public interface LogisticsAgent {

    @SystemMessage("""
            You are a logistics operations assistant. Use the tools to look up shipments, carrier incidents,
            alternative routes and warehouse stock. Do not call a tool again with the same arguments: its
            answer will not change. Answer in one or two sentences.""")
    String chat(String request);
}
