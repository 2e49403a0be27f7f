package io.ferrobase.peer;

import java.io.File;
import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.ClusterMetrics;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.HRegionLocation;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.RegionLocator;
import org.apache.hadoop.hbase.master.HMaster;
import org.apache.hadoop.hbase.master.HMasterCommandLine;
import org.apache.hadoop.hbase.regionserver.HRegionServer;
import org.apache.hadoop.hbase.util.JVMClusterUtil;
import org.apache.hadoop.util.ShutdownHookManager;

/**
 * Runs a real Apache HBase standalone server, exactly as {@code bin/hbase master start} does
 * without a distributed setting: {@link HMasterCommandLine} in local mode starts an in-process
 * ZooKeeper ({@code MiniZooKeeperCluster}) and a {@code LocalHBaseCluster} of one HMaster and one
 * HRegionServer in this JVM, on the local filesystem.
 *
 * <p>Usage: {@code HBasePeer DIR [name=value ...]}. DIR holds the HBase root, the ZooKeeper data
 * and temporary files. Every {@code name=value} is an HBase setting applied after the ones below
 * (ports: {@code hbase.master.port}, {@code hbase.regionserver.port}, {@code
 * hbase.zookeeper.property.clientPort}).
 *
 * <p>{@code ferrobase.peer.regionservers=N} (default 1) runs N region servers in this JVM: the
 * first is the one {@code LocalHBaseCluster} starts on {@code hbase.regionserver.port}; the
 * others are started here, as {@code LocalHBaseCluster} starts its own (one {@code
 * HRegionServer} thread each, {@code JVMClusterUtil}), on ports the system picks, because {@code
 * HMasterCommandLine --localRegionServers=N} would start all N on the same configured port.
 *
 * <p>Compression: GZ and SNAPPY work with HBase's defaults (java.util.zip; snappy-java); LZ4 uses
 * Hadoop's codec over lz4-java (on the classpath); ZSTD is set to HBase's zstd-jni codec ({@code
 * hbase-compression-zstd}) in this project's {@code hbase-site.xml}, since Hadoop's needs the
 * native libhadoop (HBase reads codec classes from a fresh configuration, not from this one).
 *
 * <p>Once a client that uses the RPC connection registry (no ZooKeeper) can locate {@code
 * hbase:meta} and the master has finished initializing (namespaces and tables can be listed), it
 * prints one line {@code READY master=HOST:PORT regionserver=HOST:PORT
 * zookeeper=HOST:PORT bootstrap=HOST:PORT} and keeps running until the master stops or the JVM is
 * sent SIGTERM, which shuts the cluster down cleanly.
 */
public final class HBasePeer {
  private static final String HOST = "127.0.0.1";

  private HBasePeer() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 1) {
      System.err.println("usage: HBasePeer DIR [name=value ...]");
      System.exit(2);
    }
    File dir = new File(args[0]).getAbsoluteFile();
    Configuration conf = HBaseConfiguration.create();
    conf.set(HConstants.CLUSTER_DISTRIBUTED, "false");
    conf.set(HConstants.HBASE_DIR, new File(dir, "hbase").toURI().toString());
    conf.set("hbase.tmp.dir", new File(dir, "tmp").getPath());
    conf.set(HConstants.ZOOKEEPER_DATA_DIR, new File(dir, "zookeeper").getPath());
    conf.set(HConstants.ZOOKEEPER_QUORUM, HOST);
    conf.setInt(HConstants.ZOOKEEPER_CLIENT_PORT, 2181);
    conf.setInt(HConstants.MASTER_PORT, HConstants.DEFAULT_MASTER_PORT);
    conf.setInt(HConstants.REGIONSERVER_PORT, HConstants.DEFAULT_REGIONSERVER_PORT);
    // Listen on loopback only and name the servers by that address, so that the
    // ServerNames in hbase:meta are reachable whatever this machine's hostname.
    conf.set("hbase.master.ipc.address", HOST);
    conf.set("hbase.regionserver.ipc.address", HOST);
    conf.set("hbase.master.hostname", HOST);
    conf.set("hbase.unsafe.regionserver.hostname", HOST);
    // No web UIs: nothing measures them and they cost threads and memory.
    conf.setInt("hbase.master.info.port", -1);
    conf.setInt("hbase.regionserver.info.port", -1);
    // The local filesystem has no hflush/hsync capability flags; HBase's own
    // standalone quickstart sets this too.
    conf.setBoolean("hbase.unsafe.stream.capability.enforce", false);
    for (int i = 1; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      if (eq <= 0) {
        System.err.println("not name=value: " + args[i]);
        System.exit(2);
      }
      conf.set(args[i].substring(0, eq), args[i].substring(eq + 1));
    }
    int masterPort = conf.getInt(HConstants.MASTER_PORT, HConstants.DEFAULT_MASTER_PORT);
    int rsPort = conf.getInt(HConstants.REGIONSERVER_PORT, HConstants.DEFAULT_REGIONSERVER_PORT);
    int zkPort = conf.getInt(HConstants.ZOOKEEPER_CLIENT_PORT, 2181);
    int regionServers = conf.getInt("ferrobase.peer.regionservers", 1);
    if (regionServers < 1) {
      System.err.println("ferrobase.peer.regionservers must be at least 1");
      System.exit(2);
    }

    long started = System.nanoTime();
    AtomicInteger exit = new AtomicInteger(-1);
    HMasterCommandLine commandLine = new HMasterCommandLine(HMaster.class);
    commandLine.setConf(conf);
    Thread master =
        new Thread(
            () -> {
              try {
                exit.set(commandLine.run(new String[] {"start"}));
              } catch (Throwable t) {
                t.printStackTrace();
                exit.set(1);
              }
            },
            "hbase-master-command-line");
    master.start();

    String bootstrap = HOST + ":" + rsPort;
    Configuration client = HBaseConfiguration.create();
    client.set(
        "hbase.client.registry.impl", "org.apache.hadoop.hbase.client.RpcConnectionRegistry");
    client.set("hbase.client.bootstrap.servers", bootstrap);
    client.setInt("hbase.client.retries.number", 2);
    client.setInt("hbase.rpc.timeout", 5_000);
    client.setInt("hbase.client.operation.timeout", 10_000);

    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
    while (true) {
      if (!master.isAlive()) {
        System.err.println("HBase master stopped before it was ready (exit " + exit.get() + ")");
        System.exit(1);
      }
      if (ready(client)) {
        break;
      }
      if (System.nanoTime() > deadline) {
        System.err.println("HBase was not ready within 5 minutes");
        System.exit(1);
      }
      Thread.sleep(500);
    }
    List<JVMClusterUtil.RegionServerThread> extra = new ArrayList<>();
    for (int i = 1; i < regionServers; i++) {
      Configuration rsConf = new Configuration(conf);
      rsConf.setInt(HConstants.REGIONSERVER_PORT, 0);
      JVMClusterUtil.RegionServerThread t =
          JVMClusterUtil.createRegionServerThread(rsConf, HRegionServer.class, i);
      t.start();
      extra.add(t);
    }
    while (liveServers(client) < regionServers) {
      if (!master.isAlive() || extra.stream().anyMatch(t -> !t.isAlive())) {
        System.err.println("an HBase server stopped before all region servers were up");
        System.exit(1);
      }
      if (System.nanoTime() > deadline) {
        System.err.println(regionServers + " region servers were not up within 5 minutes");
        System.exit(1);
      }
      Thread.sleep(500);
    }
    // Through Hadoop's hook manager, ahead of the hooks HBase installs there for each server
    // (priority 0): those stop the servers one by one, the master first, and a region server
    // left without its master then waits out its ZooKeeper and RPC timeouts (about 20 s each).
    // The master's cluster shutdown first stops every region server together.
    ShutdownHookManager.get()
        .addShutdownHook(() -> shutdown(client, master), 100, 75, TimeUnit.SECONDS);
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    System.out.println(
        "READY master="
            + HOST
            + ":"
            + masterPort
            + " regionserver="
            + HOST
            + ":"
            + rsPort
            + " zookeeper="
            + HOST
            + ":"
            + zkPort
            + " bootstrap="
            + bootstrap
            + " regionservers="
            + regionServers
            + " startup_ms="
            + millis);
    System.out.flush();
    master.join();
    System.exit(exit.get() < 0 ? 0 : exit.get());
  }

  /** The cluster answers a registry client: tables are listed and meta is located. */
  private static boolean ready(Configuration client) {
    try (Connection c = ConnectionFactory.createConnection(client);
        Admin admin = c.getAdmin();
        RegionLocator meta = c.getRegionLocator(TableName.META_TABLE_NAME)) {
      HRegionLocation loc = meta.getRegionLocation(HConstants.EMPTY_START_ROW, true);
      if (loc == null || loc.getServerName() == null) {
        return false;
      }
      // Answered only once the master has finished initializing (before that DDL calls
      // fail with PleaseHoldException).
      admin.listNamespaceDescriptors();
      admin.listTableNames();
      return true;
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /**
   * How many region servers the master would place regions on: live ones that have sent their
   * first load report (the master assigns only to those, HBASE-25032, so a table created before
   * would have all its regions on the first server); 0 when it cannot be asked.
   */
  private static int liveServers(Configuration client) {
    try (Connection c = ConnectionFactory.createConnection(client);
        Admin admin = c.getAdmin()) {
      return (int)
          admin.getClusterMetrics(EnumSet.of(ClusterMetrics.Option.LIVE_SERVERS))
              .getLiveServerMetrics()
              .values()
              .stream()
              .filter(m -> m.getLastReportTimestamp() > 0)
              .count();
    } catch (IOException | RuntimeException e) {
      return 0;
    }
  }

  /** SIGTERM: ask the master to shut the cluster down, wait for it a while. */
  private static void shutdown(Configuration client, Thread master) {
    if (!master.isAlive()) {
      return;
    }
    try (Connection c = ConnectionFactory.createConnection(client);
        Admin admin = c.getAdmin()) {
      admin.shutdown();
    } catch (IOException | RuntimeException e) {
      System.err.println("clean shutdown failed: " + e);
      return;
    }
    try {
      master.join(TimeUnit.SECONDS.toMillis(60));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
