package io.ferrobase.interop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.hbase.ClusterMetrics;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.HRegionLocation;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionLocator;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.shaded.org.apache.zookeeper.CreateMode;
import org.apache.hadoop.hbase.shaded.org.apache.zookeeper.KeeperException;
import org.apache.hadoop.hbase.shaded.org.apache.zookeeper.Watcher;
import org.apache.hadoop.hbase.shaded.org.apache.zookeeper.ZooDefs;
import org.apache.hadoop.hbase.shaded.org.apache.zookeeper.ZooKeeper;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Clients configured the way HBase 2.x defaults to, with only {@code hbase.zookeeper.quorum}: the
 * client reads the cluster id, the active master and meta's location from ZooKeeper, which
 * ferrobase answers itself (its ZooKeeper registry endpoint).
 */
class ZooKeeperRegistryTest extends InteropTestBase {

  @BeforeAll
  static void needsAnEndpoint() {
    assumeTrue(
        TestTarget.get().zookeeper() != null,
        "the target has no ZooKeeper registry endpoint (HBASE_ZOOKEEPER unset)");
  }

  private static Connection zkConnection() throws Exception {
    return ConnectionFactory.createConnection(TestTarget.get().zookeeperConfiguration());
  }

  @Test
  void theDefaultRegistryFindsTheSameCluster() throws Exception {
    try (Connection zk = zkConnection()) {
      assertEquals(conn.getClusterId(), zk.getClusterId());
      try (RegionLocator meta = zk.getRegionLocator(TableName.META_TABLE_NAME)) {
        HRegionLocation loc = meta.getRegionLocation(HConstants.EMPTY_START_ROW, true);
        assertTrue(loc.getRegion().isMetaRegion(), loc.toString());
        assertTrue(loc.getServerName().getPort() > 0);
      }
    }
  }

  @Test
  void dataAndAdminCallsWorkThroughIt() throws Exception {
    TableName t = uniqueName("zkreg");
    try (Connection zk = zkConnection(); Admin a = zk.getAdmin()) {
      // DDL through the master ZooKeeper named, data through meta's answers.
      a.createTable(descriptor(t, F));
      track(t);
      assertTrue(a.tableExists(t));
      try (Table table = zk.getTable(t)) {
        List<Put> puts = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
          puts.add(
              new Put(Bytes.toBytes(String.format("r%03d", i)))
                  .addColumn(F, Bytes.toBytes("q"), Bytes.toBytes("v" + i)));
        }
        table.put(puts);
        Result r = table.get(new Get(Bytes.toBytes("r042")));
        assertArrayEquals(Bytes.toBytes("v42"), r.getValue(F, Bytes.toBytes("q")));
        int rows = 0;
        try (ResultScanner s = table.getScanner(new Scan())) {
          for (Result ignored : s) {
            rows++;
          }
        }
        assertEquals(100, rows);
      }
      ClusterMetrics m = a.getClusterMetrics();
      assertNotNull(m.getMasterName());
      assertEquals(TestTarget.expectedServers(), m.getLiveServerMetrics().size());
    }
    // The connection of the RPC registry sees what the other one wrote.
    try (Table table = conn.getTable(t)) {
      assertFalse(table.get(new Get(Bytes.toBytes("r099"))).isEmpty());
    }
  }

  /** The znodes as a plain ZooKeeper client sees them, and a write refused as read-only. */
  @Test
  void theEndpointIsAReadOnlyZooKeeper() throws Exception {
    CountDownLatch connected = new CountDownLatch(1);
    Watcher w =
        e -> {
          if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
            connected.countDown();
          }
        };
    ZooKeeper zk = new ZooKeeper(TestTarget.get().zookeeper(), 30_000, w);
    try {
      assertTrue(connected.await(30, TimeUnit.SECONDS), "no ZooKeeper session");
      List<String> children = new ArrayList<>(zk.getChildren("/hbase", false));
      Collections.sort(children);
      assertTrue(children.contains("master"), children.toString());
      assertTrue(children.contains("meta-region-server"), children.toString());
      assertTrue(children.contains("hbaseid"), children.toString());
      assertEquals(TestTarget.expectedServers(), zk.getChildren("/hbase/rs", false).size());
      assertNotNull(zk.exists("/hbase/master", false));
      assertEquals(null, zk.exists("/hbase/no-such-znode", false));
      byte[] master = zk.getData("/hbase/master", false, null);
      assertEquals("PBUF", new String(master, 0, 4, "US-ASCII"));
      assertThrows(
          KeeperException.NoNodeException.class, () -> zk.getData("/hbase/nothing", false, null));
      assertThrows(
          KeeperException.NotReadOnlyException.class,
          () ->
              zk.create(
                  "/hbase/mine", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT));
    } finally {
      zk.close();
    }
  }
}
