package dev.krecords.interop;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Writes and reads topics through a broker with tiered storage on, for the interop suite's
 * tiered step (interop/broker/tiered_check.py).
 *
 * <pre>
 * TieredScenario produce BOOTSTRAP CODEC...        one topic "tiered-CODEC" per producer codec
 * TieredScenario consume BOOTSTRAP OUT.json TOPIC...
 * </pre>
 *
 * produce: creates each topic (one partition, remote.storage.enable=true, segment.bytes=1 MiB, the
 * least Kafka 4.x accepts, local.retention.bytes=1 so that every uploaded segment leaves the local
 * log at the next retention check, file.delete.delay.ms of an hour so that the segment files Kafka
 * renames *.deleted stay for the byte-for-byte check) and writes, with Kafka's Java producers and
 * the topic's codec: a transaction that commits, one that aborts (records with headers), then about 2.6 MiB of plain
 * idempotent records (1 KiB values of pseudo-random bytes, which no codec shrinks, so that the
 * partition gets at least three segments whatever the codec; every 50th record has headers, some
 * with a null value; every 97th has a null key, every 211th a null value), and a last committed
 * transaction. The topics are written at once, a thread each. Deterministic per topic: the same
 * seed, keys and timestamps on every run.
 *
 * consume: waits until each topic's last stable offset reaches its high watermark, then reads every
 * topic from the beginning with isolation.level read_committed and read_uncommitted (all topics and
 * both levels at once, a consumer each; through the broker, hence through the remote storage
 * manager for the tiered part) and writes OUT.json:
 * <pre>
 * {"kafka_version", "topics": {TOPIC: {"read_committed": [RECORD...], "read_uncommitted": [RECORD...]}}}
 * RECORD = {"offset", "timestamp", "timestamp_type", "key", "value", "headers": [{"key", "value"}], "leader_epoch"}
 * </pre>
 * as BrokerScenario does (bytes in lowercase hex, null when absent). Exit 0, or 1 with a message.
 */
public final class TieredScenario {
    private static final long T0 = 1714000000000L;
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final int SEGMENT_BYTES = 1 << 20;
    private static final int FILL_RECORDS = 2600;

    private TieredScenario() {
    }

    public static void main(String[] args) throws Exception {
        try {
            if (args.length >= 3 && args[0].equals("produce")) {
                List<String> codecs = List.of(args).subList(2, args.length);
                produceAll(args[1], codecs);
                System.out.println("TieredScenario: " + codecs.size() + " topics produced");
            } else if (args.length >= 4 && args[0].equals("consume")) {
                List<String> topics = List.of(args).subList(3, args.length);
                // Every (topic, isolation level) read at once: each waits mostly on the broker's
                // remote fetches, one partition per fetch request.
                ExecutorService pool = Executors.newFixedThreadPool(2 * topics.size());
                Map<String, Future<List<Object>>> reads = new LinkedHashMap<>();
                for (String t : topics) awaitStableOffset(args[1], t);
                for (String t : topics)
                    for (String isolation : List.of("read_committed", "read_uncommitted"))
                        reads.put(t + " " + isolation, pool.submit(() -> consume(args[1], t, isolation)));
                Map<String, Object> topicsOut = new LinkedHashMap<>();
                for (String t : topics) {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("read_committed", reads.get(t + " read_committed").get());
                    m.put("read_uncommitted", reads.get(t + " read_uncommitted").get());
                    topicsOut.put(t, m);
                }
                pool.shutdown();
                Map<String, Object> out = new LinkedHashMap<>();
                out.put("kafka_version", AppInfoParser.getVersion());
                out.put("topics", topicsOut);
                Files.writeString(Path.of(args[2]), Json.write(out, 1), StandardCharsets.UTF_8);
                System.out.println("TieredScenario: " + topics.size() + " topics consumed, written to " + args[2]);
            } else {
                System.err.println("usage: TieredScenario produce BOOTSTRAP CODEC... | consume BOOTSTRAP OUT.json TOPIC...");
                System.exit(2);
            }
        } catch (Exception e) {
            System.err.println("TieredScenario failed: " + e);
            e.printStackTrace();
            System.exit(1);
        }
        System.exit(0);
    }

    private static void produceAll(String bootstrap, List<String> codecs) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) TIMEOUT.toMillis()))) {
            List<NewTopic> topics = new ArrayList<>();
            for (String c : codecs)
                topics.add(new NewTopic("tiered-" + c, 1, (short) 1).configs(Map.of(
                        "remote.storage.enable", "true",
                        "segment.bytes", String.valueOf(SEGMENT_BYTES),
                        "local.retention.bytes", "1",
                        "retention.ms", "-1",
                        // Kafka renames a deleted segment *.deleted and removes it after this delay: an hour
                        // keeps the local copy of every uploaded segment for the byte-for-byte check.
                        "file.delete.delay.ms", "3600000")));
            admin.createTopics(topics).all().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        }
        // The topics written at once, one thread each (each topic's own order is kept).
        ExecutorService pool = Executors.newFixedThreadPool(codecs.size());
        List<Future<Void>> done = new ArrayList<>();
        for (String c : codecs)
            done.add(pool.submit(() -> {
                produce(bootstrap, "tiered-" + c, c);
                return null;
            }));
        for (Future<Void> f : done) f.get();
        pool.shutdown();
    }

    private static KafkaProducer<byte[], byte[]> producer(String bootstrap, String codec, String txnId) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) TIMEOUT.toMillis());
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, (int) TIMEOUT.toMillis());
        if (txnId != null) {
            p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnId);
            p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, 60000);
        }
        return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
    }

    private static void produce(String bootstrap, String topic, String codec) throws Exception {
        long ts = T0;
        try (KafkaProducer<byte[], byte[]> tx = producer(bootstrap, codec, "krecords-" + topic)) {
            tx.initTransactions();
            tx.beginTransaction();
            for (int i = 0; i < 5; i++)
                tx.send(rec(topic, ts++, "committed-" + i, "committed value " + i, hdr("txn", "first"), hdr("i", String.valueOf(i))));
            tx.commitTransaction();
            tx.beginTransaction();
            for (int i = 0; i < 4; i++)
                tx.send(rec(topic, ts++, "aborted-" + i, "aborted value " + i, hdr("txn", "aborted")));
            tx.flush();
            tx.abortTransaction();
        }
        Random rnd = new Random(topic.hashCode());
        try (KafkaProducer<byte[], byte[]> p = producer(bootstrap, codec, null)) {
            for (int i = 0; i < FILL_RECORDS; i++) {
                byte[] value = null;
                if (i % 211 != 0) {
                    value = new byte[1024];
                    rnd.nextBytes(value);
                }
                byte[] key = i % 97 == 0 ? null : ("key-" + i).getBytes(StandardCharsets.UTF_8);
                List<Header> headers = new ArrayList<>();
                if (i % 50 == 0) {
                    headers.add(hdr("n", String.valueOf(i)));
                    headers.add(new RecordHeader("null-value", null));
                    headers.add(hdr("cl\u00e9-\u20ac", "v\u00e4l"));
                }
                p.send(new ProducerRecord<>(topic, 0, ts++, key, value, headers));
            }
            p.flush();
        }
        try (KafkaProducer<byte[], byte[]> tx = producer(bootstrap, codec, "krecords-" + topic)) {
            tx.initTransactions();
            tx.beginTransaction();
            for (int i = 0; i < 3; i++)
                tx.send(rec(topic, ts++, "last-" + i, "last committed value " + i, hdr("txn", "last")));
            tx.commitTransaction();
        }
    }

    private static ProducerRecord<byte[], byte[]> rec(String topic, long ts, String key, String value, Header... headers) {
        return new ProducerRecord<>(topic, 0, ts, utf8(key), utf8(value), List.of(headers));
    }

    private static Header hdr(String key, String value) {
        return new RecordHeader(key, utf8(value));
    }

    private static byte[] utf8(String s) {
        return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
    }

    /** Waits until the partition's last stable offset equals its high watermark (the markers are in). */
    private static void awaitStableOffset(String bootstrap, String topic) throws Exception {
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
                    throw new IllegalStateException(topic + ": last stable offset " + lso + " below the high watermark " + hw);
                Thread.sleep(100);
            }
        }
    }

    private static List<Object> consume(String bootstrap, String topic, String isolation) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) TIMEOUT.toMillis());
        List<Object> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            TopicPartition tp = new TopicPartition(topic, 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long end = c.endOffsets(List.of(tp), TIMEOUT).get(tp);
            long deadline = System.nanoTime() + 2 * TIMEOUT.toNanos();
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
                    List<Object> hs = new ArrayList<>();
                    for (Header h : r.headers().toArray()) {
                        Map<String, Object> hm = new LinkedHashMap<>();
                        hm.put("key", h.key());
                        hm.put("value", hex(h.value()));
                        hs.add(hm);
                    }
                    m.put("headers", hs);
                    m.put("leader_epoch", r.leaderEpoch().isPresent() ? (long) r.leaderEpoch().get() : null);
                    out.add(m);
                }
            }
        }
        return out;
    }

    private static String hex(byte[] b) {
        return b == null ? null : Hex.encode(b);
    }
}
