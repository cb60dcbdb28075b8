package io.github.yarnadvisor.plugin;

import static org.junit.Assert.assertEquals;

import java.util.Map;
import java.util.Set;
import org.junit.Before;
import org.junit.Test;

/** The decider's rules (docs/decision-table.md), on the shared valid table. */
public class DeciderTest {
  private DecisionTable t;
  private long now;
  private SkipBudget budget;

  @Before
  public void load() throws Exception {
    t = DecisionTable.parse(DecisionTableTest.valid());
    now = t.generatedAtMs() + 1000;
    budget = new SkipBudget();
  }

  private String verdict(FakeAttempt a) {
    Verdict v = Decider.decide(t, now, a, budget);
    return v.outcome() + (v.reason().isEmpty() ? "" : " " + v.reason());
  }

  private static FakeAttempt app7(int priority, String node) {
    FakeAttempt a = new FakeAttempt().at(node);
    a.priority = priority;
    return a;
  }

  @Test
  public void withoutAFreshTableYarnDecides() {
    FakeAttempt a = app7(20, "h1:8041");
    assertEquals("DEFAULT no_table", Decider.decide(null, now, a, budget).outcome() + " "
        + Decider.decide(null, now, a, budget).reason());
    now = t.generatedAtMs() + t.ttlMs() + 1;
    assertEquals("DEFAULT expired", verdict(a));
  }

  @Test
  public void anUnknownAppIsYarnsExceptIntoLentRoom() {
    FakeAttempt a = app7(20, "h1:8041");
    a.app = "application_1700000000000_0099";
    assertEquals("DEFAULT unknown_app", verdict(a));
    a.at("h4:8041");
    assertEquals("ADMIT", verdict(a)); // h4 lends room, but this container stays out of it
    a.allocVc = 7;
    assertEquals("VETO opera.lent_room", verdict(a));
  }

  @Test
  public void vetoNamesTheNode() {
    FakeAttempt a = app7(20, "h1:8041");
    a.asks = Map.of("*", 1, "/r1", 1, "h1", 1);
    assertEquals("VETO haste.fitness", verdict(a));
    assertEquals("ADMIT", verdict(a.at("h2:8041").withAsks(Map.of("*", 1))));
  }

  @Test
  public void holdWhileMapsArePending() {
    FakeAttempt a = app7(10, "h2:8041");
    a.pending = Set.of(20);
    assertEquals("VETO haste.reduce_holdback", verdict(a));
    a.pending = Set.of(5);
    assertEquals("VETO haste.reduce_holdback", verdict(a));
    a.pending = Set.of(10);
    assertEquals("ADMIT", verdict(a));
  }

  @Test
  public void localOnlySkipsNonLocalNodesWithinItsBudget() {
    FakeAttempt a = app7(20, "h2:8041");
    a.asks = Map.of("*", 3, "/r1", 3, "h5", 3);
    for (int i = 0; i < 30; i++) {
      assertEquals("skip " + i, "VETO matchmaking.nonlocal", verdict(a));
    }
    assertEquals("ADMIT", verdict(a)); // the budget is spent
    budget.reset(); // the request got a container
    assertEquals("VETO matchmaking.nonlocal", verdict(a));
    assertEquals("ADMIT", verdict(a.at("h3:8041"))); // a marked node
    assertEquals("ADMIT", verdict(a.at("h5:8041"))); // a local node
    a.asks = Map.of("*", 3);
    assertEquals("ADMIT", verdict(a.at("h2:8041"))); // no locations asked
  }

  @Test
  public void fitSkipsABadlyAlignedNode() {
    FakeAttempt a = app7(5, "h2:8041");
    a.askMem = 4096; // r = (0.5, 0.125) against c = (1, 1): cos 0.857 < 0.9
    assertEquals("VETO haste.fitness", verdict(a));
    a.askMem = 1024; // r = (0.125, 0.125): cos 1
    assertEquals("ADMIT", verdict(a));
    a.askMem = 4096;
    a.allocVc = 8; // nothing unallocated in vcores: YARN's own fit check decides
    assertEquals("ADMIT", verdict(a));
    a.allocVc = 0;
    for (int i = 1; i < 8; i++) {
      verdict(a);
    }
    assertEquals("ADMIT", verdict(a)); // max_skips 8 spent
  }

  @Test
  public void rulesApplyToAppsTheAdvisorHasNotSeen() {
    FakeAttempt a = app7(20, "h3:8041");
    a.app = "application_1700000000000_0100";
    a.type = "sqoop"; // case-insensitive
    assertEquals("VETO anacrac.host", verdict(a));
    a.at("h1:8041");
    a.live = 2;
    assertEquals("VETO anacrac.cap", verdict(a));
    a.live = 1;
    assertEquals("ADMIT", verdict(a));
    a.type = "SPARK";
    assertEquals("DEFAULT unknown_app", verdict(a));
  }

  @Test
  public void theLentRoomIsForItsBorrowers() {
    FakeAttempt a = app7(20, "h4:8041");
    a.allocVc = 4; // 4 + 1 > 8 - 4: into the lent vcores
    assertEquals("ADMIT", verdict(a)); // app 7's maps borrow
    a.priority = 10;
    assertEquals("VETO opera.lent_room", verdict(a));
    a.allocVc = 3; // 3 + 1 <= 4: outside the lent room
    assertEquals("ADMIT", verdict(a));
  }

  @Test
  public void queueMatchesByLeafAndTagsCaseInsensitively() throws Exception {
    DecisionTable q = DecisionTable.parse("{\"format\":\"yarn-advisor-decision-table\","
        + "\"version\":1,\"seq\":1,\"generated_at_ms\":" + t.generatedAtMs() + ",\"ttl_ms\":60000,"
        + "\"leader\":\"a\",\"rules\":[{\"match\":{\"queue\":\"root.batch\",\"tag\":\"ETL\"},"
        + "\"requests\":[{\"priority\":null,\"allow\":{\"nodes\":[\"h1:8041\"],"
        + "\"reason\":\"anacrac.host\"}}]}]}");
    FakeAttempt a = app7(20, "h2:8041");
    a.queue = "batch";
    a.tags = Set.of("etl");
    assertEquals(Verdict.veto(Reason.ANACRAC_HOST), Decider.decide(q, now, a, budget));
    a.tags = Set.of("other");
    assertEquals(Verdict.Outcome.DEFAULT, Decider.decide(q, now, a, budget).outcome());
    a.tags = Set.of("etl");
    a.queue = "root.batchy";
    assertEquals(Verdict.Outcome.DEFAULT, Decider.decide(q, now, a, budget).outcome());
  }
}
