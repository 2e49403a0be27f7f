package io.ferrobase.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.DoNotRetryIOException;
import org.apache.hadoop.hbase.InvalidFamilyOperationException;
import org.apache.hadoop.hbase.NamespaceDescriptor;
import org.apache.hadoop.hbase.NamespaceExistException;
import org.apache.hadoop.hbase.NamespaceNotFoundException;
import org.apache.hadoop.hbase.TableExistsException;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.TableNotDisabledException;
import org.apache.hadoop.hbase.TableNotEnabledException;
import org.apache.hadoop.hbase.TableNotFoundException;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.filter.FilterBase;
import org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

/** Server errors reach application code as the exception classes HBase itself raises. */
@Order(8)
class ExceptionsTest extends InteropTestBase {
  private static final byte[] NOPE = b("no_such_family");
  private static TableName table;

  @BeforeAll
  static void createTable() throws Exception {
    table = createTable("exceptions", F);
  }

  @Test
  @Order(1)
  void missingTable() throws Exception {
    TableName missing = uniqueName("never_created");
    try (Table t = conn.getTable(missing)) {
      assertThrows(TableNotFoundException.class, () -> t.get(new Get(b("r"))));
      assertThrows(
          TableNotFoundException.class, () -> t.put(new Put(b("r")).addColumn(F, b("q"), b("v"))));
      assertThrows(
          TableNotFoundException.class,
          () -> {
            try (ResultScanner rs = t.getScanner(new Scan())) {
              rs.next();
            }
          });
    }
    assertThrows(TableNotFoundException.class, () -> admin.getDescriptor(missing));
    assertThrows(TableNotFoundException.class, () -> admin.disableTable(missing));
    assertThrows(TableNotFoundException.class, () -> admin.deleteTable(missing));
  }

  @Test
  @Order(2)
  void missingColumnFamily() throws Exception {
    try (Table t = conn.getTable(table)) {
      assertThrows(
          NoSuchColumnFamilyException.class,
          () -> t.put(new Put(b("r")).addColumn(NOPE, b("q"), b("v"))));
      assertThrows(NoSuchColumnFamilyException.class, () -> t.get(new Get(b("r")).addFamily(NOPE)));
      assertThrows(
          NoSuchColumnFamilyException.class,
          () -> {
            try (ResultScanner rs = t.getScanner(new Scan().addFamily(NOPE))) {
              rs.next();
            }
          });
      // The table still works after the errors.
      t.put(new Put(b("r")).addColumn(F, b("q"), b("v")));
      assertEquals("v", s(t.get(new Get(b("r"))).getValue(F, b("q"))));
    }
    assertThrows(
        InvalidFamilyOperationException.class, () -> admin.deleteColumnFamily(table, NOPE));
  }

  @Test
  @Order(3)
  void tableStateErrors() throws Exception {
    assertThrows(
        TableExistsException.class,
        () ->
            admin.createTable(
                TableDescriptorBuilder.newBuilder(table)
                    .setColumnFamily(ColumnFamilyDescriptorBuilder.of(F))
                    .build()));
    assertThrows(TableNotDisabledException.class, () -> admin.enableTable(table));
    assertThrows(TableNotDisabledException.class, () -> admin.deleteTable(table));
    admin.disableTable(table);
    try {
      assertThrows(TableNotEnabledException.class, () -> admin.disableTable(table));
    } finally {
      admin.enableTable(table);
    }
  }

  @Test
  @Order(4)
  void namespaceErrors() throws Exception {
    String missing = uniqueName("no_ns").getQualifierAsString();
    assertThrows(NamespaceNotFoundException.class, () -> admin.getNamespaceDescriptor(missing));
    assertThrows(NamespaceNotFoundException.class, () -> admin.deleteNamespace(missing));
    assertThrows(
        NamespaceNotFoundException.class,
        () ->
            admin.createTable(
                TableDescriptorBuilder.newBuilder(TableName.valueOf(missing, "t"))
                    .setColumnFamily(ColumnFamilyDescriptorBuilder.of(F))
                    .build()));
    assertThrows(
        NamespaceExistException.class,
        () -> admin.createNamespace(NamespaceDescriptor.create("default").build()));
  }

  @Test
  @Order(5)
  void incrementOfANonCounterIsNotRetried() throws Exception {
    try (Table t = conn.getTable(table)) {
      t.put(new Put(b("text")).addColumn(F, b("q"), b("not a long")));
      DoNotRetryIOException e =
          assertThrows(
              DoNotRetryIOException.class, () -> t.incrementColumnValue(b("text"), F, b("q"), 1));
      assertTrue(String.valueOf(e.getMessage()).contains("not a long"), e.toString());
      assertEquals("not a long", s(t.get(new Get(b("text"))).getValue(F, b("q"))));
    }
  }

  /** A filter the server does not know: its class exists only in this test. */
  public static final class UnknownToTheServerFilter extends FilterBase {
    @Override
    public ReturnCode filterCell(Cell c) {
      return ReturnCode.INCLUDE;
    }

    @Override
    public byte[] toByteArray() {
      return new byte[0];
    }

    public static UnknownToTheServerFilter parseFrom(byte[] bytes) {
      return new UnknownToTheServerFilter();
    }
  }

  @Test
  @Order(6)
  void unknownFilterClassIsNamed() throws Exception {
    try (Table t = conn.getTable(table)) {
      IOException e =
          assertThrows(
              DoNotRetryIOException.class,
              () -> t.get(new Get(b("r")).setFilter(new UnknownToTheServerFilter())));
      assertTrue(
          String.valueOf(e.getMessage()).contains(UnknownToTheServerFilter.class.getName()),
          e.toString());
    }
  }
}
