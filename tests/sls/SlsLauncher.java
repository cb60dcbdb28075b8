/*
 * yarn-advisor's launcher for Hadoop's Scheduler Load Simulator (SLS).
 *
 * slsrun.py compiles this one file with javac against the Maven classpath of
 * pom.xml and starts it instead of SLSRunner.main. It works around what the
 * hadoop-sls 3.4.2 sources show would otherwise break the simulation:
 *
 *  1. Every Rumen job starts at time 0. AMRunner.startAMFromRumenTrace passes
 *     baselineTimeMS = 0 for every job, so AMDefinitionRumen.Builder.build()
 *     takes each job's own submit time as the baseline, and
 *     AMDefinitionFactory.adjustTimeValuesToBaselineTime() sets
 *     amDef.jobStartTime = submit - submit = 0. We put an AMRunner subclass in
 *     SLSRunner's (private) amRunner field whose startAM() lets SLS build the
 *     AMs, then re-inits each AM's task clock (TaskRunner.Task.init, public)
 *     with the job's submission time from the trace's manifest, before
 *     SLSRunner.start() starts the clock.
 *  2. The first simulated node gets port 0 (NodeInfo.NODE_ID starts at 0).
 *     With node labels enabled, RMServerUtils.getApplicableNodeCountForAM then
 *     removes that "wildcard" node from the unmodifiable set of
 *     CommonNodeLabelsManager.getNodesWithoutALabel() and every app attempt
 *     fails with UnsupportedOperationException. We start NODE_ID at 1.
 *  3. A race kills the RM: AMSimulator.firstStep() submits the app and only
 *     then puts it in AMRunner's appId -> AM map. When the scheduler places
 *     the AM container first (a fast RM, a slow AM thread), MockAMLauncher
 *     finds no AM for the LAUNCH event, throws YarnRuntimeException in the
 *     RM's dispatcher, and the RM shuts down ("Didn't find any AMSimulator
 *     for applicationId=..."). Our AMRunner's getAMSimulator() falls back
 *     to the AM whose application id is already set (submitApp sets it
 *     before it submits).
 *  4. TaskRunner.Task.run() hands any exception of a simulated AM or NM step to
 *     Thread.getDefaultUncaughtExceptionHandler(), null unless set: the step
 *     then dies of a NullPointerException instead of being logged (happens
 *     when the RM ends an app the simulator still drives). We install YARN's
 *     own handler (logs exceptions, halts the JVM on an Error).
 *  5. SLS submits apps without a name (AMSimulator.submitApp), so nothing the
 *     RM serves says which trace job an application is. We write the mapping
 *     (trace job id -> application id) to apps.tsv as AMs submit.
 *  6. SLSRunner.main exits the JVM when the last app finishes (only with SLS's
 *     own metrics on); we keep the RM up until SIGTERM so that every finished
 *     app can be read afterwards.
 *
 * (SLS's AM releases its container before it unregisters, which fails some
 * apps: UnregisterFirstMRAMSimulator.java, beside this file, fixes that.)
 *
 * Usage: SlsLauncher OUTDIR MANIFEST SLSRunner-args...
 * MANIFEST: one line per job, "job id TAB submission ms after trace start ...".
 * Writes OUTDIR/ready.json once every simulated node is RUNNING and the trace
 * clock has started (trace time 0 = trace_zero_ms), then OUTDIR/apps.tsv.
 */

import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.yarn.YarnUncaughtExceptionHandler;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.sls.AMRunner;
import org.apache.hadoop.yarn.sls.SLSRunner;
import org.apache.hadoop.yarn.sls.appmaster.AMSimulator;
import org.apache.hadoop.yarn.sls.conf.SLSConfiguration;
import org.apache.hadoop.yarn.sls.nodemanager.NodeInfo;
import org.apache.hadoop.yarn.sls.scheduler.TaskRunner;

public final class SlsLauncher {
  private SlsLauncher() {
  }

  public static void main(String[] argv) {
    try {
      run(argv);
    } catch (Throwable t) {  // the RM's threads would keep a failed start-up alive
      System.err.println("SlsLauncher: failed");
      t.printStackTrace();
      System.exit(1);
    }
  }

  private static void run(String[] argv) throws Exception {
    Thread.setDefaultUncaughtExceptionHandler(new YarnUncaughtExceptionHandler());
    Path out = Paths.get(argv[0]);
    Map<String, Long> starts = readStarts(Paths.get(argv[1]));
    String[] slsArgs = new String[argv.length - 2];
    System.arraycopy(argv, 2, slsArgs, 0, slsArgs.length);
    Files.createDirectories(out);

    Field nodeId = NodeInfo.class.getDeclaredField("NODE_ID");
    nodeId.setAccessible(true);
    nodeId.setInt(null, 1);

    SLSRunner sls = new SLSRunner(new Configuration());
    Field runnerField = SLSRunner.class.getDeclaredField("runner");
    runnerField.setAccessible(true);
    TimedAMRunner amRunner = new TimedAMRunner(
        (TaskRunner) runnerField.get(null), sls, starts);
    amRunner.init(sls.getConf());
    Field amRunnerField = SLSRunner.class.getDeclaredField("amRunner");
    amRunnerField.setAccessible(true);
    amRunnerField.set(sls, amRunner);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        sls.stop();
      } catch (Exception e) {
        System.err.println("SlsLauncher: stop failed: " + e);
      } finally {
        stopped.countDown();
      }
    }));

    sls.run(slsArgs);  // returns once all simulated NMs are RUNNING and the clock started
    long traceZero = System.currentTimeMillis();
    Map<String, AMSimulator> amMap = amRunner.getAmMap();
    writeAtomically(out.resolve("ready.json"), String.format(
        "{\"trace_zero_ms\": %d, \"nodes\": %d, \"apps_in_trace\": %d}%n",
        traceZero, sls.getNmMap().size(), amMap.size()));
    System.out.println("SLS_READY " + traceZero);
    System.out.flush();

    Path appsFile = out.resolve("apps.tsv");
    Files.write(appsFile, new byte[0]);
    Set<String> written = new HashSet<>();
    while (!stopped.await(1, java.util.concurrent.TimeUnit.SECONDS)) {
      StringBuilder rows = new StringBuilder();
      for (Map.Entry<String, AMSimulator> e : amMap.entrySet()) {
        ApplicationId appId = e.getValue().getApplicationId();
        if (appId != null && written.add(e.getKey())) {
          rows.append(e.getKey()).append('\t').append(appId).append('\n');
        }
      }
      if (rows.length() > 0) {
        Files.write(appsFile, rows.toString().getBytes(StandardCharsets.UTF_8),
            StandardOpenOption.APPEND);
      }
    }
  }

  /** SLS's AMRunner, with each AM started at its job's submission time. */
  static final class TimedAMRunner extends AMRunner {
    private final Map<String, Long> starts;
    private final long heartbeatMs;

    TimedAMRunner(TaskRunner runner, SLSRunner sls, Map<String, Long> starts) {
      super(runner, sls);
      this.starts = starts;
      this.heartbeatMs = sls.getConf().getInt(SLSConfiguration.AM_HEARTBEAT_INTERVAL_MS,
          SLSConfiguration.AM_HEARTBEAT_INTERVAL_MS_DEFAULT);
    }

    @Override
    public void startAM() throws org.apache.hadoop.yarn.exceptions.YarnException, IOException {
      super.startAM();
      for (Map.Entry<String, AMSimulator> e : getAmMap().entrySet()) {
        Long start = starts.get(e.getKey());
        if (start == null) {
          throw new IOException("job " + e.getKey() + " is not in the manifest");
        }
        // as AMSimulator.init does, with the real start
        e.getValue().init(start, start + 1000000L * heartbeatMs, heartbeatMs);
      }
    }

    @Override
    public AMSimulator getAMSimulator(ApplicationId appId) {
      AMSimulator am = super.getAMSimulator(appId);
      if (am != null) {
        return am;
      }
      for (AMSimulator candidate : getAmMap().values()) {
        if (appId.equals(candidate.getApplicationId())) {
          return candidate;
        }
      }
      return null;
    }
  }

  private static Map<String, Long> readStarts(Path manifest) throws IOException {
    Map<String, Long> starts = new java.util.HashMap<>();
    for (String line : Files.readAllLines(manifest, StandardCharsets.UTF_8)) {
      String[] cols = line.split("\t");
      if (cols.length >= 2) {
        starts.put(cols[0], Long.parseLong(cols[1]));
      }
    }
    return starts;
  }

  private static void writeAtomically(Path file, String text) throws IOException {
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    Files.write(tmp, text.getBytes(StandardCharsets.UTF_8));
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }
}
