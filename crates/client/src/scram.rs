//! SCRAM (RFC 5802) client side, with SHA-256 (RFC 7677) and SHA-512, as Kafka uses it.
//!
//! No channel binding (`n,,`), no SASLprep of the password (as librdkafka and Kafka's Java
//! client); the server's signature in its final message is verified.

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use hmac::{Mac, SimpleHmac};
use sha2::{Digest, Sha256, Sha512};

/// Which hash the exchange uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScramHash {
    Sha256,
    Sha512,
}

/// Kafka refuses fewer than 4096 iterations and allows at most 16384; anything far above is a
/// hostile server making the client burn CPU.
const MAX_ITERATIONS: u32 = 100_000;
const MIN_ITERATIONS: u32 = 4096;

impl ScramHash {
    fn hmac(self, key: &[u8], data: &[u8]) -> Vec<u8> {
        // SimpleHmac takes any key length; new_from_slice never fails for it.
        match self {
            ScramHash::Sha256 => {
                let mut m = <SimpleHmac<Sha256> as Mac>::new_from_slice(key)
                    .unwrap_or_else(|_| unreachable!("HMAC accepts any key length"));
                m.update(data);
                m.finalize().into_bytes().to_vec()
            }
            ScramHash::Sha512 => {
                let mut m = <SimpleHmac<Sha512> as Mac>::new_from_slice(key)
                    .unwrap_or_else(|_| unreachable!("HMAC accepts any key length"));
                m.update(data);
                m.finalize().into_bytes().to_vec()
            }
        }
    }

    fn hash(self, data: &[u8]) -> Vec<u8> {
        match self {
            ScramHash::Sha256 => Sha256::digest(data).to_vec(),
            ScramHash::Sha512 => Sha512::digest(data).to_vec(),
        }
    }

    fn hi(self, password: &[u8], salt: &[u8], iterations: u32) -> Vec<u8> {
        match self {
            ScramHash::Sha256 => {
                let mut out = [0u8; 32];
                pbkdf2::pbkdf2_hmac::<Sha256>(password, salt, iterations, &mut out);
                out.to_vec()
            }
            ScramHash::Sha512 => {
                let mut out = [0u8; 64];
                pbkdf2::pbkdf2_hmac::<Sha512>(password, salt, iterations, &mut out);
                out.to_vec()
            }
        }
    }
}

/// One SCRAM exchange, client side.
#[derive(Debug)]
pub(crate) struct ScramClient {
    hash: ScramHash,
    password: String,
    client_first_bare: String,
    client_nonce: String,
    /// The expected server signature, once the client-final message is made.
    server_signature: Option<Vec<u8>>,
}

/// RFC 5802 saslname: `=` and `,` escaped.
fn saslname(user: &str) -> String {
    user.replace('=', "=3D").replace(',', "=2C")
}

/// A random printable nonce (base64 of 24 random bytes: no `,`).
pub(crate) fn random_nonce() -> String {
    let bytes: [u8; 24] = rand::random();
    B64.encode(bytes)
}

impl ScramClient {
    pub(crate) fn new(hash: ScramHash, user: &str, password: &str, nonce: String) -> Self {
        let client_first_bare = format!("n={},r={}", saslname(user), nonce);
        ScramClient {
            hash,
            password: password.to_owned(),
            client_first_bare,
            client_nonce: nonce,
            server_signature: None,
        }
    }

    /// The client-first message.
    pub(crate) fn client_first(&self) -> String {
        format!("n,,{}", self.client_first_bare)
    }

    /// Takes the server-first message, returns the client-final message.
    pub(crate) fn client_final(&mut self, server_first: &[u8]) -> Result<String, String> {
        let server_first = std::str::from_utf8(server_first)
            .map_err(|_| "server-first message is not UTF-8".to_owned())?;
        let mut nonce = None;
        let mut salt = None;
        let mut iterations = None;
        for attr in server_first.split(',') {
            if let Some(v) = attr.strip_prefix("r=") {
                nonce = Some(v);
            } else if let Some(v) = attr.strip_prefix("s=") {
                salt = Some(v);
            } else if let Some(v) = attr.strip_prefix("i=") {
                iterations = Some(v);
            } else if let Some(v) = attr.strip_prefix("e=") {
                return Err(format!("server error: {v}"));
            } else if attr.starts_with("m=") {
                return Err("server requires an unsupported SCRAM extension".to_owned());
            }
        }
        let nonce = nonce.ok_or("server-first message lacks the nonce")?;
        if !nonce.starts_with(&self.client_nonce) || nonce.len() == self.client_nonce.len() {
            return Err("server nonce does not extend the client nonce".to_owned());
        }
        let salt = B64
            .decode(salt.ok_or("server-first message lacks the salt")?)
            .map_err(|_| "server salt is not base64".to_owned())?;
        let iterations: u32 = iterations
            .ok_or("server-first message lacks the iteration count")?
            .parse()
            .map_err(|_| "server iteration count is not a number".to_owned())?;
        if !(MIN_ITERATIONS..=MAX_ITERATIONS).contains(&iterations) {
            return Err(format!(
                "server iteration count {iterations} outside {MIN_ITERATIONS}..={MAX_ITERATIONS}"
            ));
        }
        let h = self.hash;
        let salted = h.hi(self.password.as_bytes(), &salt, iterations);
        let client_key = h.hmac(&salted, b"Client Key");
        let stored_key = h.hash(&client_key);
        let without_proof = format!("c=biws,r={nonce}");
        let auth_message = format!(
            "{},{},{}",
            self.client_first_bare, server_first, without_proof
        );
        let client_signature = h.hmac(&stored_key, auth_message.as_bytes());
        let proof: Vec<u8> = client_key
            .iter()
            .zip(&client_signature)
            .map(|(a, b)| a ^ b)
            .collect();
        let server_key = h.hmac(&salted, b"Server Key");
        self.server_signature = Some(h.hmac(&server_key, auth_message.as_bytes()));
        Ok(format!("{without_proof},p={}", B64.encode(proof)))
    }

    /// Checks the server-final message's signature.
    pub(crate) fn verify_server_final(&self, server_final: &[u8]) -> Result<(), String> {
        let server_final = std::str::from_utf8(server_final)
            .map_err(|_| "server-final message is not UTF-8".to_owned())?;
        let expected = self
            .server_signature
            .as_ref()
            .ok_or("server-final message before client-final")?;
        for attr in server_final.split(',') {
            if let Some(v) = attr.strip_prefix("e=") {
                return Err(format!("server error: {v}"));
            }
            if let Some(v) = attr.strip_prefix("v=") {
                let got = B64
                    .decode(v)
                    .map_err(|_| "server signature is not base64".to_owned())?;
                return if got == *expected {
                    Ok(())
                } else {
                    Err(
                        "server signature does not verify (not the server holding the credentials)"
                            .to_owned(),
                    )
                };
            }
        }
        Err("server-final message lacks the signature".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7677 section 3.
    #[test]
    fn rfc7677_sha256_test_vector() {
        let mut c = ScramClient::new(
            ScramHash::Sha256,
            "user",
            "pencil",
            "rOprNGfwEbeRWgbNEkqO".to_owned(),
        );
        assert_eq!(c.client_first(), "n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
        let server_first = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096";
        let fin = c.client_final(server_first).unwrap();
        assert_eq!(
            fin,
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        c.verify_server_final(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
            .unwrap();
        let err = c
            .verify_server_final(b"v=7rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
            .unwrap_err();
        assert!(err.contains("does not verify"), "{err}");
    }

    #[test]
    fn rejects_foreign_nonce_and_hostile_iterations() {
        let mut c = ScramClient::new(ScramHash::Sha512, "u,=x", "p", "abc".to_owned());
        assert_eq!(c.client_first(), "n,,n=u=2C=3Dx,r=abc");
        assert!(c.client_final(b"r=xyz123,s=AAAA,i=4096").is_err());
        assert!(c.client_final(b"r=abc,s=AAAA,i=4096").is_err());
        assert!(c.client_final(b"r=abcd,s=AAAA,i=4000000000").is_err());
        assert!(c.client_final(b"e=invalid-proof").is_err());
        assert!(c.verify_server_final(b"v=AAAA").is_err());
        let fin = c.client_final(b"r=abcd,s=AAAA,i=4096").unwrap();
        assert!(fin.starts_with("c=biws,r=abcd,p="));
        assert!(c.verify_server_final(b"e=other-error").is_err());
    }
}
