package io.github.yarnadvisor.plugin;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.After;
import org.junit.Test;

/** The poller: what each answer of the advisor leaves for the scheduler thread, which never waits. */
public class TableHolderTest {
  /** An advisor endpoint whose answer the test sets: status, body, ETag, and a delay. */
  static final class Advisor implements AutoCloseable {
    final HttpServer server;
    final AtomicReference<String> body = new AtomicReference<>();
    final AtomicInteger status = new AtomicInteger(200);
    final AtomicInteger conditional = new AtomicInteger();
    final AtomicInteger requests = new AtomicInteger();
    volatile long delayMs;
    volatile String etag = "\"a-42\"";

    Advisor() throws IOException {
      server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
      server.createContext("/decision-table", this::handle);
      server.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
      server.start();
    }

    String url() {
      return "http://127.0.0.1:" + server.getAddress().getPort() + "/decision-table";
    }

    private void handle(HttpExchange ex) throws IOException {
      requests.incrementAndGet();
      try {
        Thread.sleep(delayMs);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      String inm = ex.getRequestHeaders().getFirst("If-None-Match");
      if (inm != null && inm.equals(etag) && status.get() == 200) {
        conditional.incrementAndGet();
        ex.sendResponseHeaders(304, -1);
        ex.close();
        return;
      }
      byte[] b = (status.get() == 200 ? body.get()
          : "{\"error\":\"no table\",\"reason\":\"dry_run\"}").getBytes(StandardCharsets.UTF_8);
      if (status.get() == 200) {
        ex.getResponseHeaders().add("ETag", etag);
      }
      ex.sendResponseHeaders(status.get(), b.length);
      try (OutputStream out = ex.getResponseBody()) {
        out.write(b);
      }
    }

    @Override
    public void close() {
      server.stop(0);
    }
  }

  private TableHolder holder;

  @After
  public void stop() {
    if (holder != null) {
      holder.close();
    }
  }

  static String table(long seq) throws Exception {
    String v = new String(DecisionTableTest.valid(), StandardCharsets.UTF_8);
    return v.replace("\"seq\": 42", "\"seq\": " + seq);
  }

  private TableHolder http(int timeoutMs, String... urls) {
    holder = new TableHolder(List.of(urls), null, 1000, timeoutMs, new PluginMetrics());
    return holder;
  }

  @Test
  public void takesTheTableThenRevalidatesWithItsEtag() throws Exception {
    try (Advisor adv = new Advisor()) {
      adv.body.set(table(42));
      TableHolder h = http(2000, adv.url());
      assertNull(h.table());
      h.pollOnce();
      assertEquals(42, h.table().seq());
      DecisionTable first = h.table();
      h.pollOnce();
      assertEquals(1, adv.conditional.get());
      assertTrue("a 304 keeps the very same copy", first == h.table());
      adv.etag = "\"a-43\"";
      adv.body.set(table(43));
      h.pollOnce();
      assertEquals(43, h.table().seq());
    }
  }

  @Test
  public void aWithdrawnTableIsNoTableAtOnce() throws Exception {
    try (Advisor adv = new Advisor()) {
      adv.body.set(table(42));
      TableHolder h = http(2000, adv.url());
      h.pollOnce();
      assertNotNull(h.table());
      adv.status.set(404);
      h.pollOnce();
      assertNull(h.table());
      assertEquals("withdrawn", h.state().status());
      adv.status.set(500);
      h.pollOnce();
      assertEquals("http_500", h.state().status());
    }
  }

  @Test
  public void garbageDropsThePreviousTable() throws Exception {
    try (Advisor adv = new Advisor()) {
      adv.body.set(table(42));
      TableHolder h = http(2000, adv.url());
      h.pollOnce();
      adv.etag = "\"a-43\"";
      adv.body.set("{\"format\": \"yarn-advisor-decision-table\", \"version\": 2}");
      h.pollOnce();
      assertNull(h.table());
      assertTrue(h.state().status(), h.state().status().startsWith("parse_error: $"));
      adv.body.set("<html>proxy error</html>");
      h.pollOnce();
      assertNull(h.table());
    }
  }

  @Test
  public void anUnreachableAdvisorIsNoTable() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    TableHolder h = http(300, "http://127.0.0.1:" + port + "/decision-table");
    h.pollOnce();
    assertNull(h.table());
    assertTrue(h.state().status(), h.state().status().startsWith("unreachable"));
  }

  @Test
  public void twoAdvisorsServingATableIsNone() throws Exception {
    try (Advisor a = new Advisor(); Advisor b = new Advisor()) {
      a.body.set(table(42));
      b.body.set(table(7));
      b.status.set(404); // the follower
      TableHolder h = http(2000, a.url(), b.url());
      h.pollOnce();
      assertEquals(42, h.table().seq());
      b.status.set(200); // a leader change in flight
      h.pollOnce();
      assertNull(h.table());
      assertEquals("two_tables", h.state().status());
      a.status.set(404);
      h.pollOnce();
      assertEquals(7, h.table().seq());
    }
  }

  @Test
  public void theSchedulerThreadNeverWaitsOnASlowAdvisor() throws Exception {
    try (Advisor adv = new Advisor()) {
      adv.body.set(table(42));
      TableHolder h = http(3000, adv.url());
      h.pollOnce();
      adv.etag = "\"a-43\"";
      adv.delayMs = 1500; // the next poll hangs in the advisor
      CountDownLatch polling = new CountDownLatch(1);
      Thread poller = new Thread(() -> {
        polling.countDown();
        h.pollOnce();
      });
      poller.start();
      polling.await();
      Thread.sleep(200); // the poll is inside the advisor now
      long worst = 0;
      for (int i = 0; i < 1000; i++) {
        long t0 = System.nanoTime();
        DecisionTable t = h.table();
        worst = Math.max(worst, System.nanoTime() - t0);
        assertEquals(42, t.seq());
      }
      assertTrue("a read took " + worst + " ns", worst < TimeUnit.MILLISECONDS.toNanos(50));
      assertTrue(poller.isAlive());
      poller.join();
    }
  }

  @Test
  public void aHungAdvisorTimesOutToNoTable() throws Exception {
    try (Advisor adv = new Advisor()) {
      adv.body.set(table(42));
      adv.delayMs = 3000;
      TableHolder h = http(200, adv.url());
      long t0 = System.nanoTime();
      h.pollOnce();
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
      assertNull(h.table());
      assertTrue("the poll took " + ms + " ms", ms < 2000);
    }
  }

  @Test
  public void theBackgroundPollerKeepsTheCopyFresh() throws Exception {
    try (Advisor adv = new Advisor()) {
      adv.body.set(table(42));
      holder = new TableHolder(List.of(adv.url()), null, 50, 2000, new PluginMetrics());
      holder.start();
      long deadline = System.currentTimeMillis() + 5000;
      while (holder.table() == null && System.currentTimeMillis() < deadline) {
        Thread.sleep(10);
      }
      assertEquals(42, holder.table().seq());
      adv.status.set(404);
      while (holder.table() != null && System.currentTimeMillis() < deadline) {
        Thread.sleep(10);
      }
      assertNull(holder.table());
    }
  }

  @Test
  public void theFileIsReadWhenItChangesAndMissingMeansNone() throws Exception {
    Path dir = Files.createTempDirectory("plugin-table");
    Path file = dir.resolve("table.json");
    holder = new TableHolder(List.of(), file.toString(), 1000, 500, new PluginMetrics());
    holder.pollOnce();
    assertNull(holder.table());
    assertEquals("file_missing", holder.state().status());
    Path tmp = dir.resolve("table.json.tmp");
    Files.writeString(tmp, table(42));
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
    holder.pollOnce();
    DecisionTable first = holder.table();
    assertEquals(42, first.seq());
    holder.pollOnce();
    assertTrue("an unchanged file is not parsed again", first == holder.table());
    Files.writeString(tmp, table(43));
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    holder.pollOnce();
    assertEquals(43, holder.table().seq());
    Files.writeString(file, "{");
    holder.pollOnce();
    assertNull(holder.table());
    Files.delete(file);
    holder.pollOnce();
    assertNull(holder.table());
  }
}
