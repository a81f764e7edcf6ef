/*
 * krecords: a compile-time stand-in for Confluent's RestClientException (see ParsedSchema.java in
 * this folder): compiled, never packaged. Part of kafka-4.4.patch; see PROVENANCE.md.
 */
package io.confluent.kafka.schemaregistry.client.rest.exceptions;

public class RestClientException extends Exception {
    public RestClientException(final String message) {
        super(message);
    }
}
