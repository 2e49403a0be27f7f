package io.ferrobase.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.hbase.CompareOperator;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Append;
import org.apache.hadoop.hbase.client.CheckAndMutate;
import org.apache.hadoop.hbase.client.CheckAndMutateResult;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Increment;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.RowMutations;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.filter.SingleColumnValueFilter;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/** Increment, append, checkAndMutate and row mutations, alone and from concurrent clients. */
@Order(6)
class AtomicTest extends InteropTestBase {
  private static final int CLIENTS = 4;
  private static TableName table;

  @BeforeAll
  static void createTable() throws Exception {
    table = createTable("atomic", F, G);
  }

  private static long longAt(Table t, String row, byte[] family, String qualifier)
      throws Exception {
    return Bytes.toLong(t.get(new Get(b(row))).getValue(family, b(qualifier)));
  }

  /** Runs {@code work(client, thread)} on CLIENTS connections with two threads each. */
  private static <T> List<T> concurrently(ClientWork<T> work) throws Exception {
    List<Connection> connections = new ArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(CLIENTS * 2);
    try {
      List<Future<T>> futures = new ArrayList<>();
      for (int c = 0; c < CLIENTS; c++) {
        Connection client = TestTarget.get().connect();
        connections.add(client);
        for (int th = 0; th < 2; th++) {
          final int worker = c * 2 + th;
          Callable<T> task =
              () -> {
                try (Table t = client.getTable(table)) {
                  return work.run(t, worker);
                }
              };
          futures.add(pool.submit(task));
        }
      }
      List<T> out = new ArrayList<>();
      for (Future<T> f : futures) {
        out.add(f.get(5, TimeUnit.MINUTES));
      }
      return out;
    } finally {
      pool.shutdownNow();
      for (Connection c : connections) {
        c.close();
      }
    }
  }

  @FunctionalInterface
  private interface ClientWork<T> {
    T run(Table table, int worker) throws Exception;
  }

  @Test
  @Order(1)
  void incrementColumnValue() throws Exception {
    try (Table t = conn.getTable(table)) {
      assertEquals(5L, t.incrementColumnValue(b("inc"), F, b("c"), 5));
      assertEquals(8L, t.incrementColumnValue(b("inc"), F, b("c"), 3));
      assertEquals(-2L, t.incrementColumnValue(b("inc"), F, b("c"), -10));
      assertEquals(-2L, longAt(t, "inc", F, "c"));
      // An amount of 0 reads the current value.
      assertEquals(-2L, t.incrementColumnValue(b("inc"), F, b("c"), 0));
    }
  }

  @Test
  @Order(2)
  void incrementSeveralColumns() throws Exception {
    try (Table t = conn.getTable(table)) {
      t.put(new Put(b("multi")).addColumn(F, b("a"), Bytes.toBytes(100L)));
      Result r =
          t.increment(
              new Increment(b("multi"))
                  .addColumn(F, b("a"), 1)
                  .addColumn(F, b("b"), 10)
                  .addColumn(G, b("c"), 100));
      assertEquals(101L, Bytes.toLong(r.getValue(F, b("a"))));
      assertEquals(10L, Bytes.toLong(r.getValue(F, b("b"))));
      assertEquals(100L, Bytes.toLong(r.getValue(G, b("c"))));
      assertEquals(3, r.size());
      assertEquals(101L, longAt(t, "multi", F, "a"));
      // Without returned results the increment still applies.
      Increment quiet = new Increment(b("multi")).addColumn(F, b("a"), 1);
      quiet.setReturnResults(false);
      assertTrue(t.increment(quiet).isEmpty());
      assertEquals(102L, longAt(t, "multi", F, "a"));
    }
  }

  @Test
  @Order(3)
  void append() throws Exception {
    try (Table t = conn.getTable(table)) {
      Result first = t.append(new Append(b("app")).addColumn(F, b("s"), b("abc")));
      assertEquals("abc", s(first.getValue(F, b("s"))));
      Result second =
          t.append(
              new Append(b("app")).addColumn(F, b("s"), b("def")).addColumn(F, b("t"), b("x")));
      assertEquals("abcdef", s(second.getValue(F, b("s"))));
      assertEquals("x", s(second.getValue(F, b("t"))));
      assertEquals("abcdef", s(t.get(new Get(b("app"))).getValue(F, b("s"))));
    }
  }

  @Test
  @Order(4)
  void concurrentIncrementsFromSeveralClients() throws Exception {
    int perWorker = 100;
    List<List<Long>> returned =
        concurrently(
            (t, worker) -> {
              List<Long> seen = new ArrayList<>();
              for (int i = 0; i < perWorker; i++) {
                seen.add(t.incrementColumnValue(b("counter"), F, b("n"), 1));
              }
              return seen;
            });
    int total = CLIENTS * 2 * perWorker;
    Set<Long> all = new HashSet<>();
    for (List<Long> seen : returned) {
      all.addAll(seen);
    }
    // Each increment saw a value no other one saw: exactly 1..total.
    assertEquals(total, all.size());
    assertEquals(1L, (long) all.stream().min(Long::compare).orElseThrow());
    assertEquals((long) total, (long) all.stream().max(Long::compare).orElseThrow());
    try (Table t = conn.getTable(table)) {
      assertEquals(total, longAt(t, "counter", F, "n"));
    }
  }

  @Test
  @Order(5)
  void concurrentAppendsFromSeveralClients() throws Exception {
    int perWorker = 40;
    concurrently(
        (t, worker) -> {
          for (int i = 0; i < perWorker; i++) {
            t.append(new Append(b("log")).addColumn(F, b("s"), b(worker + ":" + i + ";")));
          }
          return null;
        });
    try (Table t = conn.getTable(table)) {
      String log = s(t.get(new Get(b("log"))).getValue(F, b("s")));
      String[] tokens = log.split(";");
      assertEquals(CLIENTS * 2 * perWorker, tokens.length);
      Set<String> unique = new HashSet<>(List.of(tokens));
      assertEquals(tokens.length, unique.size(), "no append lost or doubled");
      // Each worker's own appends keep their order.
      for (int w = 0; w < CLIENTS * 2; w++) {
        int last = -1;
        for (String token : tokens) {
          if (token.startsWith(w + ":")) {
            int i = Integer.parseInt(token.substring(token.indexOf(':') + 1));
            assertEquals(last + 1, i);
            last = i;
          }
        }
        assertEquals(perWorker - 1, last);
      }
    }
  }

  @Test
  @Order(10)
  void checkAndPutIfNotExists() throws Exception {
    try (Table t = conn.getTable(table)) {
      CheckAndMutate first =
          CheckAndMutate.newBuilder(b("cas1"))
              .ifNotExists(F, b("owner"))
              .build(new Put(b("cas1")).addColumn(F, b("owner"), b("alice")));
      assertTrue(t.checkAndMutate(first).isSuccess());
      CheckAndMutate second =
          CheckAndMutate.newBuilder(b("cas1"))
              .ifNotExists(F, b("owner"))
              .build(new Put(b("cas1")).addColumn(F, b("owner"), b("bob")));
      assertFalse(t.checkAndMutate(second).isSuccess());
      assertEquals("alice", s(t.get(new Get(b("cas1"))).getValue(F, b("owner"))));
    }
  }

  @Test
  @Order(11)
  void checkAndMutateComparisons() throws Exception {
    try (Table t = conn.getTable(table)) {
      t.put(new Put(b("cas2")).addColumn(F, b("v"), b("5")));
      assertFalse(
          t.checkAndMutate(
                  CheckAndMutate.newBuilder(b("cas2"))
                      .ifEquals(F, b("v"), b("6"))
                      .build(new Put(b("cas2")).addColumn(F, b("v"), b("x"))))
              .isSuccess());
      assertTrue(
          t.checkAndMutate(
                  CheckAndMutate.newBuilder(b("cas2"))
                      .ifEquals(F, b("v"), b("5"))
                      .build(new Put(b("cas2")).addColumn(F, b("v"), b("6"))))
              .isSuccess());
      // HBase compares the given value with the stored one: GREATER passes when "7" > stored "6".
      assertTrue(
          t.checkAndMutate(
                  CheckAndMutate.newBuilder(b("cas2"))
                      .ifMatches(F, b("v"), CompareOperator.GREATER, b("7"))
                      .build(new Put(b("cas2")).addColumn(F, b("w"), b("greater"))))
              .isSuccess());
      assertFalse(
          t.checkAndMutate(
                  CheckAndMutate.newBuilder(b("cas2"))
                      .ifMatches(F, b("v"), CompareOperator.LESS, b("6"))
                      .build(new Put(b("cas2")).addColumn(F, b("w"), b("less"))))
              .isSuccess());
      assertEquals("greater", s(t.get(new Get(b("cas2"))).getValue(F, b("w"))));
      // Check one column, delete another.
      assertTrue(
          t.checkAndMutate(
                  CheckAndMutate.newBuilder(b("cas2"))
                      .ifMatches(F, b("v"), CompareOperator.NOT_EQUAL, b("5"))
                      .build(new Delete(b("cas2")).addColumns(F, b("w"))))
              .isSuccess());
      assertNull(t.get(new Get(b("cas2"))).getValue(F, b("w")));
    }
  }

  @Test
  @Order(12)
  void checkAndMutateRowMutationsAndFilters() throws Exception {
    try (Table t = conn.getTable(table)) {
      t.put(new Put(b("cas3")).addColumn(F, b("state"), b("open")).addColumn(F, b("tmp"), b("1")));
      RowMutations close =
          RowMutations.of(
              List.of(
                  new Put(b("cas3")).addColumn(F, b("state"), b("closed")),
                  new Delete(b("cas3")).addColumns(F, b("tmp"))));
      CheckAndMutateResult r =
          t.checkAndMutate(
              CheckAndMutate.newBuilder(b("cas3")).ifEquals(F, b("state"), b("open")).build(close));
      assertTrue(r.isSuccess());
      Result row = t.get(new Get(b("cas3")));
      assertEquals("closed", s(row.getValue(F, b("state"))));
      assertNull(row.getValue(F, b("tmp")));
      // The same mutations again: the check fails, nothing changes.
      assertFalse(
          t.checkAndMutate(
                  CheckAndMutate.newBuilder(b("cas3"))
                      .ifEquals(F, b("state"), b("open"))
                      .build(
                          RowMutations.of(
                              List.of(new Put(b("cas3")).addColumn(F, b("state"), b("reopened"))))))
              .isSuccess());
      // A filter as the condition, an increment as the mutation (its result comes back).
      CheckAndMutateResult inc =
          t.checkAndMutate(
              CheckAndMutate.newBuilder(b("cas3"))
                  .ifMatches(
                      new SingleColumnValueFilter(
                          F, b("state"), CompareOperator.EQUAL, b("closed")))
                  .build(new Increment(b("cas3")).addColumn(F, b("closes"), 1)));
      assertTrue(inc.isSuccess());
      assertEquals(1L, Bytes.toLong(inc.getResult().getValue(F, b("closes"))));
    }
  }

  @Test
  @Order(13)
  void mutateRowIsAtomic() throws Exception {
    try (Table t = conn.getTable(table)) {
      t.put(new Put(b("mr")).addColumn(F, b("old"), b("1")));
      t.mutateRow(
          RowMutations.of(
              List.of(
                  new Put(b("mr")).addColumn(F, b("new"), b("2")),
                  new Delete(b("mr")).addColumns(F, b("old")))));
      Result r = t.get(new Get(b("mr")));
      assertEquals(1, r.size());
      assertEquals("2", s(r.getValue(F, b("new"))));
    }
  }

  @Test
  @Order(14)
  void concurrentCompareAndSetLosesNoUpdate() throws Exception {
    int perWorker = 15;
    try (Table t = conn.getTable(table)) {
      t.put(new Put(b("cas-counter")).addColumn(F, b("n"), b("0")));
    }
    Set<String> winners = ConcurrentHashMap.newKeySet();
    List<Integer> conflicts =
        concurrently(
            (t, worker) -> {
              int lost = 0;
              for (int done = 0; done < perWorker; ) {
                if (lost > 100_000) {
                  throw new IllegalStateException("no progress");
                }
                byte[] current = t.get(new Get(b("cas-counter"))).getValue(F, b("n"));
                int next = Integer.parseInt(s(current)) + 1;
                boolean ok =
                    t.checkAndMutate(
                            CheckAndMutate.newBuilder(b("cas-counter"))
                                .ifEquals(F, b("n"), current)
                                .build(
                                    new Put(b("cas-counter"))
                                        .addColumn(F, b("n"), b(Integer.toString(next)))))
                        .isSuccess();
                if (ok) {
                  // Exactly one writer moves the counter to each value.
                  assertTrue(winners.add(Integer.toString(next)), "two winners for " + next);
                  done++;
                } else {
                  lost++;
                }
              }
              return lost;
            });
    int total = CLIENTS * 2 * perWorker;
    assertEquals(total, winners.size());
    try (Table t = conn.getTable(table)) {
      assertEquals(
          Integer.toString(total), s(t.get(new Get(b("cas-counter"))).getValue(F, b("n"))));
    }
    System.err.println("compare-and-set conflicts per worker: " + conflicts);
  }
}
