package io.ferrobase.interop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Durability;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/** Single-row reads and writes: put, get, the delete kinds, versions and time ranges. */
@Order(3)
class PutGetTest extends InteropTestBase {
  private static TableName table;
  private static TableName versioned;

  @BeforeAll
  static void createTables() throws Exception {
    table = createTable("putget", F, G);
    versioned = track(uniqueName("versions"));
    admin.createTable(
        TableDescriptorBuilder.newBuilder(versioned)
            .setColumnFamily(ColumnFamilyDescriptorBuilder.newBuilder(F).setMaxVersions(5).build())
            .build());
  }

  @Test
  @Order(1)
  void putThenGetOneCell() throws Exception {
    try (Table t = conn.getTable(table)) {
      t.put(new Put(b("r1")).addColumn(F, b("q"), b("v1")));
      Result r = t.get(new Get(b("r1")));
      assertFalse(r.isEmpty());
      assertArrayEquals(b("r1"), r.getRow());
      assertEquals("v1", s(r.getValue(F, b("q"))));
      assertEquals(1, r.size());
      Cell c = r.rawCells()[0];
      assertArrayEquals(F, CellUtil.cloneFamily(c));
      assertArrayEquals(b("q"), CellUtil.cloneQualifier(c));
      assertTrue(c.getTimestamp() > 0, "server-assigned timestamp");
    }
  }

  @Test
  @Order(2)
  void missingRowIsEmptyResult() throws Exception {
    try (Table t = conn.getTable(table)) {
      Result r = t.get(new Get(b("no-such-row")));
      assertTrue(r.isEmpty());
      assertNull(r.getRow());
      assertFalse(t.exists(new Get(b("no-such-row"))));
    }
  }

  @Test
  @Order(3)
  void cellsComeBackSortedAcrossFamilies() throws Exception {
    try (Table t = conn.getTable(table)) {
      Put p = new Put(b("r2"));
      // Added out of order on purpose.
      p.addColumn(G, b("b"), b("g-b"));
      p.addColumn(F, b("c"), b("f-c"));
      p.addColumn(G, b("a"), b("g-a"));
      p.addColumn(F, b("a"), b("f-a"));
      t.put(p);
      Result r = t.get(new Get(b("r2")));
      List<String> got = new ArrayList<>();
      for (Cell c : r.rawCells()) {
        got.add(
            s(CellUtil.cloneFamily(c))
                + ":"
                + s(CellUtil.cloneQualifier(c))
                + "="
                + s(CellUtil.cloneValue(c)));
      }
      assertEquals(List.of("f:a=f-a", "f:c=f-c", "g:a=g-a", "g:b=g-b"), got);
      assertTrue(t.exists(new Get(b("r2"))));
    }
  }

  @Test
  @Order(4)
  void getSelectsFamiliesAndColumns() throws Exception {
    try (Table t = conn.getTable(table)) {
      t.put(
          new Put(b("r3"))
              .addColumn(F, b("a"), b("1"))
              .addColumn(F, b("b"), b("2"))
              .addColumn(G, b("a"), b("3")));
      Result fam = t.get(new Get(b("r3")).addFamily(G));
      assertEquals(1, fam.size());
      assertEquals("3", s(fam.getValue(G, b("a"))));
      Result col = t.get(new Get(b("r3")).addColumn(F, b("b")).addColumn(G, b("a")));
      assertEquals(2, col.size());
      assertEquals("2", s(col.getValue(F, b("b"))));
      assertEquals("3", s(col.getValue(G, b("a"))));
      assertNull(col.getValue(F, b("a")));
      Result missingColumn = t.get(new Get(b("r3")).addColumn(F, b("zzz")));
      assertTrue(missingColumn.isEmpty());
    }
  }

  @Test
  @Order(5)
  void multiGetKeepsRequestOrder() throws Exception {
    try (Table t = conn.getTable(table)) {
      for (int i = 0; i < 20; i++) {
        t.put(new Put(b("mg" + i)).addColumn(F, b("q"), b("v" + i)));
      }
      List<Get> gets = new ArrayList<>();
      for (int i = 19; i >= 0; i--) {
        gets.add(new Get(b("mg" + i)));
      }
      gets.add(new Get(b("mg-missing")));
      Result[] rs = t.get(gets);
      assertEquals(21, rs.length);
      for (int i = 0; i < 20; i++) {
        assertEquals("v" + (19 - i), s(rs[i].getValue(F, b("q"))));
      }
      assertTrue(rs[20].isEmpty());
      boolean[] exists = t.exists(List.of(new Get(b("mg3")), new Get(b("mg-missing"))));
      assertArrayEquals(new boolean[] {true, false}, exists);
    }
  }

  @Test
  @Order(6)
  void largeAndEmptyValuesRoundTrip() throws Exception {
    byte[] big = new byte[1 << 20];
    new Random(42).nextBytes(big);
    try (Table t = conn.getTable(table)) {
      t.put(new Put(b("big")).addColumn(F, b("blob"), big).addColumn(F, b("empty"), new byte[0]));
      Result r = t.get(new Get(b("big")));
      assertArrayEquals(big, r.getValue(F, b("blob")));
      assertNotNull(r.getValue(F, b("empty")));
      assertEquals(0, r.getValue(F, b("empty")).length);
      // Binary row keys and qualifiers.
      byte[] row = {0, (byte) 0xff, 10, 13, 0};
      byte[] qual = {(byte) 0x80, 0, 1};
      t.put(new Put(row).addColumn(F, qual, row));
      assertArrayEquals(row, t.get(new Get(row)).getValue(F, qual));
    }
  }

  @Test
  @Order(7)
  void putWithSameTimestampOverwrites() throws Exception {
    try (Table t = conn.getTable(versioned)) {
      t.put(new Put(b("ow")).addColumn(F, b("q"), 100L, b("first")));
      t.put(new Put(b("ow")).addColumn(F, b("q"), 100L, b("second")));
      Result r = t.get(new Get(b("ow")).readAllVersions());
      assertEquals(1, r.size());
      assertEquals("second", s(r.getValue(F, b("q"))));
      assertEquals(100L, r.rawCells()[0].getTimestamp());
    }
  }

  @Test
  @Order(8)
  void skipWalPutIsReadable() throws Exception {
    try (Table t = conn.getTable(table)) {
      t.put(new Put(b("nowal")).addColumn(F, b("q"), b("v")).setDurability(Durability.SKIP_WAL));
      assertEquals("v", s(t.get(new Get(b("nowal"))).getValue(F, b("q"))));
    }
  }

  private static void putVersions(Table t, String row, long... timestamps) throws Exception {
    Put p = new Put(b(row));
    for (long ts : timestamps) {
      p.addColumn(F, b("q"), ts, b("v" + ts));
    }
    t.put(p);
  }

  private static List<Long> timestamps(Result r) {
    List<Long> out = new ArrayList<>();
    for (Cell c : r.rawCells()) {
      out.add(c.getTimestamp());
    }
    return out;
  }

  @Test
  @Order(10)
  void versionsNewestFirst() throws Exception {
    try (Table t = conn.getTable(versioned)) {
      putVersions(t, "v", 1, 2, 3, 4, 5);
      Result latest = t.get(new Get(b("v")));
      assertEquals(List.of(5L), timestamps(latest));
      assertEquals("v5", s(latest.getValue(F, b("q"))));
      assertEquals(List.of(5L, 4L), timestamps(t.get(new Get(b("v")).readVersions(2))));
      assertEquals(
          List.of(5L, 4L, 3L, 2L, 1L), timestamps(t.get(new Get(b("v")).readAllVersions())));
      assertEquals(5, t.get(new Get(b("v")).readAllVersions()).getColumnCells(F, b("q")).size());
    }
  }

  @Test
  @Order(11)
  void timeRangeAndTimestamp() throws Exception {
    try (Table t = conn.getTable(versioned)) {
      putVersions(t, "tr", 10, 20, 30, 40, 50);
      // [min, max): 20 and 30, newest first.
      Get range = new Get(b("tr")).setTimeRange(20, 40).readAllVersions();
      assertEquals(List.of(30L, 20L), timestamps(t.get(range)));
      // Without readAllVersions: the newest inside the range.
      assertEquals(List.of(30L), timestamps(t.get(new Get(b("tr")).setTimeRange(0, 35))));
      assertEquals(List.of(40L), timestamps(t.get(new Get(b("tr")).setTimestamp(40))));
      assertTrue(t.get(new Get(b("tr")).setTimestamp(41)).isEmpty());
      assertTrue(t.get(new Get(b("tr")).setTimeRange(51, 1000)).isEmpty());
    }
  }

  @Test
  @Order(12)
  void maxVersionsOfTheFamilyBoundsWhatIsReturned() throws Exception {
    // The table's family keeps 1 version (the default): older versions are not returned.
    try (Table t = conn.getTable(table)) {
      t.put(new Put(b("one")).addColumn(F, b("q"), 1L, b("old")));
      t.put(new Put(b("one")).addColumn(F, b("q"), 2L, b("new")));
      Result r = t.get(new Get(b("one")).readAllVersions());
      assertEquals(List.of(2L), timestamps(r));
      assertEquals("new", s(r.getValue(F, b("q"))));
    }
  }

  @Test
  @Order(20)
  void deleteLatestVersionOfAColumn() throws Exception {
    try (Table t = conn.getTable(versioned)) {
      putVersions(t, "d1", 1, 2, 3);
      t.delete(new Delete(b("d1")).addColumn(F, b("q")));
      Result r = t.get(new Get(b("d1")).readAllVersions());
      assertEquals(List.of(2L, 1L), timestamps(r));
      // An exact version.
      t.delete(new Delete(b("d1")).addColumn(F, b("q"), 1L));
      assertEquals(List.of(2L), timestamps(t.get(new Get(b("d1")).readAllVersions())));
    }
  }

  @Test
  @Order(21)
  void deleteAllVersionsOfAColumn() throws Exception {
    try (Table t = conn.getTable(versioned)) {
      putVersions(t, "d2", 1, 2, 3);
      t.put(new Put(b("d2")).addColumn(F, b("other"), 5L, b("keep")));
      t.delete(new Delete(b("d2")).addColumns(F, b("q")));
      Result r = t.get(new Get(b("d2")).readAllVersions());
      assertEquals(1, r.size());
      assertEquals("keep", s(r.getValue(F, b("other"))));
      // Up to a timestamp: versions <= 20 go, 30 stays.
      putVersions(t, "d2b", 10, 20, 30);
      t.delete(new Delete(b("d2b")).addColumns(F, b("q"), 20L));
      assertEquals(List.of(30L), timestamps(t.get(new Get(b("d2b")).readAllVersions())));
    }
  }

  @Test
  @Order(22)
  void deleteFamilyAndFamilyVersion() throws Exception {
    try (Table t = conn.getTable(table)) {
      t.put(
          new Put(b("d3"))
              .addColumn(F, b("a"), b("1"))
              .addColumn(F, b("b"), b("2"))
              .addColumn(G, b("a"), b("3")));
      t.delete(new Delete(b("d3")).addFamily(F));
      Result r = t.get(new Get(b("d3")));
      assertEquals(1, r.size());
      assertEquals("3", s(r.getValue(G, b("a"))));
    }
    try (Table t = conn.getTable(versioned)) {
      t.put(
          new Put(b("d4"))
              .addColumn(F, b("a"), 7L, b("a7"))
              .addColumn(F, b("b"), 7L, b("b7"))
              .addColumn(F, b("b"), 8L, b("b8")));
      // Only cells whose timestamp is exactly 7, in every column of the family.
      t.delete(new Delete(b("d4")).addFamilyVersion(F, 7L));
      Result r = t.get(new Get(b("d4")).readAllVersions());
      assertEquals(List.of(8L), timestamps(r));
      assertEquals("b8", s(r.getValue(F, b("b"))));
    }
  }

  @Test
  @Order(23)
  void deleteWholeRow() throws Exception {
    try (Table t = conn.getTable(table)) {
      t.put(new Put(b("d5")).addColumn(F, b("a"), b("1")).addColumn(G, b("b"), b("2")));
      assertTrue(t.exists(new Get(b("d5"))));
      t.delete(new Delete(b("d5")));
      assertTrue(t.get(new Get(b("d5"))).isEmpty());
      assertFalse(t.exists(new Get(b("d5"))));
      // Deleting a missing row is not an error.
      t.delete(new Delete(b("d5-never-written")));
      // A put after the delete (newer timestamp) is visible again.
      t.put(new Put(b("d5")).addColumn(F, b("a"), b("again")));
      assertEquals("again", s(t.get(new Get(b("d5"))).getValue(F, b("a"))));
    }
  }

  @Test
  @Order(24)
  void deleteMarkerHidesOlderPutsOnly() throws Exception {
    try (Table t = conn.getTable(versioned)) {
      putVersions(t, "d6", 10, 20);
      // A row delete at timestamp 15 masks 10, not 20.
      t.delete(new Delete(b("d6"), 15L));
      assertEquals(List.of(20L), timestamps(t.get(new Get(b("d6")).readAllVersions())));
      // A put below the delete marker's timestamp stays masked.
      t.put(new Put(b("d6")).addColumn(F, b("q"), 12L, b("masked")));
      assertEquals(List.of(20L), timestamps(t.get(new Get(b("d6")).readAllVersions())));
    }
  }

  @Test
  @Order(25)
  void multiDeleteAcrossRows() throws Exception {
    try (Table t = conn.getTable(table)) {
      List<Put> puts = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        puts.add(new Put(b("md" + i)).addColumn(F, b("q"), Bytes.toBytes(i)));
      }
      t.put(puts);
      List<Delete> deletes = new ArrayList<>();
      for (int i = 0; i < 10; i += 2) {
        deletes.add(new Delete(b("md" + i)));
      }
      t.delete(deletes);
      List<Get> gets = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        gets.add(new Get(b("md" + i)));
      }
      Result[] rs = t.get(gets);
      boolean[] present = new boolean[10];
      for (int i = 0; i < 10; i++) {
        present[i] = !rs[i].isEmpty();
      }
      assertEquals(
          "[false, true, false, true, false, true, false, true, false, true]",
          Arrays.toString(present));
      assertEquals(3, Bytes.toInt(rs[3].getValue(F, b("q"))));
    }
  }
}
