package io.github.yarnadvisor.plugin;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.AttributeNotFoundException;
import javax.management.DynamicMBean;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanInfo;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * The plug-in's own counters, as the JMX MBean {@value #NAME} of the RM's platform MBean server
 * (so the RM's {@code /jmx} servlet serves them and the advisor can sense them): the table's
 * age, seq, leader and poll status; admits; vetoes by reason; fall-backs to YARN's default by
 * reason. Counting is a LongAdder increment on the scheduler thread.
 */
public final class PluginMetrics implements DynamicMBean {
  public static final String NAME = "Hadoop:service=ResourceManager,name=AdvisorPlugin";
  private static final PluginMetrics INSTANCE = new PluginMetrics();

  private final LongAdder admits = new LongAdder();
  private final LongAdder[] vetoes = adders(Reason.values().length);
  private final LongAdder[] fallbacks = adders(Verdict.Fallback.values().length);
  private final LongAdder pollsOk = new LongAdder();
  private final LongAdder pollsFailed = new LongAdder();
  private volatile TableHolder holder;
  private volatile boolean registered;

  public PluginMetrics() {}

  /** The RM's one instance (registered with JMX on first use; a failure only logs nothing). */
  public static PluginMetrics get() {
    INSTANCE.register();
    return INSTANCE;
  }

  private synchronized void register() {
    if (registered) {
      return;
    }
    registered = true;
    try {
      MBeanServer mbs = ManagementFactory.getPlatformMBeanServer();
      ObjectName name = new ObjectName(NAME);
      if (!mbs.isRegistered(name)) {
        mbs.registerMBean(this, name);
      }
    } catch (Exception | LinkageError e) {
      // counters stay readable in-process; JMX is only how the advisor sees them
    }
  }

  /** The holder whose table the age, seq and status attributes describe. */
  void watch(TableHolder h) {
    holder = h;
  }

  /** Count one verdict of the decider. */
  public void count(Verdict v) {
    switch (v.outcome()) {
      case ADMIT -> admits.increment();
      case VETO -> vetoes[v.index()].increment();
      default -> fallbacks[v.index()].increment();
    }
  }

  /** Count an exception inside the plug-in (the call got YARN's default). */
  public void error() {
    fallbacks[Verdict.Fallback.ERROR.ordinal()].increment();
  }

  void polled(boolean ok) {
    (ok ? pollsOk : pollsFailed).increment();
  }

  public long admits() {
    return admits.sum();
  }

  public long vetoes(Reason r) {
    return vetoes[r.ordinal()].sum();
  }

  public long fallbacks(Verdict.Fallback f) {
    return fallbacks[f.ordinal()].sum();
  }

  private static LongAdder[] adders(int n) {
    LongAdder[] a = new LongAdder[n];
    for (int i = 0; i < n; i++) {
      a[i] = new LongAdder();
    }
    return a;
  }

  // --- DynamicMBean ------------------------------------------------------------------------
  private static List<String> names() {
    List<String> names = new ArrayList<>(List.of("TableAgeMs", "TableSeq", "TableVersion",
        "TableLeader", "TableStatus", "Admits", "Vetoes", "Fallbacks", "PollsOk", "PollsFailed"));
    for (Reason r : Reason.values()) {
      names.add("Vetoes." + r.wire());
    }
    for (Verdict.Fallback f : Verdict.Fallback.values()) {
      names.add("Fallbacks." + f.wire());
    }
    return names;
  }

  @Override
  public Object getAttribute(String name) throws AttributeNotFoundException {
    TableHolder h = holder;
    TableHolder.State s = h == null ? null : h.state();
    DecisionTable t = s == null ? null : s.table();
    switch (name) {
      case "TableAgeMs":
        return t == null ? -1L : System.currentTimeMillis() - t.generatedAtMs();
      case "TableSeq":
        return t == null ? -1L : t.seq();
      case "TableVersion":
        return t == null ? -1 : t.version();
      case "TableLeader":
        return t == null ? "" : t.leader();
      case "TableStatus":
        return s == null ? "not_configured" : s.status();
      case "Admits":
        return admits.sum();
      case "Vetoes":
        return sum(vetoes);
      case "Fallbacks":
        return sum(fallbacks);
      case "PollsOk":
        return pollsOk.sum();
      case "PollsFailed":
        return pollsFailed.sum();
      default:
        break;
    }
    if (name.startsWith("Vetoes.")) {
      Reason r = Reason.of(name.substring("Vetoes.".length()));
      if (r != null) {
        return vetoes(r);
      }
    }
    if (name.startsWith("Fallbacks.")) {
      String w = name.substring("Fallbacks.".length());
      for (Verdict.Fallback f : Verdict.Fallback.values()) {
        if (f.wire().equals(w)) {
          return fallbacks(f);
        }
      }
    }
    throw new AttributeNotFoundException(name);
  }

  private static long sum(LongAdder[] a) {
    long n = 0;
    for (LongAdder x : a) {
      n += x.sum();
    }
    return n;
  }

  @Override
  public AttributeList getAttributes(String[] attributes) {
    AttributeList out = new AttributeList();
    for (String a : attributes) {
      try {
        out.add(new Attribute(a, getAttribute(a)));
      } catch (AttributeNotFoundException e) {
        // skipped, as JMX expects
      }
    }
    return out;
  }

  @Override
  public void setAttribute(Attribute attribute) {
    throw new UnsupportedOperationException("read-only");
  }

  @Override
  public AttributeList setAttributes(AttributeList attributes) {
    return new AttributeList();
  }

  @Override
  public Object invoke(String actionName, Object[] params, String[] signature) {
    throw new UnsupportedOperationException("no operations");
  }

  @Override
  public MBeanInfo getMBeanInfo() {
    List<MBeanAttributeInfo> attrs = new ArrayList<>();
    for (String n : names()) {
      String type = switch (n) {
        case "TableLeader", "TableStatus" -> String.class.getName();
        case "TableVersion" -> Integer.class.getName();
        default -> Long.class.getName();
      };
      attrs.add(new MBeanAttributeInfo(n, type, n, true, false, false));
    }
    return new MBeanInfo(getClass().getName(), "yarn-advisor RM plug-in",
        attrs.toArray(new MBeanAttributeInfo[0]), null, null, null);
  }
}
