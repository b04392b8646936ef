package dev.pyguard.bridge.demo;

import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;

import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Demo tools of a logistics agent, over fixed data (deterministic). Order ids are normalised like the real backend of
 * the incident did: {@code SO-12345}, {@code so-12345} and {@code 12345} are the same order, and give the same answer.
 * One instance per run (it counts its calls).
 */
public class LogisticsTools {

    private record Order(String id, String status, String location, String scannedAt, String carrier, String tracking, String eta) {}

    private static final Map<String, Order> ORDERS = Map.of(
            "12345", new Order("12345", "IN_TRANSIT", "Memphis, TN hub", "2024-03-04 06:12 UTC", "FedEx", "771234567890", "2024-03-06"),
            "23456", new Order("23456", "DELIVERED", "Austin, TX (front door)", "2024-03-02 14:40 UTC", "UPS", "1Z999AA10123456784", "2024-03-02"),
            "34567", new Order("34567", "EXCEPTION", "Newark, NJ hub (address issue)", "2024-03-03 09:05 UTC", "DHL", "JD014600006281234567", "unknown"));

    private static final Map<String, String> ETAS = Map.of(
            "771234567890", "FedEx 771234567890: estimated delivery 2024-03-06 by 20:00 local time; no delay reported.",
            "1Z999AA10123456784", "UPS 1Z999AA10123456784: delivered 2024-03-02 14:40.",
            "JD014600006281234567", "DHL JD014600006281234567: delivery exception (address); awaiting customer contact.");

    private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

    static String normalise(String orderId) {
        if (orderId == null) return "";
        String s = orderId.trim().toUpperCase(Locale.ROOT);
        if (s.startsWith("SO-")) s = s.substring(3);
        if (s.startsWith("#")) s = s.substring(1);
        return s;
    }

    @Tool(name = "get_shipment_status", value = "Get the current shipment status of an order")
    public String getShipmentStatus(@P("the order id, for example 12345") String orderId) {
        count("get_shipment_status");
        Order o = ORDERS.get(normalise(orderId));
        if (o == null) return "No order found with id " + orderId + ".";
        return "Order " + o.id() + ": status " + o.status() + ", last scan " + o.location() + " at " + o.scannedAt()
                + ", carrier " + o.carrier() + ", tracking " + o.tracking() + ".";
    }

    @Tool(name = "get_carrier_eta", value = "Get the carrier's delivery estimate for a tracking number")
    public String getCarrierEta(@P("the carrier tracking number") String trackingNumber) {
        count("get_carrier_eta");
        String eta = ETAS.get(trackingNumber == null ? "" : trackingNumber.trim());
        return eta == null ? "Carrier has no record of tracking number " + trackingNumber + "." : eta;
    }

    @Tool(name = "open_support_ticket", value = "Open a support ticket about an order")
    public String openSupportTicket(@P("the order id") String orderId, @P("one-line summary") String summary) {
        int n = count("open_support_ticket");
        return "Ticket LOG-" + (1000 + n) + " opened for order " + normalise(orderId) + ": " + summary;
    }

    private int count(String tool) {
        return calls.computeIfAbsent(tool, k -> new AtomicInteger()).incrementAndGet();
    }

    public int calls(String tool) {
        AtomicInteger c = calls.get(tool);
        return c == null ? 0 : c.get();
    }

    public int totalCalls() {
        return calls.values().stream().mapToInt(AtomicInteger::get).sum();
    }
}
