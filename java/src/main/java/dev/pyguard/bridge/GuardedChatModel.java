package dev.pyguard.bridge;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.model.ModelProvider;
import dev.langchain4j.model.chat.Capability;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.ChatRequestOptions;
import dev.langchain4j.model.chat.listener.ChatModelListener;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.service.tool.ToolExecution;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The actuator: decorates any {@link ChatModel} for exactly one run. Its {@link GuardSensor} is returned from
 * {@link #listeners()}, so every call through it is sensed without touching the user's model; the wrapped model is
 * called through its own {@code chat(...)}, so the wrapped model's own listeners still fire.
 *
 * <p>Before each model call it first has the tool results that call's request carries judged ({@link
 * GuardSensor#judgeResults}: the evidence of the previous call, judged when it exists, not one model call later), then
 * applies the pending decision: proceed; append the reflection
 * (see {@link Reflections}) to this request; or throw {@link GuardStopException}. A STOP is sticky: every later model
 * call or tool execution of the run throws too.
 *
 * <p>Fail-safe: at most {@link GuardConfig#maxModelCalls()} model calls per user turn, enforced here in Java whatever the
 * callback does (raises, blocks past its deadline, is never registered). The fail-safe stop's outcome is
 * {@code guard_error} when any callback failure happened, {@code expired} otherwise; its rule is {@code failsafe_cap}.
 * And one deadline per run: once a callback missed its deadline ({@link GuardSensor#missedDeadlineAt()}), the next
 * model call (or tool execution) stops the run at once, outcome {@code guard_error}, rule {@code failsafe_deadline}:
 * a hung guard holds the run for one deadline, then lets go of it.
 *
 * <p>Tool hooks ({@link #beforeToolExecution}, {@link #afterToolExecution}): wired into AiServices'
 * {@code beforeToolExecution/afterToolExecution}, the agentic {@code AgentListener} and {@link ExplicitAgentLoop}, they
 * stop the tools of the last response from running when a STOP is pending (or the cap leaves no model call to read
 * their results), and count executed tools.
 */
public final class GuardedChatModel implements ChatModel, ToolGuard {

    private final ChatModel delegate;
    private final GuardConfig config;
    private final GuardSensor sensor;
    private final List<ChatModelListener> listeners;
    private final AtomicReference<GuardDecision> pending = new AtomicReference<>(GuardDecision.CONTINUE);
    private final AtomicReference<GuardStopException> stopped = new AtomicReference<>();
    private final AtomicInteger modelCalls = new AtomicInteger();
    /** Model calls made before the current user turn, as the guard last said (the fail-safe counts from here). */
    private final AtomicInteger turnStart = new AtomicInteger();
    private final AtomicInteger toolExecutions = new AtomicInteger();
    private final AtomicInteger reflections = new AtomicInteger();
    /** Why this model may not be called any more (its run has ended), or null while the run goes on. */
    private volatile String closed;
    /** The wrap-up instruction when a stop is answered ({@link #answerOnStop}), or null: a stop throws. */
    private volatile String wrapUpInstruction;
    /** The stop message when a stop ends the run without a model call ({@link #endOnStop}), or null. */
    private volatile String stopMessage;
    /** The agent's own cap on tool-calling round trips per user turn, when known (0: unknown). */
    private volatile int roundTripCap;
    private final AtomicReference<WrapUp> wrapUp = new AtomicReference<>();
    private final ToolLimits toolLimits = new ToolLimits();
    private volatile ChatRequest lastRequest;
    private volatile AiMessage lastResponse;

    public GuardedChatModel(ChatModel delegate, GuardConfig config, GuardCallback callback) {
        this.delegate = Objects.requireNonNull(delegate, "delegate ChatModel");
        this.config = Objects.requireNonNull(config, "config");
        this.sensor = new GuardSensor(config, callback, this::onDecision);
        this.listeners = List.of(sensor);
    }

    public static GuardedChatModel wrap(ChatModel delegate, String runId, GuardCallback callback) {
        return new GuardedChatModel(delegate, GuardConfig.of(runId), callback);
    }

    /**
     * One run's guarded model from its settings in one call (Python's {@code guard_model}: each call from Python into
     * Java gives the GIL up and takes it back, so a run's set-up is one crossing, not one per setting).
     *
     * @param maxModelCalls the fail-safe cap per user turn; 0 or less: {@link GuardConfig#DEFAULT_MAX_MODEL_CALLS}
     * @param observeOnly   sensing only: no cap, no callback required ({@link GuardConfig#observeOnly})
     */
    public static GuardedChatModel create(ChatModel delegate, String runId, String taskType, int maxModelCalls,
                                          long callbackTimeoutMs, boolean observeOnly, GuardCallback callback) {
        GuardConfig config = observeOnly
                ? new GuardConfig(runId, taskType, Integer.MAX_VALUE, callbackTimeoutMs, false)
                : new GuardConfig(runId, taskType, maxModelCalls > 0 ? maxModelCalls : GuardConfig.DEFAULT_MAX_MODEL_CALLS,
                        callbackTimeoutMs, true);
        return new GuardedChatModel(delegate, config, callback);
    }

    private void onDecision(GuardDecision d) {
        if (d.turnStart() >= 0) turnStart.accumulateAndGet(Math.min(d.turnStart(), modelCalls.get()), Math::max);
        // A STOP is never overwritten by a later decision.
        pending.getAndUpdate(prev -> prev.action() == GuardDecision.Action.STOP ? prev : d);
    }

    /** Registers (or replaces) the callback: e.g. when it is created after the model. */
    public void setCallback(GuardCallback callback) { sensor.setCallback(callback); }

    /** Ends the run from outside (e.g. cancellation): the next model call or tool execution throws with this outcome. */
    public void requestStop(String outcome, String reason, String rule) {
        onDecision(GuardDecision.stop(outcome, reason, rule));
    }

    /**
     * A per-tool limit with exit {@code end} or {@code error} refused a call ({@link ToolLimits#wrap}): the run stops
     * (outcome {@code expired}, {@code rule} {@code tool_limit:<tool>}) at its next model call or tool execution,
     * whatever its {@code on_stop}: {@code end}, with the stop message (its own, else {@code template}) and no model
     * call; {@code error}, with {@link GuardStopException}.
     */
    public void stopForToolLimit(String exit, String template, String reason, String rule) {
        if ("end".equals(exit)) {
            if (stopMessage == null) stopMessage = template != null ? template : "[pyguard] {reason}";
            wrapUpInstruction = "";
        } else {
            stopMessage = null;
            wrapUpInstruction = null;
        }
        requestStop("expired", reason, rule);
    }

    /**
     * Answer a stop instead of throwing: when the guard stops the run (or the fail-safe cap, or the agent's own
     * {@code roundTripCap}, is reached) at a response that asks for tools, that response is replaced by a
     * {@link WrapUp}: one last model call with no tools and {@code instruction}, whose answer ends the agent's loop as
     * any final answer does (the tools asked for never run). Only a {@code stalled} or {@code expired} stop is answered:
     * a cancellation, an escalation or a failed guard ({@code guard_error}) still throws.
     *
     * @param instruction  the wrap-up message ({@code {reason}}: the stop's reason); null: every stop throws
     * @param roundTripCap the agent's own cap on tool-calling round trips per user turn (LangChain4j's
     *                     {@code maxToolCallingRoundTrips}), or 0 when unknown
     */
    public void answerOnStop(String instruction, int roundTripCap) {
        this.wrapUpInstruction = instruction;
        this.roundTripCap = Math.max(0, roundTripCap);
    }

    /**
     * End a stop without a model call (Python's {@code on_stop="end"}): where {@link #answerOnStop} would make the
     * wrap-up call, the response becomes {@code template} filled in ({@link WrapUp#message}): {@code {outcome}},
     * {@code {rule}}, {@code {reason}} and {@code {found}} (the last tool result of the run's last request, cut to
     * {@link WrapUp#FOUND_CHARS} characters; empty when none). Null: back to {@link #answerOnStop}'s behaviour.
     */
    public void endOnStop(String template, int roundTripCap) {
        this.stopMessage = template;
        this.wrapUpInstruction = template == null ? null : "";
        this.roundTripCap = Math.max(0, roundTripCap);
    }

    @Override
    public ChatResponse chat(ChatRequest request, ChatRequestOptions options) {
        sensor.judgeResults(request);
        ChatResponse early = answerBeforeCall(request);
        if (early != null) return early;
        ChatRequest effective = prepare(request);
        ChatResponse response = ChatModel.super.chat(effective, options);
        lastRequest = effective;
        lastResponse = response == null ? null : response.aiMessage();
        String instruction = wrapUpInstruction;
        if (lastResponse == null || !lastResponse.hasToolExecutionRequests()) return response;
        if (instruction == null) {  // on_stop="raise": the agent's own cap ends the turn with the guard's exception
            GuardStopException cap = agentCapStop();
            if (cap != null) throw stop(cap.outcome(), cap.reason(), cap.rule(), false);
            return response;
        }
        GuardStopException stop = stopToAnswer();
        if (stop == null) return response;
        WrapUp w = wrapUpFor(stop, effective, instruction);
        wrapUp.compareAndSet(null, w);
        if (w.text() == null) throw stop;  // the wrap-up call failed: the stop as it would have been
        return w.response();
    }

    /**
     * A stop decided on the tool results this request carries (judged before it is sent: {@link
     * GuardSensor#judgeResults}) replaces this model call with the wrap-up when stops are answered: the conversation so
     * far, results included, plus the instruction, and no tools. Null: the call goes on (or {@link #prepare} throws).
     */
    private ChatResponse answerBeforeCall(ChatRequest request) {
        String instruction = wrapUpInstruction;
        if (instruction == null || stopped.get() != null || closed != null) return null;
        GuardDecision d = pending.get();
        if (d.action() != GuardDecision.Action.STOP || !answered(d.outcome())) return null;
        GuardStopException stop = stop(d.outcome(), d.reason(), d.rule(), false);
        lastRequest = request;
        lastResponse = null;
        String salvage = stats().lastText();
        String message = stopMessage;  // on_stop="end": the stop message, no model call
        WrapUp w = message != null ? WrapUp.message(stop, message, request.messages())
                : WrapUp.capHolds(stop) ? WrapUp.notMade(stop, salvage)
                : WrapUp.call(delegate, WrapUp.request(request.messages(), null, instruction, stop.reason()), stop, salvage);
        wrapUp.compareAndSet(null, w);
        if (w.text() == null) throw stop;  // the wrap-up call failed: the stop as it would have been
        return w.response();
    }

    /**
     * After the agent's loop ended without an answer (its own cap, or a stop it raised): the wrap-up on the last
     * request and response, with {@code outcome}/{@code reason} when no stop of this run says why. Returns its JSON
     * ({@link WrapUp#toJson()}), or null when there was no model call to go on from or a wrap-up was made already.
     */
    public String wrapUpAfter(String instruction, String outcome, String reason, String rule) {
        ChatRequest request = lastRequest;
        if (request == null || instruction == null || wrapUp.get() != null) return null;
        GuardStopException stop = stopped.get();
        if (stop == null) stop = new GuardStopException(config.runId(), outcome, reason, rule, false, stats());
        WrapUp w = wrapUpFor(stop, request, instruction);
        return wrapUp.compareAndSet(null, w) ? w.toJson() : null;
    }

    /** The wrap-up of {@code stop}: none after a cap (the run's last text instead), else one call on the delegate. */
    private WrapUp wrapUpFor(GuardStopException stop, ChatRequest request, String instruction) {
        String message = stopMessage;
        if (message != null) return WrapUp.message(stop, message, request.messages());
        String salvage = stats().lastText();
        if (WrapUp.capHolds(stop)) return WrapUp.notMade(stop, salvage);
        return WrapUp.call(delegate, WrapUp.request(request.messages(), lastResponse, instruction, stop.reason()), stop,
                salvage);
    }

    /** The wrap-up made for this run ({@link WrapUp#toJson()}), or null. */
    public String wrapUpJson() {
        WrapUp w = wrapUp.get();
        return w == null ? null : w.toJson();
    }

    private static boolean answered(String outcome) {
        return "stalled".equals(outcome) || "expired".equals(outcome);
    }

    /** The stop a response asking for tools is answered for: the guard's, the fail-safe's or the agent cap's; or null. */
    private GuardStopException stopToAnswer() {
        GuardDecision d = pending.get();
        if (d.action() == GuardDecision.Action.STOP) {
            // only a run that is stalled or out of budget is answered: not a cancellation, an escalation, or a guard
            // that failed (no model call more than the failure allows)
            return answered(d.outcome()) ? stop(d.outcome(), d.reason(), d.rule(), false) : null;
        }
        int inTurn = modelCalls.get() - turnStart.get();
        if (inTurn >= config.maxModelCalls()) {
            GuardStopException failSafe = failSafeStop();
            return answered(failSafe.outcome()) ? failSafe : null;
        }
        GuardStopException cap = agentCapStop();
        return cap == null ? null : stop(cap.outcome(), cap.reason(), cap.rule(), false);
    }

    /** The agent's own cap ({@link #answerOnStop}'s {@code roundTripCap}) reached in this turn, or null. */
    private GuardStopException agentCapStop() {
        int cap = roundTripCap;
        int inTurn = modelCalls.get() - turnStart.get();
        // LangChain4j 1.19 (ToolService) counts a round trip before it looks at a response, so it throws at model call
        // cap + 1 whatever that response is: a response still asking for tools at call cap is its loop's last one.
        if (cap > 0 && inTurn >= cap) {
            return new GuardStopException(config.runId(), "expired", "the agent's own cap (LangChain4j's"
                    + " maxToolCallingRoundTrips=" + cap + ") was reached", "agent_cap", false, stats());
        }
        return null;
    }

    /**
     * Applies the pending decision to the request of the model call about to start and counts the call: throws
     * {@link GuardStopException} (a pending STOP or the fail-safe cap), or returns the request with the reflection
     * appended, or the request as it is. {@link GuardedStreamingChatModel} calls it before each streamed call.
     */
    public ChatRequest prepare(ChatRequest request) {
        sensor.judgeResults(request);  // once per model call: a no-op when chat() judged them already
        checkCanCallModel();
        GuardDecision d = pending.getAndUpdate(prev -> prev.action() == GuardDecision.Action.STOP ? prev : GuardDecision.CONTINUE);
        ChatRequest effective = request;
        if (d.action() == GuardDecision.Action.REFLECT) {
            List<ChatMessage> messages = new ArrayList<>(request.messages());
            messages.add(Reflections.message(d.reflection()));
            effective = request.toBuilder().messages(messages).build();
            reflections.incrementAndGet();
        }
        modelCalls.incrementAndGet();
        return effective;
    }

    /**
     * The run this model served has ended: every later model call or tool execution through it throws
     * {@link IllegalStateException} with {@code why} (which should name the fix), so an agent kept after its run never
     * runs unguarded. Python's {@code GuardedModel.release} calls it.
     */
    public void close(String why) { closed = why == null || why.isBlank() ? "run " + runId() + " has ended" : why; }

    public boolean isClosed() { return closed != null; }

    /** Throws GuardStopException when a STOP is pending or the fail-safe cap is reached. */
    public void checkCanCallModel() {
        String why = closed;
        if (why != null) throw new IllegalStateException(why);
        GuardStopException already = stopped.get();
        if (already != null) throw already;
        GuardDecision d = pending.get();
        if (d.action() == GuardDecision.Action.STOP) throw stop(d.outcome(), d.reason(), d.rule(), false);
        int missed = sensor.missedDeadlineAt();
        if (missed > 0) throw deadlineStop(missed);
        if (modelCalls.get() - turnStart.get() >= config.maxModelCalls()) throw failSafeStop();
    }

    @Override
    public void checkBeforeTool(ToolExecutionRequest request) {
        GuardDecision d = pending.get();
        // a tool limit with exit end: the response's other tools still run, the next model call ends the run
        if (stopMessage != null && d.action() == GuardDecision.Action.STOP && d.rule() != null
                && d.rule().startsWith("tool_limit:") && stopped.get() == null && closed == null) return;
        checkCanCallModel();
    }

    @Override
    public void afterToolExecution(ToolExecution execution) {
        String result = execution == null ? null : execution.result();
        if (result != null && result.startsWith(ToolLimits.BLOCKED)) return;  // blocked by a tool limit: not run
        toolExecutions.incrementAndGet();
    }

    /** This run's per-tool limits ({@link ToolLimits}: a call over its tool's limit is not run, the run goes on). */
    public ToolLimits toolLimits() { return toolLimits; }

    @Override
    public void recordToolExecution() {
        toolExecutions.incrementAndGet();
    }

    private GuardStopException failSafeStop() {
        RunStats s = stats();
        boolean guardFailed = s.callbackFailures() > 0;
        String reason = "Java fail-safe: the run reached maxModelCalls=" + config.maxModelCalls()
                + " model calls" + (turnStart.get() > 0 ? " in one user turn" : "") + (guardFailed
                ? " with " + s.callbackFailures() + " guard callback failure(s) (last: " + s.lastCallbackError() + ")"
                : " without the guard stopping it");
        return stop(guardFailed ? "guard_error" : "expired", reason, "failsafe_cap", true);
    }

    private GuardStopException deadlineStop(int event) {
        String reason = "Java fail-safe: the guard's decision about model call " + event + " missed its deadline of "
                + config.callbackTimeoutMs() + " ms; the run is stopped at once (one deadline per run)";
        return stop("guard_error", reason, "failsafe_deadline", true);
    }

    private GuardStopException stop(String outcome, String reason, String rule, boolean failSafe) {
        GuardStopException e = new GuardStopException(config.runId(), outcome, reason, rule, failSafe, stats());
        return stopped.compareAndSet(null, e) ? e : stopped.get();
    }

    @Override
    public ChatResponse doChat(ChatRequest request) {
        return delegate.chat(request);
    }

    @Override
    public List<ChatModelListener> listeners() { return listeners; }

    @Override
    public ModelProvider provider() { return delegate.provider(); }

    @Override
    public ChatRequestParameters defaultRequestParameters() { return delegate.defaultRequestParameters(); }

    @Override
    public Set<Capability> supportedCapabilities() { return delegate.supportedCapabilities(); }

    @Override
    public GuardedChatModel currentRun() { return this; }

    public ChatModel delegate() { return delegate; }
    public GuardConfig config() { return config; }
    public GuardSensor sensor() { return sensor; }
    public String runId() { return config.runId(); }
    public int modelCalls() { return modelCalls.get(); }
    public int reflectionsInjected() { return reflections.get(); }
    /** The stop that ended (or will end) this run, or null. */
    public GuardStopException stopException() { return stopped.get(); }
    public GuardDecision pendingDecision() { return pending.get(); }

    public RunStats stats() { return sensor.stats(modelCalls.get(), toolExecutions.get()); }
}
