package dev.pyguard.bridge;

import dev.langchain4j.model.ModelProvider;
import dev.langchain4j.model.chat.Capability;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.ChatRequestOptions;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.listener.ChatModelListener;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.CompleteToolCall;
import dev.langchain4j.model.chat.response.PartialResponse;
import dev.langchain4j.model.chat.response.PartialResponseContext;
import dev.langchain4j.model.chat.response.PartialThinking;
import dev.langchain4j.model.chat.response.PartialToolCall;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.service.tool.BeforeToolExecution;
import dev.langchain4j.service.tool.ToolExecution;

import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The actuator for a {@link StreamingChatModel}, for exactly one run: the streaming twin of {@link GuardedChatModel},
 * built on one. The guard's state (pending decision, sticky stop, Java fail-safe cap, counters, the
 * {@link GuardSensor}) lives in that {@link #actuator()}; this class only adapts it to streaming.
 *
 * <ul>
 *   <li><b>One event per completed model call.</b> The sensor is this model's listener: LangChain4j calls its
 *       {@code onResponse} when the stream completes ({@code onCompleteResponse}, with the usage), before the
 *       caller's handler sees the response, so the decision is known before the caller runs tools or calls again.</li>
 *   <li><b>Before each call</b> the pending decision is applied ({@link GuardedChatModel#prepare}): the reflection is
 *       appended to the request, or the call is refused with {@link GuardStopException}, delivered to the handler's
 *       {@code onError} (a streaming caller expects its errors there, not thrown).</li>
 *   <li><b>A stop mid-stream</b> ({@link #requestStop}, e.g. a cancellation, or a stop seen at the next token) ends the
 *       call in flight at once: its handler gets {@code onError(GuardStopException)}, the rest of the stream is
 *       dropped, so a half-written answer never reaches {@code onCompleteResponse}.</li>
 *   <li><b>An exception thrown by the caller's {@code onCompleteResponse}</b> (AiServices runs the tools there, and
 *       the guard's {@link #beforeToolExecution} hook throws to keep them from running) goes to that handler's
 *       {@code onError}: a provider would log and drop it, and the stream would never end.</li>
 * </ul>
 *
 * <p>Calls of one run are sequential (as an AiServices tool loop makes them): one call is in flight at a time.
 */
public final class GuardedStreamingChatModel implements StreamingChatModel {

    private final StreamingChatModel delegate;
    private final GuardedChatModel actuator;
    private final AtomicReference<Call> inFlight = new AtomicReference<>();

    public GuardedStreamingChatModel(StreamingChatModel delegate, GuardConfig config, GuardCallback callback) {
        this.delegate = Objects.requireNonNull(delegate, "delegate StreamingChatModel");
        this.actuator = new GuardedChatModel(new StreamingOnly(delegate), config, callback);
    }

    /** One run's guarded streaming model in one call from Python (see {@link GuardedChatModel#create}). */
    public static GuardedStreamingChatModel create(StreamingChatModel delegate, String runId, String taskType,
                                                   int maxModelCalls, long callbackTimeoutMs, GuardCallback callback) {
        return new GuardedStreamingChatModel(delegate, new GuardConfig(runId, taskType,
                maxModelCalls > 0 ? maxModelCalls : GuardConfig.DEFAULT_MAX_MODEL_CALLS, callbackTimeoutMs, true), callback);
    }

    @Override
    public void chat(ChatRequest request, ChatRequestOptions options, StreamingChatResponseHandler handler) {
        ChatRequest effective;
        try {
            effective = actuator.prepare(request);
        } catch (GuardStopException stop) {
            handler.onError(stop);
            return;
        }
        Call call = new Call(handler);
        inFlight.set(call);
        try {
            StreamingChatModel.super.chat(effective, options, call.outer());
        } catch (RuntimeException e) {
            call.fail(e); // a provider that throws instead of calling onError: still one error, to the handler
        }
    }

    /** Called by LangChain4j's {@code chat} with its listener-notifying handler: the provider's stream goes through
     * the current call, which can cut it short. */
    @Override
    public void doChat(ChatRequest request, StreamingChatResponseHandler listening) {
        Call call = inFlight.get();
        if (call == null) throw new IllegalStateException("GuardedStreamingChatModel.doChat called outside chat()");
        call.attach(listening);
        delegate.chat(request, call);
    }

    /** Ends the run from outside (any thread): the call in flight ends now with {@code onError}; every later model
     * call or tool execution is refused. */
    public void requestStop(String outcome, String reason, String rule) {
        actuator.requestStop(outcome, reason, rule);
        abortInFlight();
    }

    private void abortInFlight() {
        Call call = inFlight.get();
        if (call != null) call.abort();
    }

    private GuardStopException pendingStop() {
        try {
            actuator.checkCanCallModel();
            return null;
        } catch (GuardStopException stop) {
            return stop;
        }
    }

    /** True when a stop is pending (a decision or a cancellation), not just the fail-safe count of the next call. */
    private boolean stopPending() {
        return actuator.stopException() != null || actuator.pendingDecision().action() == GuardDecision.Action.STOP;
    }

    /** Hook for the tools of the last response (AiServices' {@code TokenStream.beforeToolExecution}). */
    public void beforeToolExecution(BeforeToolExecution before) { actuator.beforeToolExecution(before); }

    public void afterToolExecution(ToolExecution execution) { actuator.afterToolExecution(execution); }

    @Override public List<ChatModelListener> listeners() { return actuator.listeners(); }
    @Override public ModelProvider provider() { return delegate.provider(); }
    @Override public ChatRequestParameters defaultRequestParameters() { return delegate.defaultRequestParameters(); }
    @Override public Set<Capability> supportedCapabilities() { return delegate.supportedCapabilities(); }

    /** The guard's state for this run (decision, stop, fail-safe, counters, sensor). */
    public GuardedChatModel actuator() { return actuator; }
    public StreamingChatModel delegate() { return delegate; }
    public GuardSensor sensor() { return actuator.sensor(); }
    public GuardConfig config() { return actuator.config(); }
    public String runId() { return actuator.runId(); }
    public int modelCalls() { return actuator.modelCalls(); }
    public int reflectionsInjected() { return actuator.reflectionsInjected(); }
    public GuardStopException stopException() { return actuator.stopException(); }
    public GuardDecision pendingDecision() { return actuator.pendingDecision(); }
    public void setCallback(GuardCallback callback) { actuator.setCallback(callback); }
    public RunStats stats() { return actuator.stats(); }

    /** One streamed model call: forwards the provider's stream to LangChain4j's listening handler until it ends or is
     * cut short; whatever comes after its end is dropped. */
    private final class Call implements StreamingChatResponseHandler {
        private final StreamingChatResponseHandler caller;
        private volatile StreamingChatResponseHandler listening;
        private final AtomicBoolean ended = new AtomicBoolean();

        Call(StreamingChatResponseHandler caller) { this.caller = caller; }

        /** Before {@link #attach}: the caller's own handler (LangChain4j wraps it with the listeners). */
        StreamingChatResponseHandler outer() { return caller; }

        void attach(StreamingChatResponseHandler l) { this.listening = l; }

        private StreamingChatResponseHandler target() {
            StreamingChatResponseHandler l = listening;
            return l != null ? l : caller;
        }

        /** A stop while the stream runs: the listeners see an error (the sensor's event) and so does the caller. */
        void abort() {
            GuardStopException stop = pendingStop();
            if (stop != null && ended.compareAndSet(false, true)) target().onError(stop);
        }

        void fail(Throwable t) {
            if (ended.compareAndSet(false, true)) target().onError(t);
        }

        private boolean live() {
            if (ended.get()) return false;
            if (stopPending()) { abort(); return false; }
            return true;
        }

        @Override public void onPartialResponse(String token) { if (live()) target().onPartialResponse(token); }
        @Override public void onPartialResponse(PartialResponse r, PartialResponseContext c) { if (live()) target().onPartialResponse(r, c); }
        @Override public void onPartialThinking(PartialThinking t) { if (live()) target().onPartialThinking(t); }
        @Override public void onPartialToolCall(PartialToolCall t) { if (live()) target().onPartialToolCall(t); }
        @Override public void onCompleteToolCall(CompleteToolCall t) { if (live()) target().onCompleteToolCall(t); }

        @Override
        public void onCompleteResponse(ChatResponse response) {
            if (!live() || !ended.compareAndSet(false, true)) return;
            try {
                target().onCompleteResponse(response);
            } catch (RuntimeException e) {
                // The listeners have seen the response already (one event); the error belongs to the caller alone.
                caller.onError(e);
            }
        }

        @Override
        public void onError(Throwable error) { fail(error); }
    }

    /** The blocking side of the actuator is never called: this run's model streams. */
    private static final class StreamingOnly implements ChatModel {
        private final StreamingChatModel streaming;
        StreamingOnly(StreamingChatModel streaming) { this.streaming = streaming; }
        @Override public ChatResponse doChat(ChatRequest request) {
            throw new UnsupportedOperationException("this run's model streams: call it through GuardedStreamingChatModel");
        }
        @Override public ModelProvider provider() { return streaming.provider(); }
    }
}
