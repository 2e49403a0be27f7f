package io.ferrobase.interop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.hadoop.hbase.HRegionLocation;
import org.apache.hadoop.hbase.RegionMetrics;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.TableNotFoundException;
import org.apache.hadoop.hbase.client.CompactionState;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.RegionLocator;
import org.apache.hadoop.hbase.client.Table;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/**
 * What an operator does through {@code Admin}: flush and compact tables and regions, list a
 * server's regions and their load, split a region; answered by the region server's
 * {@code AdminService} and the master's region procedures.
 */
@Order(9)
class AdminOpsTest extends InteropTestBase {

  /** How long a background compaction or split may take before the test gives up on it. */
  private static final long WAIT_MS = 60_000;

  private static List<ServerName> servers() throws IOException {
    List<ServerName> servers = new ArrayList<>(admin.getRegionServers());
    assertEquals(TestTarget.expectedServers(), servers.size(), "servers: " + servers);
    return servers;
  }

  private static void load(TableName t, String prefix, int rows) throws IOException {
    try (Table table = conn.getTable(t)) {
      List<Put> puts = new ArrayList<>();
      for (int i = 0; i < rows; i++) {
        puts.add(new Put(b(prefix + String.format("%04d", i))).addColumn(F, b("q"), b("v" + i)));
      }
      table.put(puts);
    }
  }

  /** The metrics of the table's regions, from every server. */
  private static List<RegionMetrics> metricsOf(TableName t) throws IOException {
    List<RegionMetrics> all = new ArrayList<>();
    for (ServerName sn : servers()) {
      all.addAll(admin.getRegionMetrics(sn, t));
    }
    return all;
  }

  private static int storeFiles(TableName t) throws IOException {
    return metricsOf(t).stream().mapToInt(RegionMetrics::getStoreFileCount).sum();
  }

  private static void waitFor(String what, java.util.concurrent.Callable<Boolean> done)
      throws Exception {
    long deadline = System.currentTimeMillis() + WAIT_MS;
    while (!done.call()) {
      if (System.currentTimeMillis() > deadline) {
        throw new AssertionError("gave up waiting for " + what);
      }
      Thread.sleep(100);
    }
  }

  @Test
  void serverListsItsRegionsWithTheirLoad() throws Exception {
    TableName t = createTable("admin_regions", new byte[][] {b("g"), b("p")}, F);
    load(t, "k", 10);
    List<RegionInfo> mine = new ArrayList<>();
    for (ServerName sn : servers()) {
      mine.addAll(
          admin.getRegions(sn).stream()
              .filter(r -> r.getTable().equals(t))
              .collect(Collectors.toList()));
    }
    assertEquals(3, mine.size(), "regions of " + t + " on the servers");
    assertEquals(admin.getRegions(t).size(), mine.size());
    List<RegionMetrics> metrics = metricsOf(t);
    assertEquals(3, metrics.size());
    long written = metrics.stream().mapToLong(RegionMetrics::getWriteRequestCount).sum();
    assertEquals(10, written, "write requests over the table's regions");
    for (RegionMetrics m : metrics) {
      assertNotNull(m.getNameAsString());
    }
  }

  @Test
  void flushTableWritesStoreFiles() throws Exception {
    TableName t = createTable("admin_flush", F);
    load(t, "r", 50);
    assertEquals(0, storeFiles(t));
    admin.flush(t);
    assertEquals(1, storeFiles(t));
    try (Table table = conn.getTable(t)) {
      assertEquals(50, countRows(table));
    }
  }

  @Test
  void flushRegionByName() throws Exception {
    TableName t = createTable("admin_flush_region", new byte[][] {b("m")}, F);
    load(t, "a", 5);
    load(t, "z", 5);
    RegionInfo first = admin.getRegions(t).get(0);
    admin.flushRegion(first.getRegionName());
    List<RegionMetrics> metrics = metricsOf(t);
    int flushed = 0;
    for (RegionMetrics m : metrics) {
      if (m.getStoreFileCount() > 0) {
        flushed++;
        assertArrayEquals(first.getRegionName(), m.getRegionName());
      }
    }
    assertEquals(1, flushed);
  }

  @Test
  void majorCompactionLeavesOneStoreFile() throws Exception {
    TableName t = createTable("admin_compact", F);
    // Two files: below hbase.hstore.compaction.min (3), so no
    // compaction starts on its own.
    for (int round = 0; round < 2; round++) {
      load(t, "r" + round, 20);
      admin.flush(t);
    }
    assertEquals(2, storeFiles(t));
    admin.majorCompact(t);
    waitFor(
        "the major compaction of " + t,
        () -> admin.getCompactionState(t) == CompactionState.NONE && storeFiles(t) == 1);
    try (Table table = conn.getTable(t)) {
      assertEquals(40, countRows(table));
    }
    admin.compact(t);
    waitFor("the minor compaction of " + t, () -> admin.getCompactionState(t) == CompactionState.NONE);
  }

  @Test
  void splitAtAKey() throws Exception {
    TableName t = createTable("admin_split", F);
    load(t, "a", 20);
    load(t, "n", 20);
    assertEquals(1, admin.getRegions(t).size());
    admin.split(t, b("n"));
    waitFor("the split of " + t, () -> admin.getRegions(t).size() == 2);
    List<RegionInfo> regions = admin.getRegions(t);
    assertArrayEquals(b("n"), regions.get(0).getEndKey());
    assertArrayEquals(b("n"), regions.get(1).getStartKey());
    try (Table table = conn.getTable(t)) {
      assertEquals(40, countRows(table));
      assertFalse(table.get(new Get(b("n0000"))).isEmpty());
    }
  }

  @Test
  void mergeTwoAdjacentRegions() throws Exception {
    TableName t = createTable("admin_merge", new byte[][] {b("n")}, F);
    load(t, "a", 20);
    load(t, "n", 20);
    List<RegionInfo> regions = admin.getRegions(t);
    assertEquals(2, regions.size());
    admin
        .mergeRegionsAsync(
            new byte[][] {
              regions.get(0).getEncodedNameAsBytes(), regions.get(1).getEncodedNameAsBytes()
            },
            false)
        .get(WAIT_MS, java.util.concurrent.TimeUnit.MILLISECONDS);
    waitFor("the merge of " + t, () -> admin.getRegions(t).size() == 1);
    RegionInfo merged = admin.getRegions(t).get(0);
    assertEquals(0, merged.getStartKey().length);
    assertEquals(0, merged.getEndKey().length);
    try (Table table = conn.getTable(t)) {
      assertEquals(40, countRows(table));
      assertFalse(table.get(new Get(b("a0019"))).isEmpty());
      assertFalse(table.get(new Get(b("n0000"))).isEmpty());
    }
  }

  @Test
  void mergeThreeAdjacentRegionsInOneCall() throws Exception {
    TableName t = createTable("admin_merge3", new byte[][] {b("g"), b("p")}, F);
    load(t, "a", 10);
    load(t, "h", 10);
    load(t, "q", 10);
    List<RegionInfo> regions = admin.getRegions(t);
    assertEquals(3, regions.size());
    admin
        .mergeRegionsAsync(
            new byte[][] {
              regions.get(2).getEncodedNameAsBytes(),
              regions.get(0).getEncodedNameAsBytes(),
              regions.get(1).getEncodedNameAsBytes()
            },
            false)
        .get(WAIT_MS, java.util.concurrent.TimeUnit.MILLISECONDS);
    waitFor("the merge of " + t, () -> admin.getRegions(t).size() == 1);
    try (Table table = conn.getTable(t)) {
      assertEquals(30, countRows(table));
      assertFalse(table.get(new Get(b("h0009"))).isEmpty());
    }
  }

  @Test
  void clientsFollowAMovedRegion() throws Exception {
    List<ServerName> servers = servers();
    assumeTrue(servers.size() > 1, "a move needs a second region server");
    TableName t = createTable("admin_move", F);
    load(t, "m", 10);
    // A second connection caches the region's location before the move and
    // is told NotServingRegion after it, as an application would be.
    try (Connection stale = TestTarget.get().connect();
        Table staleTable = stale.getTable(t);
        RegionLocator locator = conn.getRegionLocator(t)) {
      assertFalse(staleTable.get(new Get(b("m0003"))).isEmpty());
      HRegionLocation before = locator.getRegionLocation(b("m0003"), true);
      admin.move(before.getRegion().getEncodedNameAsBytes());
      HRegionLocation after = locator.getRegionLocation(b("m0003"), true);
      assertNotEquals(before.getServerName(), after.getServerName());
      assertTrue(servers.contains(after.getServerName()), after + " is one of " + servers);

      assertArrayEquals(b("v5"), staleTable.get(new Get(b("m0005"))).getValue(F, b("q")));
      staleTable.put(new Put(b("m0100")).addColumn(F, b("q"), b("new")));
      assertEquals(11, countRows(staleTable));
      HRegionLocation seen = stale.getRegionLocator(t).getRegionLocation(b("m0003"));
      assertEquals(after.getServerName(), seen.getServerName());

      // Moved back to a server named explicitly.
      admin.move(after.getRegion().getEncodedNameAsBytes(), before.getServerName());
      assertEquals(before.getServerName(), locator.getRegionLocation(b("m0003"), true).getServerName());
      assertFalse(staleTable.get(new Get(b("m0100"))).isEmpty());
    }
  }

  @Test
  void unknownTableIsNamed() {
    TableName t = uniqueName("admin_missing");
    assertThrows(TableNotFoundException.class, () -> admin.flush(t));
    assertThrows(TableNotFoundException.class, () -> admin.majorCompact(t));
  }

  @Test
  void balancerAndCatalogJanitorSwitchesAnswerAndRun() throws Exception {
    boolean balancer = admin.balancerSwitch(false, true);
    assertFalse(admin.isBalancerEnabled());
    assertFalse(admin.balancerSwitch(balancer, true));
    assertEquals(balancer, admin.isBalancerEnabled());
    assertTrue(admin.balance(), "a balancer run asked for by name runs");
    boolean janitor = admin.catalogJanitorSwitch(false);
    assertFalse(admin.isCatalogJanitorEnabled());
    assertFalse(admin.catalogJanitorSwitch(janitor));
    assertEquals(janitor, admin.isCatalogJanitorEnabled());
    assertTrue(admin.runCatalogJanitor() >= 0);
  }

  @Test
  void splitAndMergeSwitchesAnswer() throws Exception {
    // Both switches are on, in HBase and in ferrobase (merges by reference).
    assertTrue(admin.isSplitEnabled());
    assertTrue(admin.isMergeEnabled());
  }
}
