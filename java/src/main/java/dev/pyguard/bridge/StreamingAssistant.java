package dev.pyguard.bridge;

import dev.langchain4j.service.TokenStream;

/** The AiServices interface of the streaming AiServices style: one user message in, a {@link TokenStream} out. */
public interface StreamingAssistant {
    TokenStream chat(String message);
}
