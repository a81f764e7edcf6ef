package dev.krecords.interop;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.internal.AbstractLegacyRecordBatch;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;

/**
 * Reads {@link MemoryRecords} back through Kafka's own API and describes what Kafka sees: the "expect"
 * object of a vector file. Values come from Kafka's accessors ({@code batch.maxTimestamp()},
 * {@code record.offset()}, ...), not from the builder input; only the fields Kafka exposes no accessor
 * for (the length field, the raw attributes, v2's last offset delta) are read from the batch's bytes.
 */
public final class Describe {
    private Describe() {}

    /** {"batches": [...], "records": [...]} for every batch in {@code records}, records deep-iterated. */
    public static Map<String, Object> expect(MemoryRecords records) {
        List<Object> batches = new ArrayList<>();
        List<Object> recs = new ArrayList<>();
        for (MutableRecordBatch batch : records.batches()) {
            batches.add(batch(batch));
            for (Record r : batch) recs.add(record(batch, r));
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("batches", batches);
        m.put("records", recs);
        return m;
    }

    /** The whole log entry of {@code batch} (12-byte offset+size prefix included). */
    public static byte[] entryBytes(RecordBatch batch) {
        ByteBuffer buf = ByteBuffer.allocate(batch.sizeInBytes());
        batch.writeTo(buf);
        return buf.array();
    }

    public static Map<String, Object> batch(RecordBatch batch) {
        ByteBuffer raw = ByteBuffer.wrap(entryBytes(batch));
        boolean v2 = batch.magic() >= RecordBatch.MAGIC_VALUE_V2;
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("base_offset", batch.baseOffset());
        m.put("last_offset", batch.lastOffset());
        // v2: the BatchLength field; v0/v1: the message size field. Both sit at byte 8 of the entry.
        m.put("batch_length", (long) raw.getInt(8));
        m.put("partition_leader_epoch", (long) batch.partitionLeaderEpoch());
        m.put("magic", (long) batch.magic());
        m.put("crc", batch.checksum());
        // v2: the 16-bit attributes at byte 21; v0/v1: the wrapper message's attribute byte.
        m.put("attributes", v2 ? (long) (raw.getShort(21) & 0xffff)
                : (long) (((AbstractLegacyRecordBatch) batch).outerRecord().attributes() & 0xff));
        m.put("codec", batch.compressionType().name);
        m.put("timestamp_type", BuildSpec.timestampTypeName(batch.timestampType()));
        m.put("transactional", batch.isTransactional());
        m.put("control", batch.isControlBatch());
        m.put("last_offset_delta", v2 ? (Object) (long) raw.getInt(DefaultRecordBatch.LAST_OFFSET_DELTA_OFFSET) : null);
        m.put("first_timestamp", v2 ? (Object) ((DefaultRecordBatch) batch).baseTimestamp() : null);
        m.put("max_timestamp", batch.maxTimestamp());
        m.put("producer_id", batch.producerId());
        m.put("producer_epoch", (long) batch.producerEpoch());
        m.put("base_sequence", (long) batch.baseSequence());
        m.put("last_sequence", (long) batch.lastSequence());
        Integer count = batch.countOrNull();
        m.put("record_count", count == null ? null : (long) count);
        OptionalLong horizon = batch.deleteHorizonMs();
        m.put("delete_horizon_ms", horizon.isPresent() ? horizon.getAsLong() : null);
        m.put("size_in_bytes", (long) batch.sizeInBytes());
        return m;
    }

    public static Map<String, Object> record(RecordBatch batch, Record r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("offset", r.offset());
        m.put("timestamp", batch.magic() == RecordBatch.MAGIC_VALUE_V0 ? null : r.timestamp());
        m.put("key", r.hasKey() ? Hex.encode(r.key()) : null);
        m.put("value", r.hasValue() ? Hex.encode(r.value()) : null);
        List<Object> hs = new ArrayList<>();
        for (Header h : r.headers()) {
            Map<String, Object> hm = new LinkedHashMap<>();
            hm.put("key", h.key());
            hm.put("value", h.value() == null ? null : Hex.encode(h.value()));
            hs.add(hm);
        }
        m.put("headers", hs);
        m.put("sequence", batch.magic() >= RecordBatch.MAGIC_VALUE_V2 ? (Object) (long) r.sequence() : null);
        m.put("control", batch.isControlBatch() ? control(r) : null);
        return m;
    }

    /** {"type", "version", "coordinator_epoch"} of a control record, decoded the way Kafka does. */
    static Map<String, Object> control(Record r) {
        Map<String, Object> c = new LinkedHashMap<>();
        ControlRecordType type = ControlRecordType.parse(r.key());
        c.put("type", type.name().toLowerCase(Locale.ROOT));
        c.put("version", (long) r.key().getShort(0));
        if (type == ControlRecordType.COMMIT || type == ControlRecordType.ABORT) {
            EndTransactionMarker marker = EndTransactionMarker.deserialize(r);
            c.put("coordinator_epoch", (long) marker.coordinatorEpoch());
        }
        return c;
    }
}
