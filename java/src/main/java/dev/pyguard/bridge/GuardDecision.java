package dev.pyguard.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The guard's instruction for the next model call of a run, parsed from the callback's JSON reply.
 * Only {@code action}, {@code reason}, {@code rule}, {@code reflection}, {@code outcome} and {@code turn_start} are read;
 * any other field (evidence, budget, ...) is ignored here. {@code turn_start} (model calls made before the user turn this
 * decision belongs to; -1 when absent) comes with the first decision of every later turn: the fail-safe counts per turn,
 * as the guard's budget does, and keeps counting the whole run if Python never says a turn began.
 */
public record GuardDecision(Action action, String reason, String rule, String reflection, String outcome, int turnStart) {

    public enum Action { CONTINUE, REFLECT, STOP }

    public static final GuardDecision CONTINUE = new GuardDecision(Action.CONTINUE, "", null, null, null, -1);

    private static final ObjectMapper MAPPER = new ObjectMapper();

    public static GuardDecision stop(String outcome, String reason, String rule) {
        return new GuardDecision(Action.STOP, reason, rule, null, outcome, -1);
    }

    public static GuardDecision reflect(String reflection, String reason, String rule) {
        return new GuardDecision(Action.REFLECT, reason, rule, reflection, null, -1);
    }

    /**
     * Parses a decision reply. Throws {@link IllegalArgumentException} naming the bad value when the reply is not a
     * JSON object with a known {@code action}, when a reflect carries no reflection text, when a stop carries no
     * outcome, or when it is null.
     */
    public static GuardDecision parse(String json) {
        if (json == null) {
            throw new IllegalArgumentException("guard callback returned null; return a decision JSON such as {\"action\":\"continue\"}");
        }
        JsonNode node;
        try {
            node = MAPPER.readTree(json);
        } catch (Exception e) {
            throw new IllegalArgumentException("guard callback returned malformed JSON " + abbreviate(json) + ": " + e.getMessage());
        }
        if (node == null || !node.isObject()) {
            throw new IllegalArgumentException("guard callback returned " + abbreviate(json) + ", expected a JSON object with an \"action\"");
        }
        String actionText = text(node, "action");
        if (actionText == null) {
            throw new IllegalArgumentException("guard decision " + abbreviate(json) + " has no \"action\"; use continue, reflect or stop");
        }
        Action action;
        try {
            action = Action.valueOf(actionText.trim().toUpperCase(java.util.Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("guard decision action " + abbreviate(actionText) + " is unknown; use continue, reflect or stop");
        }
        String reason = text(node, "reason");
        String rule = text(node, "rule");
        String reflection = text(node, "reflection");
        String outcome = text(node, "outcome");
        if (action == Action.REFLECT && (reflection == null || reflection.isBlank())) {
            throw new IllegalArgumentException("guard decision 'reflect' has no \"reflection\" text; add the message to inject");
        }
        if (action == Action.STOP && (outcome == null || outcome.isBlank())) {
            // Which outcome a stop has is the guard's decision, never a Java default: refuse the reply. The sensor
            // counts it as a callback failure, the run goes on, and the fail-safe cap still ends it (guard_error).
            throw new IllegalArgumentException("guard decision 'stop' has no \"outcome\" in " + abbreviate(json)
                    + "; say how the run ended (stalled, expired, escalated, cancelled, ...)");
        }
        int turnStart = -1;
        JsonNode ts = node.get("turn_start");
        if (ts != null && !ts.isNull()) {
            if (!ts.canConvertToInt() || !ts.isIntegralNumber() || ts.asInt() < 0) {
                throw new IllegalArgumentException("guard decision turn_start " + abbreviate(ts.toString())
                        + " must be a non-negative integer (model calls before the turn)");
            }
            turnStart = ts.asInt();
        }
        return new GuardDecision(action, reason == null ? "" : reason, rule, reflection, outcome, turnStart);
    }

    private static String text(JsonNode node, String field) {
        JsonNode v = node.get(field);
        return v == null || v.isNull() ? null : v.asText();
    }

    static String abbreviate(String s) {
        if (s == null) return "null";
        return s.length() <= 120 ? "'" + s + "'" : "'" + s.substring(0, 117) + "...'";
    }
}
