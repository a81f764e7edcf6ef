/*
 * krecords: a compile-time stand-in for Confluent's io.confluent.kafka.schemaregistry.ParsedSchema
 * (from io.confluent:kafka-avro-serializer, which Maven Central does not serve). Only the Iceberg
 * segment format of the plugin names it; it is compiled so that the plugin's sources build, and it
 * is NOT put in the plugin jar (interop/tiered/pom.xml excludes io/confluent/**).
 * Part of kafka-4.4.patch; see PROVENANCE.md.
 */
package io.confluent.kafka.schemaregistry;

public interface ParsedSchema {
    Object rawSchema();
}
