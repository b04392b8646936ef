package dev.pyguard.bridge.nested;

import dev.langchain4j.agentic.AgenticServices;
import dev.langchain4j.agentic.UntypedAgent;
import dev.langchain4j.agentic.agent.AgentBuilder;
import dev.langchain4j.agentic.scope.AgenticScope;
import dev.langchain4j.agentic.supervisor.SupervisorAgent;
import dev.langchain4j.agentic.supervisor.SupervisorAgentService;
import dev.langchain4j.agentic.supervisor.SupervisorResponseStrategy;
import dev.langchain4j.model.chat.ChatModel;
import dev.pyguard.bridge.ToolSet;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Multi-agent systems on LangChain4j's agentic module, each sub-agent routed through an {@link AgentTree} so that
 * every invocation is a child run: a supervisor ({@code supervisorBuilder}) over named sub-agents, a sequence
 * ({@code sequenceBuilder}) and a loop ({@code loopBuilder}). With {@code tree == null} the same system runs on the
 * given models as they are (the unguarded baseline).
 */
public final class NestedAgents {

    private NestedAgents() {}

    /** One sub-agent: its name (what the supervisor calls it), its model and its tools. */
    public record Spec(String name, String description, ChatModel model, ToolSet tools) {}

    public static Spec spec(String name, String description, ChatModel model, ToolSet tools) {
        return new Spec(name, description, model, tools == null ? ToolSet.empty() : tools);
    }

    static List<Object> subAgents(AgentTree tree, List<Spec> specs, int maxToolCallingRoundTrips) {
        if (specs.isEmpty()) throw new IllegalArgumentException("a multi-agent system needs at least one sub-agent");
        List<Object> agents = new ArrayList<>();
        for (Spec s : specs) {
            ChatModel model = tree == null ? s.model() : tree.childModel(s.name(), s.model());
            AgentBuilder<SubAgent, ?> b = AgenticServices.agentBuilder(SubAgent.class)
                    .name(s.name())
                    .description(s.description() == null ? "Sub-agent " + s.name() : s.description())
                    .outputKey(s.name())
                    .chatModel(model)
                    .maxToolCallingRoundTrips(maxToolCallingRoundTrips);
            if (tree != null) b.listener(tree);
            if (!s.tools().objects().isEmpty()) b.tools(s.tools().objects().toArray());
            if (!s.tools().explicitTools().isEmpty()) b.tools(s.tools().explicitTools());
            agents.add(b.build());
        }
        return agents;
    }

    /** A supervisor whose planner is {@code planner} (the parent run's guarded model) over {@code specs}. */
    public static AgentSystem supervisor(ChatModel planner, AgentTree tree, List<Spec> specs, int maxAgentsInvocations,
                                         int maxToolCallingRoundTrips) {
        SupervisorAgentService<SupervisorAgent> b = AgenticServices.supervisorBuilder()
                .chatModel(planner)
                .subAgents(subAgents(tree, specs, maxToolCallingRoundTrips))
                .maxAgentsInvocations(maxAgentsInvocations)
                .responseStrategy(SupervisorResponseStrategy.LAST);
        if (tree != null) b.errorHandler(tree.errorHandler());
        SupervisorAgent agent = b.build();
        return new AgentSystem() {
            @Override public String kind() { return "supervisor"; }
            @Override public String run(String task) { return agent.invoke(task); }
        };
    }

    /** The sub-agents one after the other, each reading the request; the answer is the last one's output. */
    public static AgentSystem sequence(AgentTree tree, List<Spec> specs, int maxToolCallingRoundTrips) {
        var b = AgenticServices.sequenceBuilder()
                .subAgents(subAgents(tree, specs, maxToolCallingRoundTrips))
                .outputKey(specs.get(specs.size() - 1).name());
        if (tree != null) b.errorHandler(tree.errorHandler());
        UntypedAgent agent = b.build();
        return untyped("sequence", agent);
    }

    /**
     * The sub-agents in a loop, at most {@code maxIterations} rounds, until the last one's output contains
     * {@code exitWhenContains} (read from the {@code AgenticScope}).
     */
    public static AgentSystem loop(AgentTree tree, List<Spec> specs, int maxIterations, String exitWhenContains,
                                   int maxToolCallingRoundTrips) {
        String last = specs.get(specs.size() - 1).name();
        var b = AgenticServices.loopBuilder()
                .subAgents(subAgents(tree, specs, maxToolCallingRoundTrips))
                .maxIterations(maxIterations)
                .exitCondition((AgenticScope scope) -> String.valueOf(scope.readState(last, "")).contains(exitWhenContains))
                .outputKey(last);
        if (tree != null) b.errorHandler(tree.errorHandler());
        UntypedAgent agent = b.build();
        return untyped("loop", agent);
    }

    private static AgentSystem untyped(String kind, UntypedAgent agent) {
        return new AgentSystem() {
            @Override public String kind() { return kind; }
            @Override public String run(String task) {
                Object out = agent.invoke(Map.of("request", task));
                return out == null ? null : out.toString();
            }
        };
    }
}
