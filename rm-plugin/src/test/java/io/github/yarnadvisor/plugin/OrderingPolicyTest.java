package io.github.yarnadvisor.plugin;

import static org.junit.Assert.assertEquals;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceUsage;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.policy.IteratorSelector;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.policy.SchedulableEntity;
import org.junit.Test;

/** The queue order: ranks from a valid table, else exactly YARN's FIFO order. */
public class OrderingPolicyTest {
  /** An application as a leaf queue orders it: id, submission order, priority. */
  static final class App implements SchedulableEntity {
    final String id;
    final int seq;
    final int priority;

    App(int seq, int priority) {
      this.id = String.format("application_1700000000000_%04d", seq);
      this.seq = seq;
      this.priority = priority;
    }

    @Override public String getId() {
      return id;
    }

    @Override public int compareInputOrderTo(SchedulableEntity o) {
      return Integer.compare(seq, ((App) o).seq);
    }

    @Override public ResourceUsage getSchedulingResourceUsage() {
      return new ResourceUsage();
    }

    @Override public Priority getPriority() {
      return Priority.newInstance(priority);
    }

    @Override public boolean isRecovering() {
      return false;
    }

    @Override public String getPartition() {
      return "";
    }

    @Override public long getStartTime() {
      return seq;
    }
  }

  private static List<Integer> order(AdvisorOrderingPolicy<App> p) {
    List<Integer> out = new ArrayList<>();
    for (Iterator<App> it = p.getAssignmentIterator(IteratorSelector.EMPTY_ITERATOR_SELECTOR);
        it.hasNext(); ) {
      out.add(it.next().seq);
    }
    return out;
  }

  private static DecisionTable ranks(String unranked, long generatedAt) throws Exception {
    return DecisionTable.parse("{\"format\":\"yarn-advisor-decision-table\",\"version\":1,"
        + "\"seq\":3,\"generated_at_ms\":" + generatedAt + ",\"ttl_ms\":60000,\"leader\":\"t\","
        + "\"unranked\":\"" + unranked + "\",\"apps\":{"
        + "\"application_1700000000000_0004\":{\"rank\":0,\"requests\":[]},"
        + "\"application_1700000000000_0002\":{\"rank\":1,\"requests\":[]}}}");
  }

  private static AdvisorOrderingPolicy<App> queue(TableHolder h) {
    AdvisorOrderingPolicy<App> p = new AdvisorOrderingPolicy<>();
    p.useHolder(h);
    for (int i = 1; i <= 5; i++) {
      p.addSchedulableEntity(new App(i, i == 5 ? 3 : 0));
    }
    return p;
  }

  @Test
  public void withoutATableTheOrderIsYarnsFifo() {
    AdvisorOrderingPolicy<App> p = queue(null);
    assertEquals(List.of(5, 1, 2, 3, 4), order(p)); // priority 3 first, then submission
  }

  @Test
  public void ranksComeFirstOrLastAsTheTableSays() throws Exception {
    long now = System.currentTimeMillis();
    assertEquals(List.of(4, 2, 5, 1, 3), order(queue(TableHolder.holding(ranks("last", now)))));
    assertEquals(List.of(5, 1, 3, 4, 2), order(queue(TableHolder.holding(ranks("first", now)))));
  }

  @Test
  public void aNewTableResortsAndAnExpiredOneIsFifoAgain() throws Exception {
    long now = System.currentTimeMillis();
    AdvisorOrderingPolicy<App> p = queue(TableHolder.holding(ranks("last", now)));
    assertEquals(List.of(4, 2, 5, 1, 3), order(p));
    p.useHolder(TableHolder.holding(ranks("last", now - 120_000))); // past its TTL
    assertEquals(List.of(5, 1, 2, 3, 4), order(p));
    p.useHolder(TableHolder.holding(ranks("last", now)));
    assertEquals(List.of(4, 2, 5, 1, 3), order(p));
    p.addSchedulableEntity(new App(6, 0));
    p.removeSchedulableEntity(p.getSchedulableEntities().iterator().next());
    assertEquals(List.of(2, 5, 1, 3, 6), order(p));
  }
}
