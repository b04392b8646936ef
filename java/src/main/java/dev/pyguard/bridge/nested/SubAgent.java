package dev.pyguard.bridge.nested;

import dev.langchain4j.agentic.Agent;
import dev.langchain4j.service.UserMessage;
import dev.langchain4j.service.V;

/** A sub-agent of {@link NestedAgents}' systems: AiServices-backed, with tools, answering one request per invocation. */
public interface SubAgent {

    @UserMessage("{{request}}")
    @Agent(description = "Works on the request with its tools and answers")
    String work(@V("request") String request);
}
