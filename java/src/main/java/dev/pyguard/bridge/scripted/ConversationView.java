package dev.pyguard.bridge.scripted;

import java.util.ArrayList;
import java.util.List;

/**
 * What the scenario player keys its choices on: things both a LangChain4j {@code ChatRequest} and an OpenAI
 * chat-completions HTTP request carry. Build one with {@link #of(List)} from the request's messages.
 *
 * @param userTurn          0-based index of the current user message among the (non-guard) user messages: the
 *                          conversation turn
 * @param assistantTurns    assistant messages since the last (non-guard) user message: the task's turn number, 0-based
 * @param reflection        the text of a guard reflection present after the last assistant message, or null
 * @param lastToolResults   the tool results after the last assistant message, in order
 * @param toolResults       every tool result in the request, in order (arguments taken from earlier results)
 * @param reactionStart     the assistant turn (0-based, in this user turn) whose tool calls began the reaction to a
 *                          reflection (their ids start with {@link #REACTION_PREFIX}), or -1
 * @param requestChars      total characters of all message texts in the request (drives the input-token count)
 */
public record ConversationView(int userTurn, int assistantTurns, String reflection, List<String> lastToolResults,
                               List<String> toolResults, int reactionStart, long requestChars) {

    /** Tool call ids of a reaction to a reflection start with this, so later requests show where the reaction began. */
    public static final String REACTION_PREFIX = "react_";

    /** A single-turn view with no reaction under way (its earlier results are the last ones). */
    public ConversationView(int assistantTurns, String reflection, List<String> lastToolResults, long requestChars) {
        this(0, assistantTurns, reflection, lastToolResults, lastToolResults, -1, requestChars);
    }

    public boolean reflectionPresent() { return reflection != null; }

    public boolean reacting() { return reactionStart >= 0; }

    public String lastResult() {
        return lastToolResults == null || lastToolResults.isEmpty() ? "" : lastToolResults.get(lastToolResults.size() - 1);
    }

    /** One message of a request, reduced to what the player needs. */
    public enum Role { SYSTEM, USER, REFLECTION, ASSISTANT, TOOL }

    /**
     * @param text         the message text ("" when none)
     * @param toolCallIds  an assistant message's tool call ids (empty otherwise)
     * @param chars        the characters it adds to the request (text, plus tool names and arguments)
     */
    public record Message(Role role, String text, List<String> toolCallIds, long chars) {}

    /** The view of a request's messages (shared by the {@code ChatModel} and the HTTP server, so they agree). */
    public static ConversationView of(List<Message> messages) {
        int lastUser = -1, lastAi = -1, users = 0;
        long chars = 0;
        List<String> all = new ArrayList<>();
        for (int i = 0; i < messages.size(); i++) {
            Message m = messages.get(i);
            chars += m.chars();
            switch (m.role()) {
                case USER -> { lastUser = i; users++; }
                case ASSISTANT -> lastAi = i;
                case TOOL -> all.add(m.text());
                default -> { }
            }
        }
        int turns = 0, reaction = -1;
        for (int i = lastUser + 1; i < messages.size(); i++) {
            Message m = messages.get(i);
            if (m.role() != Role.ASSISTANT) continue;
            if (reaction < 0 && !m.toolCallIds().isEmpty() && m.toolCallIds().get(0) != null
                    && m.toolCallIds().get(0).startsWith(REACTION_PREFIX)) {
                reaction = turns;
            }
            turns++;
        }
        String reflection = null;
        List<String> last = new ArrayList<>();
        for (int i = lastAi + 1; i < messages.size(); i++) {
            Message m = messages.get(i);
            if (m.role() == Role.TOOL) last.add(m.text());
            else if (lastAi >= 0 && m.role() == Role.REFLECTION) reflection = m.text();
        }
        return new ConversationView(Math.max(0, users - 1), turns, reflection, List.copyOf(last), List.copyOf(all), reaction, chars);
    }
}
