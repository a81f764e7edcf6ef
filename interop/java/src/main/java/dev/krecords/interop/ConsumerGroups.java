package dev.krecords.interop;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Consumer groups for the internal-topic decoders (krec dump of __consumer_offsets and
 * __share_group_state against DumpLogSegments --offsets-decoder / --share-group-state-decoder):
 * a classic group and a consumer-protocol group that commit offsets (one with metadata), a
 * standalone commit whose group is then deleted (tombstones), and a share group that acknowledges
 * records (share state snapshots and updates).
 *
 * <pre>java -cp ... dev.krecords.interop.ConsumerGroups BOOTSTRAP</pre>
 */
public final class ConsumerGroups {
    private static final String TOPIC = "interop-groups";

    private ConsumerGroups() {}

    private static Properties consumer(String bootstrap, String group) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        return p;
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        Properties ap = new Properties();
        ap.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(ap)) {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1))).all().get();
        }
        Properties pp = new Properties();
        pp.put("bootstrap.servers", bootstrap);
        pp.put("key.serializer", StringSerializer.class.getName());
        pp.put("value.serializer", StringSerializer.class.getName());
        try (KafkaProducer<String, String> p = new KafkaProducer<>(pp)) {
            for (int i = 0; i < 5; i++) {
                p.send(new ProducerRecord<>(TOPIC, "k" + i, "v" + i)).get();
            }
        }
        TopicPartition tp = new TopicPartition(TOPIC, 0);
        for (String protocol : new String[] {"classic", "consumer"}) {
            Properties cp = consumer(bootstrap, "krecords-" + protocol);
            cp.put("group.protocol", protocol);
            cp.put("auto.offset.reset", "earliest");
            cp.put("enable.auto.commit", "false");
            cp.put("client.id", "krecords-client-" + protocol);
            try (KafkaConsumer<String, String> c = new KafkaConsumer<>(cp)) {
                c.subscribe(List.of(TOPIC));
                int n = 0;
                long end = System.currentTimeMillis() + 30_000;
                while (n < 5 && System.currentTimeMillis() < end) {
                    n += c.poll(Duration.ofMillis(200)).count();
                }
                c.commitSync();
                c.commitSync(Map.of(tp, new OffsetAndMetadata(3, "krecords metadata")));
            }
        }
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(consumer(bootstrap, "krecords-standalone"))) {
            c.assign(List.of(tp));
            c.commitSync(Map.of(tp, new OffsetAndMetadata(2)));
        }
        try (Admin admin = Admin.create(ap)) {
            admin.deleteConsumerGroups(List.of("krecords-standalone")).all().get();
            // A share group starts at the latest offset unless told otherwise.
            admin.incrementalAlterConfigs(Map.of(
                    new ConfigResource(ConfigResource.Type.GROUP, "krecords-share"),
                    List.of(new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"),
                            AlterConfigOp.OpType.SET)))).all().get();
        }
        int shared = 0;
        try {
            Properties sp = consumer(bootstrap, "krecords-share");
            try (KafkaShareConsumer<String, String> s = new KafkaShareConsumer<>(sp)) {
                s.subscribe(List.of(TOPIC));
                long end = System.currentTimeMillis() + 30_000;
                while (shared < 5 && System.currentTimeMillis() < end) {
                    shared += s.poll(Duration.ofMillis(200)).count();
                }
                s.commitSync();
            }
        } catch (RuntimeException e) {
            System.out.println("share group: " + e);
        }
        System.out.println("consumer groups: classic, consumer, standalone (deleted); share group got " + shared + " records");
    }
}
