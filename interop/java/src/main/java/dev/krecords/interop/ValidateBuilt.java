package dev.krecords.interop;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.AbstractLegacyRecordBatch;
import org.apache.kafka.common.record.internal.CompressionType;
import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.apache.kafka.common.record.internal.LegacyRecord;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.internals.BufferSupplier;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Checks log entries written by another implementation (our Rust `krec build`) against Apache Kafka.
 *
 * <pre>
 * ValidateBuilt [options] FILE.bin FILE.json     one file of concatenated entries and its input
 * ValidateBuilt [options] DIR                    every NAME.bin in DIR with NAME.json (or NAME.jsonl)
 *
 * options:
 *   --tolerate-codecs LIST   codecs whose compressed bytes may differ from Kafka's (default gzip,zstd):
 *                            for these, batch headers (less CRC and length) and the decompressed
 *                            record sections are compared instead of the whole bytes. "none" = exact
 *                            bytes for every codec; "all" = every compressing codec.
 *   -q, --quiet              print only failures and the summary
 * </pre>
 *
 * The input file is a "build" object (see {@link BuildSpec}), a whole vector file (its "build" is
 * used), a JSON array of build objects, or JSON lines of them; with several, the .bin holds their
 * outputs one after the other. Checks, one line each:
 * <ol>
 *   <li>entries: Kafka's {@code MemoryRecords.readableRecords} splits the file into whole entries with
 *       no bytes left over, and as many as Kafka writes for the input;</li>
 *   <li>valid: {@code ensureValid()} on every batch and every record (legacy inner messages have their
 *       own CRC);</li>
 *   <li>input: every record (offset, timestamp per timestamp type, key, value, headers in order,
 *       control record) and every batch's magic, codec, timestamp type, producer fields, flags,
 *       leader epoch and delete horizon match the input;</li>
 *   <li>reference: Kafka's reading of the file equals its reading of what Kafka itself builds from
 *       the input (max timestamp, last sequence, attributes, ... every field of a vector's "expect");</li>
 *   <li>bytes: the file equals Kafka's bytes; for a tolerated codec, equal headers and equal
 *       decompressed records are enough.</li>
 * </ol>
 * Exit status 0 when every check passes, 1 when one fails, 2 on usage or I/O errors.
 */
public final class ValidateBuilt {
    private Set<String> tolerated = Set.of("gzip", "zstd");
    private boolean quiet;
    private int checksPassed;
    private int checksFailed;

    public static void main(String[] args) {
        ValidateBuilt v = new ValidateBuilt();
        List<String> paths = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--tolerate-codecs" -> {
                    if (++i >= args.length) usage("--tolerate-codecs needs a value");
                    v.tolerated = parseCodecs(args[i]);
                }
                case "-q", "--quiet" -> v.quiet = true;
                case "-h", "--help" -> usage(null);
                default -> {
                    if (args[i].startsWith("-")) usage("unknown option " + args[i]);
                    paths.add(args[i]);
                }
            }
        }
        try {
            if (paths.size() == 1 && Files.isDirectory(Path.of(paths.get(0)))) {
                System.exit(v.runDirectory(Path.of(paths.get(0))));
            } else if (paths.size() == 2) {
                System.exit(v.runPair(Path.of(paths.get(0)), Path.of(paths.get(1))));
            } else {
                usage("expected FILE.bin FILE.json, or DIR");
            }
        } catch (IOException e) {
            System.err.println("error: " + e);
            System.exit(2);
        }
    }

    private static void usage(String problem) {
        if (problem != null) System.err.println("error: " + problem);
        System.err.println("usage: ValidateBuilt [--tolerate-codecs gzip,zstd|none|all] [-q] FILE.bin FILE.json");
        System.err.println("       ValidateBuilt [--tolerate-codecs ...] [-q] DIR   (pairs NAME.bin + NAME.json)");
        System.exit(problem == null ? 0 : 2);
    }

    private static Set<String> parseCodecs(String list) {
        if (list.equals("none")) return Set.of();
        if (list.equals("all")) return Set.of("gzip", "snappy", "lz4", "zstd");
        return Arrays.stream(list.split(",")).map(String::trim).filter(s -> !s.isEmpty()).collect(Collectors.toSet());
    }

    // ------------------------------------------------------------------ modes

    private int runPair(Path bin, Path json) throws IOException {
        Outcome o = validate(bin.getFileName().toString(), Files.readAllBytes(bin), json);
        int total = checksPassed + checksFailed;
        if (o == Outcome.SKIPPED) System.out.println("SKIPPED: nothing to check");
        else if (checksFailed == 0) System.out.println("OK: all " + total + " checks passed");
        else System.out.println("FAILED: " + checksFailed + " of " + total + " checks failed");
        return checksFailed == 0 ? 0 : 1;
    }

    private int runDirectory(Path dir) throws IOException {
        List<Path> bins;
        try (Stream<Path> s = Files.list(dir)) {
            bins = s.filter(p -> p.getFileName().toString().endsWith(".bin")).sorted().collect(Collectors.toList());
        }
        int passed = 0, failed = 0, skipped = 0;
        for (Path bin : bins) {
            String name = bin.getFileName().toString().replaceAll("\\.bin$", "");
            Path json = dir.resolve(name + ".json");
            if (!Files.exists(json)) json = dir.resolve(name + ".jsonl");
            Outcome o;
            if (!Files.exists(json)) {
                fail(name, "input", "no " + name + ".json or " + name + ".jsonl beside the .bin");
                o = Outcome.FAILED;
            } else {
                o = validate(name, Files.readAllBytes(bin), json);
            }
            switch (o) {
                case PASSED -> passed++;
                case FAILED -> failed++;
                case SKIPPED -> skipped++;
            }
        }
        System.out.println(passed + " passed, " + failed + " failed" + (skipped > 0 ? ", " + skipped + " skipped" : ""));
        return failed == 0 ? 0 : 1;
    }

    enum Outcome { PASSED, FAILED, SKIPPED }

    // ------------------------------------------------------------------ one file

    private Outcome validate(String name, byte[] actual, Path jsonPath) throws IOException {
        int failedBefore = checksFailed;
        List<BuildSpec> specs;
        try {
            specs = loadSpecs(Files.readString(jsonPath, StandardCharsets.UTF_8));
        } catch (SkipException e) {
            System.out.println("SKIP " + name + ": " + e.getMessage());
            return Outcome.SKIPPED;
        } catch (RuntimeException e) {
            fail(name, "input", "cannot read " + jsonPath + ": " + e.getMessage());
            return Outcome.FAILED;
        }

        // Kafka's own bytes for the same input, one chunk per build object.
        List<byte[]> refChunks = new ArrayList<>();
        try {
            for (BuildSpec s : specs) refChunks.add(s.build());
        } catch (RuntimeException e) {
            fail(name, "input", "Kafka refuses this input: " + e);
            return Outcome.FAILED;
        }

        // 1. entries
        List<MutableRecordBatch> batches = new ArrayList<>();
        try {
            long consumed = 0;
            for (MutableRecordBatch b : MemoryRecords.readableRecords(ByteBuffer.wrap(actual)).batches()) {
                batches.add(b);
                consumed += b.sizeInBytes();
            }
            if (consumed != actual.length)
                fail(name, "entries", (actual.length - consumed) + " bytes after the last whole entry (of " + actual.length + ")");
            else
                pass(name, "entries", batches.size() + " entries, " + actual.length + " bytes");
        } catch (RuntimeException e) {
            fail(name, "entries", "Kafka cannot split the file: " + e);
            return Outcome.FAILED;
        }

        // Pair the file's batches with the build objects: each takes as many entries as Kafka writes for it.
        List<List<MutableRecordBatch>> actualGroups = new ArrayList<>();
        List<List<MutableRecordBatch>> refGroups = new ArrayList<>();
        int next = 0;
        boolean countsOk = true;
        for (byte[] chunk : refChunks) {
            List<MutableRecordBatch> ref = new ArrayList<>();
            MemoryRecords.readableRecords(ByteBuffer.wrap(chunk)).batches().forEach(ref::add);
            refGroups.add(ref);
            int end = Math.min(batches.size(), next + ref.size());
            actualGroups.add(batches.subList(next, end));
            if (end - next != ref.size()) countsOk = false;
            next = end;
        }
        if (next != batches.size() || !countsOk) {
            int want = refGroups.stream().mapToInt(List::size).sum();
            fail(name, "entries", "Kafka writes " + want + " entries for this input, the file has " + batches.size());
        }

        // 2. valid
        String invalid = null;
        for (MutableRecordBatch b : batches) {
            try {
                b.ensureValid();
                for (Record r : b) r.ensureValid();
            } catch (RuntimeException e) {
                invalid = "entry at offset " + b.baseOffset() + ": " + e;
                break;
            }
        }
        if (invalid == null) pass(name, "valid", "ensureValid() on every batch and record");
        else fail(name, "valid", invalid);

        for (int g = 0; g < specs.size(); g++) {
            String label = specs.size() == 1 ? name : name + "[" + g + "]";
            BuildSpec spec = specs.get(g);
            List<MutableRecordBatch> act = actualGroups.get(g);
            List<MutableRecordBatch> ref = refGroups.get(g);
            // 3. input
            try {
                List<String> problems = compareWithInput(spec, act);
                if (problems.isEmpty()) pass(label, "input", "records and batch fields match the input");
                else fail(label, "input", String.join("; ", problems));
            } catch (RuntimeException e) {
                fail(label, "input", "reading failed: " + e);
            }
            // 4. reference and 5. bytes
            compareWithReference(label, spec, act, ref);
        }
        return checksFailed == failedBefore ? Outcome.PASSED : Outcome.FAILED;
    }

    /** Thrown for inputs this tool does not check (vectors of another layout). */
    private static final class SkipException extends RuntimeException {
        SkipException(String m) {
            super(m);
        }
    }

    static List<BuildSpec> loadSpecs(String text) {
        List<Object> docs = new ArrayList<>();
        try {
            Object doc = Json.parse(text);
            if (doc instanceof List<?> list) docs.addAll(list);
            else docs.add(doc);
        } catch (IllegalArgumentException whole) {
            // JSON lines
            for (String line : text.split("\n")) {
                if (!line.isBlank()) docs.add(Json.parse(line));
            }
        }
        List<BuildSpec> specs = new ArrayList<>();
        for (Object d : docs) {
            Map<String, Object> m = Json.obj(d, "input");
            if (m.containsKey("build")) {
                String layout = Json.str(m, "layout", "records");
                if (!layout.equals("records"))
                    throw new SkipException("vector layout '" + layout + "' is not a builder output");
                m = Json.obj(m.get("build"), "build");
            }
            specs.add(BuildSpec.fromJson(m));
        }
        if (specs.isEmpty()) throw new IllegalArgumentException("no build objects");
        return specs;
    }

    // ------------------------------------------------------------------ check 3: against the input

    private static List<String> compareWithInput(BuildSpec spec, List<MutableRecordBatch> batches) {
        List<String> p = new ArrayList<>();
        TimestampType tsType = spec.kafkaTimestampType();
        CompressionType codec = BuildSpec.compression(spec.compression, spec.level).type();
        List<Record> records = new ArrayList<>();
        List<RecordBatch> owners = new ArrayList<>();
        for (int i = 0; i < batches.size(); i++) {
            MutableRecordBatch b = batches.get(i);
            String at = "entry " + i + " ";
            expectEq(p, at + "magic", (long) spec.magic, (long) b.magic());
            expectEq(p, at + "codec", codec.name, b.compressionType().name);
            TimestampType wantTs = spec.magic == 0 ? TimestampType.NO_TIMESTAMP_TYPE : tsType;
            expectEq(p, at + "timestamp_type", wantTs, b.timestampType());
            if (spec.magic >= 2) {
                expectEq(p, at + "producer_id", spec.producerId, b.producerId());
                expectEq(p, at + "producer_epoch", (long) spec.producerEpoch, (long) b.producerEpoch());
                if (i == 0) expectEq(p, at + "base_sequence", (long) spec.baseSequence, (long) b.baseSequence());
                // end-transaction markers are always transactional (MemoryRecords.withEndTransactionMarker)
                boolean txn = spec.transactional || (spec.control != null && isTxnMarker(spec));
                expectEq(p, at + "transactional", txn, b.isTransactional());
                expectEq(p, at + "control", spec.control != null, b.isControlBatch());
                expectEq(p, at + "partition_leader_epoch", (long) spec.partitionLeaderEpoch, (long) b.partitionLeaderEpoch());
                expectEq(p, at + "delete_horizon_ms", spec.deleteHorizonMs,
                        b.deleteHorizonMs().isPresent() ? b.deleteHorizonMs().getAsLong() : null);
                if (tsType == TimestampType.LOG_APPEND_TIME)
                    expectEq(p, at + "max_timestamp (log append time)", spec.logAppendTime, b.maxTimestamp());
            }
            for (Record r : b) {
                records.add(r);
                owners.add(b);
            }
        }
        if (spec.control != null) {
            if (records.size() != 1) {
                p.add("a control batch holds 1 record, found " + records.size());
            } else {
                Map<String, Object> c = Describe.control(records.get(0));
                expectEq(p, "control.type", spec.control.type, c.get("type"));
                expectEq(p, "control.version", (long) spec.control.version, c.get("version"));
                if (spec.control.coordinatorEpoch != null)
                    expectEq(p, "control.coordinator_epoch", (long) spec.control.coordinatorEpoch, c.get("coordinator_epoch"));
                expectEq(p, "record 0 offset", spec.baseOffset, records.get(0).offset());
                expectEq(p, "record 0 timestamp", spec.control.timestamp, records.get(0).timestamp());
                if (spec.control.value != null)
                    expectEq(p, "record 0 value", Hex.encode(spec.control.value), Hex.encode(records.get(0).value()));
            }
            return p;
        }
        if (records.size() != spec.records.size()) {
            p.add("the input has " + spec.records.size() + " records, the file " + records.size());
            return p;
        }
        long nextOffset = spec.baseOffset;
        for (int i = 0; i < records.size(); i++) {
            BuildSpec.Rec in = spec.records.get(i);
            Record r = records.get(i);
            String at = "record " + i + " ";
            long offset = in.offset != null ? in.offset : nextOffset;
            nextOffset = offset + 1;
            expectEq(p, at + "offset", offset, r.offset());
            long ts = spec.magic == 0 ? RecordBatch.NO_TIMESTAMP
                    : tsType == TimestampType.LOG_APPEND_TIME ? spec.logAppendTime : in.timestamp;
            expectEq(p, at + "timestamp", ts, r.timestamp());
            expectEq(p, at + "key", hexOrNull(in.key), r.hasKey() ? Hex.encode(r.key()) : null);
            expectEq(p, at + "value", hexOrNull(in.value), r.hasValue() ? Hex.encode(r.value()) : null);
            List<String> wantHeaders = in.headers.stream().map(h -> h.key() + "=" + hexOrNull(h.value())).collect(Collectors.toList());
            List<String> gotHeaders = new ArrayList<>();
            for (Header h : r.headers()) gotHeaders.add(h.key() + "=" + hexOrNull(h.value()));
            expectEq(p, at + "headers", wantHeaders, gotHeaders);
            if (p.size() > 20) {
                p.add("...");
                break;
            }
        }
        return p;
    }

    private static boolean isTxnMarker(BuildSpec spec) {
        return spec.control.type.equals("commit") || spec.control.type.equals("abort");
    }

    private static String hexOrNull(byte[] b) {
        return b == null ? null : Hex.encode(b);
    }

    private static void expectEq(List<String> problems, String what, Object want, Object got) {
        if (!Objects.equals(want, got)) problems.add(what + ": expected " + abbreviate(want) + ", got " + abbreviate(got));
    }

    private static String abbreviate(Object o) {
        String s = String.valueOf(o);
        return s.length() > 80 ? s.substring(0, 77) + "..." : s;
    }

    // ------------------------------------------------------------------ checks 4 and 5: against Kafka's bytes

    private void compareWithReference(String label, BuildSpec spec, List<MutableRecordBatch> act, List<MutableRecordBatch> ref) {
        byte[] actBytes = concat(act);
        byte[] refBytes = concat(ref);
        boolean identical = Arrays.equals(actBytes, refBytes);
        String codec = spec.compression;
        boolean tolerate = tolerated.contains(codec);

        // 4. reference: Kafka's reading of both. When compressed bytes differ, the fields that depend on
        // them (CRC, lengths) are left out here, so this check reports on meaning only; step 5 judges bytes.
        List<String> ignore = identical || codec.equals("none") ? List.of() : List.of("crc", "batch_length", "size_in_bytes");
        List<String> diffs = new ArrayList<>();
        try {
            List<Object> actDesc = describe(act, ignore);
            List<Object> refDesc = describe(ref, ignore);
            diff(diffs, "", refDesc, actDesc);
        } catch (RuntimeException e) {
            diffs.add("reading failed: " + e);
        }
        if (diffs.isEmpty()) pass(label, "reference", "Kafka reads the same fields as from its own build" + (ignore.isEmpty() ? "" : " (less " + ignore + ")"));
        else fail(label, "reference", String.join("; ", diffs.subList(0, Math.min(diffs.size(), 20))));

        // 5. bytes
        if (identical) {
            pass(label, "bytes", "identical to Kafka's " + refBytes.length + " bytes");
        } else if (tolerate && act.size() == ref.size()) {
            List<String> problems = new ArrayList<>();
            for (int i = 0; i < act.size(); i++) compareEquivalent(problems, i, act.get(i), ref.get(i));
            if (problems.isEmpty())
                pass(label, "bytes", codec + " output differs from Kafka's (" + actBytes.length + " vs " + refBytes.length
                        + " bytes); headers (less CRC and length) and decompressed records are identical");
            else fail(label, "bytes", String.join("; ", problems));
        } else {
            fail(label, "bytes", "differs from Kafka's bytes: " + firstDifference(actBytes, refBytes));
        }
    }

    private static List<Object> describe(List<MutableRecordBatch> batches, List<String> ignore) {
        List<Object> out = new ArrayList<>();
        for (MutableRecordBatch b : batches) {
            Map<String, Object> bm = Describe.batch(b);
            bm.keySet().removeAll(ignore);
            List<Object> recs = new ArrayList<>();
            for (Record r : b) recs.add(Describe.record(b, r));
            bm.put("records", recs);
            out.add(bm);
        }
        return out;
    }

    /** Appends "path: expected X, got Y" for every difference between two JSON-like trees. */
    private static void diff(List<String> out, String path, Object want, Object got) {
        if (want instanceof Map<?, ?> wm && got instanceof Map<?, ?> gm) {
            Set<Object> keys = new LinkedHashSet<>(); // field order as Describe writes it
            keys.addAll(wm.keySet());
            keys.addAll(gm.keySet());
            for (Object k : keys) diff(out, path + "." + k, wm.get(k), gm.get(k));
        } else if (want instanceof List<?> wl && got instanceof List<?> gl) {
            if (wl.size() != gl.size())
                out.add((path.isEmpty() ? "batches" : path) + ": Kafka has " + wl.size() + ", the file " + gl.size());
            for (int i = 0; i < Math.min(wl.size(), gl.size()); i++) diff(out, path + "[" + i + "]", wl.get(i), gl.get(i));
        } else if (!Objects.equals(want, got)) {
            String where = path.startsWith(".") ? path.substring(1) : path.isEmpty() ? "value" : path;
            out.add(where + ": Kafka " + abbreviate(want) + ", file " + abbreviate(got));
        }
    }

    /** Same batch header except CRC and length, same decompressed records. */
    private static void compareEquivalent(List<String> problems, int i, MutableRecordBatch act, MutableRecordBatch ref) {
        byte[] a = Describe.entryBytes(act);
        byte[] r = Describe.entryBytes(ref);
        String at = "entry " + i + ": ";
        try {
            if (act.magic() >= RecordBatch.MAGIC_VALUE_V2) {
                int hdr = DefaultRecordBatch.RECORD_BATCH_OVERHEAD;
                // [0,8) base offset, [8,12) length (skipped), [12,17) leader epoch + magic,
                // [17,21) CRC (skipped), [21,61) attributes .. record count.
                if (!rangeEq(a, r, 0, 8) || !rangeEq(a, r, 12, 17) || !rangeEq(a, r, 21, hdr)) {
                    problems.add(at + "batch header differs outside CRC and length: file "
                            + Hex.encode(a, 0, Math.min(hdr, a.length)) + ", Kafka " + Hex.encode(r, 0, hdr));
                    return;
                }
                byte[] da = decompress(act.compressionType(), act.magic(), Arrays.copyOfRange(a, hdr, a.length));
                byte[] dr = decompress(ref.compressionType(), ref.magic(), Arrays.copyOfRange(r, hdr, r.length));
                if (!Arrays.equals(da, dr)) problems.add(at + "decompressed records differ: " + firstDifference(da, dr));
            } else {
                LegacyRecord wa = ((AbstractLegacyRecordBatch) act).outerRecord();
                LegacyRecord wr = ((AbstractLegacyRecordBatch) ref).outerRecord();
                if (!rangeEq(a, r, 0, 8)) problems.add(at + "wrapper offset differs");
                if (wa.magic() != wr.magic() || wa.attributes() != wr.attributes() || wa.timestamp() != wr.timestamp()
                        || !Objects.equals(Hex.encode(wa.key()), Hex.encode(wr.key())))
                    problems.add(at + "wrapper magic/attributes/timestamp/key differ");
                if (wa.compressionType() == CompressionType.NONE) {
                    if (!Arrays.equals(a, r)) problems.add(at + "uncompressed message differs: " + firstDifference(a, r));
                } else {
                    byte[] da = decompress(wa.compressionType(), wa.magic(), Hex.bytes(wa.value()));
                    byte[] dr = decompress(wr.compressionType(), wr.magic(), Hex.bytes(wr.value()));
                    if (!Arrays.equals(da, dr)) problems.add(at + "decompressed inner messages differ: " + firstDifference(da, dr));
                }
            }
        } catch (IOException | RuntimeException e) {
            problems.add(at + "cannot decompress: " + e);
        }
    }

    static byte[] decompress(CompressionType type, byte magic, byte[] data) throws IOException {
        if (type == CompressionType.NONE) return data;
        Compression c = Compression.of(type).build();
        try (InputStream in = c.wrapForInput(ByteBuffer.wrap(data), magic, BufferSupplier.NO_CACHING)) {
            return in.readAllBytes();
        }
    }

    private static boolean rangeEq(byte[] a, byte[] b, int from, int to) {
        return a.length >= to && b.length >= to && Arrays.equals(a, from, to, b, from, to);
    }

    private static byte[] concat(List<MutableRecordBatch> batches) {
        List<byte[]> parts = batches.stream().map(Describe::entryBytes).collect(Collectors.toList());
        byte[] out = new byte[parts.stream().mapToInt(p -> p.length).sum()];
        int pos = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, pos, p.length);
            pos += p.length;
        }
        return out;
    }

    private static String firstDifference(byte[] got, byte[] want) {
        int n = Math.min(got.length, want.length);
        int i = 0;
        while (i < n && got[i] == want[i]) i++;
        if (i == n && got.length == want.length) return "identical";
        int from = Math.max(0, i - 4);
        return "first difference at byte " + i + " (lengths " + got.length + " vs Kafka " + want.length + "): file "
                + Hex.encode(got, from, Math.min(got.length, i + 12)) + " vs Kafka " + Hex.encode(want, from, Math.min(want.length, i + 12));
    }

    // ------------------------------------------------------------------ output

    private void pass(String name, String check, String detail) {
        checksPassed++;
        if (!quiet) System.out.println("PASS " + name + " " + check + ": " + detail);
    }

    private void fail(String name, String check, String detail) {
        checksFailed++;
        System.out.println("FAIL " + name + " " + check + ": " + detail);
    }
}
