package io.github.yarnadvisor.plugin;

/** Why an attempt is skipped (docs/decision-table.md, "Reasons"); version 1 has exactly these. */
public enum Reason {
  MATCHMAKING_NONLOCAL("matchmaking.nonlocal"),
  ANACRAC_HOST("anacrac.host"),
  ANACRAC_CAP("anacrac.cap"),
  HASTE_FITNESS("haste.fitness"),
  HASTE_HOLDBACK("haste.reduce_holdback"),
  OPERA_LENT("opera.lent_room");

  private final String wire;

  Reason(String wire) {
    this.wire = wire;
  }

  /** The reason's name in the table and in the JMX counters. */
  public String wire() {
    return wire;
  }

  /** The reason of a wire name, or null when version 1 has no such reason. */
  public static Reason of(String wire) {
    for (Reason r : values()) {
      if (r.wire.equals(wire)) {
        return r;
      }
    }
    return null;
  }
}
