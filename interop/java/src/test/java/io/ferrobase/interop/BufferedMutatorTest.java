package io.ferrobase.interop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.BufferedMutator;
import org.apache.hadoop.hbase.client.BufferedMutatorParams;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.RetriesExhaustedWithDetailsException;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/** Bulk writes through {@link BufferedMutator}: tens of thousands of rows over four regions. */
@Order(5)
class BufferedMutatorTest extends InteropTestBase {
  private static final int ROWS = 30_000;
  private static TableName table;

  @BeforeAll
  static void createTable() throws Exception {
    table = createTable("mutator", new byte[][] {key(7_500), key(15_000), key(22_500)}, F);
  }

  private static byte[] key(int i) {
    return b(String.format("row%06d", i));
  }

  /** 100 bytes that depend on the row. */
  private static byte[] value(int i) {
    byte[] v = new byte[100];
    for (int k = 0; k < v.length; k++) {
      v[k] = (byte) (i * 31 + k);
    }
    return v;
  }

  private static BufferedMutator mutator(List<Exception> failures) throws Exception {
    BufferedMutatorParams params =
        new BufferedMutatorParams(table)
            .writeBufferSize(1024 * 1024)
            .listener(
                (RetriesExhaustedWithDetailsException e, BufferedMutator m) -> failures.add(e));
    return conn.getBufferedMutator(params);
  }

  @Test
  @Order(1)
  void loadTensOfThousandsOfRowsThenCount() throws Exception {
    List<Exception> failures = Collections.synchronizedList(new ArrayList<>());
    try (BufferedMutator m = mutator(failures)) {
      for (int i = 0; i < ROWS; i++) {
        m.mutate(
            new Put(key(i))
                .addColumn(F, b("v"), value(i))
                .addColumn(F, b("n"), b(Integer.toString(i))));
      }
    } // close() flushes
    assertEquals(List.of(), failures);
    try (Table t = conn.getTable(table)) {
      assertEquals(ROWS, countRows(t));
      // Every row, every value, in key order.
      int i = 0;
      try (ResultScanner rs = t.getScanner(new Scan().setCaching(2000))) {
        for (Result r : rs) {
          assertArrayEquals(key(i), r.getRow());
          assertArrayEquals(value(i), r.getValue(F, b("v")), "value of row " + i);
          assertEquals(Integer.toString(i), s(r.getValue(F, b("n"))));
          i++;
        }
      }
      assertEquals(ROWS, i);
      for (int probe : new int[] {0, 7_499, 7_500, 22_499, ROWS - 1}) {
        assertArrayEquals(value(probe), t.get(new Get(key(probe))).getValue(F, b("v")));
      }
    }
  }

  @Test
  @Order(2)
  void flushMakesWritesVisible() throws Exception {
    List<Exception> failures = Collections.synchronizedList(new ArrayList<>());
    try (BufferedMutator m = mutator(failures);
        Table t = conn.getTable(table)) {
      m.mutate(new Put(b("flushed")).addColumn(F, b("v"), b("yes")));
      m.flush();
      assertEquals("yes", s(t.get(new Get(b("flushed"))).getValue(F, b("v"))));
      m.mutate(new Delete(b("flushed")));
      m.flush();
      assertTrue(t.get(new Get(b("flushed"))).isEmpty());
    }
    assertEquals(List.of(), failures);
  }

  @Test
  @Order(3)
  void deletesThroughTheMutator() throws Exception {
    List<Exception> failures = Collections.synchronizedList(new ArrayList<>());
    try (BufferedMutator m = mutator(failures)) {
      List<Delete> batch = new ArrayList<>();
      for (int i = 0; i < ROWS; i += 3) {
        batch.add(new Delete(key(i)));
      }
      m.mutate(batch);
    }
    assertEquals(List.of(), failures);
    try (Table t = conn.getTable(table)) {
      assertEquals(ROWS - ROWS / 3, countRows(t));
      assertTrue(t.get(new Get(key(3))).isEmpty());
      assertArrayEquals(value(4), t.get(new Get(key(4))).getValue(F, b("v")));
    }
  }
}
