package dev.pyguard.bridge;

/** The AiServices interface of the AiServices style: one task in, the answer out. */
public interface ToolAssistant {
    String chat(String task);
}
