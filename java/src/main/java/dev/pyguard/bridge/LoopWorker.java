package dev.pyguard.bridge;

import dev.langchain4j.agentic.Agent;
import dev.langchain4j.service.UserMessage;
import dev.langchain4j.service.V;

/** The sub-agent of the agentic loop style: an AiServices-backed agent with tools, invoked once per loop iteration. */
public interface LoopWorker {

    @UserMessage("{{request}}")
    @Agent(name = "worker", description = "Works on the request with its tools and answers", outputKey = "answer")
    String work(@V("request") String request);
}
