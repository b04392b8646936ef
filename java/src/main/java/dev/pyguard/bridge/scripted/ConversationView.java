package dev.pyguard.bridge.scripted;

import java.util.List;

/**
 * What the scenario player keys its choices on: things both a LangChain4j {@code ChatRequest} and an OpenAI
 * chat-completions HTTP request carry.
 *
 * @param assistantTurns    assistant messages since the last (non-guard) user message: the task's turn number, 0-based
 * @param reflection        the text of a guard reflection present after the last assistant message, or null
 * @param lastToolResults   the tool results after the last assistant message, in order
 * @param requestChars      total characters of all message texts in the request (drives the input-token count)
 */
public record ConversationView(int assistantTurns, String reflection, List<String> lastToolResults, long requestChars) {

    public boolean reflectionPresent() { return reflection != null; }

    public String lastResult() {
        return lastToolResults == null || lastToolResults.isEmpty() ? "" : lastToolResults.get(lastToolResults.size() - 1);
    }
}
