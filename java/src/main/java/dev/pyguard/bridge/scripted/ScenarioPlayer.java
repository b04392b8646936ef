package dev.pyguard.bridge.scripted;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.regex.Matcher;

/**
 * Plays a {@link Scenario}: a pure function of (scenario, seed, {@link ConversationView}) to a {@link ScriptedReply}.
 * Stateless and thread-safe: every random choice is drawn from a generator seeded by (seed, user turn, turn,
 * reflection present), so the same conversation always gets the same reply, in a {@code ChatModel} or behind the HTTP
 * server alike.
 *
 * <p>A reaction to a reflection that tries something new first ({@code on_reflection.try_first}) is remembered through
 * the conversation itself: its tool calls get ids starting with {@link ConversationView#REACTION_PREFIX}, so later
 * requests (which no longer carry the reflection) show where the reaction began.
 */
public final class ScenarioPlayer {

    private final Scenario scenario;
    private final long seed;

    public ScenarioPlayer(Scenario scenario, Long seedOverride) {
        this.scenario = scenario;
        this.seed = seedOverride == null ? scenario.seed() : seedOverride;
    }

    public Scenario scenario() { return scenario; }
    public long seed() { return seed; }

    public ScriptedReply play(ConversationView v) {
        int n = v.assistantTurns();
        Scenario.Segment seg = scenario.segment(v.userTurn());
        SplittableRandom rng = new SplittableRandom(mix(seed, v.userTurn(), n, v.reflectionPresent()));
        Scenario.Reflection refl = seg.onReflection();
        if (refl != null && v.reacting()) {
            int k = n - v.reactionStart();
            if (k < refl.tryFirst().size()) return reply(resolve(refl.tryFirst().get(k), v, rng), v, false, true);
            return reply(answer(refl), v, false, false);
        }
        if (v.reflectionPresent() && refl != null && rng.nextDouble() < refl.recoverProbability()) {
            if (!refl.tryFirst().isEmpty()) return reply(resolve(refl.tryFirst().get(0), v, rng), v, true, true);
            return reply(answer(refl), v, true, false);
        }
        return reply(resolve(seg.turnAt(n), v, rng), v, false, false);
    }

    /** The answer of a scenario whose {@code wrap_up} and on_reflection give none: what the run found last. */
    static final String DEFAULT_WRAP_UP = "I had to stop before I could finish. What I found: {last_result}";

    /**
     * True when the request is a wrap-up (one last call after a stop): no tools offered, after tool calls were made
     * (an agent offers its tools on every call of its loop). Both the {@code ChatModel} and the HTTP server ask this.
     */
    public boolean isWrapUp(ConversationView v, boolean toolsOffered) {
        return !toolsOffered && !v.toolResults().isEmpty();
    }

    /**
     * The answer to a wrap-up request: the scenario's {@code wrap_up.answer}, else the user turn's
     * {@code on_reflection.answer}, else {@link #DEFAULT_WRAP_UP}; {@code {last_result}} is the last tool result
     * that ran (the stopped response's tools, answered "not run", are skipped).
     */
    public ScriptedReply wrapUp(ConversationView v) {
        Scenario.Reflection refl = scenario.segment(Math.max(0, v.userTurn() - 1)).onReflection();
        String text = scenario.wrapUpAnswer() != null ? scenario.wrapUpAnswer()
                : refl != null && refl.answer() != null ? refl.answer() : DEFAULT_WRAP_UP;
        String found = "";
        for (int i = v.toolResults().size() - 1; i >= 0; i--) {
            String r = v.toolResults().get(i);
            if (r != null && !r.startsWith("[pyguard]")) { found = r; break; }
        }
        text = text.replace("{last_result}", found);
        return reply(new Scenario.Turn(List.of(), null, text, null, List.of(), null, null), v, false, false);
    }

    private static Scenario.Turn answer(Scenario.Reflection refl) {
        return new Scenario.Turn(List.of(), null, refl.answer(), null, List.of(), null, null);
    }

    private static Scenario.Turn resolve(Scenario.Turn t, ConversationView v, SplittableRandom rng) {
        for (int guard = 0; guard < 32; guard++) {
            Scenario.Turn next = null;
            for (Scenario.OnResult o : t.onResult()) {
                boolean hit = false;
                for (String r : v.lastToolResults()) if (r != null && r.contains(o.contains())) { hit = true; break; }
                if (hit) { next = o.then(); break; }
            }
            if (next == null && t.branches() != null) {
                double x = rng.nextDouble(), acc = 0;
                next = t.branches().get(t.branches().size() - 1).turn();
                for (Scenario.Branch b : t.branches()) {
                    acc += b.p();
                    if (x < acc) { next = b.turn(); break; }
                }
            }
            if (next == null) return t;
            t = next;
        }
        return t;
    }

    private ScriptedReply reply(Scenario.Turn t, ConversationView v, boolean recovered, boolean reaction) {
        int n = v.assistantTurns();
        Map<String, String> vars = Map.of("{turn}", Integer.toString(n + 1), "{last_result}", v.lastResult(),
                "{user_turn}", Integer.toString(v.userTurn() + 1),
                "{reflection}", v.reflection() == null ? "" : v.reflection());
        List<ScriptedReply.Call> calls = new ArrayList<>();
        String prefix = (reaction ? ConversationView.REACTION_PREFIX : "call_")
                + (v.userTurn() > 0 ? "u" + (v.userTurn() + 1) + "_" : "");
        for (int i = 0; i < t.toolCalls().size(); i++) {
            Scenario.CallSpec c = t.toolCalls().get(i);
            String args;
            if (c.arguments().isTextual()) {
                args = subst(c.arguments().asText(), vars);
            } else {
                ObjectNode o = substObject((ObjectNode) c.arguments(), vars);
                for (Map.Entry<String, Scenario.ArgFrom> e : c.argumentsFrom().entrySet()) {
                    o.put(e.getKey(), fromResults(e.getValue(), v.toolResults()));
                }
                args = o.toString();
            }
            calls.add(new ScriptedReply.Call(prefix + (n + 1) + "_" + (i + 1), c.name(), args));
        }
        String text = t.answer() != null ? subst(t.answer(), vars) : (t.text() == null ? null : subst(t.text(), vars));
        Integer in = null, out = null;
        Scenario.Usage u = scenario.usage();
        if (u.report()) {
            in = t.inputTokens() != null ? t.inputTokens()
                    : u.baseInputTokens() + (int) Math.ceil(v.requestChars() / u.charsPerToken());
            out = t.outputTokens() != null ? t.outputTokens() : u.outputTokens();
        }
        return new ScriptedReply(List.copyOf(calls), text, in, out, n, recovered, t.requestDigest());
    }

    /** The argument taken from the most recent tool result the pattern matches, or its fallback. */
    static String fromResults(Scenario.ArgFrom from, List<String> results) {
        for (int i = results.size() - 1; i >= 0; i--) {
            String r = results.get(i);
            if (r == null) continue;
            Matcher m = from.pattern().matcher(r);
            if (m.find()) {
                String g = m.group(from.group());
                if (g != null) return g;
            }
        }
        return from.fallback();
    }

    private static ObjectNode substObject(ObjectNode o, Map<String, String> vars) {
        ObjectNode copy = o.deepCopy();
        for (Iterator<Map.Entry<String, JsonNode>> it = copy.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (e.getValue().isTextual()) e.setValue(copy.textNode(subst(e.getValue().asText(), vars)));
        }
        return copy;
    }

    private static final java.util.regex.Pattern PLACEHOLDER = java.util.regex.Pattern.compile("\\{(turn|last_result|user_turn|reflection)\\}");

    /** One pass: a substituted value (a tool result, say) is never scanned for placeholders again. */
    private static String subst(String s, Map<String, String> vars) {
        if (s.indexOf('{') < 0) return s;
        Matcher m = PLACEHOLDER.matcher(s);
        StringBuilder sb = new StringBuilder();
        while (m.find()) m.appendReplacement(sb, Matcher.quoteReplacement(vars.get(m.group())));
        m.appendTail(sb);
        return sb.toString();
    }

    private static long mix(long seed, int userTurn, int turn, boolean reflection) {
        long h = seed * 0x9E3779B97F4A7C15L + turn * 0xBF58476D1CE4E5B9L + (reflection ? 0x94D049BB133111EBL : 0)
                + userTurn * 0xD6E8FEB86659FD93L;
        return new Random(h).nextLong();
    }
}
