package dev.krecords.interop;

import org.apache.kafka.common.message.LeaderChangeMessage;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.record.internal.ControlRecordUtils;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecords.RecordFilter;
import org.apache.kafka.common.record.internal.MemoryRecords.RecordFilter.BatchRetention;
import org.apache.kafka.common.record.internal.MemoryRecords.RecordFilter.BatchRetentionResult;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.internals.AppInfoParser;
import org.apache.kafka.common.utils.internals.BufferSupplier;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BiPredicate;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Writes the golden vectors of tests/vectors/kafka-java/: Kafka's own {@code MemoryRecordsBuilder}
 * output for every magic x codec x record shape, with the exact builder input ("build") and what
 * Kafka's reader API reports for the result ("expect"). See the README.md it writes for the schema.
 *
 * <p>Usage: {@code GenerateVectors OUTPUT_DIR}. The output is deterministic: fixed timestamps, seeded
 * {@link Random}s, no wall clock. Every vector is checked before it is written: its "build" object,
 * read back from JSON, must make Kafka write the same bytes again, and every batch must pass
 * Kafka's {@code ensureValid()}.
 */
public final class GenerateVectors {
    /** 2024-04-24T23:06:40Z: the timestamp of the first record in every vector. */
    static final long T0 = 1714000000000L;
    /** The broker's append time used by the log_append_time shapes (ten minutes after T0). */
    static final long LOG_APPEND_TIME = T0 + 600_000L;
    static final long PRODUCER_ID = 1234567L;
    static final short PRODUCER_EPOCH = 5;

    static final List<String> LEGACY_CODECS = List.of("none", "gzip", "snappy", "lz4");
    static final List<String> V2_CODECS = List.of("none", "gzip", "snappy", "lz4", "zstd");

    /** One record shape: its name, the magic/codec pairs it is generated for, and how to fill in a BuildSpec. */
    record Shape(String name, BiPredicate<Integer, String> applies, String what, Consumer<BuildSpec> fill) {}

    /** One vector to write. {@code layout} is "records" unless the bytes went through a Kafka filter. */
    record Vector(String name, BuildSpec spec, byte[] bytes, String layout, Map<String, Object> extra, String what) {}

    private GenerateVectors() {}

    public static void main(String[] args) throws IOException {
        if (args.length != 1) {
            System.err.println("usage: GenerateVectors OUTPUT_DIR");
            System.exit(2);
        }
        Path dir = Path.of(args[0]);
        Files.createDirectories(dir);
        String version = AppInfoParser.getVersion();
        String source = "apache/kafka MemoryRecordsBuilder " + version;

        List<Vector> vectors = vectors();
        long total = 0;
        Map<String, Vector> byName = new TreeMap<>();
        for (Vector v : vectors) {
            if (byName.put(v.name(), v) != null) throw new IllegalStateException("duplicate vector " + v.name());
            selfCheck(v);
            String text = Json.write(vectorJson(source, v), 3);
            Files.writeString(dir.resolve(v.name() + ".json"), text, StandardCharsets.UTF_8);
            total += text.length();
        }
        String readme = readme(version, byName.values());
        Files.writeString(dir.resolve("README.md"), readme, StandardCharsets.UTF_8);
        System.out.printf("wrote %d vectors (%d bytes of JSON) and README.md to %s (Kafka %s)%n",
                vectors.size(), total, dir, version);
    }

    // ------------------------------------------------------------------ the cross product

    static List<Vector> vectors() {
        List<Vector> out = new ArrayList<>();
        for (int magic = 0; magic <= 2; magic++) {
            for (String codec : magic < 2 ? LEGACY_CODECS : V2_CODECS) {
                for (Shape shape : shapes()) {
                    if (!shape.applies().test(magic, codec)) continue;
                    BuildSpec spec = base(magic, codec);
                    shape.fill().accept(spec);
                    out.add(plain("v" + magic + "_" + codec + "_" + shape.name(), spec, shape.what()));
                }
            }
        }
        // Compression levels (magic 2; the default-level files are above), on the 100-record version of
        // the many-records shape: seven 1000-record files would add ~6 MiB for little extra coverage.
        int[][] levels = {{1, 9}, {1, 17}, {-5, 3, 19}};
        String[] leveled = {"gzip", "lz4", "zstd"};
        for (int c = 0; c < leveled.length; c++) {
            for (int level : levels[c]) {
                BuildSpec spec = base(2, leveled[c]);
                spec.level = level;
                hundred(spec);
                out.add(plain("v2_" + leveled[c] + "_level" + level + "_hundred", spec,
                        "100 records at " + leveled[c] + " level " + level));
            }
        }
        // Legacy levels: gzip and lz4 levels apply to v0/v1 too (lz4 level != default switches to LZ4 HC).
        for (int magic = 0; magic <= 1; magic++) {
            BuildSpec spec = base(magic, "lz4");
            spec.level = 1;
            hundred(spec);
            out.add(plain("v" + magic + "_lz4_level1_hundred", spec, "100 records at lz4 level 1 (LZ4 HC)"));
        }
        out.addAll(controlVectors());
        out.addAll(filteredVectors());
        return out;
    }

    static BuildSpec base(int magic, String codec) {
        BuildSpec s = new BuildSpec();
        s.magic = (byte) magic;
        s.compression = codec;
        s.timestampType = magic == 0 ? "none" : "create_time";
        return s;
    }

    static Vector plain(String name, BuildSpec spec, String what) {
        return new Vector(name, spec, spec.build(), "records", null, what);
    }

    static final BiPredicate<Integer, String> ALL = (magic, codec) -> true;
    static final BiPredicate<Integer, String> V1_V2 = (magic, codec) -> magic >= 1;
    static final BiPredicate<Integer, String> V2 = (magic, codec) -> magic == 2;
    static final BiPredicate<Integer, String> LEGACY = (magic, codec) -> magic < 2;
    /**
     * The bulky shapes (hundreds of KiB of JSON each) are generated for every codec at magic 2 and, at
     * magic 0 and 1, with lz4 only: lz4 is the one codec whose framing depends on the magic (v0's broken
     * header checksum); gzip, snappy and zstd frame the same way for every magic. Keeps the folder ~15 MiB.
     */
    static final BiPredicate<Integer, String> BULKY = (magic, codec) -> magic == 2 || codec.equals("lz4");

    static List<Shape> shapes() {
        return List.of(
            new Shape("null_kv", ALL, "one record, null key and null value", s ->
                s.records.add(new BuildSpec.Rec(T0, null, null))),
            new Shape("empty_kv", ALL, "one record, zero-length key and value", s ->
                s.records.add(new BuildSpec.Rec(T0, new byte[0], new byte[0]))),
            new Shape("small", ALL, "one record, small key and value", s ->
                s.records.add(new BuildSpec.Rec(T0, utf8("key"), utf8("value")))),
            new Shape("hello_world", ALL,
                "the docs/design.md hello/world pair: null keys, same timestamp, partition leader epoch 0", s -> {
                    s.partitionLeaderEpoch = 0;
                    s.records.add(new BuildSpec.Rec(T0, null, utf8("hello")));
                    s.records.add(new BuildSpec.Rec(T0, null, utf8("world")));
                }),
            new Shape("headers", V2, "headers: duplicate keys, null and empty values, empty and non-ASCII keys", s -> {
                s.records.add(new BuildSpec.Rec(T0, utf8("k0"), utf8("with headers"))
                    .header("trace", utf8("a"))
                    .header("trace", utf8("b"))
                    .header("null-value", null)
                    .header("empty-value", new byte[0])
                    .header("", utf8("empty key"))
                    .header("clé-ü-€", new byte[] {0, (byte) 0xff, 0x7f, (byte) 0x80}));
                s.records.add(new BuildSpec.Rec(T0 + 1, null, null).header("trace", null));
                s.records.add(new BuildSpec.Rec(T0 + 2, utf8("k2"), utf8("no headers")));
            }),
            new Shape("large_random", BULKY, "one record with a 100 KiB pseudo-random value (Random seed 42)", s ->
                s.records.add(new BuildSpec.Rec(T0, utf8("large"), randomBytes(42, 100 * 1024)))),
            new Shape("large_compressible", BULKY, "one record with a 128 KiB highly compressible value", s ->
                s.records.add(new BuildSpec.Rec(T0, utf8("compressible"), compressible(128 * 1024)))),
            new Shape("many", V2, "1000 records, keys key-N, 100-byte values, timestamps T0+N",
                GenerateVectors::many),
            new Shape("hundred", LEGACY, "100 records, keys key-N, 100-byte values, timestamps T0+N (legacy many)",
                GenerateVectors::hundred),
            new Shape("log_append_time", V1_V2, "LogAppendTime batch: create times T0+N, log append time T0+600000",
                s -> {
                    s.timestampType = "log_append_time";
                    s.logAppendTime = LOG_APPEND_TIME;
                    for (int i = 0; i < 3; i++) s.records.add(new BuildSpec.Rec(T0 + i, utf8("k" + i), utf8("v" + i)));
                }),
            new Shape("idempotent", V2, "idempotent producer: 20 records, base sequence 2147483640 (wraps to 12)",
                s -> {
                    s.producerId = PRODUCER_ID;
                    s.producerEpoch = PRODUCER_EPOCH;
                    s.baseSequence = Integer.MAX_VALUE - 7;
                    for (int i = 0; i < 20; i++) s.records.add(new BuildSpec.Rec(T0 + i, utf8("k" + i), utf8("v" + i)));
                }),
            new Shape("transactional", V2, "transactional batch: producer 1234567 epoch 5, sequences 0..2",
                s -> {
                    s.producerId = PRODUCER_ID;
                    s.producerEpoch = PRODUCER_EPOCH;
                    s.baseSequence = 0;
                    s.transactional = true;
                    for (int i = 0; i < 3; i++) s.records.add(new BuildSpec.Rec(T0 + i, utf8("k" + i), utf8("v" + i)));
                }),
            new Shape("leader_epoch_offset", ALL,
                "partition leader epoch 42 (v2 only writes it), base offset 1000000, 5 records", s -> {
                    s.partitionLeaderEpoch = 42;
                    s.baseOffset = 1_000_000L;
                    for (int i = 0; i < 5; i++) s.records.add(new BuildSpec.Rec(T0 + i, utf8("k" + i), utf8("v" + i)));
                }),
            new Shape("sparse_offsets", ALL,
                "appendWithOffset with gaps: offsets 1000, 1005, 1090 from base offset 1000 (as compaction leaves them)",
                s -> {
                    s.baseOffset = 1000;
                    long[] offsets = {1000, 1005, 1090};
                    for (int i = 0; i < offsets.length; i++) {
                        BuildSpec.Rec r = new BuildSpec.Rec(T0 + i, utf8("k" + i), utf8("v" + i));
                        r.offset = offsets[i];
                        s.records.add(r);
                    }
                }),
            new Shape("ts_unordered", V1_V2,
                "timestamps out of order (T0+5000, T0, T0+3000): negative v2 timestamp deltas; max is not the last",
                s -> {
                    long[] ts = {T0 + 5000, T0, T0 + 3000};
                    for (int i = 0; i < ts.length; i++) s.records.add(new BuildSpec.Rec(ts[i], utf8("k" + i), utf8("v" + i)));
                }),
            new Shape("no_timestamp", V1_V2, "records with timestamp -1 (NO_TIMESTAMP), which Kafka accepts", s -> {
                s.records.add(new BuildSpec.Rec(RecordBatch.NO_TIMESTAMP, utf8("k0"), utf8("v0")));
                s.records.add(new BuildSpec.Rec(RecordBatch.NO_TIMESTAMP, utf8("k1"), utf8("v1")));
            }),
            new Shape("delete_horizon", V2,
                "delete horizon T0+500000 set through the builder: it becomes the base timestamp", s -> {
                    s.deleteHorizonMs = T0 + 500_000L;
                    s.records.add(new BuildSpec.Rec(T0, utf8("k0"), null));
                    s.records.add(new BuildSpec.Rec(T0 + 1, utf8("k1"), utf8("v1")));
                })
        );
    }

    static void many(BuildSpec s) {
        Random rnd = new Random(7);
        for (int i = 0; i < 1000; i++) s.records.add(new BuildSpec.Rec(T0 + i, utf8("key-" + i), textValue(rnd, i, 100)));
    }

    static void hundred(BuildSpec s) {
        Random rnd = new Random(8);
        for (int i = 0; i < 100; i++) s.records.add(new BuildSpec.Rec(T0 + i, utf8("key-" + i), textValue(rnd, i, 100)));
    }

    /** "value-N-" followed by letters from a small alphabet: compressible, but not trivially. */
    static byte[] textValue(Random rnd, int i, int len) {
        byte[] v = new byte[len];
        byte[] prefix = utf8("value-" + i + "-");
        System.arraycopy(prefix, 0, v, 0, prefix.length);
        for (int j = prefix.length; j < len; j++) v[j] = (byte) ('a' + rnd.nextInt(8));
        return v;
    }

    static byte[] randomBytes(long seed, int len) {
        byte[] b = new byte[len];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** A repeated line of text with a slowly changing counter. */
    static byte[] compressible(int len) {
        byte[] out = new byte[len];
        int pos = 0;
        for (int line = 0; pos < len; line++) {
            byte[] l = utf8(String.format("krecords compressible line %06d: the quick brown fox jumps over the lazy dog%n", line / 16));
            int n = Math.min(l.length, len - pos);
            System.arraycopy(l, 0, out, pos, n);
            pos += n;
        }
        return out;
    }

    // ------------------------------------------------------------------ control batches

    static List<Vector> controlVectors() {
        List<Vector> out = new ArrayList<>();
        for (String type : List.of("commit", "abort")) {
            BuildSpec s = base(2, "none");
            s.baseOffset = 100;
            s.producerId = PRODUCER_ID;
            s.producerEpoch = PRODUCER_EPOCH;
            s.partitionLeaderEpoch = 3;
            s.control = new BuildSpec.Control();
            s.control.type = type;
            s.control.coordinatorEpoch = 7;
            s.control.timestamp = T0 + 10_000;
            // BuildSpec.build() calls MemoryRecords.withEndTransactionMarker for these.
            out.add(new Vector("v2_none_control_" + type, s, s.build(), "records", null,
                    "end-transaction marker (" + type + "), coordinator epoch 7, via MemoryRecords.withEndTransactionMarker"));
        }
        // A KRaft leader-change control record, built by MemoryRecords.withLeaderChangeMessage. The build
        // object carries the serialized LeaderChangeMessage as the control value.
        LeaderChangeMessage msg = new LeaderChangeMessage()
                .setVersion(ControlRecordUtils.LEADER_CHANGE_CURRENT_VERSION)
                .setLeaderId(1)
                .setVoters(List.of(new LeaderChangeMessage.Voter().setVoterId(1), new LeaderChangeMessage.Voter().setVoterId(2)))
                .setGrantingVoters(List.of(new LeaderChangeMessage.Voter().setVoterId(1)));
        long ts = T0 + 20_000;
        MemoryRecords lc = MemoryRecords.withLeaderChangeMessage(200, ts, 9, ByteBuffer.allocate(256), msg);
        BuildSpec s = base(2, "none");
        s.baseOffset = 200;
        s.partitionLeaderEpoch = 9;
        s.control = new BuildSpec.Control();
        s.control.type = "leader_change";
        s.control.timestamp = ts;
        s.control.value = Hex.bytes(MessageUtil.toByteBufferAccessor(msg, ControlRecordUtils.LEADER_CHANGE_CURRENT_VERSION).buffer());
        out.add(new Vector("v2_none_control_leader_change", s, BuildSpec.toArray(lc), "records", null,
                "KRaft leader-change control record via MemoryRecords.withLeaderChangeMessage"));
        return out;
    }

    // ------------------------------------------------------------------ batches rewritten by log cleaning

    /**
     * What the log cleaner's {@code MemoryRecords.filterTo} writes: an empty v2 batch kept for its producer
     * state, and a batch whose retained tombstone makes Kafka set the delete horizon. "build" is the input
     * batch, "filter" says what was removed, "hex" is filterTo's output ("input_hex" the input).
     */
    static List<Vector> filteredVectors() {
        List<Vector> out = new ArrayList<>();

        BuildSpec idem = base(2, "none");
        idem.baseOffset = 500;
        idem.producerId = PRODUCER_ID;
        idem.producerEpoch = PRODUCER_EPOCH;
        idem.baseSequence = 10;
        idem.partitionLeaderEpoch = 4;
        for (int i = 0; i < 3; i++) idem.records.add(new BuildSpec.Rec(T0 + i, utf8("k" + i), utf8("v" + i)));
        out.add(filtered("v2_none_compacted_empty", idem, Set.of(), BatchRetention.RETAIN_EMPTY,
                T0 + 1_000_000, 86_400_000L,
                "idempotent batch with every record removed by filterTo, kept as an empty batch (RETAIN_EMPTY)"));

        for (String codec : List.of("none", "zstd")) {
            BuildSpec tomb = base(2, codec);
            tomb.baseOffset = 600;
            tomb.records.add(new BuildSpec.Rec(T0, utf8("a"), utf8("old value of a")));
            tomb.records.add(new BuildSpec.Rec(T0 + 1, utf8("b"), null));
            tomb.records.add(new BuildSpec.Rec(T0 + 2, utf8("c"), utf8("value of c")));
            out.add(filtered("v2_" + codec + "_compacted_tombstone", tomb, Set.of(601L, 602L),
                    BatchRetention.DELETE_EMPTY, T0 + 1_000_000, 86_400_000L,
                    "filterTo drops offset 600 and keeps a tombstone: Kafka rewrites the batch with delete horizon "
                            + "currentTime + deleteRetentionMs"));
        }
        return out;
    }

    static Vector filtered(String name, BuildSpec spec, Set<Long> keep, BatchRetention retention,
                           long currentTime, long deleteRetentionMs, String what) {
        byte[] input = spec.build();
        RecordFilter filter = new RecordFilter(currentTime, deleteRetentionMs) {
            @Override
            protected BatchRetentionResult checkBatchRetention(RecordBatch batch) {
                return new BatchRetentionResult(retention, false);
            }

            @Override
            protected boolean shouldRetainRecord(RecordBatch batch, Record record) {
                return keep.contains(record.offset());
            }
        };
        ByteBuffer dest = ByteBuffer.allocate(input.length + 1024);
        MemoryRecords.readableRecords(ByteBuffer.wrap(input)).filterTo(filter, dest, BufferSupplier.NO_CACHING, Integer.MAX_VALUE);
        dest.flip();
        byte[] output = Hex.bytes(dest);

        Map<String, Object> f = new LinkedHashMap<>();
        f.put("api", "MemoryRecords.filterTo");
        f.put("current_time", currentTime);
        f.put("delete_retention_ms", deleteRetentionMs);
        f.put("batch_retention", retention.name().toLowerCase(java.util.Locale.ROOT));
        f.put("retain_offsets", keep.stream().sorted().map(o -> (Object) o).collect(Collectors.toList()));
        Map<String, Object> extra = new LinkedHashMap<>();
        extra.put("filter", f);
        extra.put("input_hex", Hex.encode(input));
        return new Vector(name, spec, output, "filtered", extra, what);
    }

    // ------------------------------------------------------------------ checks and output

    /** The build must reproduce the bytes (after a JSON round trip) and every batch must be valid. */
    static void selfCheck(Vector v) {
        BuildSpec again = BuildSpec.fromJson(Json.obj(Json.parse(Json.write(v.spec().toJson(), 0)), "build"));
        byte[] rebuilt = again.build();
        byte[] expected = v.layout().equals("records") ? v.bytes() : Hex.decode((String) v.extra().get("input_hex"));
        if (!Arrays.equals(rebuilt, expected))
            throw new IllegalStateException(v.name() + ": the build object does not reproduce the bytes");
        MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(v.bytes()));
        int size = 0;
        for (MutableRecordBatch batch : records.batches()) {
            batch.ensureValid();
            for (Record r : batch) r.ensureValid();
            size += batch.sizeInBytes();
        }
        if (size != v.bytes().length) throw new IllegalStateException(v.name() + ": trailing bytes");
    }

    static Map<String, Object> vectorJson(String source, Vector v) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("source", source);
        m.put("name", v.name());
        m.put("description", v.what());
        m.put("magic", (long) v.spec().magic);
        m.put("codec", v.spec().compression);
        m.put("layout", v.layout());
        m.put("hex", Hex.encode(v.bytes()));
        if (v.extra() != null) m.putAll(v.extra());
        m.put("build", v.spec().toJson());
        m.put("expect", Describe.expect(MemoryRecords.readableRecords(ByteBuffer.wrap(v.bytes()))));
        return m;
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    // ------------------------------------------------------------------ README

    static String readme(String version, Iterable<Vector> vectors) {
        StringBuilder list = new StringBuilder();
        for (Vector v : vectors) list.append("| `").append(v.name()).append("` | ").append(v.what()).append(" |\n");
        Function<String, String> r = s -> s.replace("@VERSION@", version);
        return r.apply(README_TEMPLATE) + list;
    }

    static final String README_TEMPLATE = """
        # Kafka reference vectors (generated by Apache Kafka @VERSION@)

        Every `*.json` file here holds bytes written by Apache Kafka's own record-format code
        (`org.apache.kafka.common.record.internal.MemoryRecordsBuilder` from `kafka-clients` @VERSION@,
        plus `MemoryRecords.withEndTransactionMarker`, `withLeaderChangeMessage` and `filterTo`), the exact
        input that produced them, and what Kafka's reader API reports when it reads them back.
        **Generated; do not edit.** Regenerate from the repository root with

        ```
        mvn -q -B -f interop/java/pom.xml package -DskipTests
        java -cp 'interop/java/target/lib/*:interop/java/target/classes' \\
            dev.krecords.interop.GenerateVectors tests/vectors/kafka-java
        ```

        `interop/run.sh` regenerates into a temporary folder and fails if the result differs from
        the files committed here (the generator uses fixed timestamps and seeded `java.util.Random`s only).

        ## Schema

        ```
        {
          "source": "apache/kafka MemoryRecordsBuilder @VERSION@",
          "name": "v2_lz4_headers",            // file name without .json: v<magic>_<codec>_<shape>
          "description": "...",
          "magic": 2, "codec": "lz4",
          "layout": "records" | "filtered",
          "hex": "...",                        // lowercase hex of the whole buffer (all log entries)
          "filter": {...}, "input_hex": "...", // layout "filtered" only, see below
          "build": {...},                      // the builder input
          "expect": {"batches": [...], "records": [...]}
        }
        ```

        ### `build`: the exact builder input

        `magic`, `compression` (none|gzip|snappy|lz4|zstd), `level` (null = Kafka's default level for the
        codec), `timestamp_type` (none|create_time|log_append_time; always none for magic 0),
        `base_offset`, `log_append_time` (null unless log_append_time), `producer_id`, `producer_epoch`,
        `base_sequence`, `transactional`, `partition_leader_epoch` (passed to the builder for every magic;
        only v2 writes it), `delete_horizon_ms` (null or ms; the 14-argument builder constructor),
        `control` (null, or `{"type":"commit"|"abort","coordinator_epoch":7,"version":0,"timestamp":ms}`
        for end-transaction markers, or `{"type":"leader_change","version":0,"timestamp":ms,"value":hex}`
        for KRaft control records), and `records`:
        `[{"offset": N (only when appendWithOffset was used), "timestamp": ms, "key": hex|null,
        "value": hex|null, "headers": [{"key": "utf-8 string", "value": hex|null}]}]`.
        Records without "offset" were appended with `append` (next offset). For magic 0 the record
        timestamps are given to the builder but not stored (v0 has no timestamp field).
        `ValidateBuilt` also reads `records_per_batch` (never written here).

        ### `expect`: Kafka's reading of `hex`

        `batches` has one object per log entry (for v0/v1, one per outer message: a compressed wrapper is
        one batch whose records are its inner messages):
        `base_offset`, `last_offset`, `batch_length` (v2: the BatchLength field; v0/v1: the message size
        field; both are the int32 at byte 8 of the entry), `partition_leader_epoch`, `magic`, `crc`
        (unsigned; v2 CRC-32C, v0/v1 the outer message's CRC-32), `attributes` (v2: the int16; v0/v1: the
        outer message's attribute byte), `codec`, `timestamp_type`, `transactional`, `control`,
        `last_offset_delta` (v2, else null), `first_timestamp` (the v2 BaseTimestamp field, else null),
        `max_timestamp`, `producer_id`, `producer_epoch`, `base_sequence`, `last_sequence`,
        `record_count` (`countOrNull()`: the v2 count field; null for v0/v1), `delete_horizon_ms`
        (null unless the v2 delete-horizon attribute bit is set), `size_in_bytes` (the whole entry,
        12-byte offset+size prefix included). Values are Kafka's accessors' (so -1 where Kafka reports
        "none": v0/v1 producer fields and leader epoch, v0 max_timestamp).

        `records` is every record in order, deep-iterated: `offset` (absolute), `timestamp` (null for v0;
        for log_append_time batches Kafka reports the batch's log append time), `key`, `value`,
        `headers`, `sequence` (v2: Kafka's `record.sequence()`, -1 without a producer; null for v0/v1),
        `control` (null, or `{"type": "commit"|"abort"|"leader_change"|..., "version": key version,
        "coordinator_epoch": N (end-transaction markers only)}`).

        ### layout "filtered"

        `hex` is what `MemoryRecords.filterTo` (the log cleaner's rewrite) made of `input_hex`, which is
        the output of `build`. `filter` gives `current_time`, `delete_retention_ms`, the batch retention
        decision and the offsets kept. A builder cannot reproduce `hex` from `build`: use these to check
        reading (empty batches, the delete horizon) only.

        ## Coverage

        Names are `v<magic>_<codec>_<shape>`. Small shapes exist for every magic and every codec Kafka
        allows for it (v0/v1: none, gzip, snappy, lz4; v2: also zstd); `headers`, `idempotent`,
        `transactional` and `delete_horizon` are v2 only; `log_append_time`, `ts_unordered` and
        `no_timestamp` v1 and v2. The bulky shapes keep the folder near 14 MB: `large_random` (100 KiB)
        and `large_compressible` (128 KiB) exist for every v2 codec and for v0/v1 with lz4 only (the
        only codec whose framing depends on the magic); `many` (1000 records) is v2 only and `hundred`
        (the same shape with 100 records) v0/v1 only. Compression levels: `v2_gzip_level{1,9}`,
        `v2_lz4_level{1,17}`, `v2_zstd_level{-5,3,19}` and `v{0,1}_lz4_level1` on the `hundred` shape.
        Control batches: `v2_none_control_{commit,abort,leader_change}`. Log cleaning (layout
        "filtered"): `v2_none_compacted_empty`, `v2_{none,zstd}_compacted_tombstone`.

        ## What Kafka's writer does (read from these vectors and the @VERSION@ code)

        - v2 BaseTimestamp is the *first appended* record's timestamp (not the minimum; later records
          may have negative deltas), except when a delete horizon is given: then BaseTimestamp is the
          delete horizon, every delta is relative to it, and the delete-horizon attribute bit (0x40) is
          set. MaxTimestamp is the largest record timestamp (starting from -1, so -1 when every record
          has timestamp -1); the delete horizon does not count. With LogAppendTime, MaxTimestamp is the
          log append time while BaseTimestamp and the deltas still come from the records' create times;
          readers report the log append time for every record.
        - Legacy compressed wrappers (v0 and v1): the wrapper's offset is the absolute offset of the
          last inner message; v1 inner offsets are relative to the builder's base offset, v0 inner
          offsets absolute. Wrapper key null, wrapper attributes = codec | 0x08 for LogAppendTime (v1);
          wrapper timestamp (v1) = the log append time, or else the largest inner timestamp. Inner
          messages carry codec 0 and the same timestamp-type bit; with LogAppendTime every v1 message's
          timestamp field (inner or uncompressed) is overwritten with the log append time.
        - A builder with no records writes nothing (`MemoryRecords.EMPTY`). Empty v2 batches come from
          log cleaning (`filterTo` with RETAIN_EMPTY): count 0, BaseTimestamp -1, MaxTimestamp, last
          offset delta, producer id/epoch, base sequence and flags kept, codec none.
        - When cleaning keeps a tombstone, Kafka rewrites the batch with delete horizon =
          currentTime + deleteRetentionMs, keeping the original base offset and the records' offset
          deltas, and the batch's codec (at the codec's default level).
        - End-transaction markers: attributes 0x30 (transactional + control), base sequence -1, one
          record with key `0000 000t` (version 0, type 0 abort / 1 commit) and value version 0 +
          coordinator epoch; leader-change records: attributes 0x20, key type 2.
        - Sequences wrap from 2147483647 to 0 (`last_sequence` 11 for base 2147483640 and 20 records).
        - Timestamps: -1 is accepted for v1/v2 records; any other negative timestamp is rejected.
        - lz4: Kafka's frame is magic 04224d18, FLG 0x60, BD 0x40 (64 KiB blocks), then the header
          checksum byte, which for v0 is the historical wrong one (`v0_lz4_small`: 0x1a, `v1_lz4_small`:
          0x82); blocks that do not shrink are stored raw (size high bit set); no content checksum.
          Kafka's default lz4 level (9) uses lz4-java's *fast* compressor; any other level (1 included)
          uses LZ4 HC at that level.
        - gzip: header `1f8b08000000000000ff` (mtime 0, XFL 0, OS 255); default level -1 (zlib's 6),
          levels 1..9. zstd: default level 3, levels -131072..22; frames have no content size and no
          checksum. snappy: xerial framing: magic `82534e4150505900`, version and compatible version
          `00000001 00000001`, then chunks of up to 32 KiB of input, each with a big-endian int32 length.

        ## Vectors

        | name | what |
        | --- | --- |
        """;
}
