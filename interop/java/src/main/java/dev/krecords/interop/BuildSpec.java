package dev.krecords.interop;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.internals.ByteBufferOutputStream;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The exact input given to Kafka's {@link MemoryRecordsBuilder}: the "build" object of a vector file
 * and the input format of {@link ValidateBuilt}. {@link #build()} hands it to Kafka and returns the
 * bytes Kafka writes, so a vector's "build" always reproduces its "hex".
 *
 * <p>JSON fields (all but "magic" and "records" may be left out when reading; defaults in brackets):
 * magic, compression [none], level [null = the codec's default], timestamp_type
 * [none for magic 0, else create_time], base_offset [0], log_append_time [null],
 * producer_id [-1], producer_epoch [-1], base_sequence [-1], transactional [false],
 * partition_leader_epoch [-1], delete_horizon_ms [null], control [null], records, and the
 * validator-only records_per_batch [null: one batch].
 */
public final class BuildSpec {
    public byte magic;
    public String compression = "none";
    public Integer level;
    public String timestampType;
    public long baseOffset;
    public Long logAppendTime;
    public long producerId = RecordBatch.NO_PRODUCER_ID;
    public short producerEpoch = RecordBatch.NO_PRODUCER_EPOCH;
    public int baseSequence = RecordBatch.NO_SEQUENCE;
    public boolean transactional;
    public int partitionLeaderEpoch = RecordBatch.NO_PARTITION_LEADER_EPOCH;
    public Long deleteHorizonMs;
    public Control control;
    public List<Rec> records = new ArrayList<>();
    /** Validator only: split the records into batches of this many, offsets and sequences running on. */
    public Integer recordsPerBatch;

    /** One record as appended: {@code offset} is set only when {@code appendWithOffset} is used. */
    public static final class Rec {
        public Long offset;
        public long timestamp;
        public byte[] key;
        public byte[] value;
        public List<Hdr> headers = new ArrayList<>();

        public Rec() {}

        public Rec(long timestamp, byte[] key, byte[] value) {
            this.timestamp = timestamp;
            this.key = key;
            this.value = value;
        }

        public Rec header(String key, byte[] value) {
            headers.add(new Hdr(key, value));
            return this;
        }
    }

    public record Hdr(String key, byte[] value) {}

    /**
     * A control batch. commit/abort are built with {@link MemoryRecords#withEndTransactionMarker};
     * other types (leader_change, snapshot_header, ...) append {@code value} as the control record value.
     * {@code version} is the control record key version (and for end-transaction markers also the marker
     * value version); Kafka 4.x writes 0.
     */
    public static final class Control {
        public String type;
        public Integer coordinatorEpoch;
        public short version;
        public long timestamp;
        public byte[] value;
    }

    public TimestampType kafkaTimestampType() {
        return parseTimestampType(timestampType != null ? timestampType : (magic == 0 ? "none" : "create_time"));
    }

    public static TimestampType parseTimestampType(String s) {
        return switch (s) {
            case "none" -> TimestampType.NO_TIMESTAMP_TYPE;
            case "create_time" -> TimestampType.CREATE_TIME;
            case "log_append_time" -> TimestampType.LOG_APPEND_TIME;
            default -> throw new IllegalArgumentException("unknown timestamp_type " + s);
        };
    }

    public static String timestampTypeName(TimestampType t) {
        return switch (t) {
            case NO_TIMESTAMP_TYPE -> "none";
            case CREATE_TIME -> "create_time";
            case LOG_APPEND_TIME -> "log_append_time";
        };
    }

    /** Kafka's {@link Compression} for a codec name and optional level (null: the codec's default level). */
    public static Compression compression(String name, Integer level) {
        switch (name) {
            case "none":
                if (level != null) throw new IllegalArgumentException("codec none takes no level");
                return Compression.NONE;
            case "snappy":
                if (level != null) throw new IllegalArgumentException("codec snappy takes no level");
                return Compression.snappy().build();
            case "gzip":
                return level == null ? Compression.gzip().build() : Compression.gzip().level(level).build();
            case "lz4":
                return level == null ? Compression.lz4().build() : Compression.lz4().level(level).build();
            case "zstd":
                return level == null ? Compression.zstd().build() : Compression.zstd().level(level).build();
            default:
                throw new IllegalArgumentException("unknown compression " + name);
        }
    }

    // ------------------------------------------------------------------ building with Kafka

    /** The bytes Kafka writes for this input (every batch, concatenated). */
    public byte[] build() {
        if (control != null) return toArray(buildControl());
        List<List<Rec>> groups = new ArrayList<>();
        if (recordsPerBatch == null) {
            groups.add(records);
        } else {
            if (recordsPerBatch <= 0) throw new IllegalArgumentException("records_per_batch must be positive");
            for (int i = 0; i < records.size(); i += recordsPerBatch)
                groups.add(records.subList(i, Math.min(records.size(), i + recordsPerBatch)));
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        long nextOffset = baseOffset;
        int nextSequence = baseSequence;
        for (List<Rec> group : groups) {
            MemoryRecords built = buildOne(group, nextOffset, nextSequence);
            out.writeBytes(toArray(built));
            // offsets run on from the last offset written; sequences advance by the offset span
            long last = lastOffsetOf(group, nextOffset);
            if (nextSequence >= 0)
                nextSequence = DefaultRecordBatch.incrementSequence(nextSequence, (int) (last - nextOffset + 1));
            nextOffset = last + 1;
        }
        return out.toByteArray();
    }

    private static long lastOffsetOf(List<Rec> group, long base) {
        long last = base - 1;
        for (Rec r : group) last = r.offset != null ? r.offset : last + 1;
        return last;
    }

    /** One MemoryRecordsBuilder run over {@code group}. */
    private MemoryRecords buildOne(List<Rec> group, long base, int sequence) {
        ByteBufferOutputStream stream = new ByteBufferOutputStream(ByteBuffer.allocate(1024));
        MemoryRecordsBuilder builder = new MemoryRecordsBuilder(
                stream, magic, compression(compression, level), kafkaTimestampType(), base,
                logAppendTime != null ? logAppendTime : RecordBatch.NO_TIMESTAMP,
                producerId, producerEpoch, sequence, transactional,
                false, partitionLeaderEpoch, Integer.MAX_VALUE,
                deleteHorizonMs != null ? deleteHorizonMs : RecordBatch.NO_TIMESTAMP);
        for (Rec r : group) {
            Header[] headers = r.headers.isEmpty() ? Record.EMPTY_HEADERS : r.headers.stream()
                    .map(h -> new RecordHeader(h.key(), h.value())).toArray(Header[]::new);
            if (r.offset != null) builder.appendWithOffset(r.offset, r.timestamp, r.key, r.value, headers);
            else builder.append(r.timestamp, r.key, r.value, headers);
        }
        return builder.build();
    }

    private MemoryRecords buildControl() {
        if (!records.isEmpty()) throw new IllegalArgumentException("a control build has no records");
        if (magic != 2) throw new IllegalArgumentException("control batches need magic 2");
        if (control.version != 0) throw new IllegalArgumentException("Kafka writes control version 0 only");
        switch (control.type) {
            case "commit", "abort" -> {
                ControlRecordType type = control.type.equals("commit") ? ControlRecordType.COMMIT : ControlRecordType.ABORT;
                if (control.coordinatorEpoch == null) throw new IllegalArgumentException("control.coordinator_epoch missing");
                return MemoryRecords.withEndTransactionMarker(baseOffset, control.timestamp, partitionLeaderEpoch,
                        producerId, producerEpoch, new EndTransactionMarker(type, control.coordinatorEpoch));
            }
            default -> {
                // The KRaft control records: same builder arguments as MemoryRecords.withLeaderChangeMessage
                // and friends, with the already serialized message as the value.
                ControlRecordType type = ControlRecordType.valueOf(control.type.toUpperCase(Locale.ROOT));
                MemoryRecordsBuilder builder = new MemoryRecordsBuilder(ByteBuffer.allocate(1024), magic,
                        compression(compression, level), kafkaTimestampType(), baseOffset, control.timestamp,
                        producerId, producerEpoch, baseSequence, transactional, true, partitionLeaderEpoch,
                        Integer.MAX_VALUE);
                builder.appendControlRecord(control.timestamp, type, ByteBuffer.wrap(control.value));
                return builder.build();
            }
        }
    }

    public static byte[] toArray(MemoryRecords records) {
        return Hex.bytes(records.buffer());
    }

    // ------------------------------------------------------------------ JSON

    public Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("magic", (long) magic);
        m.put("compression", compression);
        m.put("level", level == null ? null : (long) level);
        m.put("timestamp_type", timestampTypeName(kafkaTimestampType()));
        m.put("base_offset", baseOffset);
        m.put("log_append_time", logAppendTime);
        m.put("producer_id", producerId);
        m.put("producer_epoch", (long) producerEpoch);
        m.put("base_sequence", (long) baseSequence);
        m.put("transactional", transactional);
        m.put("partition_leader_epoch", (long) partitionLeaderEpoch);
        m.put("delete_horizon_ms", deleteHorizonMs);
        if (control == null) {
            m.put("control", null);
        } else {
            Map<String, Object> c = new LinkedHashMap<>();
            c.put("type", control.type);
            if (control.coordinatorEpoch != null) c.put("coordinator_epoch", (long) control.coordinatorEpoch);
            c.put("version", (long) control.version);
            c.put("timestamp", control.timestamp);
            if (control.value != null) c.put("value", Hex.encode(control.value));
            m.put("control", c);
        }
        if (recordsPerBatch != null) m.put("records_per_batch", (long) recordsPerBatch);
        List<Object> recs = new ArrayList<>();
        for (Rec r : records) {
            Map<String, Object> rm = new LinkedHashMap<>();
            if (r.offset != null) rm.put("offset", r.offset);
            rm.put("timestamp", r.timestamp);
            rm.put("key", r.key == null ? null : Hex.encode(r.key));
            rm.put("value", r.value == null ? null : Hex.encode(r.value));
            rm.put("headers", headersJson(r.headers));
            recs.add(rm);
        }
        m.put("records", recs);
        return m;
    }

    static List<Object> headersJson(List<Hdr> headers) {
        List<Object> hs = new ArrayList<>();
        for (Hdr h : headers) {
            Map<String, Object> hm = new LinkedHashMap<>();
            hm.put("key", h.key());
            hm.put("value", h.value() == null ? null : Hex.encode(h.value()));
            hs.add(hm);
        }
        return hs;
    }

    public static BuildSpec fromJson(Map<String, Object> m) {
        BuildSpec s = new BuildSpec();
        s.magic = (byte) Json.lng(m, "magic");
        if (s.magic < 0 || s.magic > 2) throw new IllegalArgumentException("magic must be 0, 1 or 2");
        s.compression = Json.str(m, "compression", "none");
        Long level = Json.optLng(m, "level");
        s.level = level == null ? null : level.intValue();
        s.timestampType = Json.str(m, "timestamp_type", null);
        s.baseOffset = Json.lng(m, "base_offset", 0);
        s.logAppendTime = Json.optLng(m, "log_append_time");
        s.producerId = Json.lng(m, "producer_id", RecordBatch.NO_PRODUCER_ID);
        s.producerEpoch = (short) Json.lng(m, "producer_epoch", RecordBatch.NO_PRODUCER_EPOCH);
        s.baseSequence = (int) Json.lng(m, "base_sequence", RecordBatch.NO_SEQUENCE);
        s.transactional = Json.bool(m, "transactional", false);
        s.partitionLeaderEpoch = (int) Json.lng(m, "partition_leader_epoch", RecordBatch.NO_PARTITION_LEADER_EPOCH);
        s.deleteHorizonMs = Json.optLng(m, "delete_horizon_ms");
        Long rpb = Json.optLng(m, "records_per_batch");
        s.recordsPerBatch = rpb == null ? null : rpb.intValue();
        if (m.get("control") != null) {
            Map<String, Object> c = Json.obj(m.get("control"), "control");
            Control ctl = new Control();
            ctl.type = Json.str(c, "type", null);
            if (ctl.type == null) throw new IllegalArgumentException("control.type missing");
            Long ce = Json.optLng(c, "coordinator_epoch");
            ctl.coordinatorEpoch = ce == null ? null : ce.intValue();
            ctl.version = (short) Json.lng(c, "version", 0);
            ctl.timestamp = Json.lng(c, "timestamp");
            ctl.value = Hex.decodeNullable(c.get("value"), "control.value");
            s.control = ctl;
        }
        Object recs = m.get("records");
        if (recs != null) {
            int i = 0;
            for (Object o : Json.arr(recs, "records")) {
                String what = "records[" + i++ + "]";
                Map<String, Object> rm = Json.obj(o, what);
                Rec r = new Rec();
                r.offset = Json.optLng(rm, "offset");
                r.timestamp = Json.lng(rm, "timestamp", RecordBatch.NO_TIMESTAMP);
                r.key = Hex.decodeNullable(rm.get("key"), what + ".key");
                r.value = Hex.decodeNullable(rm.get("value"), what + ".value");
                r.headers = parseHeaders(rm.get("headers"), what);
                s.records.add(r);
            }
        }
        return s;
    }

    static List<Hdr> parseHeaders(Object o, String what) {
        List<Hdr> out = new ArrayList<>();
        if (o == null) return out;
        for (Object h : Json.arr(o, what + ".headers")) {
            Map<String, Object> hm = Json.obj(h, what + ".headers[]");
            String key = Json.str(hm, "key", null);
            if (key == null) throw new IllegalArgumentException(what + ": header key missing");
            out.add(new Hdr(key, Hex.decodeNullable(hm.get("value"), what + ".headers[].value")));
        }
        return out;
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
