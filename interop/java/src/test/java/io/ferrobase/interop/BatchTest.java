package io.ferrobase.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Append;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Increment;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionLocator;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.RetriesExhaustedWithDetailsException;
import org.apache.hadoop.hbase.client.Row;
import org.apache.hadoop.hbase.client.RowMutations;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/**
 * {@code Table.batch} over the five regions of a pre-split table (rows 0xx..9xx, split at 2, 4, 6
 * and 8).
 */
@Order(7)
class BatchTest extends InteropTestBase {
  private static TableName table;

  @BeforeAll
  static void createTable() throws Exception {
    table = createTable("batch", new byte[][] {b("2"), b("4"), b("6"), b("8")}, F);
  }

  private static byte[] key(int i) {
    return b(String.format("%03d", i * 17 % 1000));
  }

  @Test
  @Order(1)
  void tableHasFiveRegionsAndTheRowsSpanThemAll() throws Exception {
    Set<String> regions = new HashSet<>();
    try (RegionLocator locator = conn.getRegionLocator(table)) {
      assertEquals(5, locator.getAllRegionLocations().size());
      for (int i = 0; i < 60; i++) {
        regions.add(locator.getRegionLocation(key(i)).getRegion().getEncodedName());
      }
    }
    assertEquals(5, regions.size(), "the test rows fall in every region");
  }

  @Test
  @Order(2)
  void batchOfPutsAcrossRegions() throws Exception {
    try (Table t = conn.getTable(table)) {
      List<Row> puts = new ArrayList<>();
      for (int i = 0; i < 60; i++) {
        puts.add(new Put(key(i)).addColumn(F, b("q"), b("v" + i)));
      }
      Object[] results = new Object[puts.size()];
      t.batch(puts, results);
      for (int i = 0; i < results.length; i++) {
        assertInstanceOf(Result.class, results[i], "action " + i);
        assertTrue(((Result) results[i]).isEmpty(), "a put answers an empty result");
      }
      List<Row> gets = new ArrayList<>();
      for (int i = 59; i >= 0; i--) {
        gets.add(new Get(key(i)));
      }
      Object[] got = new Object[gets.size()];
      t.batch(gets, got);
      for (int i = 0; i < got.length; i++) {
        assertEquals("v" + (59 - i), s(((Result) got[i]).getValue(F, b("q"))));
      }
      assertEquals(60, countRows(t));
    }
  }

  @Test
  @Order(3)
  void mixedBatchAnswersEachActionInOrder() throws Exception {
    try (Table t = conn.getTable(table)) {
      t.put(new Put(b("100")).addColumn(F, b("q"), b("to-delete")));
      t.put(new Put(b("300")).addColumn(F, b("s"), b("ab")));
      t.put(new Put(b("500")).addColumn(F, b("q"), b("read-me")));
      List<Row> actions = new ArrayList<>();
      actions.add(new Put(b("900")).addColumn(F, b("q"), b("new")));
      actions.add(new Delete(b("100")));
      actions.add(new Get(b("500")));
      actions.add(new Increment(b("700")).addColumn(F, b("n"), 42));
      actions.add(new Append(b("300")).addColumn(F, b("s"), b("cd")));
      actions.add(
          RowMutations.of(
              List.of(
                  new Put(b("201")).addColumn(F, b("a"), b("1")),
                  new Put(b("201")).addColumn(F, b("b"), b("2")))));
      actions.add(new Get(b("999-missing")));
      Object[] results = new Object[actions.size()];
      t.batch(actions, results);
      for (int i = 0; i < results.length; i++) {
        assertInstanceOf(Result.class, results[i], "action " + i + ": " + results[i]);
      }
      assertEquals("read-me", s(((Result) results[2]).getValue(F, b("q"))));
      assertEquals(42L, Bytes.toLong(((Result) results[3]).getValue(F, b("n"))));
      assertEquals("abcd", s(((Result) results[4]).getValue(F, b("s"))));
      assertTrue(((Result) results[6]).isEmpty());

      assertEquals("new", s(t.get(new Get(b("900"))).getValue(F, b("q"))));
      assertTrue(t.get(new Get(b("100"))).isEmpty());
      assertEquals(2, t.get(new Get(b("201"))).size());
      assertEquals("abcd", s(t.get(new Get(b("300"))).getValue(F, b("s"))));
    }
  }

  @Test
  @Order(4)
  void batchCallbackSeesEveryAction() throws Exception {
    try (Table t = conn.getTable(table)) {
      List<Row> puts = new ArrayList<>();
      for (int i = 100; i < 140; i++) {
        puts.add(new Put(key(i)).addColumn(F, b("cb"), b(Integer.toString(i))));
      }
      AtomicInteger calls = new AtomicInteger();
      Set<String> rows = ConcurrentHashMap.newKeySet();
      Object[] results = new Object[puts.size()];
      t.batchCallback(
          puts,
          results,
          (byte[] region, byte[] row, Result r) -> {
            calls.incrementAndGet();
            rows.add(Bytes.toString(row));
          });
      assertEquals(puts.size(), calls.get());
      assertEquals(puts.size(), rows.size());
    }
  }

  @Test
  @Order(5)
  void aFailedActionDoesNotFailTheOthers() throws Exception {
    try (Table t = conn.getTable(table)) {
      List<Row> actions = new ArrayList<>();
      for (int i = 200; i < 210; i++) {
        actions.add(new Put(key(i)).addColumn(F, b("ok"), b("yes")));
      }
      int bad = 4;
      actions.add(bad, new Put(b("555")).addColumn(b("no_such_family"), b("q"), b("x")));
      Object[] results = new Object[actions.size()];
      RetriesExhaustedWithDetailsException e =
          assertThrows(RetriesExhaustedWithDetailsException.class, () -> t.batch(actions, results));
      assertEquals(1, e.getNumExceptions());
      assertInstanceOf(NoSuchColumnFamilyException.class, e.getCause(0));
      assertEquals("555", Bytes.toString(e.getRow(0).getRow()));
      for (int i = 0; i < results.length; i++) {
        if (i == bad) {
          assertInstanceOf(NoSuchColumnFamilyException.class, results[i]);
        } else {
          assertInstanceOf(Result.class, results[i], "action " + i);
        }
      }
      for (int i = 200; i < 210; i++) {
        assertEquals("yes", s(t.get(new Get(key(i))).getValue(F, b("ok"))));
      }
      assertNull(t.get(new Get(b("555"))).getValue(F, b("ok")));
    }
  }

  @Test
  @Order(6)
  void listPutsGetsAndDeletesAcrossRegions() throws Exception {
    try (Table t = conn.getTable(table)) {
      List<Put> puts = new ArrayList<>();
      List<Get> gets = new ArrayList<>();
      List<Delete> deletes = new ArrayList<>();
      for (int i = 300; i < 400; i++) {
        puts.add(new Put(key(i)).addColumn(F, b("l"), b("l" + i)));
        gets.add(new Get(key(i)).addColumn(F, b("l")));
        deletes.add(new Delete(key(i)).addColumns(F, b("l")));
      }
      t.put(puts);
      Result[] rs = t.get(gets);
      for (int i = 0; i < rs.length; i++) {
        assertEquals("l" + (300 + i), s(rs[i].getValue(F, b("l"))));
      }
      t.delete(deletes);
      for (Result r : t.get(gets)) {
        assertTrue(r.isEmpty());
      }
    }
  }
}
