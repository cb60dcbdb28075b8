package io.github.yarnadvisor.plugin;

import io.github.yarnadvisor.plugin.DecisionTable.RequestDecision;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmcontainer.RMContainer;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AppSchedulingInfo;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.NodeType;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.SchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.activities.DiagnosticsCollector;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.SchedulingMode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.ContainerRequest;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.PendingAsk;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.placement.LocalityAppPlacementAllocator;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;

/**
 * YARN's locality allocator, plus the advisor's vetoes: set as
 * {@code yarn.scheduler.app-placement-allocator.class}, one instance per (application,
 * scheduler request key). {@link #precheckNode} first asks YARN (the partition check); if YARN
 * admits, it asks the {@link Decider} with the latest table the {@link TableHolder} holds. It
 * only ever turns a yes into a no; a missing or stale table, an unknown app, or any throwable
 * is YARN's own answer. It does no I/O and takes no lock of its own.
 */
public class AdvisorPlacementAllocator<N extends SchedulerNode>
    extends LocalityAppPlacementAllocator<N> {
  /** The decisions of one table for this app (rules matched once per table). */
  private record Cached(DecisionTable table, List<RequestDecision> decisions) {}

  /** NodeId -> its string, so an attempt does not build it again (bounded by the nodes). */
  private static final ConcurrentHashMap<NodeId, String>
      NODE_IDS = new ConcurrentHashMap<>();

  private final PluginMetrics metrics = PluginMetrics.get();
  private final SkipBudget budget = new SkipBudget();
  private volatile TableHolder holder;
  private volatile Cached cached;
  private String appId;
  private int priority;

  @Override
  public void initialize(AppSchedulingInfo info, SchedulerRequestKey key, RMContext context) {
    super.initialize(info, key, context);
    try {
      appId = info.getApplicationId().toString();
      priority = key.getPriority().getPriority();
      holder = TableHolder.shared(context.getYarnConfiguration());
    } catch (Throwable t) {
      holder = null;
      metrics.error();
    }
  }

  /** For tests and the bench: use this holder instead of the configured one. */
  void useHolder(TableHolder h, String app, int prio) {
    holder = h;
    appId = app;
    priority = prio;
  }

  @Override
  public boolean precheckNode(SchedulerNode node, SchedulingMode mode,
      Optional<DiagnosticsCollector> diagnostics) {
    if (!super.precheckNode(node, mode, diagnostics)) {
      return false;
    }
    try {
      TableHolder h = holder;
      Verdict v = decide(h == null ? null : h.table(), node);
      metrics.count(v);
      return v.admits();
    } catch (Throwable t) {
      metrics.error();
      return true;
    }
  }

  Verdict decide(DecisionTable t, SchedulerNode node) {
    if (t == null) {
      return Verdict.fallback(Verdict.Fallback.NO_TABLE);
    }
    RmAttempt a = new RmAttempt(node);
    Cached c = cached;
    if (c == null || c.table() != t) {
      c = new Cached(t, Decider.decisionsFor(t, a));
      cached = c;
    }
    return Decider.decide(t, System.currentTimeMillis(), a, c.decisions(), budget);
  }

  @Override
  public ContainerRequest allocate(SchedulerRequestKey key, NodeType type, SchedulerNode node) {
    budget.reset();
    return super.allocate(key, type, node);
  }

  /** The attempt as the RM sees it now; every getter reads live state, only when asked. */
  private final class RmAttempt implements Attempt {
    private final SchedulerNode node;
    private RMApp app;
    private String nodeId;

    RmAttempt(SchedulerNode node) {
      this.node = node;
    }

    private RMApp app() {
      if (app == null && rmContext != null) {
        app = rmContext.getRMApps().get(appSchedulingInfo.getApplicationId());
      }
      return app;
    }

    private Resource ask() {
      PendingAsk p = getPendingAsk(ResourceRequest.ANY);
      return p.getPerAllocationResource();
    }

    @Override
    public String appId() {
      return appId;
    }

    @Override
    public String appType() {
      RMApp a = app();
      return a == null ? null : a.getApplicationType();
    }

    @Override
    public String queue() {
      return appSchedulingInfo.getQueueName();
    }

    @Override
    public Set<String> tags() {
      RMApp a = app();
      return a == null ? Set.of() : a.getApplicationTags();
    }

    @Override
    public int priority() {
      return priority;
    }

    @Override
    public String nodeId() {
      if (nodeId == null) {
        NodeId id = node.getNodeID();
        String s = NODE_IDS.get(id);
        if (s == null) {
          s = id.toString();
          NODE_IDS.put(id, s);
        }
        nodeId = s;
      }
      return nodeId;
    }

    @Override
    public String nodeHost() {
      return node.getNodeName();
    }

    @Override
    public int uniqueLocationAsks() {
      return getUniqueLocationAsks();
    }

    @Override
    public int outstandingAsks(String resourceName) {
      return getOutstandingAsksCount(resourceName);
    }

    @Override
    public boolean pendingAt(int p) {
      for (SchedulerRequestKey k : appSchedulingInfo.getSchedulerKeys()) {
        if (k.getPriority().getPriority() == p && appSchedulingInfo.getPendingAsk(k).getCount() > 0) {
          return true;
        }
      }
      return false;
    }

    @Override
    public long askMemoryMb() {
      return ask().getMemorySize();
    }

    @Override
    public long askVcores() {
      return ask().getVirtualCores();
    }

    @Override
    public long nodeTotalMemoryMb() {
      return node.getTotalResource().getMemorySize();
    }

    @Override
    public long nodeTotalVcores() {
      return node.getTotalResource().getVirtualCores();
    }

    @Override
    public long nodeAllocatedMemoryMb() {
      return node.getAllocatedResource().getMemorySize();
    }

    @Override
    public long nodeAllocatedVcores() {
      return node.getAllocatedResource().getVirtualCores();
    }

    @Override
    public long nodeUnallocatedMemoryMb() {
      return node.getUnallocatedResource().getMemorySize();
    }

    @Override
    public long nodeUnallocatedVcores() {
      return node.getUnallocatedResource().getVirtualCores();
    }

    @Override
    public int liveContainersOnNode() {
      ApplicationId id = appSchedulingInfo.getApplicationId();
      int n = 0;
      for (RMContainer c : node.getCopiedListOfRunningContainers()) {
        if (!c.isAMContainer() && id.equals(c.getApplicationAttemptId().getApplicationId())) {
          n++;
        }
      }
      return n;
    }
  }
}
