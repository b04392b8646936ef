package dev.pyguard.bridge;

import dev.langchain4j.service.MemoryId;
import dev.langchain4j.service.UserMessage;
import dev.langchain4j.service.memory.ChatMemoryAccess;

/** The AiServices interface of an agent built once for many runs: one chat memory per run ({@code @MemoryId}). */
public interface MemoryAssistant extends ChatMemoryAccess {
    String chat(@MemoryId Object run, @UserMessage String message);
}
