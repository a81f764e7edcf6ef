package dev.krecords.interop;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.internals.BufferSupplier;
import org.apache.kafka.common.utils.internals.CloseableIterator;

import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.log.LogAppendInfo;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

import java.io.BufferedOutputStream;
import java.io.File;
import java.nio.file.Files;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The differential testing referee: what Kafka 4.4.0 makes of arbitrary bytes.
 *
 * <pre>
 * Referee read     length-prefixed inputs on stdin (4-byte big-endian length, then the bytes),
 *                  one JSON line per input on stdout
 * Referee produce  the same inputs, each appended by a producer to a fresh partition log
 * </pre>
 *
 * <p>{@code produce} appends each input as one produce request's records for one partition to a
 * new {@link UnifiedLog} with the default topic configuration, as the leader does
 * ({@code appendAsLeader}, client origin, leader epoch 0), after the request-level check of
 * {@code ProduceRequest.validateRecords} (produce v11; skipped for v0/v1 input, as Kafka 3.x's
 * produce v0-v2 did): the broker's whole path, shallow
 * checks, {@code LogValidator}, producer state. The clock stands still at {@link #NOW}. The
 * answer is {@code {"accept":true,"first_offset":N,"last_offset":N}} or
 * {@code {"accept":false,"error":"KAFKA_ERROR_NAME","exception":"Class","message":"..."}}.
 *
 * <p>For each input it reads the bytes the way a consumer reads a fetched partition
 * ({@code CompletedFetch} with {@code check.crcs=true}): {@link MemoryRecords#readableRecords},
 * every batch in turn ({@code ensureValid()}: size and CRC), every record through
 * {@code streamingIterator} (decompressing), each legacy record's own {@code ensureValid()}. A
 * partial batch at the end is dropped, as the consumer drops it. The answer is
 * {@code {"accept":true,"batches":[...],"records":[...]}} with every field of every batch and
 * record ({@link Describe#batch}, and the record fields below), or
 * {@code {"accept":false,"error":"ExceptionClass","message":"..."}}. A {@link VirtualMachineError}
 * (out of memory, stack overflow) is {@code {"crash":"ErrorClass"}}: the harness reports it and
 * never counts it as agreement.
 */
public final class Referee {
    private Referee() {}

    public static void main(String[] args) throws IOException {
        boolean produce = args.length == 1 && args[0].equals("produce");
        if (args.length != 1 || !(produce || args[0].equals("read"))) {
            System.err.println("usage: Referee read|produce   (length-prefixed inputs on stdin)");
            System.exit(2);
        }
        KafkaScheduler scheduler = null;
        if (produce) {
            scheduler = new KafkaScheduler(1, true, "referee-");
            scheduler.startup();
        }
        DataInputStream in = new DataInputStream(new java.io.BufferedInputStream(System.in, 1 << 16));
        OutputStream raw = new BufferedOutputStream(System.out, 1 << 16);
        PrintStream out = new PrintStream(raw, false, StandardCharsets.UTF_8);
        while (true) {
            int len;
            try {
                len = in.readInt();
            } catch (EOFException e) {
                break;
            }
            if (len < 0 || len > (64 << 20)) {
                System.err.println("Referee: bad input length " + len);
                System.exit(2);
            }
            byte[] bytes = new byte[len];
            in.readFully(bytes);
            out.print(Json.write(produce ? produce(bytes, scheduler) : verdict(bytes), 0));
        }
        out.flush();
        if (scheduler != null) {
            try {
                scheduler.shutdown();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The fixed "now" of produce mode (2024-04-25), also used by krec-diff's side. */
    public static final long NOW = 1_714_000_000_000L;

    private static final Time FIXED = new Time() {
        @Override public long milliseconds() { return NOW; }
        @Override public long nanoseconds() { return NOW * 1_000_000L; }
        @Override public void sleep(long ms) {}
        @Override public void waitObject(Object o, java.util.function.Supplier<Boolean> c, long deadline) {}
    };

    static Map<String, Object> produce(byte[] bytes, KafkaScheduler scheduler) {
        Map<String, Object> m = new LinkedHashMap<>();
        File dir = null;
        UnifiedLog log = null;
        try {
            // The request-level check a broker makes first (KafkaApis.handleProduceRequest): one v2
            // batch per partition. Kafka 4.x takes no other produce; v0/v1 inputs skip it, as the
            // produce v0-v2 of Kafka 3.x did, so that the log's legacy path is compared too.
            boolean legacy = bytes.length > 16 && bytes[16] >= 0 && bytes[16] < 2;
            MemoryRecords records = MemoryRecords.readableRecords(ByteBuffer.wrap(bytes));
            if (!legacy || !records.batches().iterator().hasNext())
                org.apache.kafka.common.requests.ProduceRequest.validateRecords((short) 11, records);
            dir = Files.createTempDirectory("referee-").resolve("t-0").toFile();
            log = UnifiedLog.create(dir, new LogConfig(new java.util.HashMap<>()), 0L, 0L, scheduler,
                    new BrokerTopicStats(), FIXED, 60_000, new ProducerStateManagerConfig(86_400_000, false),
                    600_000, new LogDirFailureChannel(1), true, java.util.Optional.empty());
            LogAppendInfo info = log.appendAsLeader(records, 0);
            m.put("accept", true);
            m.put("first_offset", info.firstOffset());
            m.put("last_offset", info.lastOffset());
        } catch (VirtualMachineError e) {
            m.clear();
            m.put("crash", e.getClass().getName());
        } catch (Throwable e) {
            // ReplicaManager answers a RecordValidationException with the exception it wraps.
            Throwable answered = e instanceof org.apache.kafka.storage.internals.log.RecordValidationException rve
                    ? rve.invalidException() : e;
            m.clear();
            m.put("accept", false);
            m.put("error", Errors.forException(answered).name());
            m.put("exception", answered.getClass().getSimpleName());
            m.put("message", String.valueOf(answered.getMessage()));
        } finally {
            try {
                if (log != null) log.close();
            } catch (Throwable ignored) {
                // the verdict is what matters
            }
            if (dir != null) deleteTree(dir.getParentFile());
        }
        return m;
    }

    private static void deleteTree(File f) {
        File[] children = f.listFiles();
        if (children != null) for (File c : children) deleteTree(c);
        f.delete();
    }

    static Map<String, Object> verdict(byte[] bytes) {
        Map<String, Object> m = new LinkedHashMap<>();
        try {
            List<Object> batches = new ArrayList<>();
            List<Object> records = new ArrayList<>();
            MemoryRecords mr = MemoryRecords.readableRecords(ByteBuffer.wrap(bytes));
            for (MutableRecordBatch batch : mr.batches()) {
                batch.ensureValid();
                try (CloseableIterator<Record> it = batch.streamingIterator(BufferSupplier.NO_CACHING)) {
                    while (it.hasNext()) {
                        Record r = it.next();
                        if (batch.magic() < RecordBatch.MAGIC_VALUE_V2) r.ensureValid();
                        records.add(record(batch, r));
                    }
                }
                batches.add(Describe.batch(batch));
            }
            m.put("accept", true);
            m.put("batches", batches);
            m.put("records", records);
        } catch (VirtualMachineError e) {
            m.clear();
            m.put("crash", e.getClass().getName());
        } catch (Throwable e) {
            m.clear();
            m.put("accept", false);
            m.put("error", e.getClass().getSimpleName());
            m.put("message", String.valueOf(e.getMessage()));
        }
        return m;
    }

    /** A record's fields as the consumer hands them out (no control-record decoding). */
    static Map<String, Object> record(RecordBatch batch, Record r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("offset", r.offset());
        m.put("timestamp", batch.magic() == RecordBatch.MAGIC_VALUE_V0 ? null : r.timestamp());
        m.put("key", r.hasKey() ? Hex.encode(r.key()) : null);
        m.put("value", r.hasValue() ? Hex.encode(r.value()) : null);
        List<Object> hs = new ArrayList<>();
        for (Header h : r.headers()) {
            Map<String, Object> hm = new LinkedHashMap<>();
            hm.put("key", Hex.encode(ByteBuffer.wrap(h.key().getBytes(StandardCharsets.UTF_8))));
            hm.put("value", h.value() == null ? null : Hex.encode(ByteBuffer.wrap(h.value())));
            hs.add(hm);
        }
        m.put("headers", hs);
        m.put("sequence", batch.magic() >= RecordBatch.MAGIC_VALUE_V2 ? (Object) (long) r.sequence() : null);
        return m;
    }
}
