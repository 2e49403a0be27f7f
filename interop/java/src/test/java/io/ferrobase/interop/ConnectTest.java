package io.ferrobase.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import org.apache.hadoop.hbase.ClusterMetrics;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.HRegionLocation;
import org.apache.hadoop.hbase.ServerMetrics;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.RegionLocator;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/** The first steps of every HBase application: connect, find meta, list and look up tables. */
@Order(1)
class ConnectTest extends InteropTestBase {

  @Test
  @Order(1)
  void connectionOpensThroughTheRpcRegistry() throws Exception {
    try (Connection c = TestTarget.get().connect()) {
      assertFalse(c.isClosed());
      String clusterId = c.getClusterId();
      assertNotNull(clusterId, "GetClusterId answered no cluster id");
      assertFalse(clusterId.isEmpty());
      // A second connection sees the same cluster.
      try (Connection d = TestTarget.get().connect()) {
        assertEquals(clusterId, d.getClusterId());
      }
    }
  }

  @Test
  @Order(2)
  void masterIsRunning() throws Exception {
    assertFalse(admin.isAborted());
    // Any master call: the table list of the system namespace holds meta.
    List<TableName> system = Arrays.asList(admin.listTableNamesByNamespace("hbase"));
    assertTrue(system.contains(TableName.META_TABLE_NAME), "hbase namespace lists " + system);
  }

  @Test
  @Order(3)
  void metaRegionIsLocated() throws Exception {
    try (RegionLocator meta = conn.getRegionLocator(TableName.META_TABLE_NAME)) {
      HRegionLocation loc = meta.getRegionLocation(HConstants.EMPTY_START_ROW, true);
      assertNotNull(loc);
      assertNotNull(loc.getServerName(), "meta has no server");
      assertTrue(loc.getServerName().getPort() > 0);
      assertTrue(loc.getRegion().isMetaRegion(), "not the meta region: " + loc.getRegion());
      assertEquals(TableName.META_TABLE_NAME, loc.getRegion().getTable());
    }
  }

  @Test
  @Order(4)
  void tableExistsIsFalseForAMissingTable() throws Exception {
    TableName missing = uniqueName("missing");
    assertFalse(admin.tableExists(missing));
    assertFalse(Arrays.asList(admin.listTableNames()).contains(missing));
  }

  @Test
  @Order(5)
  void createdTableIsListedAndExists() throws Exception {
    TableName t = createTable("connect", F);
    assertTrue(admin.tableExists(t));
    List<TableName> names = Arrays.asList(admin.listTableNames());
    assertTrue(names.contains(t), t + " not in " + names);
    // User tables only: listTableNames() leaves out the system tables.
    assertFalse(names.contains(TableName.META_TABLE_NAME));
    assertTrue(admin.isTableEnabled(t));
    assertTrue(admin.isTableAvailable(t));
  }

  @Test
  @Order(6)
  void tableRegionIsLocated() throws Exception {
    TableName t = createTable("locate", F);
    try (RegionLocator locator = conn.getRegionLocator(t)) {
      List<HRegionLocation> all = locator.getAllRegionLocations();
      assertEquals(1, all.size(), "one region expected: " + all);
      HRegionLocation loc = all.get(0);
      assertEquals(t, loc.getRegion().getTable());
      assertEquals(0, loc.getRegion().getStartKey().length);
      assertEquals(0, loc.getRegion().getEndKey().length);
      assertNotNull(loc.getServerName());
      HRegionLocation forRow = locator.getRegionLocation(b("any-row"));
      assertEquals(
          loc.getRegion().getRegionNameAsString(), forRow.getRegion().getRegionNameAsString());
      assertEquals(loc.getServerName(), forRow.getServerName());
    }
  }

  @Test
  @Order(7)
  void clusterMetricsNameEveryServer() throws Exception {
    TableName t = createTable("metrics", F);
    ClusterMetrics m = admin.getClusterMetrics();
    assertEquals(
        TestTarget.expectedServers(),
        m.getLiveServerMetrics().size(),
        "live servers: " + m.getLiveServerMetrics());
    assertNotNull(m.getMasterName());
    assertNotNull(m.getClusterId());
    assertTrue(m.getHBaseVersion().startsWith("2."), m.getHBaseVersion());
    // HBase reports region loads with a server's next heartbeat, so the new
    // table's region may not be listed yet; some region always is.
    assertTrue(
        m.getLiveServerMetrics().values().stream().anyMatch(s -> !s.getRegionMetrics().isEmpty()),
        "a live server reports its regions");
    assertTrue(admin.tableExists(t));
  }
}
