package io.github.yarnadvisor.plugin;

import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.ResourceRequest;
import org.apache.hadoop.yarn.server.resourcemanager.RMContext;
import org.apache.hadoop.yarn.server.resourcemanager.rmapp.RMApp;
import org.apache.hadoop.yarn.server.resourcemanager.rmnode.RMNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.AppSchedulingInfo;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.Queue;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.ResourceUsage;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.common.fica.FiCaSchedulerNode;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.placement.AppPlacementAllocator;
import org.apache.hadoop.yarn.server.scheduler.SchedulerRequestKey;

/**
 * Real RM scheduler objects (AppSchedulingInfo, FiCaSchedulerNode and the allocators) around
 * interface stand-ins for the parts of a running RM they only reference (RMContext, RMNode,
 * Queue, RMApp): what the precheck bench and the allocator's tests call precheckNode on.
 */
public final class RmStubs {
  private RmStubs() {}

  /** A stand-in answering these methods, and Java's defaults (null, 0, false) for the rest. */
  @SuppressWarnings("unchecked")
  static <T> T stub(Class<T> type, Map<String, Object> answers) {
    return (T) Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
        (proxy, method, args) -> {
          String name = method.getName();
          if (answers.containsKey(name)) {
            Object v = answers.get(name);
            if (v instanceof RuntimeException e) {
              throw e;
            }
            return v;
          }
          if (name.equals("hashCode")) {
            return System.identityHashCode(proxy);
          }
          if (name.equals("equals")) {
            return proxy == args[0];
          }
          if (name.equals("toString")) {
            return type.getSimpleName() + "-stub";
          }
          Class<?> r = method.getReturnType();
          if (r == boolean.class) {
            return false;
          }
          if (r == int.class || r == long.class || r == short.class || r == byte.class) {
            return r == long.class ? (Object) 0L : (Object) 0;
          }
          if (r == float.class || r == double.class) {
            return r == float.class ? (Object) 0f : (Object) 0d;
          }
          return null;
        });
  }

  /** An RM context with this configuration and these applications. */
  public static RMContext context(Configuration conf, ConcurrentMap<ApplicationId, RMApp> apps) {
    return stub(RMContext.class, Map.of("getYarnConfiguration", conf, "getRMApps", apps));
  }

  /** An application as the RM context lists it. */
  public static RMApp app(ApplicationId id, String type, Set<String> tags) {
    return stub(RMApp.class, Map.of("getApplicationId", id, "getApplicationType", type,
        "getApplicationTags", tags, "getQueue", "default"));
  }

  /** A CapacityScheduler node of this size, id {@code host:port}. */
  public static FiCaSchedulerNode node(RMContext ctx, String host, int port, long memMb,
      int vcores) {
    RMNode n = stub(RMNode.class, Map.of("getNodeID", NodeId.newInstance(host, port),
        "getHostName", host, "getRackName", "/default-rack",
        "getTotalCapability", Resource.newInstance(memMb, vcores), "getRMContext", ctx,
        "getNodeAddress", host + ":" + port, "getHttpAddress", host + ":8042"));
    return new FiCaSchedulerNode(n, false);
  }

  /** One application's request (at priority {@code priority}) held by {@code allocator}. */
  public static <A extends AppPlacementAllocator<FiCaSchedulerNode>> A request(A allocator,
      RMContext ctx, ApplicationId id, String queue, int priority, Resource size, int count,
      List<String> hosts) {
    Queue q = stub(Queue.class, Map.of("getQueueName", queue));
    AppSchedulingInfo info = new AppSchedulingInfo(ApplicationAttemptId.newInstance(id, 1),
        "user", q, null, 0, new ResourceUsage(), Map.of(), ctx, false);
    ResourceRequest any = ResourceRequest.newInstance(Priority.newInstance(priority),
        ResourceRequest.ANY, size, count);
    SchedulerRequestKey key = SchedulerRequestKey.create(any);
    allocator.initialize(info, key, ctx);
    java.util.List<ResourceRequest> asks = new java.util.ArrayList<>();
    asks.add(any);
    if (!hosts.isEmpty()) {
      asks.add(ResourceRequest.newInstance(Priority.newInstance(priority), "/default-rack", size,
          count));
      for (String h : hosts) {
        asks.add(ResourceRequest.newInstance(Priority.newInstance(priority), h, size, count));
      }
    }
    allocator.updatePendingAsk(asks, false);
    return allocator;
  }

  /** An empty application map for {@link #context}. */
  public static ConcurrentMap<ApplicationId, RMApp> apps() {
    return new ConcurrentHashMap<>();
  }
}
