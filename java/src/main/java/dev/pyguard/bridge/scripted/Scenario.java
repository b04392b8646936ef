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
import java.util.List;

/**
 * A parsed scenario (format documented in {@code pyguard/scenarios/README.md}). Immutable; safe to share between
 * threads, models and the local server.
 */
public final class Scenario {

    static final ObjectMapper MAPPER = new ObjectMapper();

    /** One turn template. Exactly one of toolCalls / answer / branches is set. */
    public record Turn(List<CallSpec> toolCalls, String text, String answer, List<Branch> branches,
                       List<OnResult> onResult, Integer inputTokens, Integer outputTokens) {}

    /** A tool call template: {@code arguments} is a JSON object node or a raw string (sent as-is). */
    public record CallSpec(String name, JsonNode arguments) {}

    public record Branch(double p, Turn turn) {}

    public record OnResult(String contains, Turn then) {}

    public record Reflection(double recoverProbability, String answer) {}

    public record Usage(boolean report, int baseInputTokens, double charsPerToken, int outputTokens) {}

    private final String name;
    private final String description;
    private final long seed;
    private final String toolset;
    private final JsonNode tools;
    private final Usage usage;
    private final List<Turn> flat;
    private final Integer loopStart;
    private final Reflection onReflection;
    private final String json;

    private Scenario(String name, String description, long seed, String toolset, JsonNode tools, Usage usage,
                     List<Turn> flat, Integer loopStart, Reflection onReflection, String json) {
        this.name = name;
        this.description = description;
        this.seed = seed;
        this.toolset = toolset;
        this.tools = tools;
        this.usage = usage;
        this.flat = flat;
        this.loopStart = loopStart;
        this.onReflection = onReflection;
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
                "on_reflection");
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

        JsonNode turns = root.path("turns");
        if (!turns.isArray() || turns.isEmpty()) throw new ScenarioException("scenario " + name + ": 'turns' must be a non-empty list");
        List<Turn> flat = new ArrayList<>();
        List<Integer> startOf = new ArrayList<>();
        for (int i = 0; i < turns.size(); i++) {
            JsonNode t = turns.get(i);
            startOf.add(flat.size());
            int repeat = t.path("repeat").asInt(1);
            if (repeat < 1) throw new ScenarioException("scenario " + name + ": turns[" + i + "].repeat=" + repeat + " must be >= 1");
            Turn turn = turn(t, name + ".turns[" + i + "]", true);
            for (int r = 0; r < repeat; r++) flat.add(turn);
        }
        Integer loopStart = null;
        if (root.hasNonNull("loop_from")) {
            int lf = root.get("loop_from").asInt(-1);
            if (lf < 0 || lf >= turns.size()) {
                throw new ScenarioException("scenario " + name + ": loop_from=" + root.get("loop_from") + " must index 'turns' (0.." + (turns.size() - 1) + ")");
            }
            loopStart = startOf.get(lf);
        }
        Reflection refl = null;
        JsonNode r = root.path("on_reflection");
        if (!r.isMissingNode() && !r.isNull()) {
            checkKeys(r, name + ".on_reflection", "recover_probability", "answer");
            double p = r.path("recover_probability").asDouble(0);
            if (p < 0 || p > 1) throw new ScenarioException("scenario " + name + ": on_reflection.recover_probability=" + p + " must be in [0, 1]");
            refl = new Reflection(p, r.path("answer").asText("Based on what I found so far: {last_result}"));
        }
        return new Scenario(name, description, seed, toolset, tools.isMissingNode() ? MAPPER.createArrayNode() : tools,
                usage, List.copyOf(flat), loopStart, refl, json);
    }

    private static Turn turn(JsonNode t, String where, boolean allowRepeat) {
        if (!t.isObject()) throw new ScenarioException(where + " must be an object");
        if (allowRepeat) {
            checkKeys(t, where, "tool_calls", "text", "answer", "branches", "on_result", "input_tokens", "output_tokens", "repeat");
        } else {
            checkKeys(t, where, "tool_calls", "text", "answer", "branches", "on_result", "input_tokens", "output_tokens");
        }
        int kinds = (t.has("tool_calls") ? 1 : 0) + (t.has("answer") ? 1 : 0) + (t.has("branches") ? 1 : 0);
        if (kinds != 1) throw new ScenarioException(where + " needs exactly one of 'tool_calls', 'answer', 'branches'");
        List<CallSpec> calls = List.of();
        if (t.has("tool_calls")) {
            JsonNode tc = t.get("tool_calls");
            if (!tc.isArray() || tc.isEmpty()) throw new ScenarioException(where + ".tool_calls must be a non-empty list");
            calls = new ArrayList<>();
            for (int i = 0; i < tc.size(); i++) {
                JsonNode c = tc.get(i);
                checkKeys(c, where + ".tool_calls[" + i + "]", "name", "arguments");
                JsonNode args = c.has("arguments") ? c.get("arguments") : MAPPER.createObjectNode();
                if (!args.isObject() && !args.isTextual()) {
                    throw new ScenarioException(where + ".tool_calls[" + i + "].arguments must be an object or a raw string");
                }
                calls.add(new CallSpec(str(c, "name", where + ".tool_calls[" + i + "]"), args));
            }
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
        return new Turn(calls, text, answer, branches, onResult, in, out);
    }

    private static String str(JsonNode n, String field, String where) {
        JsonNode v = n.get(field);
        if (v == null || !v.isTextual() || v.asText().isEmpty()) {
            throw new ScenarioException(where + ": '" + field + "' must be a non-empty string");
        }
        return v.asText();
    }

    private static void checkKeys(JsonNode n, String where, String... allowed) {
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
    public String toolset() { return toolset; }
    public JsonNode tools() { return tools; }
    public Usage usage() { return usage; }
    public List<Turn> turns() { return flat; }
    public Integer loopStart() { return loopStart; }
    public Reflection onReflection() { return onReflection; }
    public String json() { return json; }

    /** The turn template for the 0-based task turn {@code n}: loops from {@code loop_from}, or repeats the last turn. */
    public Turn turnAt(int n) {
        if (n < flat.size()) return flat.get(n);
        if (loopStart == null) return flat.get(flat.size() - 1);
        int period = flat.size() - loopStart;
        return flat.get(loopStart + (n - flat.size()) % period);
    }

    static ObjectNode object() { return MAPPER.createObjectNode(); }
}
