package dev.pyguard.bridge;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.*;

/** Per-tool limits of a run within its conversation's, their exits, and a conversation's reset. */
class ToolLimitsTest {

    @Test
    void aCallRunsOnlyWithinBothItsRunsAndItsConversationsLimit() {
        ToolLimits conversation = new ToolLimits("conversation");
        conversation.limit("send_email", 3, "end");
        ToolLimits first = new ToolLimits();
        first.limit("send_email", 2);
        first.within(conversation);
        assertNull(first.check("send_email"));
        assertNull(first.check("send_email"));
        ToolLimits.Refusal byRun = first.check("send_email");  // the run's limit of 2
        assertEquals("run", byRun.scope());
        assertEquals("continue", byRun.exit());
        ToolLimits second = new ToolLimits();
        second.within(conversation);
        assertNull(second.check("send_email"));  // the conversation's third
        ToolLimits.Refusal byConversation = second.check("send_email");
        assertEquals("conversation", byConversation.scope());
        assertEquals("end", byConversation.exit());
        assertEquals("tool_limit:send_email", byConversation.rule());
        assertTrue(byConversation.message().startsWith(ToolLimits.BLOCKED + "3 calls of send_email per conversation"));
        assertEquals("{\"send_email\":1}", first.blockedJson());
        assertEquals("{\"send_email\":1}", second.blockedJson());
        assertEquals("{\"send_email\":1}", conversation.blockedJson());
        assertEquals("{\"send_email\":3}", conversation.admittedJson());  // a refused call is not counted as run
        assertNull(second.check("get_shipment_status"));  // another tool is not limited
        conversation.reset();
        ToolLimits third = new ToolLimits();
        third.within(conversation);
        assertNull(third.check("send_email"));  // a fresh budget after the reset
    }

    @Test
    void aBadExitIsNamed() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new ToolLimits().limit("send_email", 2, "sometimes"));
        assertTrue(e.getMessage().contains("sometimes"), e.getMessage());
    }

    @Test
    void aBadModeIsNamedAndTheFirstWouldBeStopIsKept() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new ToolLimits().mode("dry"));
        assertTrue(e.getMessage().contains("dry") && e.getMessage().contains("observe"), e.getMessage());
        ToolLimits limits = new ToolLimits();
        limits.mode("observe");
        assertEquals("observe", limits.mode());
        assertNull(limits.wouldStopJson());
        limits.limit("send_email", 1, "end");
        limits.check("send_email");
        limits.wouldStop(limits.check("send_email"), 3);
        limits.wouldStop(limits.check("send_email"), 4);  // only the first would-be stop is the run's
        String json = limits.wouldStopJson();
        assertTrue(json.contains("\"iteration\":3") && json.contains("\"rule\":\"tool_limit:send_email\""), json);
        limits.reset();
        assertNull(limits.wouldStopJson());
    }
}
