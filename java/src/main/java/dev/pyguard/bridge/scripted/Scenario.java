package dev.pyguard.bridge.scripted;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * A parsed scenario (format documented in {@code pyguard/scenarios/README.md}). Immutable; safe to share between
 * threads, models and the local server.
 *
 * <p>A scenario is one or more {@link Segment}s: a single-turn scenario ({@code turns}) has one, a conversation
 * ({@code conversation}) one per user message. Each segment has its own turn list, loop and reaction to a reflection.
 */
public final class Scenario {

    static final ObjectMapper MAPPER = new ObjectMapper();

    /**
     * One turn template. Exactly one of toolCalls / answer / branches is set. {@code requestDigest} (a recorded run's
     * turn): the {@link RequestDigest} of the request the turn answered when it was recorded; a replayed request whose
     * digest differs has drifted from the recording.
     */
    public record Turn(List<CallSpec> toolCalls, String text, String answer, List<Branch> branches,
                       List<OnResult> onResult, Integer inputTokens, Integer outputTokens, String requestDigest) {
        public Turn(List<CallSpec> toolCalls, String text, String answer, List<Branch> branches,
                    List<OnResult> onResult, Integer inputTokens, Integer outputTokens) {
            this(toolCalls, text, answer, branches, onResult, inputTokens, outputTokens, null);
        }
    }

    /**
     * A tool call template: {@code arguments} is a JSON object node or a raw string (sent as-is); {@code argumentsFrom}
     * fills arguments from earlier tool results (by regular expression, most recent result first).
     */
    public record CallSpec(String name, JsonNode arguments, Map<String, ArgFrom> argumentsFrom) {
        public CallSpec(String name, JsonNode arguments) { this(name, arguments, Map.of()); }
    }

    /** Where an argument comes from: the {@code group} of the first match of {@code pattern}; {@code fallback} if none. */
    public record ArgFrom(Pattern pattern, int group, String fallback) {}

    public record Branch(double p, Turn turn) {}

    public record OnResult(String contains, Turn then) {}

    /**
     * The reaction to a guard reflection: with {@code recoverProbability} the agent plays {@code tryFirst} (new tool
     * calls, possibly empty) and then answers {@code answer}.
     */
    public record Reflection(double recoverProbability, String answer, List<Turn> tryFirst) {
        public Reflection(double recoverProbability, String answer) { this(recoverProbability, answer, List.of()); }
    }

    /** One user message's worth of turns: {@code user} is its text (null for a single-turn scenario). */
    public record Segment(String user, List<Turn> turns, Integer loopStart, Reflection onReflection) {

        /** The turn template for the 0-based turn {@code n}: loops from {@code loopStart}, or repeats the last turn. */
        public Turn turnAt(int n) {
            if (n < turns.size()) return turns.get(n);
            if (loopStart == null) return turns.get(turns.size() - 1);
            int period = turns.size() - loopStart;
            return turns.get(loopStart + (n - turns.size()) % period);
        }
    }

    public record Usage(boolean report, int baseInputTokens, double charsPerToken, int outputTokens) {}

    private final String name;
    private final String description;
    private final long seed;
    private final String toolset;
    private final JsonNode tools;
    private final Usage usage;
    private final List<Segment> segments;
    private final boolean conversation;
    private final String json;
    private final String wrapUpAnswer;
    private final long latencyMinMs;
    private final long latencyMaxMs;

    private Scenario(String name, String description, long seed, String toolset, JsonNode tools, Usage usage,
                     List<Segment> segments, boolean conversation, String json, String wrapUpAnswer, long latencyMinMs, long latencyMaxMs) {
        this.wrapUpAnswer = wrapUpAnswer;
        this.latencyMinMs = latencyMinMs;
        this.latencyMaxMs = latencyMaxMs;
        this.name = name;
        this.description = description;
        this.seed = seed;
        this.toolset = toolset;
        this.tools = tools;
        this.usage = usage;
        this.segments = segments;
        this.conversation = conversation;
        this.json = json;
    }

    public static Scenario fromFile(String path) {
        try {
            return parse(Files.readString(Path.of(path), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new ScenarioException("cannot read scenario file " + path + ": " + e.getMessage(), e);
        }
    }

    public static Scenario parse(String json) {
        JsonNode root;
        try {
            root = MAPPER.readTree(json);
        } catch (IOException e) {
            throw new ScenarioException("scenario is not valid JSON: " + e.getMessage(), e);
        }
        if (root == null || !root.isObject()) throw new ScenarioException("a scenario must be a JSON object");
        checkKeys(root, "scenario", "name", "description", "seed", "toolset", "tools", "usage", "turns", "loop_from",
                "on_reflection", "conversation", "wrap_up", "latency_ms");
        String name = str(root, "name", "scenario");
        String description = root.path("description").asText("");
        long seed = root.path("seed").asLong(0);
        String toolset = root.hasNonNull("toolset") ? root.get("toolset").asText()
                : (root.has("tools") ? "scenario" : "none");
        if (!List.of("scenario", "logistics", "none").contains(toolset)) {
            throw new ScenarioException("scenario " + name + ": toolset '" + toolset + "' is unknown; use scenario, logistics or none");
        }
        JsonNode tools = root.path("tools");
        if (!tools.isMissingNode() && !tools.isArray()) throw new ScenarioException("scenario " + name + ": 'tools' must be a list");

        JsonNode u = root.path("usage");
        if (!u.isMissingNode()) checkKeys(u, name + ".usage", "report", "base_input_tokens", "chars_per_token", "output_tokens");
        Usage usage = new Usage(u.path("report").asBoolean(true), u.path("base_input_tokens").asInt(120),
                u.path("chars_per_token").asDouble(4.0), u.path("output_tokens").asInt(24));
        if (usage.charsPerToken() <= 0) throw new ScenarioException("scenario " + name + ": usage.chars_per_token must be positive");

        Reflection defaultReflection = reflection(root.path("on_reflection"), name + ".on_reflection");
        List<Segment> segments = new ArrayList<>();
        boolean conversation = root.has("conversation");
        if (conversation) {
            if (root.has("turns") || root.has("loop_from")) {
                throw new ScenarioException("scenario " + name + ": use either 'conversation' or 'turns'/'loop_from', not both");
            }
            JsonNode conv = root.get("conversation");
            if (!conv.isArray() || conv.isEmpty()) throw new ScenarioException("scenario " + name + ": 'conversation' must be a non-empty list");
            for (int i = 0; i < conv.size(); i++) {
                String where = name + ".conversation[" + i + "]";
                JsonNode s = conv.get(i);
                checkKeys(s, where, "user", "turns", "loop_from", "on_reflection");
                String user = str(s, "user", where);
                Reflection r = s.has("on_reflection") ? reflection(s.get("on_reflection"), where + ".on_reflection") : defaultReflection;
                segments.add(segment(user, s.path("turns"), s.path("loop_from"), r, where));
            }
        } else {
            segments.add(segment(null, root.path("turns"), root.path("loop_from"), defaultReflection, name));
        }
        String wrapUp = null;
        JsonNode w = root.path("wrap_up");
        if (!w.isMissingNode()) {
            checkKeys(w, name + ".wrap_up", "answer");
            wrapUp = str(w, "answer", name + ".wrap_up");
        }
        long[] latency = latency(root.path("latency_ms"), name);
        return new Scenario(name, description, seed, toolset, tools.isMissingNode() ? MAPPER.createArrayNode() : tools,
                usage, List.copyOf(segments), conversation, json, wrapUp, latency[0], latency[1]);
    }

    /** {@code latency_ms}: a number of milliseconds, or {@code [min, max]} (each call draws uniformly between). */
    private static long[] latency(JsonNode lat, String name) {
        if (lat.isMissingNode() || lat.isNull()) return new long[] {0, 0};
        JsonNode lo = lat.isArray() && lat.size() == 2 ? lat.get(0) : lat;
        JsonNode hi = lat.isArray() && lat.size() == 2 ? lat.get(1) : lat;
        if (!lo.isNumber() || !hi.isNumber() || lo.asLong() < 0 || hi.asLong() < lo.asLong() || hi.asLong() > 600_000) {
            throw new ScenarioException("scenario " + name + ": latency_ms=" + lat + " must be milliseconds between 0 and"
                    + " 600000, a number or [min, max] with min <= max (how long the scripted model takes per call)");
        }
        return new long[] {lo.asLong(), hi.asLong()};
    }

    private static Segment segment(String user, JsonNode turns, JsonNode loopFrom, Reflection refl, String where) {
        if (!turns.isArray() || turns.isEmpty()) throw new ScenarioException("scenario " + where + ": 'turns' must be a non-empty list");
        List<Turn> flat = new ArrayList<>();
        List<Integer> startOf = new ArrayList<>();
        for (int i = 0; i < turns.size(); i++) {
            JsonNode t = turns.get(i);
            startOf.add(flat.size());
            int repeat = t.path("repeat").asInt(1);
            if (repeat < 1) throw new ScenarioException("scenario " + where + ": turns[" + i + "].repeat=" + repeat + " must be >= 1");
            Turn turn = turn(t, where + ".turns[" + i + "]", true);
            for (int r = 0; r < repeat; r++) flat.add(turn);
        }
        Integer loopStart = null;
        if (!loopFrom.isMissingNode() && !loopFrom.isNull()) {
            int lf = loopFrom.asInt(-1);
            if (lf < 0 || lf >= turns.size()) {
                throw new ScenarioException("scenario " + where + ": loop_from=" + loopFrom + " must index 'turns' (0.." + (turns.size() - 1) + ")");
            }
            loopStart = startOf.get(lf);
        }
        return new Segment(user, List.copyOf(flat), loopStart, refl);
    }

    private static Reflection reflection(JsonNode r, String where) {
        if (r.isMissingNode() || r.isNull()) return null;
        checkKeys(r, where, "recover_probability", "answer", "try_first");
        double p = r.path("recover_probability").asDouble(0);
        if (p < 0 || p > 1) throw new ScenarioException("scenario " + where + ".recover_probability=" + p + " must be in [0, 1]");
        List<Turn> tryFirst = new ArrayList<>();
        JsonNode tf = r.path("try_first");
        if (!tf.isMissingNode()) {
            if (!tf.isArray()) throw new ScenarioException(where + ".try_first must be a list of turns");
            for (int i = 0; i < tf.size(); i++) tryFirst.add(turn(tf.get(i), where + ".try_first[" + i + "]", false));
        }
        return new Reflection(p, r.path("answer").asText("Based on what I found so far: {last_result}"), List.copyOf(tryFirst));
    }

    private static Turn turn(JsonNode t, String where, boolean allowRepeat) {
        if (!t.isObject()) throw new ScenarioException(where + " must be an object");
        if (allowRepeat) {
            checkKeys(t, where, "tool_calls", "text", "answer", "branches", "on_result", "input_tokens", "output_tokens",
                    "request_digest", "repeat");
        } else {
            checkKeys(t, where, "tool_calls", "text", "answer", "branches", "on_result", "input_tokens", "output_tokens",
                    "request_digest");
        }
        int kinds = (t.has("tool_calls") ? 1 : 0) + (t.has("answer") ? 1 : 0) + (t.has("branches") ? 1 : 0);
        if (kinds != 1) throw new ScenarioException(where + " needs exactly one of 'tool_calls', 'answer', 'branches'");
        List<CallSpec> calls = List.of();
        if (t.has("tool_calls")) {
            JsonNode tc = t.get("tool_calls");
            if (!tc.isArray() || tc.isEmpty()) throw new ScenarioException(where + ".tool_calls must be a non-empty list");
            calls = new ArrayList<>();
            for (int i = 0; i < tc.size(); i++) calls.add(callSpec(tc.get(i), where + ".tool_calls[" + i + "]"));
            calls = List.copyOf(calls);
        }
        List<Branch> branches = null;
        if (t.has("branches")) {
            JsonNode b = t.get("branches");
            if (!b.isArray() || b.isEmpty()) throw new ScenarioException(where + ".branches must be a non-empty list");
            branches = new ArrayList<>();
            double total = 0;
            for (int i = 0; i < b.size(); i++) {
                JsonNode bi = b.get(i);
                checkKeys(bi, where + ".branches[" + i + "]", "p", "turn");
                double p = bi.path("p").asDouble(-1);
                if (p < 0) throw new ScenarioException(where + ".branches[" + i + "].p must be a probability >= 0");
                total += p;
                branches.add(new Branch(p, turn(bi.path("turn"), where + ".branches[" + i + "].turn", false)));
            }
            if (Math.abs(total - 1.0) > 1e-6) throw new ScenarioException(where + ".branches: probabilities sum to " + total + ", expected 1");
            branches = List.copyOf(branches);
        }
        List<OnResult> onResult = List.of();
        if (t.has("on_result")) {
            JsonNode o = t.get("on_result");
            if (!o.isArray()) throw new ScenarioException(where + ".on_result must be a list");
            onResult = new ArrayList<>();
            for (int i = 0; i < o.size(); i++) {
                JsonNode oi = o.get(i);
                checkKeys(oi, where + ".on_result[" + i + "]", "contains", "then");
                onResult.add(new OnResult(str(oi, "contains", where + ".on_result[" + i + "]"),
                        turn(oi.path("then"), where + ".on_result[" + i + "].then", false)));
            }
            onResult = List.copyOf(onResult);
        }
        Integer in = t.hasNonNull("input_tokens") ? t.get("input_tokens").asInt() : null;
        Integer out = t.hasNonNull("output_tokens") ? t.get("output_tokens").asInt() : null;
        String answer = t.has("answer") ? t.get("answer").asText() : null;
        String text = t.hasNonNull("text") ? t.get("text").asText() : null;
        String digest = t.hasNonNull("request_digest") ? t.get("request_digest").asText() : null;
        return new Turn(calls, text, answer, branches, onResult, in, out, digest);
    }

    private static CallSpec callSpec(JsonNode c, String where) {
        checkKeys(c, where, "name", "arguments", "arguments_from");
        JsonNode args = c.has("arguments") ? c.get("arguments") : MAPPER.createObjectNode();
        if (!args.isObject() && !args.isTextual()) {
            throw new ScenarioException(where + ".arguments must be an object or a raw string");
        }
        Map<String, ArgFrom> from = new LinkedHashMap<>();
        JsonNode af = c.path("arguments_from");
        if (!af.isMissingNode()) {
            if (!af.isObject()) throw new ScenarioException(where + ".arguments_from must be an object {argument: pattern}");
            if (!args.isObject()) throw new ScenarioException(where + ".arguments_from needs 'arguments' as an object, not a raw string");
            for (Iterator<Map.Entry<String, JsonNode>> it = af.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                String w = where + ".arguments_from." + e.getKey();
                JsonNode spec = e.getValue();
                String regex;
                int group = 1;
                String fallback = args.path(e.getKey()).isTextual() ? args.get(e.getKey()).asText() : "";
                if (spec.isTextual()) {
                    regex = spec.asText();
                } else if (spec.isObject()) {
                    checkKeys(spec, w, "pattern", "group", "default");
                    regex = str(spec, "pattern", w);
                    group = spec.path("group").asInt(1);
                    if (spec.has("default")) fallback = spec.get("default").asText();
                } else {
                    throw new ScenarioException(w + " must be a regular expression or {\"pattern\", \"group\", \"default\"}");
                }
                Pattern p;
                try {
                    p = Pattern.compile(regex);
                } catch (PatternSyntaxException ex) {
                    throw new ScenarioException(w + ": '" + regex + "' is not a valid regular expression: " + ex.getDescription());
                }
                int groups = p.matcher("").groupCount();
                if (group < 0 || (group > groups && !(group == 1 && groups == 0))) {
                    throw new ScenarioException(w + ".group=" + group + " but the pattern has " + groups + " group(s)");
                }
                from.put(e.getKey(), new ArgFrom(p, groups == 0 ? 0 : group, fallback));
            }
        }
        return new CallSpec(str(c, "name", where), args, Map.copyOf(from));
    }

    static String str(JsonNode n, String field, String where) {
        JsonNode v = n.get(field);
        if (v == null || !v.isTextual() || v.asText().isEmpty()) {
            throw new ScenarioException(where + ": '" + field + "' must be a non-empty string");
        }
        return v.asText();
    }

    static void checkKeys(JsonNode n, String where, String... allowed) {
        if (!n.isObject()) throw new ScenarioException(where + " must be an object");
        List<String> ok = List.of(allowed);
        for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
            String k = it.next();
            if (!ok.contains(k)) throw new ScenarioException(where + ": unknown key '" + k + "'; allowed: " + ok);
        }
    }

    public String name() { return name; }
    public String description() { return description; }
    public long seed() { return seed; }
    /** How long the scripted model takes per call at least and at most (milliseconds, {@code latency_ms}; 0: at once). */
    public long latencyMinMs() { return latencyMinMs; }
    public long latencyMaxMs() { return latencyMaxMs; }
    public String toolset() { return toolset; }

    /** The answer to a wrap-up request ({@code wrap_up.answer}), or null: the user turn's on_reflection answer then. */
    public String wrapUpAnswer() { return wrapUpAnswer; }
    public JsonNode tools() { return tools; }
    public Usage usage() { return usage; }
    public String json() { return json; }

    /** True when the scenario is a conversation (several user messages), false for a single task. */
    public boolean conversation() { return conversation; }
    public List<Segment> segments() { return segments; }

    /** The segment of the 0-based user message {@code u}; past the last one, the last segment again. */
    public Segment segment(int u) { return segments.get(Math.min(Math.max(0, u), segments.size() - 1)); }

    /** The user messages of a conversation, in order (empty for a single-turn scenario). */
    public List<String> userMessages() {
        if (!conversation) return List.of();
        List<String> out = new ArrayList<>();
        for (Segment s : segments) out.add(s.user());
        return List.copyOf(out);
    }

    /** The first segment's turns (the whole scenario for a single task). */
    public List<Turn> turns() { return segments.get(0).turns(); }
    public Integer loopStart() { return segments.get(0).loopStart(); }
    public Reflection onReflection() { return segments.get(0).onReflection(); }

    /** The first segment's turn template for the 0-based task turn {@code n}. */
    public Turn turnAt(int n) { return segments.get(0).turnAt(n); }

    static ObjectNode object() { return MAPPER.createObjectNode(); }
}
