package dev.pyguard.bridge.scripted;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SplittableRandom;

/**
 * Plays a {@link Scenario}: a pure function of (scenario, seed, {@link ConversationView}) to a {@link ScriptedReply}.
 * Stateless and thread-safe: every random choice is drawn from a generator seeded by (seed, turn, reflection present),
 * so the same conversation always gets the same reply, in a {@code ChatModel} or behind the HTTP server alike.
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
        SplittableRandom rng = new SplittableRandom(mix(seed, n, v.reflectionPresent()));
        Scenario.Reflection refl = scenario.onReflection();
        if (v.reflectionPresent() && refl != null && rng.nextDouble() < refl.recoverProbability()) {
            return reply(new Scenario.Turn(List.of(), null, refl.answer(), null, List.of(), null, null), v, true);
        }
        return reply(resolve(scenario.turnAt(n), v, rng), v, false);
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

    private ScriptedReply reply(Scenario.Turn t, ConversationView v, boolean recovered) {
        int n = v.assistantTurns();
        Map<String, String> vars = Map.of("{turn}", Integer.toString(n + 1), "{last_result}", v.lastResult());
        List<ScriptedReply.Call> calls = new ArrayList<>();
        for (int i = 0; i < t.toolCalls().size(); i++) {
            Scenario.CallSpec c = t.toolCalls().get(i);
            String args = c.arguments().isTextual()
                    ? subst(c.arguments().asText(), vars)
                    : substObject((ObjectNode) c.arguments(), vars).toString();
            calls.add(new ScriptedReply.Call("call_" + (n + 1) + "_" + (i + 1), c.name(), args));
        }
        String text = t.answer() != null ? subst(t.answer(), vars) : (t.text() == null ? null : subst(t.text(), vars));
        Integer in = null, out = null;
        Scenario.Usage u = scenario.usage();
        if (u.report()) {
            in = t.inputTokens() != null ? t.inputTokens()
                    : u.baseInputTokens() + (int) Math.ceil(v.requestChars() / u.charsPerToken());
            out = t.outputTokens() != null ? t.outputTokens() : u.outputTokens();
        }
        return new ScriptedReply(List.copyOf(calls), text, in, out, n, recovered);
    }

    private static ObjectNode substObject(ObjectNode o, Map<String, String> vars) {
        ObjectNode copy = o.deepCopy();
        for (Iterator<Map.Entry<String, JsonNode>> it = copy.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (e.getValue().isTextual()) e.setValue(copy.textNode(subst(e.getValue().asText(), vars)));
        }
        return copy;
    }

    private static String subst(String s, Map<String, String> vars) {
        if (s.indexOf('{') < 0) return s;
        for (Map.Entry<String, String> e : vars.entrySet()) s = s.replace(e.getKey(), e.getValue());
        return s;
    }

    private static long mix(long seed, int turn, boolean reflection) {
        long h = seed * 0x9E3779B97F4A7C15L + turn * 0xBF58476D1CE4E5B9L + (reflection ? 0x94D049BB133111EBL : 0);
        return new Random(h).nextLong();
    }
}
