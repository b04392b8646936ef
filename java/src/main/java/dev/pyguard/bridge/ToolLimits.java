package dev.pyguard.bridge;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.service.tool.ToolExecutor;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Per-tool limits of one run with the exit behaviour {@code continue} (LangChain v1's {@code ToolCallLimitMiddleware}
 * default): a call of a tool over its limit is not executed; the model gets {@link #BLOCKED} (why, as the tool's
 * result) and the run goes on, its other tools still running. LangChain4j's {@code beforeToolExecution} cannot veto one
 * call (its exception ends the whole invocation), so the veto is in the tool's executor: {@link #wrap} decorates the
 * executors of a {@link ToolSet}, and each call asks the run serving the calling thread ({@link ToolGuard#currentRun})
 * whether it may run ({@link #admit}). Python sets the limits ({@code [caps.tool_limits]}) and reads what was blocked
 * ({@link #blockedJson}).
 */
public final class ToolLimits {

    /** The start of a blocked call's result (the model reads it; the after-tool hook does not count it as run). */
    public static final String BLOCKED = "[pyguard] not run: the limit of ";

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private final Map<String, Integer> limits = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> admitted = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> blocked = new ConcurrentHashMap<>();

    /** At most {@code limit} executions of {@code tool} in this run; later calls are blocked. */
    public void limit(String tool, int limit) {
        if (tool == null || tool.isBlank()) throw new IllegalArgumentException("a tool limit needs a tool name");
        if (limit < 1) throw new IllegalArgumentException("the limit of " + tool + " must be >= 1, got " + limit);
        limits.put(tool, limit);
    }

    /** Null when a call of {@code tool} may run (counted), else the result the model gets instead (counted blocked). */
    public String admit(String tool) {
        Integer limit = tool == null ? null : limits.get(tool);
        if (limit == null) return null;
        int n = admitted.computeIfAbsent(tool, k -> new AtomicInteger()).incrementAndGet();
        if (n <= limit) return null;
        admitted.get(tool).decrementAndGet();
        blocked.computeIfAbsent(tool, k -> new AtomicInteger()).incrementAndGet();
        return BLOCKED + limit + " call" + (limit == 1 ? "" : "s") + " of " + tool + " per run is reached, so this"
                + " call was not executed. Do not call " + tool + " again in this run; go on with the other tools, or"
                + " answer from what you have.";
    }

    public boolean isEmpty() { return limits.isEmpty(); }

    /** Blocked calls by tool, as JSON ({@code {"send_email": 1}}; sorted by name). */
    public String blockedJson() {
        ObjectNode o = MAPPER.createObjectNode();
        new TreeMap<>(blocked).forEach((k, v) -> o.put(k, v.get()));
        return o.toString();
    }

    /**
     * {@code tools}' executors, each asking the run serving the calling thread ({@code guard.currentRun()}) before it
     * runs: build your AiServices agent with {@code .tools(map)} instead of {@code .tools(objects)}.
     */
    public static Map<ToolSpecification, ToolExecutor> wrap(ToolGuard guard, ToolSet tools) {
        Map<ToolSpecification, ToolExecutor> out = new LinkedHashMap<>();
        tools.asMap().forEach((spec, inner) -> out.put(spec, (request, memoryId) -> {
            GuardedChatModel run = guard.currentRun();
            String refused = run == null ? null : run.toolLimits().admit(request.name());
            return refused != null ? refused : inner.execute(request, memoryId);
        }));
        return out;
    }

    /** {@link #wrap} of tool objects with {@code @Tool} methods. */
    public static Map<ToolSpecification, ToolExecutor> wrapObjects(ToolGuard guard, Object... objectsWithTools) {
        return wrap(guard, ToolSet.of(objectsWithTools));
    }
}
