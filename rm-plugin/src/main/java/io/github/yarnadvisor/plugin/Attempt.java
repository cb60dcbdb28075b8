package io.github.yarnadvisor.plugin;

import java.util.Set;

/**
 * What the decider reads about one (application, request priority, node) attempt. The
 * allocator answers it from the RM's own state at the attempt (lazily: a getter is called only
 * when a decision needs it); tests answer it from plain values. Memory in MiB.
 */
public interface Attempt {
  /** {@code ApplicationId.toString()}. */
  String appId();

  /** {@code RMApp.getApplicationType()}, or null when unknown (read only for rules). */
  String appType();

  /** The app's leaf queue, or null (read only for rules). */
  String queue();

  /** The app's tags (read only for rules). */
  Set<String> tags();

  /** The request priority of this attempt. */
  int priority();

  /** {@code SchedulerNode.getNodeID().toString()} ({@code host:port}). */
  String nodeId();

  /** {@code SchedulerNode.getNodeName()} (the host the request's node-local asks name). */
  String nodeHost();

  /** How many resource names the request asks at (ANY, racks, hosts). */
  int uniqueLocationAsks();

  /** Outstanding containers the request asks for at this resource name. */
  int outstandingAsks(String resourceName);

  /** Whether the app has a pending ask (ANY count above 0) at this request priority. */
  boolean pendingAt(int priority);

  long askMemoryMb();

  long askVcores();

  long nodeTotalMemoryMb();

  long nodeTotalVcores();

  long nodeAllocatedMemoryMb();

  long nodeAllocatedVcores();

  long nodeUnallocatedMemoryMb();

  long nodeUnallocatedVcores();

  /** The app's live containers on the node, its AM container not counted. */
  int liveContainersOnNode();
}
