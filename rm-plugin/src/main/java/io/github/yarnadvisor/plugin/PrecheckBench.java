package io.github.yarnadvisor.plugin;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.SchedulingMode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.placement.AppPlacementAllocator;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.placement.LocalityAppPlacementAllocator;

/**
 * A plain-Java micro-bench of one {@code precheckNode} call on real RM scheduler objects: YARN's
 * stock allocator, and the plug-in's with no table, with a table that admits the attempt (the
 * app is decided, nothing skips) and with one that vetoes it. Modes alternate within every run;
 * prints one JSON object: per mode the ns per call of each run and their median.
 *
 * <p>{@code java -cp <RM classpath>:yarn-advisor-rm-plugin.jar
 * io.github.yarnadvisor.plugin.PrecheckBench [runs] [calls per run]}
 */
public final class PrecheckBench {
  private PrecheckBench() {}

  private static volatile boolean sink;

  public static void main(String[] args) throws Exception {
    int runs = args.length > 0 ? Integer.parseInt(args[0]) : 7;
    int calls = args.length > 1 ? Integer.parseInt(args[1]) : 2_000_000;
    RMContext ctx = RmStubs.context(new Configuration(false), RmStubs.apps());
    List<FiCaSchedulerNode> nodes = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      nodes.add(RmStubs.node(ctx, "h" + i, 8041, 65536, 32));
    }
    ApplicationId id = ApplicationId.newInstance(1_700_000_000_000L, 7);
    String app = id.toString();
    long now = System.currentTimeMillis();
    String head = "{\"format\":\"yarn-advisor-decision-table\",\"version\":1,\"seq\":1,"
        + "\"generated_at_ms\":" + now + ",\"ttl_ms\":86400000,\"leader\":\"bench\",\"apps\":{\""
        + app + "\":{\"requests\":[";
    // admit: the app is decided (a veto on a node outside the set, a cap it is under)
    DecisionTable admit = DecisionTable.parse(head + "{\"priority\":20,\"veto\":{\"x:1\":"
        + "\"anacrac.host\"},\"local_only\":{\"reason\":\"matchmaking.nonlocal\"}}]}}}");
    DecisionTable veto = DecisionTable.parse(head + "{\"priority\":null,\"allow\":{\"nodes\":"
        + "[\"x:1\"],\"reason\":\"anacrac.host\"}}]}}}");
    Map<String, AppPlacementAllocator<FiCaSchedulerNode>> modes = new LinkedHashMap<>();
    modes.put("stock", RmStubs.request(new LocalityAppPlacementAllocator<>(), ctx, id, "default",
        20, Resource.newInstance(1024, 1), 1000, List.of()));
    modes.put("no_table", ours(ctx, id, null));
    modes.put("admit", ours(ctx, id, admit));
    modes.put("veto", ours(ctx, id, veto));
    Map<String, long[]> nsPerCall = new LinkedHashMap<>();
    for (String m : modes.keySet()) {
      nsPerCall.put(m, new long[runs]);
    }
    for (Map.Entry<String, AppPlacementAllocator<FiCaSchedulerNode>> e : modes.entrySet()) {
      loop(e.getValue(), nodes, calls); // warm up every mode before any run is timed
    }
    for (int r = 0; r < runs; r++) {
      for (Map.Entry<String, AppPlacementAllocator<FiCaSchedulerNode>> e : modes.entrySet()) {
        nsPerCall.get(e.getKey())[r] = loop(e.getValue(), nodes, calls);
      }
    }
    StringBuilder out = new StringBuilder("{\"calls_per_run\": " + calls + ", \"runs\": " + runs);
    for (Map.Entry<String, long[]> e : nsPerCall.entrySet()) {
      long[] v = e.getValue().clone();
      Arrays.sort(v);
      out.append(", \"").append(e.getKey()).append("\": {\"median_ns\": ")
          .append(v[v.length / 2]).append(", \"runs_ns\": ")
          .append(Arrays.toString(e.getValue())).append('}');
    }
    System.out.println(out.append('}'));
  }

  private static AdvisorPlacementAllocator<FiCaSchedulerNode> ours(RMContext ctx,
      ApplicationId id, DecisionTable t) {
    AdvisorPlacementAllocator<FiCaSchedulerNode> a = RmStubs.request(
        new AdvisorPlacementAllocator<>(), ctx, id, "default", 20, Resource.newInstance(1024, 1),
        1000, List.of());
    a.useHolder(t == null ? null : TableHolder.holding(t), id.toString(), 20);
    return a;
  }

  /** Nanoseconds per precheckNode call over {@code calls} calls across the nodes. */
  private static long loop(AppPlacementAllocator<FiCaSchedulerNode> a,
      List<FiCaSchedulerNode> nodes, int calls) {
    SchedulingMode mode = SchedulingMode.RESPECT_PARTITION_EXCLUSIVITY;
    int n = nodes.size();
    boolean acc = false;
    long t0 = System.nanoTime();
    for (int i = 0; i < calls; i++) {
      acc ^= a.precheckNode(nodes.get(i % n), mode);
    }
    long ns = System.nanoTime() - t0;
    sink = acc;
    return ns / calls;
  }
}
