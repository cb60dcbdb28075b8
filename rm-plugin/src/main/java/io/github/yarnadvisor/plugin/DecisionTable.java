package io.github.yarnadvisor.plugin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * One published decision table, parsed and immutable: the in-memory copy the scheduler thread
 * reads. The wire format is docs/decision-table.md (version 1); {@link #parse} reads it as
 * strictly as the advisor's own reader (advisor/model/decision_table.py): unknown keys, wrong
 * types, unknown reasons and any other version are refused, so both sides agree on every table.
 */
public final class DecisionTable {
  public static final String FORMAT = "yarn-advisor-decision-table";
  public static final int VERSION = 1;
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Skip the request on every node, or only while the app asks at one of these priorities. */
  public record Hold(Reason reason, int[] whilePending) {}

  /** Admit the request only on these nodes. */
  public record Allow(Set<String> nodes, Reason reason) {}

  /** Skip a node where the app already runs this many containers (its AM not counted). */
  public record Cap(int maxPerNode, Reason reason) {}

  /** Admit only where the request has a node-local ask, or on the excepted nodes. */
  public record LocalOnly(Reason reason, Set<String> exceptNodes, Integer maxSkips) {}

  /** Skip a node whose unallocated resource the request fits badly (cosine under the minimum). */
  public record Fit(double minAlignment, Reason reason, Integer maxSkips) {}

  /** The decisions on one request priority of an app ({@code priority} null: on every one). */
  public record RequestDecision(
      Integer priority,
      Hold hold,
      Allow allow,
      Map<String, Reason> veto,
      Cap cap,
      LocalOnly localOnly,
      Fit fit) {
    public boolean appliesTo(int p) {
      return priority == null || priority == p;
    }
  }

  /** Which applications a rule selects; every given attribute must match. */
  public record Match(String applicationType, String queue, String tag) {
    /** Whether an application with these attributes matches (type and tag case-insensitively,
     * queue by its last path segment). */
    public boolean matches(String appType, String appQueue, Set<String> tags) {
      if (applicationType != null
          && (appType == null || !applicationType.equalsIgnoreCase(appType))) {
        return false;
      }
      if (queue != null && (appQueue == null || !leaf(queue).equals(leaf(appQueue)))) {
        return false;
      }
      if (tag != null) {
        if (tags == null) {
          return false;
        }
        for (String t : tags) {
          if (tag.equalsIgnoreCase(t)) {
            return true;
          }
        }
        return false;
      }
      return true;
    }

    private static String leaf(String q) {
      return q.substring(q.lastIndexOf('.') + 1);
    }
  }

  /** Request decisions for every application that matches. */
  public record Rule(Match match, List<RequestDecision> requests) {}

  /** Who may use a node's lent room: one request priority of an app (null: every one). */
  public record Borrower(String app, Integer priority) {}

  /** A node's lent room and who may be placed into it. */
  public record Lending(long memoryMb, long vcores, List<Borrower> borrowers) {
    public boolean lends() {
      return memoryMb > 0 || vcores > 0;
    }

    public boolean admits(String app, int p) {
      for (Borrower b : borrowers) {
        if (b.app().equals(app) && (b.priority() == null || b.priority() == p)) {
          return true;
        }
      }
      return false;
    }
  }

  /** One application's rank (null: unranked) and request decisions. */
  public record AppDecisions(Integer rank, List<RequestDecision> requests) {}

  private final long seq;
  private final long generatedAtMs;
  private final long ttlMs;
  private final String leader;
  private final boolean unrankedFirst;
  private final Map<String, AppDecisions> apps;
  private final List<Rule> rules;
  private final Map<String, Lending> nodes;

  DecisionTable(long seq, long generatedAtMs, long ttlMs, String leader, boolean unrankedFirst,
      Map<String, AppDecisions> apps, List<Rule> rules, Map<String, Lending> nodes) {
    this.seq = seq;
    this.generatedAtMs = generatedAtMs;
    this.ttlMs = ttlMs;
    this.leader = leader;
    this.unrankedFirst = unrankedFirst;
    this.apps = Collections.unmodifiableMap(apps);
    this.rules = Collections.unmodifiableList(rules);
    this.nodes = Collections.unmodifiableMap(nodes);
  }

  public long seq() {
    return seq;
  }

  public int version() {
    return VERSION;
  }

  public long generatedAtMs() {
    return generatedAtMs;
  }

  public long ttlMs() {
    return ttlMs;
  }

  public String leader() {
    return leader;
  }

  public boolean unrankedFirst() {
    return unrankedFirst;
  }

  public Map<String, AppDecisions> apps() {
    return apps;
  }

  public List<Rule> rules() {
    return rules;
  }

  public Map<String, Lending> nodes() {
    return nodes;
  }

  /** True once more than {@code ttl_ms} has passed since {@code generated_at_ms}. */
  public boolean expired(long nowMs) {
    return nowMs - generatedAtMs > ttlMs;
  }

  /** Parse the wire form (UTF-8 JSON text); TableException naming the first problem's path. */
  public static DecisionTable parse(byte[] body) throws TableException {
    JsonNode root;
    try {
      root = JSON.readTree(body);
    } catch (IOException | RuntimeException e) {
      throw new TableException("$: not JSON: " + e.getMessage());
    }
    if (root == null || root.isMissingNode()) {
      throw new TableException("$: not JSON: empty");
    }
    return read(root);
  }

  public static DecisionTable parse(String body) throws TableException {
    return parse(body.getBytes(java.nio.charset.StandardCharsets.UTF_8));
  }

  private static DecisionTable read(JsonNode top) throws TableException {
    obj(top, "$", Set.of("format", "version", "seq", "generated_at_ms", "ttl_ms", "leader"),
        Set.of("unranked", "apps", "rules", "nodes"));
    JsonNode format = top.get("format");
    if (!format.isTextual() || !FORMAT.equals(format.asText())) {
      throw new TableException("$.format: expected '" + FORMAT + "', got " + format);
    }
    long version = int64(top.get("version"), "$.version");
    if (version != VERSION) {
      throw new TableException("$.version: unknown version " + version
          + " (this reader knows " + VERSION + ")");
    }
    Map<String, AppDecisions> apps = new HashMap<>();
    JsonNode appsNode = top.has("apps") ? top.get("apps") : JSON.createObjectNode();
    obj(appsNode, "$.apps", null, null);
    for (Iterator<Map.Entry<String, JsonNode>> it = appsNode.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      String path = "$.apps." + e.getKey();
      key(e.getKey(), "$.apps");
      JsonNode a = e.getValue();
      obj(a, path, Set.of("requests"), Set.of("rank"));
      Integer rank = optInt(a.get("rank"), path + ".rank");
      apps.put(e.getKey(), new AppDecisions(rank, requests(a.get("requests"), path + ".requests")));
    }
    List<Rule> rules = new ArrayList<>();
    JsonNode rulesNode = top.has("rules") ? top.get("rules") : JSON.createArrayNode();
    list(rulesNode, "$.rules");
    for (int i = 0; i < rulesNode.size(); i++) {
      rules.add(rule(rulesNode.get(i), "$.rules[" + i + "]"));
    }
    Map<String, Lending> nodes = new HashMap<>();
    JsonNode nodesNode = top.has("nodes") ? top.get("nodes") : JSON.createObjectNode();
    obj(nodesNode, "$.nodes", null, null);
    for (Iterator<Map.Entry<String, JsonNode>> it = nodesNode.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      key(e.getKey(), "$.nodes");
      nodes.put(e.getKey(), lending(e.getValue(), "$.nodes." + e.getKey()));
    }
    boolean unrankedFirst = false;
    if (top.has("unranked")) {
      JsonNode u = top.get("unranked");
      String v = u.isTextual() ? u.asText() : null;
      if (!"first".equals(v) && !"last".equals(v)) {
        throw new TableException("$.unranked: unknown value " + u + " (one of first, last)");
      }
      unrankedFirst = "first".equals(v);
    }
    long ttl = int64(top.get("ttl_ms"), "$.ttl_ms");
    if (ttl <= 0) {
      throw new TableException("$.ttl_ms: must be positive, got " + ttl);
    }
    return new DecisionTable(int64(top.get("seq"), "$.seq"),
        int64(top.get("generated_at_ms"), "$.generated_at_ms"), ttl,
        str(top.get("leader"), "$.leader"), unrankedFirst, apps, rules, nodes);
  }

  private static List<RequestDecision> requests(JsonNode v, String path) throws TableException {
    list(v, path);
    List<RequestDecision> out = new ArrayList<>(v.size());
    for (int i = 0; i < v.size(); i++) {
      out.add(request(v.get(i), path + "[" + i + "]"));
    }
    return Collections.unmodifiableList(out);
  }

  private static RequestDecision request(JsonNode o, String path) throws TableException {
    obj(o, path, Set.of("priority"), Set.of("hold", "allow", "veto", "cap", "local_only", "fit"));
    Hold hold = null;
    Allow allow = null;
    Cap cap = null;
    LocalOnly local = null;
    Fit fit = null;
    if (o.has("hold")) {
      JsonNode h = o.get("hold");
      obj(h, path + ".hold", Set.of("reason"), Set.of("while_pending"));
      int[] pending = new int[0];
      if (h.has("while_pending")) {
        JsonNode wp = h.get("while_pending");
        list(wp, path + ".hold.while_pending");
        pending = new int[wp.size()];
        for (int i = 0; i < wp.size(); i++) {
          pending[i] = int32(wp.get(i), path + ".hold.while_pending[" + i + "]");
        }
      }
      hold = new Hold(reason(h.get("reason"), path + ".hold.reason"), pending);
    }
    if (o.has("allow")) {
      JsonNode a = o.get("allow");
      obj(a, path + ".allow", Set.of("nodes", "reason"), Set.of());
      allow = new Allow(nodeSet(a.get("nodes"), path + ".allow.nodes"),
          reason(a.get("reason"), path + ".allow.reason"));
    }
    Map<String, Reason> veto = new HashMap<>();
    if (o.has("veto")) {
      JsonNode vn = o.get("veto");
      obj(vn, path + ".veto", null, null);
      for (Iterator<Map.Entry<String, JsonNode>> it = vn.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        key(e.getKey(), path + ".veto");
        veto.put(e.getKey(), reason(e.getValue(), path + ".veto." + e.getKey()));
      }
    }
    if (o.has("cap")) {
      JsonNode c = o.get("cap");
      obj(c, path + ".cap", Set.of("max_per_node", "reason"), Set.of());
      int n = int32(c.get("max_per_node"), path + ".cap.max_per_node");
      if (n < 0) {
        throw new TableException(path + ".cap.max_per_node: must be >= 0, got " + n);
      }
      cap = new Cap(n, reason(c.get("reason"), path + ".cap.reason"));
    }
    if (o.has("local_only")) {
      JsonNode lo = o.get("local_only");
      String p = path + ".local_only";
      obj(lo, p, Set.of("reason"), Set.of("except_nodes", "max_skips"));
      Set<String> except = lo.has("except_nodes")
          ? nodeSet(lo.get("except_nodes"), p + ".except_nodes") : Set.of();
      local = new LocalOnly(reason(lo.get("reason"), p + ".reason"), except,
          skips(lo.get("max_skips"), p + ".max_skips"));
    }
    if (o.has("fit")) {
      JsonNode f = o.get("fit");
      String p = path + ".fit";
      obj(f, p, Set.of("min_alignment", "reason"), Set.of("max_skips"));
      JsonNode a = f.get("min_alignment");
      if (!a.isNumber() || !(a.asDouble() > 0 && a.asDouble() <= 1)) {
        throw new TableException(p + ".min_alignment: a number in (0, 1], got " + a);
      }
      fit = new Fit(a.asDouble(), reason(f.get("reason"), p + ".reason"),
          skips(f.get("max_skips"), p + ".max_skips"));
    }
    return new RequestDecision(optInt(o.get("priority"), path + ".priority"), hold, allow,
        Collections.unmodifiableMap(veto), cap, local, fit);
  }

  private static Rule rule(JsonNode o, String path) throws TableException {
    obj(o, path, Set.of("match", "requests"), Set.of());
    JsonNode m = o.get("match");
    obj(m, path + ".match", Set.of(), Set.of("application_type", "queue", "tag"));
    Match match = new Match(optStr(m.get("application_type"), path + ".match.application_type"),
        optStr(m.get("queue"), path + ".match.queue"), optStr(m.get("tag"), path + ".match.tag"));
    if (match.applicationType() == null && match.queue() == null && match.tag() == null) {
      throw new TableException(path + ".match: names no attribute (a rule must select apps)");
    }
    return new Rule(match, requests(o.get("requests"), path + ".requests"));
  }

  private static Lending lending(JsonNode o, String path) throws TableException {
    obj(o, path, Set.of("memory_mb", "vcores", "borrowers"), Set.of());
    JsonNode bs = o.get("borrowers");
    list(bs, path + ".borrowers");
    List<Borrower> borrowers = new ArrayList<>();
    for (int i = 0; i < bs.size(); i++) {
      String p = path + ".borrowers[" + i + "]";
      JsonNode b = bs.get(i);
      obj(b, p, Set.of("app", "priority"), Set.of());
      borrowers.add(new Borrower(str(b.get("app"), p + ".app"),
          optInt(b.get("priority"), p + ".priority")));
    }
    long mem = int64(o.get("memory_mb"), path + ".memory_mb");
    long vc = int64(o.get("vcores"), path + ".vcores");
    if (mem < 0 || vc < 0) {
      throw new TableException(path + ": lent room must be >= 0");
    }
    return new Lending(mem, vc, Collections.unmodifiableList(borrowers));
  }

  // --- typed reads that name the path of the first problem ---------------------------------
  private static void obj(JsonNode v, String path, Set<String> required, Set<String> optional)
      throws TableException {
    if (v == null || !v.isObject()) {
      throw new TableException(path + ": expected an object, got " + kind(v));
    }
    if (required == null && optional == null) {
      return;
    }
    Set<String> need = required == null ? Set.of() : required;
    for (String k : new java.util.TreeSet<>(need)) {
      if (!v.has(k)) {
        throw new TableException(path + ": missing key '" + k + "'");
      }
    }
    Set<String> allowed = new HashSet<>(need);
    if (optional != null) {
      allowed.addAll(optional);
    }
    for (Iterator<String> it = v.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      if (!allowed.contains(k)) {
        throw new TableException(path + ": unknown key '" + k + "'");
      }
    }
  }

  private static void list(JsonNode v, String path) throws TableException {
    if (v == null || !v.isArray()) {
      throw new TableException(path + ": expected a list, got " + kind(v));
    }
  }

  private static void key(String k, String path) throws TableException {
    if (k.isEmpty()) {
      throw new TableException(path + ": empty key");
    }
  }

  private static long int64(JsonNode v, String path) throws TableException {
    if (v == null || !v.isIntegralNumber() || !v.canConvertToLong()) {
      throw new TableException(path + ": expected an integer, got " + kind(v));
    }
    return v.asLong();
  }

  private static int int32(JsonNode v, String path) throws TableException {
    if (v == null || !v.isIntegralNumber() || !v.canConvertToInt()) {
      throw new TableException(path + ": expected an integer, got " + kind(v));
    }
    return v.asInt();
  }

  private static Integer optInt(JsonNode v, String path) throws TableException {
    return v == null || v.isNull() ? null : int32(v, path);
  }

  private static Integer skips(JsonNode v, String path) throws TableException {
    Integer n = optInt(v, path);
    if (n != null && n < 0) {
      throw new TableException(path + ": must be >= 0, got " + n);
    }
    return n;
  }

  private static String str(JsonNode v, String path) throws TableException {
    if (v == null || !v.isTextual() || v.asText().isEmpty()) {
      throw new TableException(path + ": expected a non-empty string");
    }
    return v.asText();
  }

  private static String optStr(JsonNode v, String path) throws TableException {
    return v == null || v.isNull() ? null : str(v, path);
  }

  private static Reason reason(JsonNode v, String path) throws TableException {
    Reason r = v != null && v.isTextual() ? Reason.of(v.asText()) : null;
    if (r == null) {
      throw new TableException(path + ": unknown value " + v + " (one of "
          + String.join(", ", reasonNames()) + ")");
    }
    return r;
  }

  private static List<String> reasonNames() {
    List<String> names = new ArrayList<>();
    for (Reason r : Reason.values()) {
      names.add(r.wire());
    }
    return names;
  }

  private static Set<String> nodeSet(JsonNode v, String path) throws TableException {
    list(v, path);
    Set<String> out = new HashSet<>();
    for (int i = 0; i < v.size(); i++) {
      out.add(str(v.get(i), path + "[" + i + "]"));
    }
    return Collections.unmodifiableSet(out);
  }

  private static String kind(JsonNode v) {
    return v == null ? "nothing" : v.getNodeType().toString().toLowerCase(Locale.ROOT);
  }
}
