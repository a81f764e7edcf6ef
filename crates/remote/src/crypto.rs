//! Keys and ciphers, as the plugin's `security/` package uses them.
//!
//! - The data key: 32 random bytes (AES-256, `AesEncryptionProvider.KEY_SIZE`), one per segment,
//!   stored in the manifest wrapped with the RSA public key of the active key pair:
//!   `RSA/NONE/OAEPWithSHA3-512AndMGF1Padding` from BouncyCastle (`RsaEncryptionProvider`),
//!   that is RSA-OAEP with SHA3-512 as the label hash and as MGF1's hash, empty label.
//! - Each chunk (and each index) is sealed with `AES/GCM/NoPadding`: a fresh 12-byte IV
//!   (`SegmentEncryptionMetadataV1.IV_SIZE`), a 128-bit tag, the manifest's `aad` (32 random
//!   bytes per segment) as associated data. The transformed chunk is `IV | ciphertext | tag`
//!   (`EncryptionChunkEnumeration` prepends the IV; Java's GCM appends the tag).

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use aes_gcm::aead::{Aead, Payload};
use aes_gcm::{Aes256Gcm, KeyInit, Nonce};
use rsa::pkcs8::DecodePrivateKey;
use rsa::{Oaep, RsaPrivateKey, RsaPublicKey};
use sha3::Sha3_512;

use crate::error::{Error, Result};

/// Bytes of the IV that starts every encrypted chunk.
pub const IV_SIZE: usize = 12;
/// Bytes of the GCM tag that ends every encrypted chunk.
pub const TAG_SIZE: usize = 16;
/// Bytes an encrypted chunk adds to its plaintext: IV and tag.
pub const OVERHEAD: usize = IV_SIZE + TAG_SIZE;
/// Bytes of a data key (AES-256).
pub const DATA_KEY_SIZE: usize = 32;

/// The RSA private keys of the key pairs a remote tier may name, by key pair id
/// (`rsm.config.encryption.key.pairs`).
#[derive(Clone, Default)]
pub struct KeyRing {
    keys: BTreeMap<String, RsaPrivateKey>,
}

impl fmt::Debug for KeyRing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyRing")
            .field("ids", &self.keys.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl KeyRing {
    /// An empty key ring: reads only unencrypted segments.
    pub fn new() -> KeyRing {
        KeyRing::default()
    }

    /// Adds the key pair `id` from a PKCS#8 PEM private key (`-----BEGIN PRIVATE KEY-----`, as
    /// `openssl genpkey` writes and the plugin's `private.key.file` holds).
    ///
    /// # Errors
    ///
    /// [`Error::Key`] if the text is not such a key.
    pub fn add_pem(&mut self, id: &str, pem: &str) -> Result<()> {
        let key = RsaPrivateKey::from_pkcs8_pem(pem).map_err(|e| Error::Key {
            what: id.to_string(),
            reason: format!("not a PKCS#8 PEM RSA private key: {e}"),
        })?;
        self.keys.insert(id.to_string(), key);
        Ok(())
    }

    /// Adds the key pair `id` from a PKCS#8 PEM file (the form of `--rsm-private-key ID=FILE`).
    ///
    /// # Errors
    ///
    /// [`Error::Key`] if the file cannot be read or holds no such key.
    pub fn add_pem_file(&mut self, id: &str, path: &Path) -> Result<()> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Key {
            what: format!("{id}={}", path.display()),
            reason: e.to_string(),
        })?;
        self.add_pem(id, &text).map_err(|e| match e {
            Error::Key { reason, .. } => Error::Key {
                what: format!("{id}={}", path.display()),
                reason,
            },
            other => other,
        })
    }

    /// Adds a key pair given as `ID=FILE` (the form of `--rsm-private-key`).
    ///
    /// # Errors
    ///
    /// [`Error::Key`] if the text has no `=`, an empty id, or the file holds no such key.
    pub fn add_spec(&mut self, spec: &str) -> Result<()> {
        match spec.split_once('=') {
            Some((id, file)) if !id.trim().is_empty() && !file.is_empty() => {
                self.add_pem_file(id, Path::new(file))
            }
            _ => Err(Error::Key {
                what: spec.to_string(),
                reason: "expected ID=FILE".into(),
            }),
        }
    }

    /// The key pair ids held.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.keys.keys().map(String::as_str)
    }

    /// The public key of pair `id`, for writers.
    pub fn public_key(&self, id: &str) -> Option<RsaPublicKey> {
        self.keys.get(id).map(RsaPublicKey::from)
    }

    /// Unwraps a data key wrapped by pair `key_id`.
    ///
    /// # Errors
    ///
    /// [`Error::MissingKey`] if the pair was not given; [`Error::DataKey`] if the wrapped key
    /// does not decrypt with it or is not 32 bytes.
    pub fn unwrap_data_key(&self, key_id: &str, wrapped: &[u8]) -> Result<DataKey> {
        let key = self.keys.get(key_id).ok_or_else(|| Error::MissingKey {
            key_id: key_id.to_string(),
        })?;
        let plain = key
            .decrypt(Oaep::new::<Sha3_512>(), wrapped)
            .map_err(|_| Error::DataKey {
                key_id: key_id.to_string(),
            })?;
        let bytes: [u8; DATA_KEY_SIZE] = plain.try_into().map_err(|_| Error::DataKey {
            key_id: key_id.to_string(),
        })?;
        Ok(DataKey(bytes))
    }
}

/// Wraps a data key with a public key as the plugin does (RSA-OAEP, SHA3-512 and MGF1 with
/// SHA3-512), for writers.
///
/// # Errors
///
/// [`Error::Key`] if the key is too small for OAEP with SHA3-512.
pub fn wrap_data_key(
    public: &RsaPublicKey,
    key: &DataKey,
    rng: &mut impl rsa::rand_core::CryptoRngCore,
) -> Result<Vec<u8>> {
    public
        .encrypt(rng, Oaep::new::<Sha3_512>(), &key.0)
        .map_err(|e| Error::Key {
            what: "public key".into(),
            reason: e.to_string(),
        })
}

/// A segment's AES-256 data key, unwrapped.
#[derive(Clone, PartialEq, Eq)]
pub struct DataKey(pub [u8; DATA_KEY_SIZE]);

impl fmt::Debug for DataKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DataKey(..)")
    }
}

impl DataKey {
    /// Opens one encrypted chunk, `IV | ciphertext | tag`, with the segment's AAD. Returns
    /// `None` if it is shorter than IV and tag or does not authenticate.
    pub fn open(&self, chunk: &[u8], aad: &[u8]) -> Option<Vec<u8>> {
        let (iv, sealed) = chunk.split_at_checked(IV_SIZE)?;
        if sealed.len() < TAG_SIZE {
            return None;
        }
        let cipher = Aes256Gcm::new_from_slice(&self.0).ok()?;
        cipher
            .decrypt(Nonce::from_slice(iv), Payload { msg: sealed, aad })
            .ok()
    }

    /// Seals one chunk as the plugin does: `IV | ciphertext | tag`.
    pub fn seal(&self, iv: [u8; IV_SIZE], plain: &[u8], aad: &[u8]) -> Option<Vec<u8>> {
        let cipher = Aes256Gcm::new_from_slice(&self.0).ok()?;
        let sealed = cipher
            .encrypt(Nonce::from_slice(&iv), Payload { msg: plain, aad })
            .ok()?;
        let mut out = iv.to_vec();
        out.extend_from_slice(&sealed);
        Some(out)
    }
}
