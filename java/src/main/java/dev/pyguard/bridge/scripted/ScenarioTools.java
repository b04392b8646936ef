package dev.pyguard.bridge.scripted;

import com.fasterxml.jackson.databind.JsonNode;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.exception.ToolArgumentsException;
import dev.langchain4j.model.chat.request.json.JsonObjectSchema;
import dev.langchain4j.service.tool.ToolExecutor;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The tools a scenario declares in its {@code tools} list, as LangChain4j {@link ToolSpecification}s and
 * {@link ToolExecutor}s. One instance per run: tools with a result sequence (polling) count their own calls.
 *
 * <p>Per tool: {@code name}, {@code description}, {@code parameters} ({@code {"page":"integer"}}: string, integer,
 * number, boolean) and how it answers: {@code results} (one per call, the last repeats), {@code by_argument}
 * ({@code {"name":"page","values":{"1":"..."},"default":"..."}}), {@code throws} (every call throws with that message),
 * {@code fail_times} (the first n calls throw), {@code size} (the result is a text of that many characters).
 * Placeholders in results: {@code {call}} (the tool's 1-based call count) and {@code {args}} (the raw arguments).
 */
public final class ScenarioTools {

    private final Map<ToolSpecification, ToolExecutor> tools = new LinkedHashMap<>();
    private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

    public ScenarioTools(Scenario scenario) {
        JsonNode list = scenario.tools();
        for (int i = 0; i < list.size(); i++) {
            JsonNode t = list.get(i);
            String where = "scenario " + scenario.name() + ": tools[" + i + "]";
            for (Iterator<String> it = t.fieldNames(); it.hasNext(); ) {
                String k = it.next();
                if (!List.of("name", "description", "parameters", "results", "by_argument", "throws", "fail_times", "size").contains(k)) {
                    throw new ScenarioException(where + ": unknown key '" + k + "'");
                }
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
                List<String> req = new java.util.ArrayList<>();
                p.fieldNames().forEachRemaining(req::add);
                params.required(req);
            }
            ToolSpecification spec = ToolSpecification.builder()
                    .name(name)
                    .description(t.path("description").asText(name))
                    .parameters(params.build())
                    .build();
            AtomicInteger counter = calls.computeIfAbsent(name, k -> new AtomicInteger());
            tools.put(spec, executor(t, counter, where));
        }
    }

    private static ToolExecutor executor(JsonNode t, AtomicInteger counter, String where) {
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
            return result.replace("{call}", Integer.toString(call)).replace("{args}", raw);
        };
    }

    public Map<ToolSpecification, ToolExecutor> asMap() { return tools; }

    public int calls(String toolName) {
        AtomicInteger c = calls.get(toolName);
        return c == null ? 0 : c.get();
    }
}
