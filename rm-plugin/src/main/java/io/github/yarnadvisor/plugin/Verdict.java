package io.github.yarnadvisor.plugin;

/**
 * The decider's answer for one attempt: ADMIT (a valid table had decisions for it and none
 * skips), VETO (skip it, with the reason) or DEFAULT (YARN's own answer, with why).
 */
public record Verdict(Outcome outcome, String reason, int index) {
  /** What the allocator does with the attempt. */
  public enum Outcome { ADMIT, VETO, DEFAULT }

  /** Why the plug-in left an attempt to YARN (the JMX fall-back counters). */
  public enum Fallback {
    NO_TABLE("no_table"), EXPIRED("expired"), UNKNOWN_APP("unknown_app"), ERROR("error");

    private final String wire;

    Fallback(String wire) {
      this.wire = wire;
    }

    public String wire() {
      return wire;
    }
  }

  public static final Verdict ADMIT = new Verdict(Outcome.ADMIT, "", 0);
  private static final Verdict[] VETOES = new Verdict[Reason.values().length];
  private static final Verdict[] DEFAULTS = new Verdict[Fallback.values().length];

  static {
    for (Reason r : Reason.values()) {
      VETOES[r.ordinal()] = new Verdict(Outcome.VETO, r.wire(), r.ordinal());
    }
    for (Fallback f : Fallback.values()) {
      DEFAULTS[f.ordinal()] = new Verdict(Outcome.DEFAULT, f.wire(), f.ordinal());
    }
  }

  public static Verdict veto(Reason r) {
    return VETOES[r.ordinal()];
  }

  public static Verdict fallback(Fallback f) {
    return DEFAULTS[f.ordinal()];
  }

  /** Whether the attempt may go on (everything but a veto). */
  public boolean admits() {
    return outcome != Outcome.VETO;
  }
}
