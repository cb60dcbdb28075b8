package io.github.yarnadvisor.plugin;

/**
 * The {@code max_skips} counts of one request (one allocator instance is one app's request
 * priority): how many attempts in a row {@code local_only} and {@code fit} skipped. Reset when
 * the request gets a container. Races between scheduler threads only blur a count by one.
 */
public final class SkipBudget {
  /** Which decision's budget. */
  public enum Kind { LOCAL_ONLY, FIT }

  private final int[] skipped = new int[Kind.values().length];

  /** Whether a decision with {@code maxSkips} (null: no budget) may skip now; counts it. */
  public boolean trySkip(Kind kind, Integer maxSkips) {
    if (maxSkips == null) {
      return true;
    }
    int n = skipped[kind.ordinal()];
    if (n >= maxSkips) {
      return false;
    }
    skipped[kind.ordinal()] = n + 1;
    return true;
  }

  public int skipped(Kind kind) {
    return skipped[kind.ordinal()];
  }

  /** The request got a container: every decision may skip again. */
  public void reset() {
    skipped[0] = 0;
    skipped[1] = 0;
  }
}
