package io.github.yarnadvisor.plugin;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/** An attempt given by plain values (what the allocator reads from the RM). */
final class FakeAttempt implements Attempt {
  String app = DecisionTableTest.APP;
  String type = "MAPREDUCE";
  String queue = "root.default";
  Set<String> tags = new HashSet<>();
  int priority = 20;
  String node = "h2:8041";
  String host = "h2";
  Map<String, Integer> asks = new HashMap<>(Map.of("*", 1));
  Set<Integer> pending = new HashSet<>();
  long askMem = 1024;
  long askVc = 1;
  long totalMem = 8192;
  long totalVc = 8;
  long allocMem;
  long allocVc;
  int live;
  RuntimeException boom;

  FakeAttempt at(String nodeId) {
    node = nodeId;
    host = nodeId.substring(0, nodeId.indexOf(':'));
    return this;
  }

  FakeAttempt withAsks(Map<String, Integer> a) {
    asks = a;
    return this;
  }

  private void maybeThrow() {
    if (boom != null) {
      throw boom;
    }
  }

  @Override public String appId() {
    maybeThrow();
    return app;
  }

  @Override public String appType() {
    return type;
  }

  @Override public String queue() {
    return queue;
  }

  @Override public Set<String> tags() {
    return tags;
  }

  @Override public int priority() {
    return priority;
  }

  @Override public String nodeId() {
    return node;
  }

  @Override public String nodeHost() {
    return host;
  }

  @Override public int uniqueLocationAsks() {
    return asks.size();
  }

  @Override public int outstandingAsks(String name) {
    return asks.getOrDefault(name, 0);
  }

  @Override public boolean pendingAt(int p) {
    return pending.contains(p);
  }

  @Override public long askMemoryMb() {
    return askMem;
  }

  @Override public long askVcores() {
    return askVc;
  }

  @Override public long nodeTotalMemoryMb() {
    return totalMem;
  }

  @Override public long nodeTotalVcores() {
    return totalVc;
  }

  @Override public long nodeAllocatedMemoryMb() {
    return allocMem;
  }

  @Override public long nodeAllocatedVcores() {
    return allocVc;
  }

  @Override public long nodeUnallocatedMemoryMb() {
    return totalMem - allocMem;
  }

  @Override public long nodeUnallocatedVcores() {
    return totalVc - allocVc;
  }

  @Override public int liveContainersOnNode() {
    return live;
  }
}
