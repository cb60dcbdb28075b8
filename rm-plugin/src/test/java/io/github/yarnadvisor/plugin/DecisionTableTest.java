package io.github.yarnadvisor.plugin;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.github.yarnadvisor.plugin.DecisionTable.AppDecisions;
import io.github.yarnadvisor.plugin.DecisionTable.RequestDecision;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Set;
import org.junit.Test;

/** The jar reads the advisor's own serialization (the shared vectors) as the advisor does. */
public class DecisionTableTest {
  static final Path VECTORS = Paths.get("src/test/resources/decision-table");
  static final String APP = "application_1700000000000_0007";

  static byte[] valid() throws Exception {
    return Files.readAllBytes(VECTORS.resolve("valid.json"));
  }

  @Test
  public void readsThePythonSidesTableOfEveryKind() throws Exception {
    DecisionTable t = DecisionTable.parse(valid());
    assertEquals(42, t.seq());
    assertEquals(1_700_000_030_000L, t.generatedAtMs());
    assertEquals(90_000, t.ttlMs());
    assertEquals("advisor-a", t.leader());
    assertTrue(t.unrankedFirst());
    AppDecisions app = t.apps().get(APP);
    assertEquals(Integer.valueOf(0), app.rank());
    assertEquals(4, app.requests().size());
    RequestDecision hold = app.requests().get(0);
    assertEquals(Integer.valueOf(10), hold.priority());
    assertEquals(Reason.HASTE_HOLDBACK, hold.hold().reason());
    assertEquals("[20, 5]", Arrays.toString(hold.hold().whilePending()));
    RequestDecision local = app.requests().get(1);
    assertEquals(Set.of("h3:8041"), local.localOnly().exceptNodes());
    assertEquals(Integer.valueOf(30), local.localOnly().maxSkips());
    RequestDecision fit = app.requests().get(2);
    assertEquals(0.9, fit.fit().minAlignment(), 0);
    assertEquals(Integer.valueOf(8), fit.fit().maxSkips());
    RequestDecision veto = app.requests().get(3);
    assertNull(veto.priority());
    assertEquals(Reason.HASTE_FITNESS, veto.veto().get("h1:8041"));
    assertEquals(1, t.rules().size());
    DecisionTable.Rule rule = t.rules().get(0);
    assertEquals("SQOOP", rule.match().applicationType());
    assertEquals(Set.of("h1:8041", "h2:8041"), rule.requests().get(0).allow().nodes());
    assertEquals(2, rule.requests().get(0).cap().maxPerNode());
    DecisionTable.Lending lend = t.nodes().get("h4:8041");
    assertEquals(0, lend.memoryMb());
    assertEquals(4, lend.vcores());
    assertTrue(lend.admits(APP, 20));
    assertFalse(lend.admits(APP, 10));
  }

  @Test
  public void refusesEveryTableTheAdvisorRefuses() throws Exception {
    ObjectMapper json = new ObjectMapper();
    JsonNode cases = json.readTree(Files.readAllBytes(VECTORS.resolve("invalid.json")));
    assertTrue(cases.size() >= 10);
    for (JsonNode c : cases) {
      String where = c.get("where").asText();
      try {
        DecisionTable.parse(json.writeValueAsBytes(c.get("doc")));
        fail(c.get("name").asText() + ": parsed, the advisor refuses it");
      } catch (TableException e) {
        assertTrue(c.get("name").asText() + ": " + e.getMessage() + " does not name " + where,
            e.getMessage().contains(where));
      }
    }
  }

  @Test
  public void garbageIsATableExceptionNotARuntimeError() {
    for (String body : new String[] {"", "{", "null", "[]", "42", "\u0000\u00ff", "{\"format\":1}"}) {
      try {
        DecisionTable.parse(body);
        fail("parsed: " + body);
      } catch (TableException expected) {
        // the holder keeps no table
      }
    }
  }

  @Test
  public void expiresStrictlyAfterTheTtl() throws Exception {
    DecisionTable t = DecisionTable.parse(valid());
    assertFalse(t.expired(t.generatedAtMs() + t.ttlMs()));
    assertTrue(t.expired(t.generatedAtMs() + t.ttlMs() + 1));
  }
}
