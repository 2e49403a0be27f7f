package io.ferrobase.interop.trace;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.hadoop.hbase.shaded.protobuf.generated.AdminProtos;
import org.apache.hadoop.hbase.shaded.protobuf.generated.BootstrapNodeProtos;
import org.apache.hadoop.hbase.shaded.protobuf.generated.ClientProtos;
import org.apache.hadoop.hbase.shaded.protobuf.generated.MasterProtos;
import org.apache.hadoop.hbase.shaded.protobuf.generated.RPCProtos;
import org.apache.hadoop.hbase.shaded.protobuf.generated.RegistryProtos;
import org.apache.hbase.thirdparty.com.google.protobuf.CodedInputStream;
import org.apache.hbase.thirdparty.com.google.protobuf.Descriptors.FileDescriptor;
import org.apache.hbase.thirdparty.com.google.protobuf.Descriptors.MethodDescriptor;
import org.apache.hbase.thirdparty.com.google.protobuf.Descriptors.ServiceDescriptor;
import org.apache.hbase.thirdparty.com.google.protobuf.DynamicMessage;
import org.apache.hbase.thirdparty.com.google.protobuf.Message;
import org.apache.hbase.thirdparty.com.google.protobuf.TextFormat;

/**
 * Decodes the frames of scripts/hbase-wire-capture.py with the HBase client's own protobuf
 * classes: connection headers, request and response headers, each call's param and result
 * message by its method's types, and the KeyValue cell blocks.
 *
 * <p>Usage: {@code RpcTraceDecoder CAPTURE_DIR} (reads {@code frames.tsv} and, if present, {@code
 * phases.tsv}); writes {@code decoded.txt} and one hex file per request and response, {@code
 * NNN-PHASE-Service.Method-request.hex} / {@code -response.hex}, into the same directory.
 */
public final class RpcTraceDecoder {
  private static final Map<String, ServiceDescriptor> SERVICES = new HashMap<>();

  static {
    for (FileDescriptor fd :
        new FileDescriptor[] {
          ClientProtos.getDescriptor(),
          MasterProtos.getDescriptor(),
          AdminProtos.getDescriptor(),
          RegistryProtos.getDescriptor(),
          BootstrapNodeProtos.getDescriptor()
        }) {
      for (ServiceDescriptor s : fd.getServices()) {
        SERVICES.put(s.getName(), s);
      }
    }
  }

  private RpcTraceDecoder() {}

  private static final class Conn {
    String service = "?";
    double firstSeen = -1;
    boolean internal;
    String codec = "";
    final Map<Integer, MethodDescriptor> calls = new HashMap<>();
    final Map<Integer, String> callNames = new HashMap<>();
  }

  public static void main(String[] args) throws Exception {
    Path dir = Paths.get(args[0]);
    List<long[]> phaseTimes = new ArrayList<>();
    List<String> phaseNames = new ArrayList<>();
    Path phasesFile = dir.resolve("phases.tsv");
    if (Files.exists(phasesFile)) {
      for (String line : Files.readAllLines(phasesFile)) {
        if (line.startsWith("#") || line.isBlank()) {
          continue;
        }
        String[] p = line.split("\t");
        phaseTimes.add(new long[] {Long.parseLong(p[0])});
        phaseNames.add(p[1]);
      }
    }
    Map<Integer, Conn> conns = new HashMap<>();
    int seq = 0;
    double t0 = phaseTimes.isEmpty() ? -1 : phaseTimes.get(0)[0];
    try (PrintWriter out =
        new PrintWriter(
            Files.newBufferedWriter(dir.resolve("decoded.txt"), StandardCharsets.UTF_8))) {
      for (String line : Files.readAllLines(dir.resolve("frames.tsv"))) {
        if (line.startsWith("#") || line.isBlank()) {
          continue;
        }
        String[] p = line.split("\t");
        double ts = Double.parseDouble(p[0]);
        if (t0 < 0) {
          t0 = ts;
        }
        int connId = Integer.parseInt(p[1]);
        String port = p[2];
        String direction = p[3];
        String kind = p[4];
        byte[] body = p.length > 5 ? hex(p[5]) : new byte[0];
        String phase = "before";
        for (int i = 0; i < phaseTimes.size(); i++) {
          if (phaseTimes.get(i)[0] <= ts) {
            phase = phaseNames.get(i);
          }
        }
        Conn c = conns.computeIfAbsent(connId, k -> new Conn());
        if (c.firstSeen < 0) {
          c.firstSeen = ts;
          // Opened before the scenario began: the servers' own connection (master <-> region
          // server), not the application's.
          c.internal = !phaseTimes.isEmpty() && ts < phaseTimes.get(0)[0];
        }
        if (kind.equals("registry-preamble")) {
          c.service = "ConnectionRegistryService";
          ServiceDescriptor registry = SERVICES.get(c.service);
          c.calls.put(-1, registry.findMethodByName("GetConnectionRegistry"));
          c.callNames.put(-1, "ConnectionRegistryService.GetConnectionRegistry");
        }
        if (kind.equals("connheader")) {
          RPCProtos.ConnectionHeader ch = RPCProtos.ConnectionHeader.parseFrom(body);
          c.service = ch.getServiceName();
          c.codec = ch.getCellBlockCodecClass();
        }
        if (phase.equals("before")) {
          continue; // the servers' own start-up traffic
        }
        out.printf(
            Locale.ROOT,
            "=== +%.0f ms  phase=%s  conn=%d %s(server port %s)  %s  %s  %d bytes%n",
            ts - t0,
            phase,
            connId,
            c.internal ? "[server-internal] " : "",
            port,
            direction,
            kind,
            body.length);
        switch (kind) {
          case "registry-preamble":
            out.println(
                "\"Regist\": connection registry preamble, answered with call id -1 and a"
                    + " GetConnectionRegistryResponse");
            writeHex(
                dir,
                ++seq,
                phase,
                "ConnectionRegistryService.GetConnectionRegistry",
                "request",
                body);
            break;
          case "preamble":
            out.printf(
                "magic=%s version=%d auth=%d%n",
                new String(body, 0, 4, StandardCharsets.US_ASCII), body[4], body[5] & 0xff);
            break;
          case "connheader":
            RPCProtos.ConnectionHeader h = RPCProtos.ConnectionHeader.parseFrom(body);
            out.print(TextFormat.printer().printToString(h));
            writeHex(dir, ++seq, phase, c.service + ".ConnectionHeader", "request", frame(body));
            break;
          case "call":
            seq++;
            decodeCall(out, dir, seq, phase, c, body);
            break;
          case "response":
            seq++;
            decodeResponse(out, dir, seq, phase, c, body);
            break;
          default:
            out.println(hexdump(body));
        }
        out.println();
      }
    }
  }

  private static void decodeCall(
      PrintWriter out, Path dir, int seq, String phase, Conn c, byte[] body) throws IOException {
    ByteArrayInputStream in = new ByteArrayInputStream(body);
    RPCProtos.RequestHeader header = RPCProtos.RequestHeader.parseDelimitedFrom(in);
    out.println("RequestHeader {");
    out.print(indent(TextFormat.printer().printToString(header)));
    out.println("}");
    ServiceDescriptor service = SERVICES.get(c.service);
    MethodDescriptor method =
        service == null ? null : service.findMethodByName(header.getMethodName());
    String name = c.service + "." + header.getMethodName();
    c.calls.put(header.getCallId(), method);
    c.callNames.put(header.getCallId(), name);
    if (header.getRequestParam()) {
      byte[] param = readDelimited(in);
      if (method != null) {
        Message m = DynamicMessage.parseFrom(method.getInputType(), param);
        out.println(method.getInputType().getName() + " {");
        out.print(indent(TextFormat.printer().printToString(m)));
        out.println("}");
      } else {
        out.println("param (unknown service " + c.service + "):");
        out.println(hexdump(param));
      }
    }
    cells(out, in, c);
    writeHex(dir, seq, phase, name, "request", frame(body));
  }

  private static void decodeResponse(
      PrintWriter out, Path dir, int seq, String phase, Conn c, byte[] body) throws IOException {
    ByteArrayInputStream in = new ByteArrayInputStream(body);
    RPCProtos.ResponseHeader header = RPCProtos.ResponseHeader.parseDelimitedFrom(in);
    String name = c.callNames.getOrDefault(header.getCallId(), c.service + ".?");
    out.println("response to " + name);
    out.println("ResponseHeader {");
    out.print(indent(TextFormat.printer().printToString(header)));
    out.println("}");
    MethodDescriptor method = c.calls.get(header.getCallId());
    if (!header.hasException() && in.available() > 0) {
      byte[] result = readDelimited(in);
      if (method != null) {
        Message m = DynamicMessage.parseFrom(method.getOutputType(), result);
        out.println(method.getOutputType().getName() + " {");
        out.print(indent(TextFormat.printer().printToString(m)));
        out.println("}");
      } else {
        out.println(hexdump(result));
      }
    }
    cells(out, in, c);
    writeHex(dir, seq, phase, name, "response", frame(body));
  }

  /** The KeyValue cell block that follows the message, if any. */
  private static void cells(PrintWriter out, ByteArrayInputStream in, Conn c) {
    int n = in.available();
    if (n == 0) {
      return;
    }
    byte[] block = in.readAllBytes();
    boolean tags = c.codec.contains("WithTags");
    out.println("cell block, " + block.length + " bytes (" + c.codec + "):");
    ByteBuffer b = ByteBuffer.wrap(block);
    try {
      while (b.remaining() >= 4) {
        int total = b.getInt();
        int start = b.position();
        int keyLen = b.getInt();
        int valueLen = b.getInt();
        int rowLen = b.getShort();
        byte[] row = new byte[rowLen];
        b.get(row);
        int famLen = b.get() & 0xff;
        byte[] fam = new byte[famLen];
        b.get(fam);
        int qualLen = keyLen - 2 - rowLen - 1 - famLen - 8 - 1;
        byte[] qual = new byte[qualLen];
        b.get(qual);
        long ts = b.getLong();
        int type = b.get() & 0xff;
        byte[] value = new byte[valueLen];
        b.get(value);
        String tagText = "";
        if (tags && b.position() - start < total) {
          int tagsLen = b.getShort() & 0xffff;
          b.position(b.position() + tagsLen);
          tagText = " tags=" + tagsLen + "B";
        }
        out.printf(
            "  cell len=%d row=%s family=%s qualifier=%s ts=%d type=%d value=%s%s%n",
            total, text(row), text(fam), text(qual), ts, type, text(value), tagText);
        b.position(start + total);
      }
    } catch (RuntimeException e) {
      out.println("  (undecodable: " + e + ")");
      out.println(hexdump(block));
    }
  }

  private static byte[] readDelimited(ByteArrayInputStream in) throws IOException {
    int first = in.read();
    int len = CodedInputStream.readRawVarint32(first, in);
    return in.readNBytes(len);
  }

  private static byte[] frame(byte[] body) {
    return ByteBuffer.allocate(4 + body.length).putInt(body.length).put(body).array();
  }

  private static void writeHex(
      Path dir, int seq, String phase, String name, String what, byte[] bytes) throws IOException {
    String file = String.format(Locale.ROOT, "%03d-%s-%s-%s.hex", seq, phase, name, what);
    Files.writeString(dir.resolve(file), hexdump(bytes));
  }

  private static String indent(String s) {
    StringBuilder sb = new StringBuilder();
    for (String line : s.split("\n", -1)) {
      if (!line.isEmpty()) {
        sb.append("  ").append(line).append('\n');
      }
    }
    return sb.toString();
  }

  private static String text(byte[] b) {
    StringBuilder sb = new StringBuilder();
    for (byte x : b) {
      int v = x & 0xff;
      if (v >= 32 && v < 127 && v != '\\') {
        sb.append((char) v);
      } else {
        sb.append(String.format("\\x%02x", v));
      }
    }
    return sb.toString();
  }

  private static byte[] hex(String s) {
    byte[] out = new byte[s.length() / 2];
    for (int i = 0; i < out.length; i++) {
      out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
    }
    return out;
  }

  static String hexdump(byte[] data) {
    StringBuilder sb = new StringBuilder();
    for (int off = 0; off < data.length; off += 16) {
      StringBuilder hexPart = new StringBuilder();
      StringBuilder textPart = new StringBuilder();
      for (int i = off; i < Math.min(off + 16, data.length); i++) {
        int v = data[i] & 0xff;
        if (hexPart.length() > 0) {
          hexPart.append(' ');
        }
        hexPart.append(String.format("%02x", v));
        textPart.append(v >= 32 && v < 127 ? (char) v : '.');
      }
      sb.append(String.format(Locale.ROOT, "%08x  %-47s  %s%n", off, hexPart, textPart));
    }
    return sb.toString();
  }
}
