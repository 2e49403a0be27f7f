package io.ferrobase.interop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.BufferedMutator;
import org.apache.hadoop.hbase.client.BufferedMutatorParams;
import org.apache.hadoop.hbase.client.Durability;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.RetriesExhaustedWithDetailsException;
import org.apache.hadoop.hbase.client.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The {@code log9} load of {@code ferrobase bench load --shape log9}, through the unmodified
 * HBase Java client's {@link BufferedMutator}: the same rows (docs/workloads.md), the same split
 * of row ranges over threads, the same write buffer and durability. A benchmark, run only when
 * {@code -Dlog9.rows=N} is given ({@code scripts/bench-java-load.sh} runs it beside {@code
 * ferrobase bench load} against one server); it checks a sample of rows read back.
 *
 * <p>Properties: {@code log9.rows}, {@code log9.threads} (4), {@code log9.buffer} (bytes,
 * 12 MiB), {@code log9.durability} (an HBase {@link Durability} name, SKIP_WAL), {@code
 * log9.out} (a file the JSON result is written to).
 */
class Log9LoadBench extends InteropTestBase {

  /** FNV-1a 64 over the 8 little-endian bytes of {@code x}. */
  static long fnv(long x) {
    long h = 0xCBF29CE484222325L;
    for (int i = 0; i < 8; i++) {
      h ^= (x >>> (8 * i)) & 0xFF;
      h *= 0x00000100000001B3L;
    }
    return h;
  }

  /** YCSB's hashed key of item {@code i}. */
  static byte[] ycsbKey(long i) {
    return ("user" + Long.toUnsignedString(fnv(i) & 0x7FFFFFFFFFFFFFFFL))
        .getBytes(StandardCharsets.US_ASCII);
  }

  private static final byte[] ALPHABET =
      "abcdefghijklmnopqrstuvwxyz0123456789".getBytes(StandardCharsets.US_ASCII);

  /** {@code n} bytes of the alphabet from {@code seed} (xorshift64*). */
  static byte[] text(long seed, int n) {
    byte[] out = new byte[n];
    long x = seed | 1;
    for (int k = 0; k < n; k++) {
      x ^= x >>> 12;
      x ^= x << 25;
      x ^= x >>> 27;
      long r = x * 0x2545F4914F6CDD1DL;
      out[k] = ALPHABET[(int) Long.remainderUnsigned(r, 36)];
    }
    return out;
  }

  /** Row {@code i} of {@code log9}: cells c0..c8 of 10-19 bytes. */
  static Put row(long i, Durability durability) {
    Put p = new Put(ycsbKey(i));
    for (long j = 0; j < 9; j++) {
      long h = fnv(i * 9 + j);
      p.addColumn(F, b("c" + j), text(h, 10 + (int) Long.remainderUnsigned(h, 10)));
    }
    p.setDurability(durability);
    return p;
  }

  @Test
  @EnabledIfSystemProperty(named = "log9.rows", matches = "\\d+")
  void loadLog9ThroughBufferedMutator() throws Exception {
    long rows = Long.parseLong(System.getProperty("log9.rows"));
    int threads = Integer.parseInt(System.getProperty("log9.threads", "4"));
    long buffer = Long.parseLong(System.getProperty("log9.buffer", String.valueOf(12 << 20)));
    Durability durability = Durability.valueOf(System.getProperty("log9.durability", "SKIP_WAL"));
    TableName t = createTable("bench_log9_java", F);
    List<Exception> failures = Collections.synchronizedList(new ArrayList<>());
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    long start = System.nanoTime();
    List<Future<?>> done = new ArrayList<>();
    for (int k = 0; k < threads; k++) {
      long from = rows * k / threads;
      long to = rows * (k + 1) / threads;
      done.add(
          pool.submit(
              () -> {
                BufferedMutatorParams params =
                    new BufferedMutatorParams(t)
                        .writeBufferSize(buffer)
                        .listener(
                            (RetriesExhaustedWithDetailsException e, BufferedMutator m) ->
                                failures.add(e));
                try (BufferedMutator m = conn.getBufferedMutator(params)) {
                  for (long i = from; i < to; i++) {
                    m.mutate(row(i, durability));
                  }
                  m.flush();
                }
                return null;
              }));
    }
    for (Future<?> f : done) {
      f.get();
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    pool.shutdown();
    assertTrue(failures.isEmpty(), "failed writes: " + failures);
    double perSecond = rows / seconds;
    System.out.printf(
        "log9 through BufferedMutator: %d rows, %d threads, %.2f s, %.0f rows/s%n",
        rows, threads, seconds, perSecond);

    // Read a sample back: the load wrote what the generator makes.
    try (Table table = conn.getTable(t)) {
      for (long i : new long[] {0, rows / 2, rows - 1}) {
        Result r = table.get(new Get(ycsbKey(i)));
        assertEquals(9, r.size(), "row " + i);
        Put want = row(i, durability);
        for (long j = 0; j < 9; j++) {
          assertArrayEquals(
              value(want, "c" + j), r.getValue(F, b("c" + j)), "row " + i + " c" + j);
        }
      }
    }
    String out = System.getProperty("log9.out");
    if (out != null) {
      Files.writeString(
          Path.of(out),
          String.format(
              "{\"rows\": %d, \"threads\": %d, \"seconds\": %.3f, \"rows_per_sec\": %.1f}%n",
              rows, threads, seconds, perSecond));
    }
  }

  /** The generator agrees with the Rust one (crates/workloads' golden values). */
  @Test
  void generatorMatchesTheRustOne() {
    assertEquals("user2938590176187398597", new String(ycsbKey(0), StandardCharsets.US_ASCII));
    assertEquals(
        "user1011632231655643464", new String(ycsbKey(1_000_000), StandardCharsets.US_ASCII));
    assertEquals(
        "wzmjcy6qga55hq3", new String(value(row(0, Durability.SKIP_WAL), "c0"), StandardCharsets.US_ASCII));
  }

  private static byte[] value(Put p, String qualifier) {
    return CellUtil.cloneValue(p.get(F, b(qualifier)).get(0));
  }
}
