package io.github.yarnadvisor.plugin;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.lang.management.ManagementFactory;
import java.net.ServerSocket;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import javax.management.ObjectName;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.SchedulingMode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.placement.LocalityAppPlacementAllocator;
import org.junit.Before;
import org.junit.Test;

/** The allocator on real RM scheduler objects: it vetoes only from a valid table, else YARN's. */
public class AllocatorTest {
  static final SchedulingMode MODE = SchedulingMode.RESPECT_PARTITION_EXCLUSIVITY;
  private final ApplicationId id = ApplicationId.newInstance(1_700_000_000_000L, 7);
  private ConcurrentMap<ApplicationId, RMApp> apps;
  private RMContext ctx;
  private FiCaSchedulerNode h1;
  private FiCaSchedulerNode h2;

  @Before
  public void cluster() {
    apps = RmStubs.apps();
    ctx = RmStubs.context(new Configuration(false), apps);
    h1 = RmStubs.node(ctx, "h1", 8041, 8192, 8);
    h2 = RmStubs.node(ctx, "h2", 8041, 8192, 8);
  }

  static String table(String requests, String rules) {
    return "{\"format\":\"yarn-advisor-decision-table\",\"version\":1,\"seq\":5,"
        + "\"generated_at_ms\":" + System.currentTimeMillis() + ",\"ttl_ms\":600000,"
        + "\"leader\":\"t\",\"apps\":{\"application_1700000000000_0007\":{\"requests\":["
        + requests + "]}},\"rules\":[" + rules + "]}";
  }

  private AdvisorPlacementAllocator<FiCaSchedulerNode> ours(String table, List<String> hosts)
      throws Exception {
    AdvisorPlacementAllocator<FiCaSchedulerNode> a = RmStubs.request(
        new AdvisorPlacementAllocator<>(), ctx, id, "default", 20, Resource.newInstance(1024, 1),
        3, hosts);
    a.useHolder(table == null ? null : TableHolder.holding(DecisionTable.parse(table)),
        id.toString(), 20);
    return a;
  }

  @Test
  public void withoutATableItAnswersAsYarn() throws Exception {
    LocalityAppPlacementAllocator<FiCaSchedulerNode> stock = RmStubs.request(
        new LocalityAppPlacementAllocator<>(), ctx, id, "default", 20,
        Resource.newInstance(1024, 1), 3, List.of());
    long before = PluginMetrics.get().fallbacks(Verdict.Fallback.NO_TABLE);
    AdvisorPlacementAllocator<FiCaSchedulerNode> a = ours(null, List.of());
    for (FiCaSchedulerNode n : List.of(h1, h2)) {
      assertEquals(stock.precheckNode(n, MODE), a.precheckNode(n, MODE));
      assertTrue(a.precheckNode(n, MODE));
    }
    assertEquals(before + 4, PluginMetrics.get().fallbacks(Verdict.Fallback.NO_TABLE));
  }

  @Test
  public void aVetoKeepsTheRequestOffTheNamedNode() throws Exception {
    long before = PluginMetrics.get().vetoes(Reason.ANACRAC_HOST);
    AdvisorPlacementAllocator<FiCaSchedulerNode> a = ours(table(
        "{\"priority\":20,\"veto\":{\"h1:8041\":\"anacrac.host\"}}", ""), List.of());
    assertFalse(a.precheckNode(h1, MODE));
    assertTrue(a.precheckNode(h2, MODE));
    assertEquals(before + 1, PluginMetrics.get().vetoes(Reason.ANACRAC_HOST));
    AdvisorPlacementAllocator<FiCaSchedulerNode> other = ours(table(
        "{\"priority\":10,\"veto\":{\"h1:8041\":\"anacrac.host\"}}", ""), List.of());
    assertTrue("a decision on another request priority vetoes nothing",
        other.precheckNode(h1, MODE));
  }

  @Test
  public void rulesReadTheAppsTypeFromTheRm() throws Exception {
    apps.put(id, RmStubs.app(id, "SQOOP", Set.of()));
    String rule = "{\"match\":{\"application_type\":\"sqoop\"},\"requests\":[{\"priority\":null,"
        + "\"allow\":{\"nodes\":[\"h1:8041\"],\"reason\":\"anacrac.host\"}}]}";
    AdvisorPlacementAllocator<FiCaSchedulerNode> a = ours(table("", rule), List.of());
    assertTrue(a.precheckNode(h1, MODE));
    assertFalse(a.precheckNode(h2, MODE));
  }

  @Test
  public void localOnlyReadsTheRequestsHostAsks() throws Exception {
    AdvisorPlacementAllocator<FiCaSchedulerNode> a = ours(table(
        "{\"priority\":20,\"local_only\":{\"reason\":\"matchmaking.nonlocal\","
        + "\"max_skips\":null}}", ""), List.of("h1"));
    assertTrue(a.precheckNode(h1, MODE));
    assertFalse(a.precheckNode(h2, MODE));
  }

  @Test
  public void anExceptionInsideIsYarnsAnswer() throws Exception {
    ConcurrentMap<ApplicationId, RMApp> broken = new ConcurrentHashMap<>() {
      @Override
      public RMApp get(Object key) {
        throw new IllegalStateException("boom");
      }
    };
    ctx = RmStubs.context(new Configuration(false), broken);
    h2 = RmStubs.node(ctx, "h2", 8041, 8192, 8);
    String rule = "{\"match\":{\"application_type\":\"SQOOP\"},\"requests\":[{\"priority\":null,"
        + "\"allow\":{\"nodes\":[\"h1:8041\"],\"reason\":\"anacrac.host\"}}]}";
    long before = PluginMetrics.get().fallbacks(Verdict.Fallback.ERROR);
    AdvisorPlacementAllocator<FiCaSchedulerNode> a = ours(table("", rule), List.of());
    assertTrue(a.precheckNode(h2, MODE));
    assertEquals(before + 1, PluginMetrics.get().fallbacks(Verdict.Fallback.ERROR));
  }

  @Test
  public void aConfiguredButUnreachableAdvisorNeverBlocksTheCall() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Configuration conf = new Configuration(false);
    conf.set(TableHolder.URL_KEY, "http://127.0.0.1:" + port + "/decision-table");
    ctx = RmStubs.context(conf, apps);
    h1 = RmStubs.node(ctx, "h1", 8041, 8192, 8);
    AdvisorPlacementAllocator<FiCaSchedulerNode> a = RmStubs.request(
        new AdvisorPlacementAllocator<>(), ctx, id, "default", 20, Resource.newInstance(1024, 1),
        3, List.of());
    long t0 = System.nanoTime();
    for (int i = 0; i < 1000; i++) {
      assertTrue(a.precheckNode(h1, MODE));
    }
    long perCallUs = (System.nanoTime() - t0) / 1000 / 1000;
    assertTrue("a call took " + perCallUs + " us", perCallUs < 1000);
    Object status = ManagementFactory.getPlatformMBeanServer().getAttribute(
        new ObjectName(PluginMetrics.NAME), "TableStatus");
    assertTrue(String.valueOf(status), status instanceof String);
  }
}
