package io.github.yarnadvisor.plugin;

import io.github.yarnadvisor.plugin.DecisionTable.AppDecisions;
import io.github.yarnadvisor.plugin.DecisionTable.Fit;
import io.github.yarnadvisor.plugin.DecisionTable.Lending;
import io.github.yarnadvisor.plugin.DecisionTable.LocalOnly;
import io.github.yarnadvisor.plugin.DecisionTable.RequestDecision;
import io.github.yarnadvisor.plugin.DecisionTable.Rule;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The plug-in's rule, pure: for a table, the time, one attempt and its request's skip budget,
 * admit, veto (with the reason) or leave the attempt to YARN (docs/decision-table.md, "What the
 * plug-in does with it"). Decisions only ever skip: the first that skips wins, in the order
 * {@code apps[id]}, then every matching rule; within one decision hold, allow, veto, cap,
 * local_only, fit; then the node's lending. Mirrors simulator/plugin.py.
 */
public final class Decider {
  private Decider() {}

  /** The request decisions that apply to an app under this table (its own, then its rules'). */
  public static List<RequestDecision> decisionsFor(DecisionTable table, Attempt a) {
    AppDecisions own = table.apps().get(a.appId());
    List<RequestDecision> mine = own == null ? List.of() : own.requests();
    if (table.rules().isEmpty()) {
      return mine;
    }
    List<RequestDecision> out = null;
    for (Rule r : table.rules()) {
      if (r.match().matches(a.appType(), a.queue(), a.tags())) {
        if (out == null) {
          out = new ArrayList<>(mine);
        }
        out.addAll(r.requests());
      }
    }
    return out == null ? mine : Collections.unmodifiableList(out);
  }

  /** Whether the table knows the app at all (listed in apps, or matched by a rule). */
  static boolean known(DecisionTable table, Attempt a, List<RequestDecision> decisions) {
    return !decisions.isEmpty() || table.apps().containsKey(a.appId());
  }

  /** {@link #decide(DecisionTable, long, Attempt, List, SkipBudget)} of the app's decisions. */
  public static Verdict decide(DecisionTable table, long nowMs, Attempt a, SkipBudget budget) {
    if (table == null) {
      return Verdict.fallback(Verdict.Fallback.NO_TABLE);
    }
    return decide(table, nowMs, a, decisionsFor(table, a), budget);
  }

  /**
   * The verdict on an attempt, with the app's decisions already looked up (the allocator caches
   * them per table). A null or expired table, or an app the table does not know and a node
   * that lends nothing, is YARN's default.
   */
  public static Verdict decide(DecisionTable table, long nowMs, Attempt a,
      List<RequestDecision> decisions, SkipBudget budget) {
    if (table == null) {
      return Verdict.fallback(Verdict.Fallback.NO_TABLE);
    }
    if (table.expired(nowMs)) {
      return Verdict.fallback(Verdict.Fallback.EXPIRED);
    }
    Lending lend = table.nodes().isEmpty() ? null : table.nodes().get(a.nodeId());
    if (lend != null && !lend.lends()) {
      lend = null;
    }
    if (lend == null && !known(table, a, decisions)) {
      return Verdict.fallback(Verdict.Fallback.UNKNOWN_APP);
    }
    int p = a.priority();
    for (int i = 0, n = decisions.size(); i < n; i++) {
      RequestDecision q = decisions.get(i);
      if (q.appliesTo(p)) {
        Reason r = veto(q, a, budget);
        if (r != null) {
          return Verdict.veto(r);
        }
      }
    }
    if (lend != null && intoLentRoom(lend, a) && !lend.admits(a.appId(), p)) {
      return Verdict.veto(Reason.OPERA_LENT);
    }
    return Verdict.ADMIT;
  }

  private static Reason veto(RequestDecision q, Attempt a, SkipBudget budget) {
    if (q.hold() != null && held(q.hold().whilePending(), a)) {
      return q.hold().reason();
    }
    if (q.allow() != null && !q.allow().nodes().contains(a.nodeId())) {
      return q.allow().reason();
    }
    if (!q.veto().isEmpty()) {
      Reason r = q.veto().get(a.nodeId());
      if (r != null) {
        return r;
      }
    }
    if (q.cap() != null && a.liveContainersOnNode() >= q.cap().maxPerNode()) {
      return q.cap().reason();
    }
    LocalOnly lo = q.localOnly();
    if (lo != null && nonLocal(lo, a) && budget.trySkip(SkipBudget.Kind.LOCAL_ONLY, lo.maxSkips())) {
      return lo.reason();
    }
    Fit fit = q.fit();
    if (fit != null && misfit(fit, a) && budget.trySkip(SkipBudget.Kind.FIT, fit.maxSkips())) {
      return fit.reason();
    }
    return null;
  }

  private static boolean held(int[] whilePending, Attempt a) {
    if (whilePending.length == 0) {
      return true;
    }
    for (int p : whilePending) {
      if (a.pendingAt(p)) {
        return true;
      }
    }
    return false;
  }

  /** The request has host or rack asks, none for this node's host, and the node is not excepted. */
  static boolean nonLocal(LocalOnly lo, Attempt a) {
    return a.uniqueLocationAsks() > 1 && a.outstandingAsks(a.nodeHost()) == 0
        && !lo.exceptNodes().contains(a.nodeId());
  }

  /**
   * The request's alignment with the node's unallocated resource, both over the node's total,
   * is under the minimum; a node with nothing unallocated in a dimension is left to YARN's fit.
   */
  static boolean misfit(Fit fit, Attempt a) {
    double tm = a.nodeTotalMemoryMb();
    double tv = a.nodeTotalVcores();
    if (tm <= 0 || tv <= 0) {
      return false;
    }
    double cm = a.nodeUnallocatedMemoryMb() / tm;
    double cv = a.nodeUnallocatedVcores() / tv;
    double rm = a.askMemoryMb() / tm;
    double rv = a.askVcores() / tv;
    if (cm <= 0 || cv <= 0 || (rm <= 0 && rv <= 0)) {
      return false;
    }
    double cos = (rm * cm + rv * cv) / (Math.hypot(rm, rv) * Math.hypot(cm, cv));
    return cos < fit.minAlignment();
  }

  /** The container would reach into the lent room in a dimension whose lent amount is positive. */
  static boolean intoLentRoom(Lending lend, Attempt a) {
    return (lend.memoryMb() > 0
        && a.nodeAllocatedMemoryMb() + a.askMemoryMb() > a.nodeTotalMemoryMb() - lend.memoryMb())
        || (lend.vcores() > 0
        && a.nodeAllocatedVcores() + a.askVcores() > a.nodeTotalVcores() - lend.vcores());
  }
}
