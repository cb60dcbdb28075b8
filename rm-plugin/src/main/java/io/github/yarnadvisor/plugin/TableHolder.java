package io.github.yarnadvisor.plugin;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.hadoop.conf.Configuration;

/**
 * The in-memory copy of the advisor's latest decision table and the daemon thread that keeps it
 * fresh: it polls the advisor's endpoints (or its file) every {@code poll-ms}, parses the body
 * and swaps one reference. The scheduler thread only reads that reference ({@link #table()}),
 * so it never waits on I/O. Any failed poll (unreachable, a status other than 200/304, a body
 * that does not parse, a missing file, two advisors both serving a table) leaves no table:
 * YARN's default until a poll succeeds (docs/decision-table.md).
 */
public final class TableHolder implements AutoCloseable {
  public static final String URL_KEY = "yarn.advisor.plugin.table.url";
  public static final String FILE_KEY = "yarn.advisor.plugin.table.file";
  public static final String POLL_KEY = "yarn.advisor.plugin.poll-ms";
  public static final String TIMEOUT_KEY = "yarn.advisor.plugin.timeout-ms";
  public static final long DEFAULT_POLL_MS = 1000;
  public static final int DEFAULT_TIMEOUT_MS = 500;
  static final int MAX_BODY = 64 << 20;

  /** The table the scheduler applies (null: none) and the last poll's outcome. */
  public record State(DecisionTable table, String status, long polledAtMs) {}

  /** One endpoint's last answer, for If-None-Match. */
  private static final class Endpoint {
    final URI uri;
    String etag;
    DecisionTable last;

    Endpoint(URI uri) {
      this.uri = uri;
    }
  }

  private static final Map<String, TableHolder> SHARED = new HashMap<>();

  private final List<Endpoint> endpoints = new ArrayList<>();
  private final Path file;
  private final long pollMs;
  private final int timeoutMs;
  private final AtomicReference<State> state =
      new AtomicReference<>(new State(null, "starting", 0));
  private final PluginMetrics metrics;
  private Object fileStamp;
  private DecisionTable fileTable;
  private ScheduledExecutorService poller;

  public TableHolder(List<String> urls, String file, long pollMs, int timeoutMs,
      PluginMetrics metrics) {
    for (String u : urls) {
      endpoints.add(new Endpoint(URI.create(u)));
    }
    this.file = file == null || file.isEmpty() ? null : Paths.get(file);
    this.pollMs = Math.max(50, pollMs);
    this.timeoutMs = Math.max(1, timeoutMs);
    this.metrics = metrics;
  }

  /**
   * The one holder of this RM for its configuration (started on first use), shared by every
   * allocator instance; null when neither a URL nor a file is configured.
   */
  public static TableHolder shared(Configuration conf) {
    List<String> urls = new ArrayList<>();
    for (String u : conf.getTrimmedStrings(URL_KEY)) {
      if (!u.isEmpty()) {
        urls.add(u);
      }
    }
    String file = conf.getTrimmed(FILE_KEY, "");
    if (urls.isEmpty() && file.isEmpty()) {
      return null;
    }
    long poll = conf.getLong(POLL_KEY, DEFAULT_POLL_MS);
    int timeout = conf.getInt(TIMEOUT_KEY, DEFAULT_TIMEOUT_MS);
    String key = urls + "|" + file + "|" + poll + "|" + timeout;
    synchronized (SHARED) {
      TableHolder h = SHARED.get(key);
      if (h == null) {
        h = new TableHolder(urls, file, poll, timeout, PluginMetrics.get());
        PluginMetrics.get().watch(h);
        h.start();
        SHARED.put(key, h);
      }
      return h;
    }
  }

  /** A holder that never polls and holds this table (the bench and tests). */
  static TableHolder holding(DecisionTable t) {
    TableHolder h = new TableHolder(List.of(), null, DEFAULT_POLL_MS, DEFAULT_TIMEOUT_MS, null);
    h.state.set(new State(t, t == null ? "none" : "ok", System.currentTimeMillis()));
    return h;
  }

  /** The table to apply now, or null (the scheduler thread's only read: one volatile load). */
  public DecisionTable table() {
    return state.get().table();
  }

  public State state() {
    return state.get();
  }

  /** Start the poller thread (a daemon: it never keeps the RM from exiting). */
  public synchronized void start() {
    if (poller != null) {
      return;
    }
    poller = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "yarn-advisor-plugin-poller");
      t.setDaemon(true);
      return t;
    });
    poller.scheduleWithFixedDelay(this::pollQuietly, 0, pollMs, TimeUnit.MILLISECONDS);
  }

  @Override
  public synchronized void close() {
    if (poller != null) {
      poller.shutdownNow();
      poller = null;
    }
  }

  private void pollQuietly() {
    try {
      pollOnce();
    } catch (Throwable t) {
      publish(null, "error: " + t);
    }
  }

  /** One poll: read every endpoint (or the file) and swap the table (public for tests). */
  public synchronized void pollOnce() {
    if (!endpoints.isEmpty()) {
      DecisionTable found = null;
      int tables = 0;
      String status = null;
      for (Endpoint e : endpoints) {
        String s = fetch(e);
        if (e.last != null) {
          tables++;
          found = e.last;
        } else if (status == null) {
          status = s;
        }
      }
      if (tables > 1) {
        publish(null, "two_tables");
      } else {
        publish(found, found != null ? "ok" : status);
      }
    } else {
      readFile();
    }
  }

  private void publish(DecisionTable t, String status) {
    state.set(new State(t, status, System.currentTimeMillis()));
    if (metrics != null) {
      metrics.polled(t != null);
    }
  }

  /** Poll one endpoint; leaves its table in {@code e.last} (null: none) and returns why. */
  private String fetch(Endpoint e) {
    HttpURLConnection c = null;
    try {
      c = (HttpURLConnection) e.uri.toURL().openConnection();
      c.setConnectTimeout(timeoutMs);
      c.setReadTimeout(timeoutMs);
      c.setUseCaches(false);
      c.setInstanceFollowRedirects(false);
      if (e.etag != null && e.last != null) {
        c.setRequestProperty("If-None-Match", e.etag);
      }
      int code = c.getResponseCode();
      if (code == 304 && e.last != null) {
        return "ok";
      }
      if (code == 200) {
        byte[] body;
        try (InputStream in = c.getInputStream()) {
          body = readAll(in);
        }
        try {
          e.last = DecisionTable.parse(body);
          e.etag = c.getHeaderField("ETag");
          return "ok";
        } catch (TableException bad) {
          e.last = null;
          e.etag = null;
          return "parse_error: " + bad.getMessage();
        }
      }
      e.last = null;
      e.etag = null;
      return code == 404 ? "withdrawn" : "http_" + code;
    } catch (IOException | RuntimeException ex) {
      e.last = null;
      e.etag = null;
      return "unreachable: " + ex.getClass().getSimpleName();
    } finally {
      if (c != null) {
        c.disconnect();
      }
    }
  }

  private void readFile() {
    try {
      BasicFileAttributes at = Files.readAttributes(file, BasicFileAttributes.class);
      Object stamp = List.of(at.lastModifiedTime(), at.size(), String.valueOf(at.fileKey()));
      if (!stamp.equals(fileStamp) || fileTable == null) {
        fileStamp = null;
        fileTable = null;
        fileTable = DecisionTable.parse(Files.readAllBytes(file));
        fileStamp = stamp;
      }
      publish(fileTable, "ok");
    } catch (NoSuchFileException missing) {
      publish(null, "file_missing");
    } catch (TableException bad) {
      publish(null, "parse_error: " + bad.getMessage());
    } catch (IOException | RuntimeException ex) {
      publish(null, "unreadable: " + ex.getClass().getSimpleName());
    }
  }

  private static byte[] readAll(InputStream in) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] buf = new byte[8192];
    int n;
    while ((n = in.read(buf)) > 0) {
      if (out.size() + n > MAX_BODY) {
        throw new IOException("table larger than " + MAX_BODY + " bytes");
      }
      out.write(buf, 0, n);
    }
    return out.toByteArray();
  }
}
