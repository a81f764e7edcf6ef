#!/usr/bin/env bash
# Regenerates the TLS fixtures of tests/fake_broker.rs (EC P-256, valid for 100 years):
# ca.pem/ca.key (the test CA), other-ca.pem (an unrelated CA, for "wrong CA"),
# server.pem/server.key (signed by the CA, for DNS:localhost only: 127.0.0.1 must not verify),
# client.pem/client.key (signed by the CA, for mutual TLS).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
days=36500
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
ca() {
    key "$1.key"
    openssl req -x509 -new -key "$1.key" -sha256 -days $days -subj "/CN=$2" \
        -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign" -out "$1.pem"
}
leaf() { # name cn extensions
    key "$1.key"
    openssl req -new -key "$1.key" -subj "/CN=$2" -out "$1.csr"
    printf '%s\n' "$3" > "$1.ext"
    openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -sha256 \
        -days $days -extfile "$1.ext" -out "$1.pem" 2>/dev/null
    rm "$1.csr" "$1.ext"
}
ca ca "krecords test CA"
ca other-ca "unrelated CA"
rm other-ca.key
leaf server localhost "subjectAltName=DNS:localhost
basicConstraints=CA:FALSE
extendedKeyUsage=serverAuth"
leaf client krecords-client "basicConstraints=CA:FALSE
extendedKeyUsage=clientAuth"
rm -f ca.srl
