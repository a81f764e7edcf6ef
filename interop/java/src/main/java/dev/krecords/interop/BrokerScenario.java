package dev.krecords.interop;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.internals.AppInfoParser;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Drives a real Kafka broker with the real Java clients, for the interop suite's broker step.
 *
 * <pre>
 * BrokerScenario BOOTSTRAP OUT.json
 * </pre>
 *
 * For every topic below (one partition each) it produces, in this order, with the topic's producer
 * codec: a plain producer's batch (acks=1, no idempotence: keys null/empty/text/binary, values
 * null/empty/text/binary, a 200 KiB value except on the small-segment topic, headers with duplicate keys, null values, an empty key
 * and a non-ASCII key), two idempotent batches, then two transactional producers interleaved
 * (A: commit, B: abort, A: abort, B: commit, with batches of the two open transactions alternating
 * in the log). Then it consumes the whole partition twice, with isolation.level read_committed and
 * read_uncommitted, and asks the broker for offsets (Admin.listOffsets: earliest, latest at both
 * isolation levels, max timestamp, and the offset for each of a set of timestamps: every record's
 * timestamp and the millisecond before and after it, one before all, several between the last
 * record the producers stamped and the end of the run, where the transaction markers' timestamps
 * fall, and the end of the run itself). It writes OUT.json:
 *
 * <pre>
 * {"kafka_version": "...", "topics": {TOPIC: {"producer_codec": C, "topic_config": {...},
 *   "produced": [{"producer", "fate": "plain"|"committed"|"aborted", "offset", "timestamp"
 *                 (null: the producer's clock), "key", "value", "headers"}],
 *   "read_committed": [RECORD...], "read_uncommitted": [RECORD...],
 *   "list_offsets": {"earliest": ANSWER, "latest": ANSWER, "latest_read_committed": ANSWER,
 *                    "max_timestamp": ANSWER, "for_timestamp": [ANSWER with "query": T...]}}}}
 * RECORD = {"offset", "timestamp", "timestamp_type": "create_time"|"log_append_time", "key",
 *           "value", "headers": [{"key", "value"}], "leader_epoch"}
 * ANSWER = {"offset", "timestamp", "leader_epoch"}   (as ListOffsetsResultInfo: offset and
 *           timestamp -1 when none, leader_epoch null when absent)
 * </pre>
 * Bytes are lowercase hex, null when absent. Keys and values never contain a line feed or carriage
 * return (DumpLogSegments prints them on one line). Exit status 0, or 1 with a message on stderr.
 */
public final class BrokerScenario {
    private static final long T0 = 1714000000000L;
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    /** A topic: its name, the producers' compression.type and its own topic configs. */
    private record TopicSpec(String name, String producerCodec, Map<String, String> config, boolean large) {
        TopicSpec(String name, String producerCodec, Map<String, String> config) {
            this(name, producerCodec, config, true);
        }
    }

    private static final List<TopicSpec> TOPICS = List.of(
            new TopicSpec("interop-none", "none", Map.of()),
            new TopicSpec("interop-gzip", "gzip", Map.of()),
            new TopicSpec("interop-snappy", "snappy", Map.of()),
            new TopicSpec("interop-lz4", "lz4", Map.of()),
            new TopicSpec("interop-zstd", "zstd", Map.of()),
            // The broker stamps LogAppendTime into every batch the producers send.
            new TopicSpec("interop-log-append-time", "lz4", Map.of("message.timestamp.type", "LogAppendTime")),
            // The broker recompresses: producers send lz4, the topic stores zstd.
            new TopicSpec("interop-broker-zstd", "lz4", Map.of("compression.type", "zstd")),
            // The broker compresses uncompressed produce requests with gzip level 1.
            new TopicSpec("interop-broker-gzip1", "none", Map.of("compression.type", "gzip", "compression.gzip.level", "1")),
            // Tiny segments (Kafka's test-only internal.segment.bytes): a partition of many segments,
            // each with its indexes and producer snapshot. No 200 KiB record here: a batch must fit
            // in a segment.
            new TopicSpec("interop-segments", "none", Map.of("internal.segment.bytes", "2048"), false));

    private final String bootstrap;
    private long nextTimestamp = T0;

    private BrokerScenario(String bootstrap) {
        this.bootstrap = bootstrap;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: BrokerScenario BOOTSTRAP OUT.json");
            System.exit(2);
        }
        try {
            Map<String, Object> out = new BrokerScenario(args[0]).run();
            Files.writeString(Path.of(args[1]), Json.write(out, 4), StandardCharsets.UTF_8);
            System.out.println("BrokerScenario: " + TOPICS.size() + " topics produced and consumed, written to " + args[1]);
        } catch (Exception e) {
            System.err.println("BrokerScenario failed: " + e);
            e.printStackTrace();
            System.exit(1);
        }
        System.exit(0);
    }

    private Map<String, Object> run() throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) TIMEOUT.toMillis()))) {
            admin.describeCluster().nodes().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            List<NewTopic> topics = new ArrayList<>();
            for (TopicSpec t : TOPICS) topics.add(new NewTopic(t.name(), 1, (short) 1).configs(t.config()));
            Map<String, KafkaFuture<Void>> created = admin.createTopics(topics).values();
            for (TopicSpec t : TOPICS) {
                try {
                    created.get(t.name()).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    // Kafka 3.x has no internal.segment.bytes (4.0 raised segment.bytes' minimum
                    // to 1 MiB and added it for tests); there, segment.bytes takes small values.
                    String v = t.config().get("internal.segment.bytes");
                    if (v == null || !(e.getCause() instanceof InvalidConfigurationException)) throw e;
                    Map<String, String> c = new LinkedHashMap<>(t.config());
                    c.remove("internal.segment.bytes");
                    c.put("segment.bytes", v);
                    admin.createTopics(List.of(new NewTopic(t.name(), 1, (short) 1).configs(c)))
                            .all().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                }
            }
        }
        Map<String, Object> topicsOut = new LinkedHashMap<>();
        for (TopicSpec t : TOPICS) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("producer_codec", t.producerCodec());
            m.put("topic_config", new LinkedHashMap<String, Object>(t.config()));
            m.put("produced", produce(t));
            awaitStableOffset(t.name());
            m.put("read_committed", consume(t.name(), "read_committed"));
            List<Object> uncommitted = consume(t.name(), "read_uncommitted");
            m.put("read_uncommitted", uncommitted);
            m.put("list_offsets", listOffsets(t.name(), uncommitted));
            topicsOut.put(t.name(), m);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("kafka_version", AppInfoParser.getVersion());
        out.put("bootstrap", bootstrap);
        out.put("topics", topicsOut);
        return out;
    }

    // ------------------------------------------------------------------ producing

    /** One record as sent, with the fate the scenario gives it and the offset the broker acked. */
    private static final class Sent {
        final String producer;
        String fate;
        final ProducerRecord<byte[], byte[]> record;
        final Future<RecordMetadata> ack;

        Sent(String producer, String fate, ProducerRecord<byte[], byte[]> record, Future<RecordMetadata> ack) {
            this.producer = producer;
            this.fate = fate;
            this.record = record;
            this.ack = ack;
        }
    }

    private KafkaProducer<byte[], byte[]> producer(TopicSpec t, String kind, String txnId) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, t.producerCodec());
        p.put(ProducerConfig.LINGER_MS_CONFIG, 1000); // batches end at flush(), not by time
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) TIMEOUT.toMillis());
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 30000);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, (int) TIMEOUT.toMillis());
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "krecords-" + kind + "-" + t.name());
        switch (kind) {
            case "plain" -> {
                p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
                p.put(ProducerConfig.ACKS_CONFIG, "1");
            }
            case "idempotent" -> {
                p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
                p.put(ProducerConfig.ACKS_CONFIG, "all");
            }
            default -> {
                p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
                p.put(ProducerConfig.ACKS_CONFIG, "all");
                p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId);
                p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 60000);
            }
        }
        return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
    }

    private List<Object> produce(TopicSpec t) throws Exception {
        List<Sent> sent = new ArrayList<>();
        String topic = t.name();

        try (KafkaProducer<byte[], byte[]> plain = producer(t, "plain", null)) {
            Random rnd = new Random(42);
            byte[] binaryKey = {(byte) 0xff, (byte) 0xfe, 0x00, 0x01, (byte) 0x80};
            byte[] binaryValue = new byte[64];
            rnd.nextBytes(binaryValue);
            for (int i = 0; i < binaryValue.length; i++)
                if (binaryValue[i] == '\n' || binaryValue[i] == '\r') binaryValue[i] = 0x20;
            send(sent, plain, "plain", "plain", rec(topic, null, "plain hello", true));
            send(sent, plain, "plain", "plain", rec(topic, "", "", true));
            send(sent, plain, "plain", "plain", rec(topic, "k-tombstone", null, true,
                    hdr("h", "v1"), hdr("h", "v2"), hdr("h", null), hdr("", "empty key"),
                    new RecordHeader("cl\u00e9-\u20ac", new byte[] {0x00, (byte) 0xff}), hdr("empty-value", "")));
            send(sent, plain, "plain", "plain", rec(topic, "k-unicode", "valeur \u00fcn\u00efc\u00f6d\u00e9 \u20ac \uD83D\uDE00", true));
            send(sent, plain, "plain", "plain", new ProducerRecord<>(topic, 0, nextTimestamp++, binaryKey, binaryValue));
            send(sent, plain, "plain", "plain", rec(topic, "k-producer-clock", "timestamp from the producer's clock", false));
            for (int i = 0; i < 10; i++)
                send(sent, plain, "plain", "plain", rec(topic, "key-" + i, "plain value " + i + " " + "x".repeat(i * 10), true));
            plain.flush();
            if (t.large()) {
                // a value larger than batch.size (16 KiB): a batch of its own; 200 KiB spans several lz4
                // blocks and snappy chunks
                send(sent, plain, "plain", "plain", rec(topic, "k-large", "krecords broker interop ".repeat(8534), true));
                plain.flush();
            }
        }

        try (KafkaProducer<byte[], byte[]> idem = producer(t, "idempotent", null)) {
            for (int b = 0; b < 2; b++) {
                for (int i = 0; i < 6; i++)
                    send(sent, idem, "idempotent", "plain", rec(topic, "idem-" + b + "-" + i, "idempotent value " + i, true,
                            hdr("batch", String.valueOf(b))));
                idem.flush();
            }
        }

        String txA = "krecords-" + topic + "-a";
        String txB = "krecords-" + topic + "-b";
        try (KafkaProducer<byte[], byte[]> a = producer(t, "transactional", txA);
             KafkaProducer<byte[], byte[]> b = producer(t, "transactional", txB)) {
            a.initTransactions();
            b.initTransactions();
            // A1 (committed) and B1 (aborted) open at the same time, batches interleaved
            a.beginTransaction();
            txn(sent, a, "txn-a", "committed", topic, "a1", 3);
            b.beginTransaction();
            txn(sent, b, "txn-b", "aborted", topic, "b1", 2);
            txn(sent, a, "txn-a", "committed", topic, "a1-more", 2);
            a.commitTransaction();
            txn(sent, b, "txn-b", "aborted", topic, "b1-more", 2);
            b.abortTransaction();
            // A2 (aborted) and B2 (committed), again interleaved
            a.beginTransaction();
            b.beginTransaction();
            txn(sent, a, "txn-a", "aborted", topic, "a2", 2);
            txn(sent, b, "txn-b", "committed", topic, "b2", 3);
            a.abortTransaction();
            txn(sent, b, "txn-b", "committed", topic, "b2-more", 1);
            b.commitTransaction();
        }

        List<Object> out = new ArrayList<>();
        for (Sent s : sent) {
            RecordMetadata md = s.ack.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("producer", s.producer);
            m.put("fate", s.fate);
            m.put("offset", md.offset());
            m.put("timestamp", s.record.timestamp());
            m.put("key", hex(s.record.key()));
            m.put("value", hex(s.record.value()));
            m.put("headers", headers(s.record.headers().toArray()));
            out.add(m);
        }
        return out;
    }

    private void txn(List<Sent> sent, KafkaProducer<byte[], byte[]> p, String who, String fate, String topic,
                     String tag, int n) {
        for (int i = 0; i < n; i++)
            send(sent, p, who, fate, rec(topic, who + "-" + tag + "-" + i, fate + " value " + tag + " " + i, true,
                    hdr("txn", tag)));
        p.flush();
    }

    private static void send(List<Sent> sent, KafkaProducer<byte[], byte[]> p, String who, String fate,
                             ProducerRecord<byte[], byte[]> r) {
        sent.add(new Sent(who, fate, r, p.send(r)));
    }

    private ProducerRecord<byte[], byte[]> rec(String topic, String key, String value, boolean fixedTime, Header... headers) {
        Long ts = fixedTime ? nextTimestamp++ : null;
        return new ProducerRecord<>(topic, 0, ts, utf8(key), utf8(value), List.of(headers));
    }

    private static Header hdr(String key, String value) {
        return new RecordHeader(key, utf8(value));
    }

    private static byte[] utf8(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    // ------------------------------------------------------------------ consuming

    /**
     * commitTransaction returns once the coordinator has logged its decision; the markers reach
     * the partition a little later. Until they do, the last stable offset (a read_committed
     * consumer's end) stays below the high watermark, and a consumer reading up to it would miss
     * the last committed transaction (seen on a loaded CI machine). Wait until the two agree.
     */
    private void awaitStableOffset(String topic) throws Exception {
        TopicPartition tp = new TopicPartition(topic, 0);
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) TIMEOUT.toMillis()))) {
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (true) {
                long hw = admin.listOffsets(Map.of(tp, OffsetSpec.latest()),
                        new ListOffsetsOptions(IsolationLevel.READ_UNCOMMITTED)).partitionResult(tp)
                        .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS).offset();
                long lso = admin.listOffsets(Map.of(tp, OffsetSpec.latest()),
                        new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).partitionResult(tp)
                        .get(TIMEOUT.toSeconds(), TimeUnit.SECONDS).offset();
                if (lso == hw) return;
                if (System.nanoTime() > deadline)
                    throw new IllegalStateException(topic + ": last stable offset " + lso
                            + " still below the high watermark " + hw + " after every transaction ended");
                Thread.sleep(100);
            }
        }
    }

    private List<Object> consume(String topic, String isolation) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "krecords-" + isolation + "-" + topic);
        p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) TIMEOUT.toMillis());
        List<Object> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long end = c.endOffsets(List.of(tp), TIMEOUT).get(tp);
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (c.position(tp, TIMEOUT) < end) {
                if (System.nanoTime() > deadline)
                    throw new IllegalStateException(isolation + " consumer of " + topic + " stuck at offset "
                            + c.position(tp) + " of " + end);
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("offset", r.offset());
                    m.put("timestamp", r.timestamp());
                    m.put("timestamp_type", BuildSpec.timestampTypeName(r.timestampType()));
                    m.put("key", hex(r.key()));
                    m.put("value", hex(r.value()));
                    m.put("headers", headers(r.headers().toArray()));
                    m.put("leader_epoch", r.leaderEpoch().isPresent() ? (long) r.leaderEpoch().get() : null);
                    out.add(m);
                }
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ ListOffsets

    /** The broker's ListOffsets answers for one partition (see the class comment). */
    private Map<String, Object> listOffsets(String topic, List<Object> records) throws Exception {
        TopicPartition tp = new TopicPartition(topic, 0);
        long end = System.currentTimeMillis();
        TreeSet<Long> queries = new TreeSet<>();
        long maxStamped = Long.MIN_VALUE;
        for (Object o : records) {
            long ts = Json.lng(Json.obj(o, "record"), "timestamp");
            queries.add(ts - 1);
            queries.add(ts);
            queries.add(ts + 1);
            maxStamped = Math.max(maxStamped, ts);
        }
        if (!queries.isEmpty()) queries.add(queries.first() - 1000);
        queries.add(0L);
        queries.add(end);
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) TIMEOUT.toMillis()))) {
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("earliest", answer(admin, tp, OffsetSpec.earliest(), IsolationLevel.READ_UNCOMMITTED));
            out.put("latest", answer(admin, tp, OffsetSpec.latest(), IsolationLevel.READ_UNCOMMITTED));
            out.put("latest_read_committed", answer(admin, tp, OffsetSpec.latest(), IsolationLevel.READ_COMMITTED));
            out.put("max_timestamp", answer(admin, tp, OffsetSpec.maxTimestamp(), IsolationLevel.READ_UNCOMMITTED));
            // every lookup in flight at once, then collected
            Map<Long, ListOffsetsResult> pending = new LinkedHashMap<>();
            for (long q : queries)
                pending.put(q, admin.listOffsets(Map.of(tp, OffsetSpec.forTimestamp(q)),
                        new ListOffsetsOptions(IsolationLevel.READ_UNCOMMITTED)));
            java.util.TreeMap<Long, Map<String, Object>> asked = new java.util.TreeMap<>();
            for (Map.Entry<Long, ListOffsetsResult> e : pending.entrySet())
                asked.put(e.getKey(), info(e.getValue().partitionResult(tp).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS)));
            // The transaction markers carry the coordinator's clock, which no consumer sees: walk
            // on from the last record's timestamp, asking for each timestamp found and the
            // millisecond after it, so that every later timestamp (the markers') is asked for.
            if (maxStamped != Long.MIN_VALUE) {
                long q = maxStamped + 1;
                for (int i = 0; i < 200; i++) {
                    Map<String, Object> a = asked.get(q);
                    if (a == null) {
                        a = answer(admin, tp, OffsetSpec.forTimestamp(q), IsolationLevel.READ_UNCOMMITTED);
                        asked.put(q, a);
                    }
                    if ((Long) a.get("offset") < 0) break;
                    long found = (Long) a.get("timestamp");
                    if (!asked.containsKey(found))
                        asked.put(found, answer(admin, tp, OffsetSpec.forTimestamp(found), IsolationLevel.READ_UNCOMMITTED));
                    q = Math.max(found, q) + 1;
                }
            }
            List<Object> answers = new ArrayList<>();
            for (Map.Entry<Long, Map<String, Object>> e : asked.entrySet()) {
                Map<String, Object> a = new LinkedHashMap<>();
                a.put("query", e.getKey());
                a.putAll(e.getValue());
                answers.add(a);
            }
            out.put("for_timestamp", answers);
            return out;
        }
    }

    private static Map<String, Object> answer(Admin admin, TopicPartition tp, OffsetSpec spec, IsolationLevel isolation)
            throws Exception {
        return info(admin.listOffsets(Map.of(tp, spec), new ListOffsetsOptions(isolation))
                .partitionResult(tp).get(TIMEOUT.toSeconds(), TimeUnit.SECONDS));
    }

    private static Map<String, Object> info(ListOffsetsResult.ListOffsetsResultInfo r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("offset", r.offset());
        m.put("timestamp", r.timestamp());
        m.put("leader_epoch", r.leaderEpoch().isPresent() ? (long) r.leaderEpoch().get() : null);
        return m;
    }

    private static List<Object> headers(Header[] headers) {
        List<Object> out = new ArrayList<>();
        for (Header h : headers) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("key", h.key());
            m.put("value", hex(h.value()));
            out.add(m);
        }
        return out;
    }

    private static String hex(byte[] b) {
        return b == null ? null : Hex.encode(b);
    }
}
