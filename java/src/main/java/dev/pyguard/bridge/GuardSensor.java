package dev.pyguard.bridge;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.ModelProvider;
import dev.langchain4j.model.chat.listener.ChatModelErrorContext;
import dev.langchain4j.model.chat.listener.ChatModelListener;
import dev.langchain4j.model.chat.listener.ChatModelRequestContext;
import dev.langchain4j.model.chat.listener.ChatModelResponseContext;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.output.TokenUsage;

import java.io.IOException;
import java.io.StringWriter;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The sensor: a LangChain4j {@link ChatModelListener} that turns every model call of one run into one iteration
 * event (a JSON object with exactly the fields of {@code pyguard.base.events.IterationEvent}), hands it to the
 * {@link GuardCallback} and passes the parsed decision to its sink (the owning {@link GuardedChatModel}).
 *
 * <p>Observations of an event are the messages of the call's request after the last {@link AiMessage}: tool results
 * (kind {@code tool}) and user/system messages, except the guard's own reflection (which the guard already knows).
 * Token counts are passed on as reported (null when missing, and a negative one is no count); Java adds no token
 * arithmetic of its own. An observation's text longer than {@link ObservationWindow#WINDOW_CHARS} code points is
 * sent as its window, the part the engine reads, with the whole text's size ({@code whole_chars}); other texts are
 * never cut. Unpaired UTF-16 surrogates (what undecodable bytes become in a Java string) are replaced by U+FFFD so
 * the event is always valid UTF-8 JSON.
 *
 * <p>It never throws: LangChain4j would swallow the exception anyway. Callback failures are counted instead.
 */
public final class GuardSensor implements ChatModelListener {

    private static final String T0 = "pyguard.t0";
    private static final String TRACEPARENT = "pyguard.traceparent";
    private static final JsonFactory JSON = new JsonFactory();
    private static final AtomicInteger THREADS = new AtomicInteger();
    private static final ExecutorService DEADLINE_POOL = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "pyguard-callback-" + THREADS.incrementAndGet());
        t.setDaemon(true);
        return t;
    });

    private static final AtomicInteger IN_FLIGHT = new AtomicInteger();

    private final GuardConfig config;
    private volatile GuardCallback callback;
    private final Object claimLock = new Object();
    private int openIndex;      // the event whose callback may still be claimed (deadline mode)
    private boolean claimed;    // Python claimed openIndex's reply
    private int abandonedAt;    // the first event whose callback missed its deadline (0: none)
    private final Consumer<GuardDecision> sink;

    private int events;
    private int judged;         // the last model call whose tool results were judged before the next call
    private int delivered;
    private int toolCallsRequested;
    private int callbackFailures;
    private String lastCallbackError;
    private String lastText;
    private long[] callbackNanos = new long[8];
    private int callbackSamples;

    /**
     * @param sink receives each valid decision; may be null (sensing only)
     */
    public GuardSensor(GuardConfig config, GuardCallback callback, Consumer<GuardDecision> sink) {
        this.config = config;
        this.callback = callback;
        this.sink = sink;
    }

    public void setCallback(GuardCallback callback) { this.callback = callback; }

    public GuardConfig config() { return config; }

    @Override
    public void onRequest(ChatModelRequestContext ctx) {
        ctx.attributes().put(T0, System.nanoTime());
        // The agent's thread: the application's span is active here, not on the callback thread.
        String traceparent = TraceContexts.currentTraceparent();
        if (traceparent != null) ctx.attributes().put(TRACEPARENT, traceparent);
    }

    @Override
    public void onResponse(ChatModelResponseContext ctx) {
        handle(ctx.chatRequest(), ctx.chatResponse(), null, ctx.modelProvider(), ctx.attributes().get(T0),
                ctx.attributes().get(TRACEPARENT));
    }

    @Override
    public void onError(ChatModelErrorContext ctx) {
        handle(ctx.chatRequest(), null, ctx.error(), ctx.modelProvider(), ctx.attributes().get(T0),
                ctx.attributes().get(TRACEPARENT));
    }

    private void handle(ChatRequest request, ChatResponse response, Throwable error, ModelProvider provider, Object t0,
                        Object traceparent) {
        String json;
        int index;
        synchronized (this) { index = ++events; }
        try {
            Double latencyMs = t0 instanceof Long start ? (System.nanoTime() - start) / 1e6 : null;
            json = record(index, request, response, error, provider, latencyMs,
                    traceparent instanceof String tp ? tp : null);
        } catch (Throwable t) {
            // Building the event must never break the run; count it so the fail-safe and the report see it.
            fail("could not build the iteration event: " + t);
            return;
        }
        deliver(json, index);
    }

    private synchronized String record(int index, ChatRequest request, ChatResponse response, Throwable error,
                                       ModelProvider provider, Double latencyMs, String traceparent)
            throws IOException {
        // sized for the texts it will hold (an observation's at most its window), not grown by doubling a small buffer
        StringWriter out = new StringWriter(initialCapacity(request, response));
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("run_id", config.runId());
            g.writeNumberField("index", index);
            g.writeStringField("provider", provider == null ? null : provider.name());
            String model = response != null && response.modelName() != null ? response.modelName()
                    : request != null && request.parameters() != null ? request.parameters().modelName() : null;
            g.writeStringField("model", model);
            // The counts as the provider reported them (a negative one is no count): what a call's tokens are, and
            // what a missing count means, is defined once, in Python (pyguard.base.events.IterationEvent.tokens).
            TokenUsage usage = response == null ? null : response.tokenUsage();
            writeInt(g, "input_tokens", nonNegative(usage == null ? null : usage.inputTokenCount()));
            writeInt(g, "output_tokens", nonNegative(usage == null ? null : usage.outputTokenCount()));
            writeInt(g, "total_tokens", nonNegative(usage == null ? null : usage.totalTokenCount()));
            if (latencyMs == null) g.writeNullField("latency_ms"); else g.writeNumberField("latency_ms", latencyMs);
            g.writeStringField("finish_reason", response == null || response.finishReason() == null ? null : response.finishReason().name());
            g.writeArrayFieldStart("tool_calls");
            AiMessage ai = response == null ? null : response.aiMessage();
            if (ai != null && ai.hasToolExecutionRequests()) {
                for (ToolExecutionRequest r : ai.toolExecutionRequests()) {
                    toolCallsRequested++;
                    g.writeStartObject();
                    g.writeStringField("id", clean(r.id()));
                    g.writeStringField("name", r.name() == null ? "" : clean(r.name()));
                    g.writeStringField("arguments", r.arguments() == null ? "" : clean(r.arguments()));
                    g.writeEndObject();
                }
            }
            g.writeEndArray();
            g.writeArrayFieldStart("observations");
            if (request != null) writeObservations(g, request.messages());
            g.writeEndArray();
            String text = ai == null ? null : clean(ai.text());
            if (text != null && !text.isBlank()) lastText = text;
            g.writeStringField("text", text);
            g.writeStringField("error", error == null ? null : clean(describe(error)));
            g.writeStringField("task_type", config.taskType());
            g.writeNumberField("timestamp_ms", (double) System.currentTimeMillis());
            ChatRequestParameters params = request == null ? null : request.parameters();
            g.writeStringField("request_model", params == null ? null : clean(params.modelName()));
            g.writeStringField("response_model", response == null ? null : clean(response.modelName()));
            g.writeStringField("response_id", response == null ? null : clean(response.id()));
            writeParameters(g, params);
            g.writeStringField("trace_context", traceparent);
            g.writeEndObject();
        }
        return out.toString();
    }

    /** The sampling parameters that were set, named as in OpenTelemetry's {@code gen_ai.request.*} (or null). */
    private static void writeParameters(JsonGenerator g, ChatRequestParameters p) throws IOException {
        boolean any = p != null && (p.temperature() != null || p.topP() != null || p.topK() != null
                || p.maxOutputTokens() != null || p.frequencyPenalty() != null || p.presencePenalty() != null
                || (p.stopSequences() != null && !p.stopSequences().isEmpty()));
        if (!any) {
            g.writeNullField("request_parameters");
            return;
        }
        g.writeObjectFieldStart("request_parameters");
        writeFinite(g, "temperature", p.temperature());
        writeFinite(g, "top_p", p.topP());
        if (p.topK() != null) g.writeNumberField("top_k", p.topK());
        if (p.maxOutputTokens() != null) g.writeNumberField("max_tokens", p.maxOutputTokens());
        writeFinite(g, "frequency_penalty", p.frequencyPenalty());
        writeFinite(g, "presence_penalty", p.presencePenalty());
        if (p.stopSequences() != null && !p.stopSequences().isEmpty()) {
            g.writeArrayFieldStart("stop_sequences");
            for (String s : p.stopSequences()) g.writeString(s == null ? "" : clean(s));
            g.writeEndArray();
        }
        g.writeEndObject();
    }

    private static void writeFinite(JsonGenerator g, String name, Double v) throws IOException {
        if (v != null && Double.isFinite(v)) g.writeNumberField(name, v);
    }

    /** Where the observations of a request begin: after its last {@link AiMessage}. */
    private static int observationsStart(List<ChatMessage> messages) {
        for (int i = messages.size() - 1; i >= 0; i--) {
            if (messages.get(i) instanceof AiMessage) return i + 1;
        }
        return 0;
    }

    /** The event's JSON length, near enough: its texts plus room for the fields and some escapes. */
    static int initialCapacity(ChatRequest request, ChatResponse response) {
        long chars = 1024;
        if (request != null && request.messages() != null) {
            List<ChatMessage> messages = request.messages();
            for (int i = observationsStart(messages); i < messages.size(); i++) {
                ChatMessage m = messages.get(i);
                if (m instanceof ToolExecutionResultMessage || m instanceof UserMessage || m instanceof SystemMessage) {
                    chars += ObservationWindow.sentLength(Messages.text(m).length()) + 256;
                }
            }
        }
        AiMessage ai = response == null ? null : response.aiMessage();
        if (ai != null) {
            if (ai.text() != null) chars += ai.text().length();
            if (ai.hasToolExecutionRequests()) {
                for (ToolExecutionRequest r : ai.toolExecutionRequests()) {
                    chars += 256 + (r.arguments() == null ? 0 : r.arguments().length());
                }
            }
        }
        chars += chars / 16;  // escapes (a newline is written as two characters)
        return (int) Math.min(chars, Integer.MAX_VALUE - 16);
    }

    private static void writeObservations(JsonGenerator g, List<ChatMessage> messages) throws IOException {
        for (int i = observationsStart(messages); i < messages.size(); i++) {
            ChatMessage m = messages.get(i);
            if (m instanceof ToolExecutionResultMessage t) {
                g.writeStartObject();
                g.writeStringField("kind", "tool");
                g.writeStringField("tool_call_id", clean(t.id()));
                g.writeStringField("tool_name", clean(t.toolName()));
                writeText(g, Messages.textOf(t.contents()));
                g.writeBooleanField("is_error", Boolean.TRUE.equals(t.isError()));
                g.writeEndObject();
            } else if (m instanceof UserMessage u) {
                if (Reflections.isReflection(u)) continue;
                g.writeStartObject();
                g.writeStringField("kind", "user");
                writeText(g, Messages.textOf(u.contents()));
                g.writeEndObject();
            } else if (m instanceof SystemMessage s) {
                g.writeStartObject();
                g.writeStringField("kind", "system");
                writeText(g, s.text());
                g.writeEndObject();
            }
        }
    }

    /** An observation's text: whole, or its window and the whole's size ({@link ObservationWindow}). */
    private static void writeText(JsonGenerator g, String text) throws IOException {
        ObservationWindow w = ObservationWindow.of(text);
        g.writeStringField("text", w.text());
        if (w.windowed()) g.writeNumberField("whole_chars", w.wholeChars());
    }

    /**
     * The tool results in {@code request} (the request of the next model call: the results of the last call's tools),
     * judged before that call is sent ({@link ResultsCallback}, when the callback implements it), once per model
     * call. A request that carries no
     * tool result (a user's next message) is not judged here: its event is.
     */
    public void judgeResults(ChatRequest request) {
        if (!(callback instanceof ResultsCallback) || request == null || request.messages() == null) return;
        List<ChatMessage> messages = request.messages();
        int index;
        synchronized (this) {
            index = events;
            if (index == 0 || index <= judged) return;
            judged = index;
        }
        boolean results = false;
        for (int i = observationsStart(messages); i < messages.size() && !results; i++) {
            results = messages.get(i) instanceof ToolExecutionResultMessage;
        }
        if (!results) return;
        String json;
        try {
            StringWriter out = new StringWriter(initialCapacity(request, null));
            try (JsonGenerator g = JSON.createGenerator(out)) {
                g.writeStartObject();
                g.writeStringField("run_id", config.runId());
                g.writeNumberField("index", index);
                g.writeArrayFieldStart("observations");
                writeObservations(g, messages);
                g.writeEndArray();
                g.writeEndObject();
            }
            json = out.toString();
        } catch (Throwable t) {
            fail("could not build the tool results of model call " + index + ": " + t);
            return;
        }
        deliver(json, index, true);
    }

    private void deliver(String json, int index) {
        deliver(json, index, false);
    }

    private void deliver(String json, int index, boolean results) {
        GuardCallback cb = callback;
        if (cb == null) {
            if (config.callbackRequired()) fail("no guard callback registered");
            return;
        }
        String reply;
        long t0 = System.nanoTime();
        try {
            if (config.callbackTimeoutMs() > 0) {
                reply = deliverWithDeadline(cb, json, index, t0, results);
                if (reply == null) return;
            } else if (results) {
                reply = PythonLane.shared().callResults((ResultsCallback) cb, json);
                if (reply == null) return;  // a callback that judges results only with the next event
            } else {
                reply = PythonLane.shared().call(cb, json);  // the wait for the lane is part of the sample
            }
        } catch (Throwable t) {
            sample(System.nanoTime() - t0);
            fail("guard callback raised " + describe(t));
            return;
        }
        sample(System.nanoTime() - t0);
        GuardDecision decision;
        try {
            decision = GuardDecision.parse(reply);
        } catch (IllegalArgumentException e) {
            fail(e.getMessage());
            return;
        }
        synchronized (this) { delivered++; }
        if (sink != null) sink.accept(decision);
    }

    /**
     * The callback on a pool thread, with the deadline. Returns its reply, or null when the deadline passed (counted as
     * a failure). At most one callback per run is ever in flight: once one missed its deadline, the guard of this run
     * is given up ({@link #missedDeadlineAt()}: the run is stopped before its next model call; an event that still
     * comes is counted as a failure, not delivered), so a hung engine parks one pool thread per run, until it returns,
     * and holds the run for one deadline, not one per model call.
     *
     * <p>Whether a reply is applied is settled by one claim, under one lock: Python calls {@link #claim(int)} before it
     * records its decision, and the deadline path marks the event abandoned. Whichever comes first wins, so a decision
     * is either applied here and recorded in Python, or discarded on both sides; never applied after Java gave up.
     */
    private String deliverWithDeadline(GuardCallback cb, String json, int index, long t0, boolean results)
            throws Throwable {
        synchronized (claimLock) {
            if (abandonedAt > 0) {
                fail("guard callback of event " + abandonedAt + " missed its deadline; event " + index
                        + " not delivered (the guard of this run is given up; the fail-safe cap still holds)");
                return null;
            }
            openIndex = index;
            claimed = false;
        }
        Future<String> f = DEADLINE_POOL.submit(() -> {
            IN_FLIGHT.incrementAndGet();
            try {
                return results ? PythonLane.shared().callResults((ResultsCallback) cb, json)
                        : PythonLane.shared().call(cb, json);
            } finally {
                IN_FLIGHT.decrementAndGet();
            }
        });
        try {
            return f.get(config.callbackTimeoutMs(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            synchronized (claimLock) {
                if (!claimed) {
                    abandonedAt = index;
                    openIndex = 0;
                }
            }
            if (abandonedAt == index) {
                sample(System.nanoTime() - t0);
                fail("guard callback did not answer within " + config.callbackTimeoutMs() + " ms (event " + index
                        + "; its late decision is discarded)");
                return null;
            }
            // Python claimed the reply just before the deadline: it is recorded there, so apply it here too.
            try {
                return f.get(config.callbackTimeoutMs(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e2) {
                sample(System.nanoTime() - t0);
                fail("guard callback claimed event " + index + " but did not return within another "
                        + config.callbackTimeoutMs() + " ms");
                return null;
            }
        } catch (java.util.concurrent.ExecutionException e) {
            throw e.getCause() == null ? e : e.getCause();
        }
    }

    /**
     * Called by the Python callback before it records its decision for event {@code index}: true means this sensor
     * will apply the reply (record it); false means the deadline passed and the reply will be discarded (discard it
     * too). Without a deadline every reply is applied.
     */
    public boolean claim(int index) {
        if (config.callbackTimeoutMs() <= 0) return true;
        synchronized (claimLock) {
            if (index != openIndex || abandonedAt > 0) return false;
            claimed = true;
            return true;
        }
    }

    /**
     * The event whose guard callback missed its deadline, or 0 while none did. Once one did, the run's guard is given
     * up: {@link GuardedChatModel} stops the run before its next model call ({@code guard_error}), so the run's caller
     * waits out at most one deadline, whatever the engine does after.
     */
    public int missedDeadlineAt() {
        synchronized (claimLock) { return abandonedAt; }
    }

    /** Callbacks running on the deadline pool right now, across all runs (a test hook: no thread may leak per run). */
    public static int callbacksInFlight() { return IN_FLIGHT.get(); }

    private synchronized void sample(long nanos) {
        if (callbackSamples == callbackNanos.length) callbackNanos = java.util.Arrays.copyOf(callbackNanos, callbackSamples * 2);
        callbackNanos[callbackSamples++] = nanos;
    }

    /** Round-trip time of each callback invocation (Java's view: crossing, GIL wait, policy, reply), in nanoseconds. */
    public synchronized long[] callbackNanos() {
        return java.util.Arrays.copyOf(callbackNanos, callbackSamples);
    }

    private synchronized void fail(String message) {
        callbackFailures++;
        lastCallbackError = message;
    }

    /** Snapshot of the counters the sensor keeps; {@code modelCalls} and {@code toolExecutions} are supplied by the owner. */
    public synchronized RunStats stats(int modelCalls, int toolExecutions) {
        return new RunStats(modelCalls, events, delivered, toolCallsRequested, toolExecutions,
                callbackFailures, lastCallbackError, lastText);
    }

    public synchronized int events() { return events; }
    public synchronized int callbackFailures() { return callbackFailures; }

    /** A provider's count as reported, or null (unknown) when it is negative: a negative count is no count. */
    private static Integer nonNegative(Integer v) {
        return v == null || v < 0 ? null : v;
    }

    private static void writeInt(JsonGenerator g, String name, Integer v) throws IOException {
        if (v == null) g.writeNullField(name); else g.writeNumberField(name, v);
    }

    static String describe(Throwable t) {
        String msg = t.getMessage();
        return t.getClass().getName() + (msg == null ? "" : ": " + msg);
    }

    /** Replaces unpaired surrogates by U+FFFD; returns the same instance when there are none (the common case). */
    static String clean(String s) {
        if (s == null) return null;
        int n = s.length();
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (Character.isSurrogate(c)) {
                if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) { i++; continue; }
                return replaceSurrogates(s);
            }
        }
        return s;
    }

    private static String replaceSurrogates(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        int n = s.length();
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                sb.append(c).append(s.charAt(++i));
            } else if (Character.isSurrogate(c)) {
                sb.append('\uFFFD');
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }
}
