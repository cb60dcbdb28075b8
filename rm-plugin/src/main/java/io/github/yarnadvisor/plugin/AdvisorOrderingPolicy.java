package io.github.yarnadvisor.plugin;

import java.util.Comparator;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListSet;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.policy.FifoOrderingPolicy;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.policy.IteratorSelector;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.policy.SchedulableEntity;

/**
 * A leaf queue's application order: the advisor's {@code rank} ascending, unranked ones
 * before or after all ranked ones ({@code unranked}), and YARN's FIFO order (priority, then
 * submission) for ties and among the unranked. Set as
 * {@code yarn.scheduler.capacity.<queue-path>.ordering-policy} = this class name. Without a
 * valid table it orders exactly as YARN's {@code fifo} policy.
 *
 * <p>A skip-list set must never see an element's key change while the element is in it, so
 * each comparator holds the ranks of one table; when the table the holder has changes, the
 * next assignment pass re-sorts the queue's apps into a new set with a new comparator. The
 * scheduler thread reads only the holder's reference; any throwable keeps the order it had.
 */
public class AdvisorOrderingPolicy<S extends SchedulableEntity> extends FifoOrderingPolicy<S> {
  /** The order of one table (null: YARN's FIFO order). */
  static final class RankComparator implements Comparator<SchedulableEntity> {
    final DecisionTable table;
    private final Comparator<SchedulableEntity> fifo;

    RankComparator(DecisionTable table, Comparator<SchedulableEntity> fifo) {
      this.table = table;
      this.fifo = fifo;
    }

    /** 0: unranked first, 1: ranked (then by rank), 2: unranked last. */
    private long key(SchedulableEntity e) {
      DecisionTable.AppDecisions a = table.apps().get(e.getId());
      if (a == null || a.rank() == null) {
        return table.unrankedFirst() ? Long.MIN_VALUE : Long.MAX_VALUE;
      }
      return a.rank();
    }

    @Override
    public int compare(SchedulableEntity x, SchedulableEntity y) {
      if (table != null) {
        int c = Long.compare(key(x), key(y));
        if (c != 0) {
          return c;
        }
      }
      return fifo.compare(x, y);
    }
  }

  private final Comparator<SchedulableEntity> fifo;
  private volatile TableHolder holder;
  private volatile boolean looked; // configure ran, or a test set the holder

  public AdvisorOrderingPolicy() {
    fifo = comparator; // YARN's: priority, then FIFO
    comparator = new RankComparator(null, fifo);
  }

  /** For tests: use this holder instead of the configured one. */
  void useHolder(TableHolder h) {
    holder = h;
    looked = true;
  }

  /**
   * Called when the queue is (re)initialised, not on the allocation path: the one place it
   * reads the RM's configuration files (yarn-site.xml, for the table's URL or file).
   */
  @Override
  public void configure(Map<String, String> conf) {
    super.configure(conf);
    try {
      if (!looked) {
        holder = TableHolder.shared(new YarnConfiguration());
      }
    } catch (Throwable t) {
      holder = null;
      PluginMetrics.get().error();
    }
    looked = true;
  }

  @Override
  public Iterator<S> getAssignmentIterator(IteratorSelector sel) {
    try {
      resortIfNewTable();
    } catch (Throwable t) {
      PluginMetrics.get().error();
    }
    return super.getAssignmentIterator(sel);
  }

  /** Re-sort into a new set when the table to apply is not the one the order was built from. */
  void resortIfNewTable() {
    TableHolder h = holder;
    DecisionTable t = h == null ? null : h.table();
    if (t != null && t.expired(System.currentTimeMillis())) {
      t = null;
    }
    RankComparator current = (RankComparator) comparator;
    if (current.table == t) {
      return;
    }
    RankComparator next = new RankComparator(t, fifo);
    ConcurrentSkipListSet<S> sorted = new ConcurrentSkipListSet<>(next);
    sorted.addAll(schedulableEntities);
    schedulableEntities = sorted;
    comparator = next;
  }

  @Override
  public String getInfo() {
    return "AdvisorOrderingPolicy";
  }

  @Override
  public String getConfigName() {
    return AdvisorOrderingPolicy.class.getName();
  }
}
