package com.example.logistics;

import dev.langchain4j.agent.tool.P;
import dev.langchain4j.agent.tool.Tool;

import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/** The agent's tools, over a small in-memory data set. Deterministic: the same arguments give the same answer. */
public class LogisticsTools {

    private static final Map<String, String> SHIPMENTS = Map.of(
            "12345", "{\"orderId\":\"12345\",\"status\":\"DELAYED\",\"carrier\":\"NorthFreight\",\"warehouse\":\"Lyon\",\"sku\":\"PUMP-7\"}",
            "67890", "{\"orderId\":\"67890\",\"status\":\"IN_TRANSIT\",\"carrier\":\"BlueLine\",\"warehouse\":\"Turin\",\"sku\":\"VALVE-2\"}");

    private static final Map<String, String> INCIDENTS = Map.of(
            "NorthFreight", "{\"carrier\":\"NorthFreight\",\"incident\":\"strike at the Lyon depot\",\"expectedDelayDays\":3}",
            "BlueLine", "{\"carrier\":\"BlueLine\",\"incident\":null}");

    private final AtomicInteger calls = new AtomicInteger();

    @Tool(name = "get_shipment_status", value = "Status, carrier, warehouse and SKU of a shipment")
    public String getShipmentStatus(@P("the order id, e.g. 12345") String orderId) {
        calls.incrementAndGet();
        return SHIPMENTS.getOrDefault(orderId, "{\"error\":\"unknown order " + orderId + "\"}");
    }

    @Tool(name = "get_carrier_incidents", value = "Open incidents of a carrier")
    public String getCarrierIncidents(@P("the carrier name") String carrier) {
        calls.incrementAndGet();
        return INCIDENTS.getOrDefault(carrier, "{\"carrier\":\"" + carrier + "\",\"incident\":null}");
    }

    @Tool(name = "find_alternative_route", value = "An alternative carrier and route for a delayed shipment")
    public String findAlternativeRoute(@P("the order id") String orderId) {
        calls.incrementAndGet();
        if (!SHIPMENTS.containsKey(orderId)) {
            return "{\"error\":\"unknown order " + orderId + "\"}";
        }
        return "{\"orderId\":\"" + orderId + "\",\"carrier\":\"BlueLine\",\"via\":\"Turin\",\"extraCostEur\":140,\"etaDays\":2}";
    }

    @Tool(name = "get_warehouse_stock", value = "Units of a SKU in stock at a warehouse")
    public String getWarehouseStock(@P("the warehouse") String warehouse, @P("the SKU") String sku) {
        calls.incrementAndGet();
        int units = ("Turin".equals(warehouse) && "PUMP-7".equals(sku)) ? 12 : 0;
        return "{\"warehouse\":\"" + warehouse + "\",\"sku\":\"" + sku + "\",\"units\":" + units + "}";
    }

    /** How many tool calls this instance executed (tests compare it with the guard's count). */
    public int calls() {
        return calls.get();
    }
}
