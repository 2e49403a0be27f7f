package io.ferrobase.interop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.hadoop.hbase.DoNotRetryIOException;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.HRegionLocation;
import org.apache.hadoop.hbase.KeepDeletedCells;
import org.apache.hadoop.hbase.NamespaceDescriptor;
import org.apache.hadoop.hbase.NamespaceNotFoundException;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.TableNotDisabledException;
import org.apache.hadoop.hbase.TableNotEnabledException;
import org.apache.hadoop.hbase.TableNotFoundException;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptor;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Durability;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.RegionLocator;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptor;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.io.compress.Compression;
import org.apache.hadoop.hbase.io.encoding.DataBlockEncoding;
import org.apache.hadoop.hbase.regionserver.BloomType;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/** Tables and namespaces: create, describe, alter, disable, enable, truncate, drop. */
@Order(2)
class DdlTest extends InteropTestBase {

  private static ColumnFamilyDescriptor everyAttribute() {
    return ColumnFamilyDescriptorBuilder.newBuilder(F)
        .setMaxVersions(7)
        .setMinVersions(1)
        .setTimeToLive(86_400)
        .setBlocksize(32 * 1024)
        .setBlockCacheEnabled(false)
        .setInMemory(true)
        .setBloomFilterType(BloomType.ROWCOL)
        .setCompressionType(Compression.Algorithm.GZ)
        .setDataBlockEncoding(DataBlockEncoding.FAST_DIFF)
        .setKeepDeletedCells(KeepDeletedCells.TRUE)
        .setScope(HConstants.REPLICATION_SCOPE_LOCAL)
        .setValue("ferrobase.test.key", "family-value")
        .build();
  }

  @Test
  @Order(1)
  void createTableWithEveryFamilyAttribute() throws Exception {
    TableName t = track(uniqueName("ddl_attrs"));
    TableDescriptor desc =
        TableDescriptorBuilder.newBuilder(t)
            .setColumnFamily(everyAttribute())
            .setColumnFamily(ColumnFamilyDescriptorBuilder.of(G))
            .setDurability(Durability.ASYNC_WAL)
            .setMaxFileSize(512L * 1024 * 1024)
            .setMemStoreFlushSize(64L * 1024 * 1024)
            .setValue("ferrobase.test.table", "table-value")
            .build();
    admin.createTable(desc);
    assertTrue(admin.tableExists(t));

    TableDescriptor got = admin.getDescriptor(t);
    assertEquals(t, got.getTableName());
    assertEquals(2, got.getColumnFamilyCount());
    assertEquals(Durability.ASYNC_WAL, got.getDurability());
    assertEquals(512L * 1024 * 1024, got.getMaxFileSize());
    assertEquals(64L * 1024 * 1024, got.getMemStoreFlushSize());
    assertEquals("table-value", got.getValue("ferrobase.test.table"));

    ColumnFamilyDescriptor f = got.getColumnFamily(F);
    assertNotNull(f, "family f");
    assertEquals(7, f.getMaxVersions());
    assertEquals(1, f.getMinVersions());
    assertEquals(86_400, f.getTimeToLive());
    assertEquals(32 * 1024, f.getBlocksize());
    assertFalse(f.isBlockCacheEnabled());
    assertTrue(f.isInMemory());
    assertEquals(BloomType.ROWCOL, f.getBloomFilterType());
    assertEquals(Compression.Algorithm.GZ, f.getCompressionType());
    assertEquals(DataBlockEncoding.FAST_DIFF, f.getDataBlockEncoding());
    assertEquals(KeepDeletedCells.TRUE, f.getKeepDeletedCells());
    assertEquals(HConstants.REPLICATION_SCOPE_LOCAL, f.getScope());
    assertEquals("family-value", s(f.getValue(Bytes.toBytes("ferrobase.test.key"))));

    // A family created with no attributes reports HBase's defaults.
    ColumnFamilyDescriptor g = got.getColumnFamily(G);
    assertNotNull(g, "family g");
    assertEquals(1, g.getMaxVersions());
    assertEquals(0, g.getMinVersions());
    assertEquals(HConstants.FOREVER, g.getTimeToLive());
    assertEquals(64 * 1024, g.getBlocksize());
    assertTrue(g.isBlockCacheEnabled());
    assertFalse(g.isInMemory());
    assertEquals(BloomType.ROW, g.getBloomFilterType());
    assertEquals(Compression.Algorithm.NONE, g.getCompressionType());
    assertEquals(DataBlockEncoding.NONE, g.getDataBlockEncoding());
    assertEquals(KeepDeletedCells.FALSE, g.getKeepDeletedCells());

    // The table's own view agrees with the admin's.
    try (Table table = conn.getTable(t)) {
      assertEquals(0, TableDescriptor.COMPARATOR.compare(got, table.getDescriptor()));
    }
  }

  @Test
  @Order(2)
  void listTableNamesByPattern() throws Exception {
    TableName a = createTable("ddl_pattern_a", F);
    TableName other = createTable("ddl_other", F);
    List<TableName> matched =
        Arrays.asList(admin.listTableNames(Pattern.compile(".*_ddl_pattern_.*")));
    assertTrue(matched.contains(a), matched.toString());
    assertFalse(matched.contains(other), matched.toString());
    List<TableName> described =
        admin.listTableDescriptors(List.of(a, other)).stream()
            .map(TableDescriptor::getTableName)
            .collect(Collectors.toList());
    assertTrue(described.containsAll(List.of(a, other)), described.toString());
  }

  @Test
  @Order(3)
  void alterFamiliesAndTableAttributes() throws Exception {
    TableName t = createTable("ddl_alter", F, G);
    try (Table table = conn.getTable(t)) {
      table.put(new Put(b("r")).addColumn(F, b("q"), b("kept")));
    }
    // Add a family.
    byte[] h = b("h");
    admin.addColumnFamily(t, ColumnFamilyDescriptorBuilder.newBuilder(h).setMaxVersions(4).build());
    assertEquals(4, admin.getDescriptor(t).getColumnFamily(h).getMaxVersions());
    // Modify a family.
    admin.modifyColumnFamily(
        t,
        ColumnFamilyDescriptorBuilder.newBuilder(admin.getDescriptor(t).getColumnFamily(F))
            .setMaxVersions(3)
            .setTimeToLive(3600)
            .build());
    ColumnFamilyDescriptor f = admin.getDescriptor(t).getColumnFamily(F);
    assertEquals(3, f.getMaxVersions());
    assertEquals(3600, f.getTimeToLive());
    // Delete a family.
    admin.deleteColumnFamily(t, G);
    TableDescriptor afterDelete = admin.getDescriptor(t);
    assertNull(afterDelete.getColumnFamily(G));
    assertEquals(2, afterDelete.getColumnFamilyCount());
    // Modify the table as a whole.
    admin.modifyTable(
        TableDescriptorBuilder.newBuilder(afterDelete).setValue("owner", "team-x").build());
    assertEquals("team-x", admin.getDescriptor(t).getValue("owner"));
    // Data in the untouched family survives every alteration, and new families take writes.
    try (Table table = conn.getTable(t)) {
      assertEquals("kept", s(table.get(new Get(b("r"))).getValue(F, b("q"))));
      table.put(new Put(b("r")).addColumn(h, b("q"), b("new")));
      assertEquals("new", s(table.get(new Get(b("r"))).getValue(h, b("q"))));
    }
  }

  @Test
  @Order(4)
  void disableAndEnableKeepData() throws Exception {
    TableName t = createTable("ddl_disable", F);
    try (Table table = conn.getTable(t)) {
      table.put(new Put(b("r")).addColumn(F, b("q"), b("v")));
    }
    admin.disableTable(t);
    assertTrue(admin.isTableDisabled(t));
    assertFalse(admin.isTableEnabled(t));
    assertTrue(admin.tableExists(t));
    assertTrue(Arrays.asList(admin.listTableNames()).contains(t));
    try (Table table = conn.getTable(t)) {
      assertThrows(
          TableNotEnabledException.class,
          () -> table.put(new Put(b("r2")).addColumn(F, b("q"), b("v"))));
    }
    admin.enableTable(t);
    assertTrue(admin.isTableEnabled(t));
    assertFalse(admin.isTableDisabled(t));
    try (Table table = conn.getTable(t)) {
      assertEquals("v", s(table.get(new Get(b("r"))).getValue(F, b("q"))));
      assertTrue(table.get(new Get(b("r2"))).isEmpty());
    }
  }

  @Test
  @Order(5)
  void dropTable() throws Exception {
    TableName t = createTable("ddl_drop", F);
    // An enabled table cannot be deleted.
    assertThrows(TableNotDisabledException.class, () -> admin.deleteTable(t));
    admin.disableTable(t);
    admin.deleteTable(t);
    assertFalse(admin.tableExists(t));
    assertFalse(Arrays.asList(admin.listTableNames()).contains(t));
    assertThrows(TableNotFoundException.class, () -> admin.getDescriptor(t));
    // The name can be used again, and the new table is empty.
    admin.createTable(descriptor(t, F));
    try (Table table = conn.getTable(t)) {
      assertEquals(0, countRows(table));
    }
  }

  @Test
  @Order(6)
  void createWithSplitKeys() throws Exception {
    byte[][] splits = {b("g"), b("n"), b("t")};
    TableName t = createTable("ddl_splits", splits, F);
    List<RegionInfo> regions = admin.getRegions(t);
    assertEquals(4, regions.size());
    try (RegionLocator locator = conn.getRegionLocator(t)) {
      List<HRegionLocation> locations = locator.getAllRegionLocations();
      assertEquals(4, locations.size());
      List<String> starts = new ArrayList<>();
      List<String> ends = new ArrayList<>();
      for (HRegionLocation l : locations) {
        starts.add(s(l.getRegion().getStartKey()));
        ends.add(s(l.getRegion().getEndKey()));
      }
      assertEquals(List.of("", "g", "n", "t"), starts);
      assertEquals(List.of("g", "n", "t", ""), ends);
      assertArrayEquals(b("n"), locator.getRegionLocation(b("p")).getRegion().getStartKey());
      assertArrayEquals(b("t"), locator.getRegionLocation(b("zz")).getRegion().getStartKey());
      assertEquals(0, locator.getRegionLocation(b("a")).getRegion().getStartKey().length);
      assertEquals(4, locator.getStartKeys().length);
    }
    // Start key, end key and a region count: the client computes the split keys.
    TableName even = track(uniqueName("ddl_even"));
    admin.createTable(
        descriptor(even, F),
        b("a"),
        b("z"),
        5);
    assertEquals(5, admin.getRegions(even).size());
  }

  @Test
  @Order(7)
  void truncateTable() throws Exception {
    TableName t = createTable("ddl_truncate", new byte[][] {b("m")}, F);
    try (Table table = conn.getTable(t)) {
      for (String row : new String[] {"a", "k", "p", "z"}) {
        table.put(new Put(b(row)).addColumn(F, b("q"), b(row)));
      }
      assertEquals(4, countRows(table));
    }
    admin.disableTable(t);
    admin.truncateTable(t, true);
    assertTrue(admin.isTableEnabled(t));
    assertEquals(2, admin.getRegions(t).size(), "splits preserved");
    try (Table table = conn.getTable(t)) {
      assertEquals(0, countRows(table));
      table.put(new Put(b("b")).addColumn(F, b("q"), b("after")));
      assertEquals(1, countRows(table));
    }
    admin.disableTable(t);
    admin.truncateTable(t, false);
    assertEquals(1, admin.getRegions(t).size(), "splits dropped");
    try (Table table = conn.getTable(t)) {
      assertEquals(0, countRows(table));
    }
  }

  @Test
  @Order(10)
  void systemNamespacesExist() throws Exception {
    List<String> names =
        Arrays.stream(admin.listNamespaceDescriptors())
            .map(NamespaceDescriptor::getName)
            .collect(Collectors.toList());
    assertTrue(names.contains("default"), names.toString());
    assertTrue(names.contains("hbase"), names.toString());
    assertEquals("default", admin.getNamespaceDescriptor("default").getName());
  }

  @Test
  @Order(11)
  void namespaceLifecycle() throws Exception {
    String ns = uniqueName("ns").getQualifierAsString();
    admin.createNamespace(
        NamespaceDescriptor.create(ns).addConfiguration("ferrobase.test", "ns-value").build());
    NamespaceDescriptor got = admin.getNamespaceDescriptor(ns);
    assertEquals(ns, got.getName());
    assertEquals("ns-value", got.getConfigurationValue("ferrobase.test"));
    assertTrue(
        Arrays.stream(admin.listNamespaceDescriptors()).anyMatch(d -> d.getName().equals(ns)));

    admin.modifyNamespace(
        NamespaceDescriptor.create(got).addConfiguration("ferrobase.test", "changed").build());
    assertEquals(
        "changed", admin.getNamespaceDescriptor(ns).getConfigurationValue("ferrobase.test"));

    // A table in the namespace.
    TableName t = TableName.valueOf(ns, "t1");
    admin.createTable(descriptor(t, F));
    assertTrue(admin.tableExists(t));
    assertEquals(ns, t.getNamespaceAsString());
    assertEquals(List.of(t), Arrays.asList(admin.listTableNamesByNamespace(ns)));
    assertEquals(1, admin.listTableDescriptorsByNamespace(Bytes.toBytes(ns)).size());
    assertFalse(
        Arrays.asList(admin.listTableNamesByNamespace("default")).contains(t),
        "a namespaced table is not in default");
    try (Table table = conn.getTable(t)) {
      table.put(new Put(b("r")).addColumn(F, b("q"), b("in-namespace")));
      assertEquals("in-namespace", s(table.get(new Get(b("r"))).getValue(F, b("q"))));
    }
    // A namespace that still holds a table cannot be dropped.
    // HBase's server-side ConstraintException is not on the client's classpath: the client
    // reports it as a DoNotRetryIOException naming the server's class.
    DoNotRetryIOException notEmpty =
        assertThrows(DoNotRetryIOException.class, () -> admin.deleteNamespace(ns));
    assertTrue(
        String.valueOf(notEmpty.getMessage())
            .contains("org.apache.hadoop.hbase.constraint.ConstraintException"),
        "expected ConstraintException, got " + notEmpty);

    admin.disableTable(t);
    admin.deleteTable(t);
    admin.deleteNamespace(ns);
    assertThrows(NamespaceNotFoundException.class, () -> admin.getNamespaceDescriptor(ns));
    assertFalse(
        Arrays.stream(admin.listNamespaceDescriptors()).anyMatch(d -> d.getName().equals(ns)));
  }

  @Test
  @Order(12)
  void sameQualifierInTwoNamespacesAreTwoTables() throws Exception {
    String ns = uniqueName("ns2").getQualifierAsString();
    admin.createNamespace(NamespaceDescriptor.create(ns).build());
    TableName inDefault = createTable("ddl_twin", F);
    TableName inNs = TableName.valueOf(ns, inDefault.getQualifierAsString());
    admin.createTable(descriptor(inNs, F));
    try (Table a = conn.getTable(inDefault);
        Table c = conn.getTable(inNs)) {
      a.put(new Put(b("r")).addColumn(F, b("q"), b("default")));
      c.put(new Put(b("r")).addColumn(F, b("q"), b("namespaced")));
      assertEquals("default", s(a.get(new Get(b("r"))).getValue(F, b("q"))));
      assertEquals("namespaced", s(c.get(new Get(b("r"))).getValue(F, b("q"))));
    }
    admin.disableTable(inNs);
    admin.deleteTable(inNs);
    admin.deleteNamespace(ns);
  }
}
