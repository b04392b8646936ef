package dev.usercode;

import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.service.tool.BeforeToolExecution;
import dev.pyguard.bridge.AgentGuardedChatModel;
import dev.pyguard.bridge.GuardOutcome;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * Java code that holds a user's agent (built by the user's own factory, {@link UserAgents#create}) and the guarded
 * model pyguard handed it, and learns how each call ended without Python: {@link AgentGuardedChatModel#lastOutcome()}
 * after the call, and an outcome listener.
 */
public final class Desk {
    private final AgentGuardedChatModel guard;
    private final UserAgents.Assistant agent;
    private final List<GuardOutcome> heard = new CopyOnWriteArrayList<>();
    private volatile String answer;
    private volatile RuntimeException raised;

    /** {@code watch}: call the agent through {@link AgentGuardedChatModel#watch} (every call's end is seen). */
    public Desk(ChatModel guarded, Consumer<BeforeToolExecution> hook, int maxRoundTrips, boolean watch) {
        this.guard = (AgentGuardedChatModel) guarded;
        guard.addOutcomeListener(heard::add);
        UserAgents.Assistant built = UserAgents.create(guarded, hook, maxRoundTrips);
        this.agent = watch ? guard.watch(built) : built;
    }

    /** One user turn; returns how it ended, as this thread reads it after the call returned or threw. */
    public GuardOutcome handle(String message) {
        answer = null;
        raised = null;
        try {
            answer = agent.chat(message);
        } catch (RuntimeException e) {
            raised = e;
        }
        return guard.lastOutcome();
    }

    public String answer() { return answer; }

    public RuntimeException raised() { return raised; }

    public List<GuardOutcome> heard() { return List.copyOf(heard); }
}
