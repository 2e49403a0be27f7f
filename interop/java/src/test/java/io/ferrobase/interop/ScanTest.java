package io.ferrobase.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.CompareOperator;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.filter.BinaryComparator;
import org.apache.hadoop.hbase.filter.ColumnCountGetFilter;
import org.apache.hadoop.hbase.filter.ColumnPrefixFilter;
import org.apache.hadoop.hbase.filter.ColumnRangeFilter;
import org.apache.hadoop.hbase.filter.FamilyFilter;
import org.apache.hadoop.hbase.filter.Filter;
import org.apache.hadoop.hbase.filter.FilterList;
import org.apache.hadoop.hbase.filter.FirstKeyOnlyFilter;
import org.apache.hadoop.hbase.filter.InclusiveStopFilter;
import org.apache.hadoop.hbase.filter.KeyOnlyFilter;
import org.apache.hadoop.hbase.filter.MultipleColumnPrefixFilter;
import org.apache.hadoop.hbase.filter.PageFilter;
import org.apache.hadoop.hbase.filter.PrefixFilter;
import org.apache.hadoop.hbase.filter.QualifierFilter;
import org.apache.hadoop.hbase.filter.RegexStringComparator;
import org.apache.hadoop.hbase.filter.RowFilter;
import org.apache.hadoop.hbase.filter.SingleColumnValueFilter;
import org.apache.hadoop.hbase.filter.SkipFilter;
import org.apache.hadoop.hbase.filter.SubstringComparator;
import org.apache.hadoop.hbase.filter.TimestampsFilter;
import org.apache.hadoop.hbase.filter.ValueFilter;
import org.apache.hadoop.hbase.filter.WhileMatchFilter;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/**
 * Scans: ranges, caching, batch, limits, reversed, partial results of wide rows, and the common
 * filters as the Java client serialises them.
 *
 * <p>The main table holds rows {@code row000..row099}, each with {@code f:q0, f:q1, f:q2} = {@code
 * v<i>-<j>}.
 */
@Order(4)
class ScanTest extends InteropTestBase {
  private static final int ROWS = 100;
  private static TableName table;
  private static TableName wide;
  private static TableName split;

  @BeforeAll
  static void load() throws Exception {
    table = createTable("scan", F, G);
    try (Table t = conn.getTable(table)) {
      List<Put> puts = new ArrayList<>();
      for (int i = 0; i < ROWS; i++) {
        Put p = new Put(row(i));
        for (int j = 0; j < 3; j++) {
          p.addColumn(F, b("q" + j), b("v" + i + "-" + j));
        }
        puts.add(p);
      }
      // Family g only on every tenth row.
      for (int i = 0; i < ROWS; i += 10) {
        puts.add(new Put(row(i)).addColumn(G, b("x"), b("g" + i)));
      }
      t.put(puts);
    }
    // One wide row of 200 cells of 1 KiB, between two narrow rows.
    wide = createTable("scan_wide", F);
    try (Table t = conn.getTable(wide)) {
      t.put(new Put(b("a")).addColumn(F, b("q"), b("before")));
      Put p = new Put(b("m"));
      for (int j = 0; j < 200; j++) {
        byte[] value = new byte[1024];
        Arrays.fill(value, (byte) ('a' + j % 26));
        p.addColumn(F, b(String.format("c%03d", j)), value);
      }
      t.put(p);
      t.put(new Put(b("z")).addColumn(F, b("q"), b("after")));
    }
    // Four regions: [,h) [h,p) [p,w) [w,).
    split = createTable("scan_split", new byte[][] {b("h"), b("p"), b("w")}, F);
    try (Table t = conn.getTable(split)) {
      List<Put> puts = new ArrayList<>();
      for (char c = 'a'; c <= 'z'; c++) {
        puts.add(new Put(b(String.valueOf(c))).addColumn(F, b("q"), b("v" + c)));
      }
      t.put(puts);
    }
  }

  private static byte[] row(int i) {
    return b(String.format("row%03d", i));
  }

  /** Row keys in scan order. */
  private static List<String> rows(Table t, Scan scan) throws Exception {
    List<String> out = new ArrayList<>();
    try (ResultScanner rs = t.getScanner(scan)) {
      for (Result r : rs) {
        out.add(s(r.getRow()));
      }
    }
    return out;
  }

  private static List<Result> results(Table t, Scan scan) throws Exception {
    List<Result> out = new ArrayList<>();
    try (ResultScanner rs = t.getScanner(scan)) {
      for (Result r : rs) {
        out.add(r);
      }
    }
    return out;
  }

  private static List<String> expectedRows(int from, int to) {
    List<String> out = new ArrayList<>();
    for (int i = from; i < to; i++) {
      out.add(String.format("row%03d", i));
    }
    return out;
  }

  private static int cells(List<Result> rs) {
    return rs.stream().mapToInt(Result::size).sum();
  }

  @Test
  @Order(1)
  void fullScanReturnsEveryRowInOrder() throws Exception {
    try (Table t = conn.getTable(table)) {
      List<Result> rs = results(t, new Scan());
      assertEquals(ROWS, rs.size());
      for (int i = 0; i < ROWS; i++) {
        assertEquals(String.format("row%03d", i), s(rs.get(i).getRow()));
        assertEquals(i % 10 == 0 ? 4 : 3, rs.get(i).size());
        assertEquals("v" + i + "-2", s(rs.get(i).getValue(F, b("q2"))));
      }
    }
  }

  @Test
  @Order(2)
  void cachingDoesNotChangeWhatIsReturned() throws Exception {
    try (Table t = conn.getTable(table)) {
      List<String> all = expectedRows(0, ROWS);
      for (int caching : new int[] {1, 7, 1000}) {
        assertEquals(all, rows(t, new Scan().setCaching(caching)), "caching " + caching);
      }
      // A small result size forces many round trips of a few rows each.
      assertEquals(all, rows(t, new Scan().setMaxResultSize(200)));
    }
  }

  @Test
  @Order(3)
  void startAndStopRows() throws Exception {
    try (Table t = conn.getTable(table)) {
      assertEquals(
          expectedRows(10, 20), rows(t, new Scan().withStartRow(row(10)).withStopRow(row(20))));
      assertEquals(
          expectedRows(10, 21),
          rows(t, new Scan().withStartRow(row(10)).withStopRow(row(20), true)));
      assertEquals(
          expectedRows(11, 20),
          rows(t, new Scan().withStartRow(row(10), false).withStopRow(row(20))));
      // Start and stop between existing keys.
      assertEquals(
          expectedRows(11, 13),
          rows(t, new Scan().withStartRow(b("row010~")).withStopRow(b("row012~"))));
      assertTrue(rows(t, new Scan().withStartRow(b("zzz"))).isEmpty());
      assertEquals(
          List.of("row005"), rows(t, new Scan().withStartRow(row(5)).withStopRow(row(5), true)));
    }
  }

  @Test
  @Order(4)
  void limits() throws Exception {
    try (Table t = conn.getTable(table)) {
      assertEquals(expectedRows(0, 15), rows(t, new Scan().setLimit(15)));
      assertEquals(expectedRows(0, 15), rows(t, new Scan().setLimit(15).setCaching(4)));
      assertEquals(
          expectedRows(30, 31), rows(t, new Scan().withStartRow(row(30)).setOneRowLimit()));
      try (ResultScanner rs = t.getScanner(new Scan().setCaching(5))) {
        Result[] first = rs.next(12);
        assertEquals(12, first.length);
        assertEquals("row011", s(first[11].getRow()));
        assertEquals("row012", s(rs.next().getRow()));
      }
    }
  }

  @Test
  @Order(5)
  void columnsAndFamilies() throws Exception {
    try (Table t = conn.getTable(table)) {
      List<Result> one = results(t, new Scan().addColumn(F, b("q1")));
      assertEquals(ROWS, one.size());
      assertEquals(ROWS, cells(one));
      assertEquals("v7-1", s(one.get(7).getValue(F, b("q1"))));
      // Only the rows that have a cell in g.
      List<Result> g = results(t, new Scan().addFamily(G));
      assertEquals(10, g.size());
      assertEquals("g90", s(g.get(9).getValue(G, b("x"))));
    }
  }

  @Test
  @Order(6)
  void reversedScans() throws Exception {
    try (Table t = conn.getTable(table)) {
      List<String> descending = expectedRows(0, ROWS);
      Collections.reverse(descending);
      assertEquals(descending, rows(t, new Scan().setReversed(true)));
      assertEquals(descending, rows(t, new Scan().setReversed(true).setCaching(3)));
      // Reversed: the start row is the larger key, inclusive; the stop row exclusive.
      List<String> expected = expectedRows(41, 51);
      Collections.reverse(expected);
      assertEquals(
          expected,
          rows(t, new Scan().setReversed(true).withStartRow(row(50)).withStopRow(row(40))));
      assertEquals(
          List.of("row099", "row098", "row097"), rows(t, new Scan().setReversed(true).setLimit(3)));
      // A start row between keys begins at the next smaller key.
      assertEquals(
          List.of("row020", "row019"),
          rows(t, new Scan().setReversed(true).withStartRow(b("row020~")).setLimit(2)));
    }
  }

  @Test
  @Order(7)
  void batchSplitsAWideRow() throws Exception {
    try (Table t = conn.getTable(wide)) {
      List<Result> rs = results(t, new Scan().setBatch(64));
      // a (1 cell), m in 64+64+64+8, z (1 cell)
      List<Integer> sizes = new ArrayList<>();
      for (Result r : rs) {
        sizes.add(r.size());
      }
      assertEquals(List.of(1, 64, 64, 64, 8, 1), sizes);
      assertEquals("m", s(rs.get(1).getRow()));
      assertEquals("m", s(rs.get(4).getRow()));
      assertEquals("c199", s(CellUtil.cloneQualifier(rs.get(4).rawCells()[7])));
    }
  }

  @Test
  @Order(8)
  void partialResultsOfAWideRow() throws Exception {
    try (Table t = conn.getTable(wide)) {
      // Without partial results the client stitches the row together.
      List<Result> whole = results(t, new Scan().setMaxResultSize(8 * 1024));
      assertEquals(3, whole.size());
      assertEquals(200, whole.get(1).size());
      assertFalse(whole.get(1).mayHaveMoreCellsInRow());

      List<Result> parts =
          results(t, new Scan().setMaxResultSize(8 * 1024).setAllowPartialResults(true));
      assertTrue(parts.size() > 3, "a 200 KiB row in 8 KiB results: " + parts.size() + " results");
      List<String> qualifiers = new ArrayList<>();
      int partials = 0;
      for (Result r : parts) {
        if (s(r.getRow()).equals("m")) {
          for (Cell c : r.rawCells()) {
            qualifiers.add(s(CellUtil.cloneQualifier(c)));
          }
          if (r.mayHaveMoreCellsInRow()) {
            partials++;
          }
        }
      }
      assertEquals(200, qualifiers.size());
      assertEquals("c000", qualifiers.get(0));
      assertEquals("c199", qualifiers.get(199));
      List<String> sorted = new ArrayList<>(qualifiers);
      Collections.sort(sorted);
      assertEquals(sorted, qualifiers);
      assertTrue(partials > 0, "some results are marked partial");
      assertEquals("z", s(parts.get(parts.size() - 1).getRow()));
    }
  }

  @Test
  @Order(9)
  void scansAcrossRegions() throws Exception {
    List<String> letters = new ArrayList<>();
    for (char c = 'a'; c <= 'z'; c++) {
      letters.add(String.valueOf(c));
    }
    try (Table t = conn.getTable(split)) {
      assertEquals(letters, rows(t, new Scan()));
      assertEquals(letters, rows(t, new Scan().setCaching(2)));
      List<String> reversed = new ArrayList<>(letters);
      Collections.reverse(reversed);
      assertEquals(reversed, rows(t, new Scan().setReversed(true)));
      assertEquals(reversed, rows(t, new Scan().setReversed(true).setCaching(2)));
      // From the middle of one region into the next ones.
      assertEquals(
          letters.subList(5, 20),
          rows(t, new Scan().withStartRow(b("f")).withStopRow(b("u"))));
      // A limit that crosses a region boundary.
      assertEquals(letters.subList(6, 12), rows(t, new Scan().withStartRow(b("g")).setLimit(6)));
      assertEquals(
          List.of("i", "h", "g", "f"),
          rows(t, new Scan().setReversed(true).withStartRow(b("i")).setLimit(4)));
    }
  }

  @Test
  @Order(10)
  void versionsAndTimeRangesInScans() throws Exception {
    TableName v = track(uniqueName("scan_versions"));
    admin.createTable(
        TableDescriptorBuilder.newBuilder(v)
            .setColumnFamily(ColumnFamilyDescriptorBuilder.newBuilder(F).setMaxVersions(10).build())
            .build());
    try (Table t = conn.getTable(v)) {
      for (int r = 0; r < 3; r++) {
        Put p = new Put(b("r" + r));
        for (long ts = 1; ts <= 5; ts++) {
          p.addColumn(F, b("q"), ts * 10, b("v" + ts));
        }
        t.put(p);
      }
      assertEquals(3, cells(results(t, new Scan())));
      assertEquals(15, cells(results(t, new Scan().readAllVersions())));
      assertEquals(6, cells(results(t, new Scan().readVersions(2))));
      List<Result> ranged = results(t, new Scan().setTimeRange(20, 40).readAllVersions());
      assertEquals(6, cells(ranged));
      assertEquals(30L, ranged.get(0).rawCells()[0].getTimestamp());
      List<Result> ts =
          results(
              t, new Scan().setFilter(new TimestampsFilter(List.of(10L, 50L))).readAllVersions());
      assertEquals(6, cells(ts));
      assertEquals(50L, ts.get(0).rawCells()[0].getTimestamp());
      assertEquals(10L, ts.get(0).rawCells()[1].getTimestamp());
    }
  }

  /** Rows and cell counts a filtered scan of the main table returns. */
  private static List<Result> filtered(Filter filter) throws Exception {
    try (Table t = conn.getTable(table)) {
      return results(t, new Scan().addFamily(F).setFilter(filter));
    }
  }

  @Test
  @Order(20)
  void rowFilters() throws Exception {
    assertEquals(10, filtered(new PrefixFilter(b("row02"))).size());
    try (Table t = conn.getTable(table)) {
      assertEquals(expectedRows(30, 40), rows(t, new Scan().setRowPrefixFilter(b("row03"))));
      assertEquals(
          expectedRows(0, 10),
          rows(t, new Scan().setFilter(new InclusiveStopFilter(row(9)))));
    }
    List<Result> regex =
        filtered(new RowFilter(CompareOperator.EQUAL, new RegexStringComparator("row0[0-4]5")));
    assertEquals(
        List.of("row005", "row015", "row025", "row035", "row045"),
        regex.stream().map(r -> s(r.getRow())).collect(Collectors.toList()));
    assertEquals(
        5, filtered(new RowFilter(CompareOperator.LESS, new BinaryComparator(row(5)))).size());
    assertEquals(10, filtered(new PageFilter(10)).size());
  }

  @Test
  @Order(21)
  void columnFilters() throws Exception {
    List<Result> prefix = filtered(new ColumnPrefixFilter(b("q1")));
    assertEquals(ROWS, prefix.size());
    assertEquals(ROWS, cells(prefix));
    assertEquals(
        2 * ROWS,
        cells(filtered(new MultipleColumnPrefixFilter(new byte[][] {b("q0"), b("q2")}))));
    List<Result> q2 =
        filtered(new QualifierFilter(CompareOperator.EQUAL, new BinaryComparator(b("q2"))));
    assertEquals(ROWS, cells(q2));
    assertNull(q2.get(0).getValue(F, b("q0")));
    List<Result> range = filtered(new ColumnRangeFilter(b("q0"), true, b("q2"), false));
    assertEquals(2 * ROWS, cells(range));
    assertNull(range.get(3).getValue(F, b("q2")));
    List<Result> first = filtered(new FirstKeyOnlyFilter());
    assertEquals(ROWS, first.size());
    assertEquals(ROWS, cells(first));
    assertEquals("v3-0", s(first.get(3).getValue(F, b("q0"))));
    try (Table t = conn.getTable(table)) {
      List<Result> families =
          results(
              t,
              new Scan()
                  .setFilter(new FamilyFilter(CompareOperator.EQUAL, new BinaryComparator(G))));
      assertEquals(10, families.size());
      assertEquals(10, cells(families));
      // A get keeps only the first N columns.
      Result counted = t.get(new Get(row(4)).setFilter(new ColumnCountGetFilter(2)));
      assertEquals(2, counted.size());
    }
  }

  @Test
  @Order(22)
  void valueFilters() throws Exception {
    List<Result> dashOne =
        filtered(new ValueFilter(CompareOperator.EQUAL, new SubstringComparator("-1")));
    assertEquals(ROWS, cells(dashOne));
    List<Result> keysOnly = filtered(new KeyOnlyFilter());
    assertEquals(3 * ROWS, cells(keysOnly));
    for (Cell c : keysOnly.get(0).rawCells()) {
      assertEquals(0, c.getValueLength());
    }
    List<Result> lengths = filtered(new KeyOnlyFilter(true));
    // With lenAsVal the value is the original length as a 4-byte int: "v0-0" is 4 bytes.
    assertEquals(4, Bytes.toInt(CellUtil.cloneValue(lengths.get(0).rawCells()[0])));

    SingleColumnValueFilter scvf =
        new SingleColumnValueFilter(F, b("q0"), CompareOperator.EQUAL, b("v42-0"));
    List<Result> matched = filtered(scvf);
    assertEquals(1, matched.size());
    assertEquals("row042", s(matched.get(0).getRow()));
    assertEquals(3, matched.get(0).size(), "the whole row, not only the tested column");
  }

  @Test
  @Order(23)
  void singleColumnValueFilterAndMissingColumns() throws Exception {
    TableName t = createTable("scan_scvf", F);
    try (Table table = conn.getTable(t)) {
      table.put(new Put(b("has")).addColumn(F, b("status"), b("ok")).addColumn(F, b("x"), b("1")));
      table.put(new Put(b("other")).addColumn(F, b("status"), b("bad")));
      table.put(new Put(b("lacks")).addColumn(F, b("x"), b("2")));
      SingleColumnValueFilter keepMissing =
          new SingleColumnValueFilter(F, b("status"), CompareOperator.EQUAL, b("ok"));
      assertEquals(List.of("has", "lacks"), rows(table, new Scan().setFilter(keepMissing)));
      SingleColumnValueFilter dropMissing =
          new SingleColumnValueFilter(F, b("status"), CompareOperator.EQUAL, b("ok"));
      dropMissing.setFilterIfMissing(true);
      assertEquals(List.of("has"), rows(table, new Scan().setFilter(dropMissing)));
      SingleColumnValueFilter notEqual =
          new SingleColumnValueFilter(F, b("status"), CompareOperator.NOT_EQUAL, b("ok"));
      notEqual.setFilterIfMissing(true);
      assertEquals(List.of("other"), rows(table, new Scan().setFilter(notEqual)));
    }
  }

  @Test
  @Order(24)
  void wrappingFiltersAndLists() throws Exception {
    // WhileMatch ends the scan at the first row that fails.
    try (Table t = conn.getTable(table)) {
      assertEquals(
          expectedRows(0, 5),
          rows(
              t,
              new Scan()
                  .setFilter(
                      new WhileMatchFilter(
                          new RowFilter(
                              CompareOperator.NOT_EQUAL, new BinaryComparator(row(5)))))));
    }
    // Skip drops whole rows in which any cell fails.
    List<Result> skipped =
        filtered(
            new SkipFilter(
                new ValueFilter(CompareOperator.NOT_EQUAL, new BinaryComparator(b("v7-1")))));
    assertEquals(ROWS - 1, skipped.size());
    assertFalse(skipped.stream().anyMatch(r -> s(r.getRow()).equals("row007")));

    FilterList all =
        new FilterList(
            FilterList.Operator.MUST_PASS_ALL,
            new PrefixFilter(b("row05")),
            new QualifierFilter(CompareOperator.EQUAL, new BinaryComparator(b("q0"))));
    List<Result> both = filtered(all);
    assertEquals(10, both.size());
    assertEquals(10, cells(both));

    FilterList one =
        new FilterList(
            FilterList.Operator.MUST_PASS_ONE,
            new PrefixFilter(b("row01")),
            new PrefixFilter(b("row02")));
    List<Result> either = filtered(one);
    assertEquals(20, either.size());
    assertEquals(60, cells(either));

    // Nested lists with a page limit.
    FilterList nested =
        new FilterList(
            FilterList.Operator.MUST_PASS_ALL, one, new PageFilter(5), new KeyOnlyFilter());
    List<Result> paged = filtered(nested);
    assertEquals(5, paged.size());
    assertEquals(0, paged.get(0).rawCells()[0].getValueLength());
  }
}
