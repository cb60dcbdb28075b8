/*
 * yarn-advisor's MapReduce AM simulator for SLS: SLS's own, with its last step
 * in the order a real AM follows (unregister, then the AM container ends).
 *
 * hadoop-sls 3.4.2's AMSimulator.lastStep() releases the AM container on its
 * simulated NM (NMSimulator.cleanupContainer) before it unregisters
 * (ApplicationMasterService.finishApplicationMaster). When that NM heartbeats
 * in between, the RM sees the AM container exit while the attempt is still
 * RUNNING and fails the app ("AM Container ... exited with exitCode: 0";
 * SLS submits with maxAppAttempts 1). On this 2-core machine that hit 1 of
 * 1,857 apps on a quiet run and 3 of ~1,200 under load.
 *
 * This class lives in SLS's package to reach AMSimulator's package-private
 * amContainer field. It hides the AM container from the base lastStep()
 * (which then skips the early release), lets it unregister, puts the field
 * back (MRAMSimulator.processResponseQueue still reads it) and only then
 * releases the container. slsrun.py compiles it with SlsLauncher.java and
 * names it as the "mapreduce" AM type (yarn.sls.am.type.mapreduce).
 */
package org.apache.hadoop.yarn.sls.appmaster;

import org.apache.hadoop.yarn.api.records.Container;

public class UnregisterFirstMRAMSimulator extends MRAMSimulator {
  private boolean released;

  @Override
  public void lastStep() throws Exception {
    Container am = amContainer;
    amContainer = null;
    try {
      super.lastStep();
    } finally {
      amContainer = am;
    }
    if (am != null && !released) {
      released = true;
      se.getNmMap().get(am.getNodeId()).cleanupContainer(am.getId());
    }
  }
}
