package dev.pyguard.bridge.scripted;

import com.fasterxml.jackson.databind.JsonNode;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.exception.ToolArgumentsException;
import dev.langchain4j.model.chat.request.json.JsonObjectSchema;
import dev.langchain4j.service.tool.ToolExecutor;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * The tools a scenario declares in its {@code tools} list, as LangChain4j {@link ToolSpecification}s and
 * {@link ToolExecutor}s. One instance per run: tools count their own calls, and the run's tools share one state map
 * (what {@code set} writes and {@code when_state} reads: a file's content after an edit, say).
 *
 * <p>Per tool: {@code name}, {@code description}, {@code parameters} ({@code {"page":"integer"}}: string, integer,
 * number, boolean) and how it answers. First {@code cases}, in order: the first case whose {@code when} (arguments
 * equal), {@code when_matches} (arguments match a regular expression) and {@code when_state} (state values equal) all
 * hold answers with its {@code result}, {@code results} (one per call of that case, the last repeats), {@code error}
 * (the tool throws with that message) or {@code errors} (one message per call of that case), after applying its
 * {@code set}. Otherwise: {@code results} (one per call, the
 * last repeats), {@code by_argument} ({@code {"name":"page","values":{"1":"..."},"default":"..."}}), {@code throws}
 * (every call throws with that message), {@code fail_times} (the first n calls throw), {@code size} (a text of that
 * many characters). Placeholders in results, errors, {@code set} and {@code when_state} values: {@code {call}} (the
 * tool's 1-based call count), {@code {case_call}} (the case's), {@code {args}} (the raw arguments), {@code {arg:NAME}}
 * (one argument's value, as sent), {@code {state:KEY}} (a state value).
 */
public final class ScenarioTools {

    private static final List<String> TOOL_KEYS = List.of("name", "description", "parameters", "results", "by_argument",
            "throws", "fail_times", "size", "cases");
    private static final Pattern PLACEHOLDER = Pattern.compile("\\{(call|case_call|args|arg:[^{}]+|state:[^{}]+)\\}");

    /** A tool's answer rule; one counter per case and per run. */
    private record Case(Map<String, String> when, Map<String, Pattern> whenMatches, Map<String, String> whenState,
                        Map<String, String> set, String result, List<String> results, String error, List<String> errors,
                        AtomicInteger calls) {}

    private final Map<ToolSpecification, ToolExecutor> tools = new LinkedHashMap<>();
    private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    private final Map<String, String> state = new ConcurrentHashMap<>();

    public ScenarioTools(Scenario scenario) {
        JsonNode list = scenario.tools();
        for (int i = 0; i < list.size(); i++) {
            JsonNode t = list.get(i);
            String where = "scenario " + scenario.name() + ": tools[" + i + "]";
            for (Iterator<String> it = t.fieldNames(); it.hasNext(); ) {
                String k = it.next();
                if (!TOOL_KEYS.contains(k)) throw new ScenarioException(where + ": unknown key '" + k + "'; allowed: " + TOOL_KEYS);
            }
            String name = t.path("name").asText("");
            if (name.isEmpty()) throw new ScenarioException(where + ": 'name' is required");
            JsonObjectSchema.Builder params = JsonObjectSchema.builder();
            JsonNode p = t.path("parameters");
            for (Iterator<Map.Entry<String, JsonNode>> it = p.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                switch (e.getValue().asText()) {
                    case "string" -> params.addStringProperty(e.getKey());
                    case "integer" -> params.addIntegerProperty(e.getKey());
                    case "number" -> params.addNumberProperty(e.getKey());
                    case "boolean" -> params.addBooleanProperty(e.getKey());
                    default -> throw new ScenarioException(where + ": parameter " + e.getKey() + " has type '" + e.getValue().asText()
                            + "'; use string, integer, number or boolean");
                }
            }
            if (p.size() > 0) {
                List<String> req = new ArrayList<>();
                p.fieldNames().forEachRemaining(req::add);
                params.required(req);
            }
            ToolSpecification spec = ToolSpecification.builder()
                    .name(name)
                    .description(t.path("description").asText(name))
                    .parameters(params.build())
                    .build();
            AtomicInteger counter = calls.computeIfAbsent(name, k -> new AtomicInteger());
            tools.put(spec, executor(t, counter, cases(t.path("cases"), where + ".cases")));
        }
    }

    private static List<Case> cases(JsonNode list, String where) {
        if (list.isMissingNode()) return List.of();
        if (!list.isArray()) throw new ScenarioException(where + " must be a list");
        List<Case> out = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            JsonNode c = list.get(i);
            String w = where + "[" + i + "]";
            Scenario.checkKeys(c, w, "when", "when_matches", "when_state", "set", "result", "results", "error", "errors");
            int kinds = (c.has("result") ? 1 : 0) + (c.has("results") ? 1 : 0) + (c.has("error") ? 1 : 0) + (c.has("errors") ? 1 : 0);
            if (kinds != 1) throw new ScenarioException(w + " needs exactly one of 'result', 'results', 'error', 'errors'");
            List<String> results = texts(c.path("results"), w + ".results");
            List<String> errors = texts(c.path("errors"), w + ".errors");
            Map<String, Pattern> matches = new LinkedHashMap<>();
            for (Map.Entry<String, String> e : strings(c.path("when_matches"), w + ".when_matches").entrySet()) {
                try {
                    matches.put(e.getKey(), Pattern.compile(e.getValue()));
                } catch (PatternSyntaxException ex) {
                    throw new ScenarioException(w + ".when_matches." + e.getKey() + ": '" + e.getValue()
                            + "' is not a valid regular expression: " + ex.getDescription());
                }
            }
            out.add(new Case(strings(c.path("when"), w + ".when"), Map.copyOf(matches), strings(c.path("when_state"), w + ".when_state"),
                    strings(c.path("set"), w + ".set"), c.has("result") ? c.get("result").asText() : null, results,
                    c.has("error") ? c.get("error").asText() : null, errors, new AtomicInteger()));
        }
        return List.copyOf(out);
    }

    private static List<String> texts(JsonNode rs, String where) {
        if (rs.isMissingNode()) return List.of();
        if (!rs.isArray() || rs.isEmpty()) throw new ScenarioException(where + " must be a non-empty list");
        List<String> out = new ArrayList<>();
        for (JsonNode r : rs) out.add(r.asText());
        return List.copyOf(out);
    }

    private static Map<String, String> strings(JsonNode o, String where) {
        if (o.isMissingNode()) return Map.of();
        if (!o.isObject()) throw new ScenarioException(where + " must be an object {name: text}");
        Map<String, String> out = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = o.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isValueNode() || e.getValue().isNull()) {
                throw new ScenarioException(where + "." + e.getKey() + " must be a string, number or boolean");
            }
            out.put(e.getKey(), e.getValue().asText());
        }
        return out;
    }

    private ToolExecutor executor(JsonNode t, AtomicInteger counter, List<Case> cases) {
        return (ToolExecutionRequest request, Object memoryId) -> {
            int call = counter.incrementAndGet();
            String raw = request.arguments() == null ? "" : request.arguments();
            JsonNode args;
            try {
                args = raw.isBlank() ? Scenario.object() : Scenario.MAPPER.readTree(raw);
            } catch (Exception e) {
                throw new ToolArgumentsException("malformed JSON arguments for tool " + request.name() + ": " + raw, (Throwable) null);
            }
            if (t.has("throws")) throw new IllegalStateException(t.get("throws").asText());
            if (call <= t.path("fail_times").asInt(0)) {
                throw new IllegalStateException(request.name() + " failed (attempt " + call + ")");
            }
            for (Case c : cases) {
                if (!matches(c, args, raw, call)) continue;
                int caseCall = c.calls().incrementAndGet();
                for (Map.Entry<String, String> e : c.set().entrySet()) state.put(e.getKey(), subst(e.getValue(), args, raw, call, caseCall));
                if (c.error() != null) throw new IllegalStateException(subst(c.error(), args, raw, call, caseCall));
                if (!c.errors().isEmpty()) {
                    throw new IllegalStateException(subst(c.errors().get(Math.min(caseCall, c.errors().size()) - 1), args, raw, call, caseCall));
                }
                String r = c.result() != null ? c.result() : c.results().get(Math.min(caseCall, c.results().size()) - 1);
                return subst(r, args, raw, call, caseCall);
            }
            if (t.has("size")) return "x".repeat(Math.max(0, t.get("size").asInt()));
            String result;
            JsonNode by = t.path("by_argument");
            if (!by.isMissingNode()) {
                JsonNode key = args.path(by.path("name").asText());
                String k = key.isMissingNode() || key.isNull() ? "" : key.asText();
                JsonNode v = by.path("values").get(k);
                result = v == null ? by.path("default").asText("no result for " + k) : v.asText();
            } else if (t.has("results")) {
                JsonNode rs = t.get("results");
                result = rs.isArray() && rs.size() > 0 ? rs.get(Math.min(call, rs.size()) - 1).asText() : rs.asText();
            } else {
                result = "ok";
            }
            return subst(result, args, raw, call, 0);
        };
    }

    private boolean matches(Case c, JsonNode args, String raw, int call) {
        for (Map.Entry<String, String> e : c.when().entrySet()) {
            if (!e.getValue().equals(arg(args, e.getKey()))) return false;
        }
        for (Map.Entry<String, Pattern> e : c.whenMatches().entrySet()) {
            if (!e.getValue().matcher(arg(args, e.getKey())).find()) return false;
        }
        for (Map.Entry<String, String> e : c.whenState().entrySet()) {
            String want = subst(e.getValue(), args, raw, call, c.calls().get() + 1);
            if (!want.equals(state.getOrDefault(e.getKey(), ""))) return false;
        }
        return true;
    }

    private static String arg(JsonNode args, String name) {
        JsonNode v = args.path(name);
        return v.isMissingNode() || v.isNull() ? "" : v.isValueNode() ? v.asText() : v.toString();
    }

    private String subst(String s, JsonNode args, String raw, int call, int caseCall) {
        if (s.indexOf('{') < 0) return s;
        Matcher m = PLACEHOLDER.matcher(s);
        StringBuilder sb = new StringBuilder();
        while (m.find()) {
            String k = m.group(1);
            String v = switch (k) {
                case "call" -> Integer.toString(call);
                case "case_call" -> Integer.toString(caseCall);
                case "args" -> raw;
                default -> k.startsWith("arg:") ? arg(args, k.substring(4)) : state.getOrDefault(k.substring(6), "");
            };
            m.appendReplacement(sb, Matcher.quoteReplacement(v));
        }
        m.appendTail(sb);
        return sb.toString();
    }

    public Map<ToolSpecification, ToolExecutor> asMap() { return tools; }

    public int calls(String toolName) {
        AtomicInteger c = calls.get(toolName);
        return c == null ? 0 : c.get();
    }

    /** A state value the tools wrote ({@code set}), or null. */
    public String state(String key) { return state.get(key); }
}
