package dev.pyguard.bridge;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.*;

class GuardDecisionTest {

    @Test
    void turnStartIsReadWhenGivenAndAbsentOtherwise() {
        assertEquals(-1, GuardDecision.parse("{\"action\":\"continue\"}").turnStart());
        assertEquals(7, GuardDecision.parse("{\"action\":\"continue\",\"turn_start\":7}").turnStart());
        assertEquals(-1, GuardDecision.CONTINUE.turnStart());
    }

    @Test
    void aBadTurnStartNamesTheValue() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> GuardDecision.parse("{\"action\":\"continue\",\"turn_start\":-2}"));
        assertTrue(e.getMessage().contains("turn_start") && e.getMessage().contains("-2"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> GuardDecision.parse("{\"action\":\"continue\",\"turn_start\":\"3\"}"));
        assertTrue(e.getMessage().contains("non-negative integer"), e.getMessage());
    }
}
