package dev.pyguard.bridge;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.service.tool.ToolExecutor;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Per-tool limits of one run, or of one conversation (the runs of one chat-memory id), each with an exit behaviour, as
 * LangChain v1's {@code ToolCallLimitMiddleware}: {@code continue} (its default): a call of a tool over its limit is
 * not executed, the model gets {@link #BLOCKED} (why, as the tool's result) and the run goes on, its other tools still
 * running; {@code end}: the call is not executed and the run ends with the stop message, no model call after it;
 * {@code error}: the call is not executed and the agent's call throws {@link GuardStopException}. LangChain4j's
 * {@code beforeToolExecution} cannot veto one call (its exception ends the whole invocation), so the veto is in the
 * tool's executor: {@link #wrap} decorates the executors of a {@link ToolSet}, and each call asks the run serving the
 * calling thread ({@link ToolGuard#currentRun}) whether it may run ({@link #admit}); a run's limits may sit
 * {@link #within} its conversation's, and a call runs only within both. Python sets the limits
 * ({@code [caps.tool_limits]}, {@code [conversation.tool_limits]}) and reads what was blocked ({@link #blockedJson}).
 * A run's {@link #mode} is its guard's: {@code enforce} as above; {@code reflect} blocks but never stops the run (an
 * exit {@code end} or {@code error} acts as {@code continue}); {@code observe} acts on nothing: the call runs, and the
 * refusal is only counted ({@link #blockedJson}: the calls that would have been blocked) with the stop an exit
 * {@code end}/{@code error} would have made ({@link #wouldStopJson}).
 */
public final class ToolLimits {

    /** The start of a blocked call's result (the model reads it; the after-tool hook does not count it as run). */
    public static final String BLOCKED = "[pyguard] not run: the limit of ";

    /** The exit behaviours of a limit. */
    public static final Set<String> EXITS = Set.of("continue", "end", "error");

    /** The guard's modes ({@code PolicyConfig.mode}): how a run acts on a refusal. */
    public static final Set<String> MODES = Set.of("enforce", "reflect", "observe");

    private static final ObjectMapper MAPPER = new ObjectMapper();

    /**
     * A call kept from running: its tool's limit, the limit's exit behaviour and scope ({@code run} or
     * {@code conversation}), and the result the model reads instead.
     */
    public record Refusal(String tool, int limit, String exit, String scope, String message) {
        /** The stop's reason for an exit {@code end} or {@code error}. */
        public String reason() {
            return "the limit of " + limit + " call" + (limit == 1 ? "" : "s") + " of " + tool + " per " + scope
                    + " is reached (exit " + exit + ")";
        }

        /** The stop's rule: {@code tool_limit:<tool>}. */
        public String rule() { return "tool_limit:" + tool; }
    }

    private final String scope;
    private final Map<String, Integer> limits = new ConcurrentHashMap<>();
    private final Map<String, String> exits = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> admitted = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> blocked = new ConcurrentHashMap<>();
    private volatile ToolLimits outer;
    private volatile String stopMessage;
    private volatile String mode = "enforce";
    private volatile Refusal wouldStop;
    private volatile int wouldStopAt;

    /** A run's limits. */
    public ToolLimits() { this("run"); }

    /** Limits per {@code scope} ({@code run} or {@code conversation}: the word the blocked call's message uses). */
    public ToolLimits(String scope) { this.scope = scope == null || scope.isBlank() ? "run" : scope; }

    /** At most {@code limit} executions of {@code tool}; later calls are blocked and the run goes on. */
    public void limit(String tool, int limit) { limit(tool, limit, "continue"); }

    /** At most {@code limit} executions of {@code tool}; a later call is blocked with the exit behaviour {@code exit}. */
    public void limit(String tool, int limit, String exit) {
        if (tool == null || tool.isBlank()) throw new IllegalArgumentException("a tool limit needs a tool name");
        if (limit < 1) throw new IllegalArgumentException("the limit of " + tool + " must be >= 1, got " + limit);
        if (!EXITS.contains(exit)) {
            throw new IllegalArgumentException("the exit of " + tool + "'s limit must be continue, end or error, got " + exit);
        }
        limits.put(tool, limit);
        exits.put(tool, exit);
    }

    /** These limits sit within {@code conversation}'s: a call runs only if both admit it. */
    public void within(ToolLimits conversation) { this.outer = conversation; }

    /** The stop message of an exit {@code end} when the run's own {@code on_stop} has none ({@link WrapUp#message}). */
    public void stopMessage(String template) { this.stopMessage = template; }

    public String stopMessage() { return stopMessage; }

    /** How the run acts on a refusal: {@code enforce} (the default), {@code reflect} or {@code observe}. */
    public void mode(String mode) {
        if (!MODES.contains(mode)) {
            throw new IllegalArgumentException("the mode of tool limits must be enforce, reflect or observe, got " + mode);
        }
        this.mode = mode;
    }

    public String mode() { return mode; }

    /** In observe or reflect mode: the first refusal whose exit would have stopped the run, at model call {@code at}. */
    void wouldStop(Refusal refusal, int at) {
        synchronized (this) {
            if (wouldStop == null) {
                wouldStop = refusal;
                wouldStopAt = at;
            }
        }
    }

    /**
     * The stop a limit with exit {@code end} or {@code error} would have made in observe or reflect mode, as JSON
     * ({@code {"iteration": 3, "rule": "tool_limit:send_email", "reason": "...", "exit": "end"}}), or null.
     */
    public String wouldStopJson() {
        Refusal r = wouldStop;
        if (r == null) return null;
        ObjectNode o = MAPPER.createObjectNode();
        o.put("iteration", wouldStopAt);
        o.put("rule", r.rule());
        o.put("reason", r.reason());
        o.put("exit", r.exit());
        return o.toString();
    }

    /** Null when a call of {@code tool} may run (counted), else the result the model gets instead (counted blocked). */
    public String admit(String tool) {
        Refusal r = check(tool);
        return r == null ? null : r.message();
    }

    /**
     * Null when a call of {@code tool} may run (counted here and in the conversation's limits), else why not (counted
     * blocked here, and in the conversation's limits when theirs refused it).
     */
    public Refusal check(String tool) {
        if (tool == null) return null;
        Refusal r = take(tool);
        ToolLimits conversation = outer;
        if (r == null && conversation != null) {
            r = conversation.take(tool);
            if (r != null) admitted.computeIfPresent(tool, (k, n) -> { n.decrementAndGet(); return n; });
        }
        if (r != null) blocked.computeIfAbsent(tool, k -> new AtomicInteger()).incrementAndGet();
        return r;
    }

    /** One call of {@code tool} against these limits only: admitted (counted), or refused (counted blocked here). */
    private Refusal take(String tool) {
        Integer limit = limits.get(tool);
        if (limit == null) return null;
        int n = admitted.computeIfAbsent(tool, k -> new AtomicInteger()).incrementAndGet();
        if (n <= limit) return null;
        admitted.get(tool).decrementAndGet();
        if (outer == null && !"run".equals(scope)) blocked.computeIfAbsent(tool, k -> new AtomicInteger()).incrementAndGet();
        String exit = exits.getOrDefault(tool, "continue");
        String message = BLOCKED + limit + " call" + (limit == 1 ? "" : "s") + " of " + tool + " per " + scope
                + " is reached, so this call was not executed. Do not call " + tool + " again in this " + scope
                + "; go on with the other tools, or answer from what you have.";
        return new Refusal(tool, limit, exit, scope, message);
    }

    /** Forget what was counted (a conversation reset): every tool starts from none. */
    public void reset() {
        admitted.clear();
        blocked.clear();
        wouldStop = null;
    }

    public boolean isEmpty() { return limits.isEmpty(); }

    /** Blocked calls by tool, as JSON ({@code {"send_email": 1}}; sorted by name). */
    public String blockedJson() { return json(blocked); }

    /** Executed (admitted) calls of the limited tools, as JSON (sorted by name). */
    public String admittedJson() { return json(admitted); }

    private static String json(Map<String, AtomicInteger> counts) {
        ObjectNode o = MAPPER.createObjectNode();
        new TreeMap<>(counts).forEach((k, v) -> o.put(k, v.get()));
        return o.toString();
    }

    /**
     * {@code tools}' executors, each asking the run serving the calling thread ({@code guard.currentRun()}) before it
     * runs: build your AiServices agent with {@code .tools(map)} instead of {@code .tools(objects)}. A call refused by
     * a limit with exit {@code end} or {@code error} stops its run ({@link GuardedChatModel#stopForToolLimit}). In
     * the run's {@link #mode} {@code observe} a refused call runs all the same (the refusal only counted), and in
     * {@code reflect} it is blocked; in neither does a limit stop the run (the stop is recorded: {@link #wouldStopJson}).
     */
    public static Map<ToolSpecification, ToolExecutor> wrap(ToolGuard guard, ToolSet tools) {
        Map<ToolSpecification, ToolExecutor> out = new LinkedHashMap<>();
        tools.asMap().forEach((spec, inner) -> out.put(spec, (request, memoryId) -> {
            GuardedChatModel run = guard.currentRun();
            ToolLimits limits = run == null ? null : run.toolLimits();
            Refusal refused = limits == null ? null : limits.check(request.name());
            if (refused == null) return inner.execute(request, memoryId);
            boolean enforce = "enforce".equals(limits.mode());
            if (!"continue".equals(refused.exit())) {
                if (enforce) run.stopForToolLimit(refused.exit(), limits.stopMessage(), refused.reason(), refused.rule());
                else limits.wouldStop(refused, run.modelCalls());
            }
            return "observe".equals(limits.mode()) ? inner.execute(request, memoryId) : refused.message();
        }));
        return out;
    }

    /** {@link #wrap} of tool objects with {@code @Tool} methods. */
    public static Map<ToolSpecification, ToolExecutor> wrapObjects(ToolGuard guard, Object... objectsWithTools) {
        return wrap(guard, ToolSet.of(objectsWithTools));
    }
}
