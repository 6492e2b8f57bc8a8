//! Contracts sealed with COSE (RFC 9052): `application/cose` bodies are a
//! tagged `COSE_Encrypt0` (AES-256-GCM), `COSE_Mac0` (HMAC 256/256) or
//! `COSE_Sign1` (EdDSA, Ed25519) whose payload is the contract in CBOR.
//!
//! The keys live in the app's settings, by key id (`kid`), several at once
//! so that they can rotate:
//!
//! ```toml
//! [cose]
//! keys = ["k1:A256GCM:<32 bytes, base64>", "m1:HMAC256:<32 bytes or more, base64>",
//!         "s1:EdDSA:<a 32-byte Ed25519 seed, base64>", "c1:EdDSA-public:<a 32-byte public key>"]
//! replay_window = 300     # seconds a message is remembered (default 300)
//! replay_capacity = 100000 # messages remembered at most, in this process
//! replay_store = "redis://127.0.0.1:6379/"  # share them (feature `redis`)
//! ```
//!
//! Without `replay_store` the seen messages live in the process: a replay
//! sent to another process of the same app is not seen. With several
//! processes, name a Redis store (`COSE_REPLAY_STORE`, the `redis`
//! feature): each message is recorded with `SET ... NX PX window`, atomic
//! across processes, and an unreachable store refuses messages (`503`)
//! rather than let a replay through.
//!
//! or `COSE_KEYS=k1:A256GCM:...,m1:HMAC256:...`; loaded with
//! `App::settings::<Keyring>("cose")`. A request sealed with a key is
//! answered sealed the same way: `COSE_Encrypt0` with the same key and a
//! fresh random nonce, `COSE_Mac0` with the same key, `COSE_Sign1` signed
//! with the app's own EdDSA key (the request's `kid` if it holds a seed,
//! else the first seed of the keyring).
//!
//! A problem with a request found after it was opened (it breaks its
//! contract: the `422` may quote the payload; the handler's own
//! `Err(Problem)`) is sealed the same way,
//! the problem document in CBOR; when it cannot be (no seed to sign
//! with), it goes without its detail. The refusals below happen before
//! anything is opened, so they are plaintext, and name nothing of the
//! payload.
//!
//! Refused, each with its own problem: an untagged or malformed message
//! (`400`), a message that names no key or an unknown one, an algorithm
//! not configured for its key, a tag, signature or ciphertext that does
//! not verify (`401`), a message seen before within the replay window
//! (`401`), a full replay cache (`503`). Tags are checked in constant time
//! (`hmac`'s `verify_slice`); nonces come from a CSPRNG seeded by the operating system
//! (`rand`'s `ThreadRng`).

use std::{
    collections::{HashMap, VecDeque},
    fmt,
    sync::Mutex,
    time::{Duration, Instant},
};

use aes_gcm::{
    aead::{Aead, KeyInit, Payload},
    Aes256Gcm, Nonce,
};
use base64::Engine as _;
use coset::{
    iana, CborSerializable, CoseEncrypt0, CoseMac0, CoseMac0Builder, CoseSign1, CoseSign1Builder,
    HeaderBuilder, TaggedCborSerializable,
};
use ed25519_dalek::{Signer, SigningKey, VerifyingKey};

mod fast;
use hmac::{Hmac, Mac};
use http::StatusCode;
use serde::{Deserialize, Deserializer};
use sha2::{Digest, Sha256};
use tern::settings::Secret;
use tern_core::extract::Rejection;

/// How a message is sealed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Seal {
    /// `COSE_Encrypt0` with AES-256-GCM: secret and authenticated.
    Encrypt0,
    /// `COSE_Mac0` with HMAC 256/256: authenticated.
    Mac0,
    /// `COSE_Sign1` with EdDSA (Ed25519): signed.
    Sign1,
}

impl Seal {
    fn tag(self) -> u8 {
        // The one-byte CBOR heads of tags 16, 17 and 18.
        match self {
            Seal::Encrypt0 => 0xd0,
            Seal::Mac0 => 0xd1,
            Seal::Sign1 => 0xd2,
        }
    }
}

enum Material {
    Aes256Gcm(Box<Aes256Gcm>),
    Hmac256(Vec<u8>),
    Ed25519 {
        verifying: VerifyingKey,
        signing: Option<Box<SigningKey>>,
    },
}

struct Key {
    kid: Vec<u8>,
    material: Material,
}

impl Key {
    fn seal(&self) -> Seal {
        match self.material {
            Material::Aes256Gcm(_) => Seal::Encrypt0,
            Material::Hmac256(_) => Seal::Mac0,
            Material::Ed25519 { .. } => Seal::Sign1,
        }
    }

    fn kid(&self) -> String {
        String::from_utf8_lossy(&self.kid).into_owned()
    }
}

/// The keys COSE messages are opened and sealed with, by key id, and the
/// messages seen within the replay window. Loaded as the app's settings
/// (`App::settings::<Keyring>("cose")`); see the [module](self).
pub struct Keyring {
    keys: Vec<Key>,
    window: Duration,
    capacity: usize,
    store: Store,
}

impl fmt::Debug for Keyring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Key ids and kinds only: never the keys.
        f.debug_struct("Keyring")
            .field(
                "keys",
                &self
                    .keys
                    .iter()
                    .map(|k| format!("{}:{:?}", k.kid(), k.seal()))
                    .collect::<Vec<_>>(),
            )
            .field("replay_window", &self.window)
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct Seen {
    at: HashMap<[u8; 32], Instant>,
    order: VecDeque<([u8; 32], Instant)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyringSettings {
    keys: Vec<KeyEntry>,
    #[serde(default = "default_window")]
    replay_window: u64,
    #[serde(default = "default_capacity")]
    replay_capacity: usize,
    /// `redis://...`: share the seen messages with every process that
    /// names the same store.
    #[serde(default)]
    replay_store: Option<String>,
}

fn default_window() -> u64 {
    300
}

fn default_capacity() -> usize {
    100_000
}

/// One `kid:ALG:base64` entry, parsed where it is read (so that an error
/// names the setting and the entry).
struct KeyEntry(Key);

impl<'de> Deserialize<'de> for KeyEntry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = Secret::deserialize(deserializer)?;
        parse_key(text.expose())
            .map(KeyEntry)
            .map_err(serde::de::Error::custom)
    }
}

impl<'de> Deserialize<'de> for Keyring {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let settings = KeyringSettings::deserialize(deserializer)?;
        let mut keys: Vec<Key> = Vec::with_capacity(settings.keys.len());
        for KeyEntry(key) in settings.keys {
            if keys.iter().any(|k| k.kid == key.kid) {
                return Err(serde::de::Error::custom(format!(
                    "the key id `{}` is given twice",
                    key.kid()
                )));
            }
            keys.push(key);
        }
        if keys.is_empty() {
            return Err(serde::de::Error::custom("no keys: give at least one"));
        }
        Ok(Keyring {
            keys,
            window: Duration::from_secs(settings.replay_window),
            capacity: settings.replay_capacity.max(1),
            store: store(settings.replay_store.as_deref()).map_err(serde::de::Error::custom)?,
        })
    }
}

/// The replay store a setting names: none, this process.
fn store(url: Option<&str>) -> Result<Store, String> {
    match url.map(str::trim).filter(|u| !u.is_empty()) {
        None => Ok(Store::Local(Mutex::new(Seen::default()))),
        #[cfg(feature = "redis")]
        Some(url) if url.starts_with("redis://") || url.starts_with("rediss://") => {
            let client = redis::Client::open(url)
                .map_err(|e| format!("replay_store: not a Redis URL: {e}"))?;
            Ok(Store::Redis(RedisStore {
                client,
                connection: tokio::sync::OnceCell::new(),
            }))
        }
        #[cfg(not(feature = "redis"))]
        Some(url) if url.starts_with("redis://") || url.starts_with("rediss://") => {
            Err("replay_store: a Redis store needs tern-contract's `redis` feature".to_owned())
        }
        Some(_) => Err("replay_store: give a `redis://` URL, or none for this process".to_owned()),
    }
}

/// `kid:ALG:base64`; errors never quote the key.
fn parse_key(entry: &str) -> Result<Key, String> {
    let mut parts = entry.trim().splitn(3, ':');
    let (Some(kid), Some(alg), Some(material)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(
            "write it `kid:ALG:base64` (ALG: A256GCM, HMAC256, EdDSA, EdDSA-public)".into(),
        );
    };
    if kid.is_empty() {
        return Err("the key id is empty".into());
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(material.trim())
        .map_err(|_| format!("`{kid}`: the key is not base64"))?;
    let exactly = |n: usize| {
        if bytes.len() == n {
            Ok(())
        } else {
            Err(format!(
                "`{kid}`: {alg} needs a key of {n} bytes (this one has {})",
                bytes.len()
            ))
        }
    };
    let material = match alg {
        "A256GCM" => {
            exactly(32)?;
            let cipher = Aes256Gcm::new_from_slice(&bytes).map_err(|_| format!("`{kid}`"))?;
            Material::Aes256Gcm(Box::new(cipher))
        }
        "HMAC256" => {
            if bytes.len() < 32 {
                return Err(format!(
                    "`{kid}`: HMAC256 needs a key of 32 bytes or more (this one has {})",
                    bytes.len()
                ));
            }
            Material::Hmac256(bytes)
        }
        "EdDSA" => {
            exactly(32)?;
            let seed: [u8; 32] = bytes
                .as_slice()
                .try_into()
                .map_err(|_| format!("`{kid}`"))?;
            let signing = SigningKey::from_bytes(&seed);
            Material::Ed25519 {
                verifying: signing.verifying_key(),
                signing: Some(Box::new(signing)),
            }
        }
        "EdDSA-public" => {
            exactly(32)?;
            let public: [u8; 32] = bytes
                .as_slice()
                .try_into()
                .map_err(|_| format!("`{kid}`"))?;
            let verifying = VerifyingKey::from_bytes(&public)
                .map_err(|_| format!("`{kid}`: not an Ed25519 public key"))?;
            Material::Ed25519 {
                verifying,
                signing: None,
            }
        }
        other => {
            return Err(format!(
                "`{kid}`: unknown algorithm `{other}`; the algorithms are A256GCM, HMAC256, \
                 EdDSA, EdDSA-public"
            ))
        }
    };
    Ok(Key {
        kid: kid.as_bytes().to_vec(),
        material,
    })
}

/// A message opened: its payload, and how to seal the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    /// The payload (the contract in CBOR).
    pub payload: Vec<u8>,
    /// How the message was sealed.
    pub seal: Seal,
    /// The key it was sealed with.
    pub kid: Vec<u8>,
}

fn malformed(detail: impl Into<String>) -> Rejection {
    Rejection::invalid(StatusCode::BAD_REQUEST, detail)
}

fn refused(detail: impl Into<String>) -> Rejection {
    Rejection::invalid(StatusCode::UNAUTHORIZED, detail)
}

impl Keyring {
    /// Opens a tagged COSE message: finds its key, checks its algorithm,
    /// verifies or decrypts it, refuses a replay (in this process, or in
    /// every process that shares the replay store).
    pub async fn open(&self, bytes: &[u8]) -> Result<Opened, Rejection> {
        let (opened, id) = self.verify(bytes)?;
        self.remember(id).await?;
        Ok(opened)
    }

    /// Opens a message without the replay check: the message and its
    /// replay id.
    fn verify(&self, bytes: &[u8]) -> Result<(Opened, [u8; 32]), Rejection> {
        let seal = match bytes.first() {
            Some(0xd0) => Seal::Encrypt0,
            Some(0xd1) => Seal::Mac0,
            Some(0xd2) => Seal::Sign1,
            _ => {
                return Err(malformed(
                    "an application/cose body must be a tagged COSE_Encrypt0 (tag 16), \
                     COSE_Mac0 (17) or COSE_Sign1 (18)",
                ))
            }
        };
        let bad = |e: coset::CoseError| malformed(format!("a malformed COSE_{seal:?}: {e}"));
        match seal {
            Seal::Encrypt0 => {
                if let Some(m) = fast::parse_encrypt0(bytes) {
                    return self.open_encrypt0_fast(&m);
                }
                let m = CoseEncrypt0::from_tagged_slice(bytes).map_err(bad)?;
                self.open_encrypt0(&m)
            }
            Seal::Mac0 => {
                let m = CoseMac0::from_tagged_slice(bytes).map_err(bad)?;
                self.open_mac0(&m)
            }
            Seal::Sign1 => {
                let m = CoseSign1::from_tagged_slice(bytes).map_err(bad)?;
                self.open_sign1(&m)
            }
        }
    }

    /// The key a message names (its protected `kid`, else its
    /// unprotected one), checked against the message's algorithm.
    fn key_for(
        &self,
        seal: Seal,
        kid: &[u8],
        alg: Option<i64>,
        allowed: &[iana::Algorithm],
    ) -> Result<&Key, Rejection> {
        if kid.is_empty() {
            return Err(refused("the COSE message names no key (`kid`)"));
        }
        let key = self.keys.iter().find(|k| k.kid == kid).ok_or_else(|| {
            refused(format!(
                "unknown key id `{}`",
                crate::violation::shorten(&String::from_utf8_lossy(kid))
            ))
        })?;
        let alg_ok = alg.is_some_and(|a| allowed.iter().any(|x| *x as i64 == a));
        if key.seal() != seal || !alg_ok {
            return Err(refused(format!(
                "the algorithm of this COSE_{seal:?} is not the one configured for key `{}` ({:?})",
                key.kid(),
                key.seal()
            )));
        }
        Ok(key)
    }

    /// `kid` and `alg` as coset parsed them.
    fn named<'m>(
        protected: &'m coset::Header,
        unprotected: &'m coset::Header,
    ) -> (&'m [u8], Option<i64>) {
        let kid = if protected.key_id.is_empty() {
            &unprotected.key_id
        } else {
            &protected.key_id
        };
        let alg = match &protected.alg {
            Some(coset::RegisteredLabelWithPrivate::Assigned(a)) => Some(*a as i64),
            Some(coset::RegisteredLabelWithPrivate::PrivateUse(a)) => Some(*a),
            _ => None,
        };
        (kid, alg)
    }

    /// The common `COSE_Encrypt0`, parsed and opened without building a
    /// generic CBOR value (see [`fast`]); the same checks as coset's path.
    fn open_encrypt0_fast(&self, m: &fast::Encrypt0<'_>) -> Result<(Opened, [u8; 32]), Rejection> {
        let key = self.key_for(Seal::Encrypt0, m.kid, m.alg, &[iana::Algorithm::A256GCM])?;
        let Material::Aes256Gcm(cipher) = &key.material else {
            return Err(refused("the key is not an AES-256-GCM key"));
        };
        if m.iv.len() != 12 {
            return Err(malformed(
                "a COSE_Encrypt0 with AES-256-GCM needs a 12-byte IV",
            ));
        }
        let aad = fast::enc_structure(m.protected);
        let payload = cipher
            .decrypt(
                Nonce::from_slice(m.iv),
                Payload {
                    msg: m.ciphertext,
                    aad: &aad,
                },
            )
            .map_err(|_| refused("the COSE_Encrypt0 does not decrypt: tampered, or another key"))?;
        let id = replay_id(Seal::Encrypt0, &key.kid, m.iv);
        Ok((
            Opened {
                payload,
                seal: Seal::Encrypt0,
                kid: key.kid.clone(),
            },
            id,
        ))
    }

    fn open_encrypt0(&self, m: &CoseEncrypt0) -> Result<(Opened, [u8; 32]), Rejection> {
        let (kid, alg) = Self::named(&m.protected.header, &m.unprotected);
        let key = self.key_for(Seal::Encrypt0, kid, alg, &[iana::Algorithm::A256GCM])?;
        let Material::Aes256Gcm(cipher) = &key.material else {
            return Err(refused("the key is not an AES-256-GCM key"));
        };
        let iv = if m.unprotected.iv.is_empty() {
            &m.protected.header.iv
        } else {
            &m.unprotected.iv
        };
        if iv.len() != 12 {
            return Err(malformed(
                "a COSE_Encrypt0 with AES-256-GCM needs a 12-byte IV",
            ));
        }
        let payload = m.decrypt_ciphertext(
            &[],
            || malformed("the COSE_Encrypt0 has no ciphertext"),
            |ct, aad| {
                cipher
                    .decrypt(Nonce::from_slice(iv), Payload { msg: ct, aad })
                    .map_err(|_| {
                        refused("the COSE_Encrypt0 does not decrypt: tampered, or another key")
                    })
            },
        )?;
        let id = replay_id(Seal::Encrypt0, &key.kid, iv);
        Ok((
            Opened {
                payload,
                seal: Seal::Encrypt0,
                kid: key.kid.clone(),
            },
            id,
        ))
    }

    fn open_mac0(&self, m: &CoseMac0) -> Result<(Opened, [u8; 32]), Rejection> {
        let (kid, alg) = Self::named(&m.protected.header, &m.unprotected);
        let key = self.key_for(Seal::Mac0, kid, alg, &[iana::Algorithm::HMAC_256_256])?;
        let Material::Hmac256(secret) = &key.material else {
            return Err(refused("the key is not an HMAC key"));
        };
        m.verify_payload_tag(
            &[],
            || malformed("the COSE_Mac0 has no payload"),
            |tag, data| {
                let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret)
                    .map_err(|_| refused("the HMAC key is unusable"))?;
                mac.update(data);
                // Constant time.
                mac.verify_slice(tag)
                    .map_err(|_| refused("the COSE_Mac0's tag does not verify"))
            },
        )?;
        let id = replay_id(Seal::Mac0, &key.kid, &m.tag);
        Ok((
            Opened {
                payload: m.payload.clone().unwrap_or_default(),
                seal: Seal::Mac0,
                kid: key.kid.clone(),
            },
            id,
        ))
    }

    fn open_sign1(&self, m: &CoseSign1) -> Result<(Opened, [u8; 32]), Rejection> {
        let (kid, alg) = Self::named(&m.protected.header, &m.unprotected);
        let key = self.key_for(
            Seal::Sign1,
            kid,
            alg,
            &[iana::Algorithm::EdDSA, iana::Algorithm::Ed25519],
        )?;
        let Material::Ed25519 { verifying, .. } = &key.material else {
            return Err(refused("the key is not an Ed25519 key"));
        };
        let Some(payload) = m.payload.clone() else {
            return Err(malformed(
                "the COSE_Sign1 has no payload (detached payloads are not read)",
            ));
        };
        m.verify_signature(&[], |sig, data| {
            let sig = ed25519_dalek::Signature::from_slice(sig)
                .map_err(|_| refused("the COSE_Sign1's signature is not an Ed25519 signature"))?;
            verifying
                .verify_strict(data, &sig)
                .map_err(|_| refused("the COSE_Sign1's signature does not verify"))
        })?;
        let id = replay_id(Seal::Sign1, &key.kid, &m.signature);
        Ok((
            Opened {
                payload,
                seal: Seal::Sign1,
                kid: key.kid.clone(),
            },
            id,
        ))
    }

    /// Refuses a message seen within the window; remembers this one.
    async fn remember(&self, id: [u8; 32]) -> Result<(), Rejection> {
        match &self.store {
            Store::Local(seen) => self.remember_here(seen, id),
            #[cfg(feature = "redis")]
            Store::Redis(redis) => redis.remember(id, self.window).await,
        }
    }

    fn remember_here(&self, seen: &Mutex<Seen>, id: [u8; 32]) -> Result<(), Rejection> {
        let now = Instant::now();
        let mut seen = seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while let Some((old, at)) = seen.order.front().copied() {
            if now.duration_since(at) < self.window {
                break;
            }
            seen.order.pop_front();
            if seen.at.get(&old) == Some(&at) {
                seen.at.remove(&old);
            }
        }
        if let Some(at) = seen.at.get(&id) {
            return Err(refused(format!(
                "this COSE message was already received {} s ago (replay window {} s)",
                now.duration_since(*at).as_secs(),
                self.window.as_secs()
            )));
        }
        if seen.at.len() >= self.capacity {
            // Fail closed: forgetting a message early would let it replay.
            return Err(Rejection::invalid(
                StatusCode::SERVICE_UNAVAILABLE,
                "too many COSE messages within the replay window; try again later \
                 (COSE_REPLAY_CAPACITY)",
            ));
        }
        seen.at.insert(id, now);
        seen.order.push_back((id, now));
        Ok(())
    }

    /// Seals `payload` as the answer to a message opened with `seal` and
    /// `kid`.
    pub fn seal_answer(&self, seal: Seal, kid: &[u8], payload: &[u8]) -> Result<Vec<u8>, String> {
        match seal {
            Seal::Sign1 => {
                // The app's own signing key: the request's, if it holds a
                // seed, else the first seed.
                let own = self
                    .keys
                    .iter()
                    .filter(|k| {
                        matches!(
                            &k.material,
                            Material::Ed25519 {
                                signing: Some(_),
                                ..
                            }
                        )
                    })
                    .find(|k| k.kid == kid)
                    .or_else(|| {
                        self.keys.iter().find(|k| {
                            matches!(
                                &k.material,
                                Material::Ed25519 {
                                    signing: Some(_),
                                    ..
                                }
                            )
                        })
                    })
                    .ok_or("no EdDSA key with a seed to sign answers with")?;
                self.seal(Seal::Sign1, &own.kid, payload)
            }
            other => self.seal(other, kid, payload),
        }
    }

    /// Seals `payload` with the key `kid`: a tagged COSE message.
    pub fn seal(&self, seal: Seal, kid: &[u8], payload: &[u8]) -> Result<Vec<u8>, String> {
        let key = self
            .keys
            .iter()
            .find(|k| k.kid == kid && k.seal() == seal)
            .ok_or_else(|| format!("no {seal:?} key `{}`", String::from_utf8_lossy(kid)))?;
        let encoded = match &key.material {
            Material::Aes256Gcm(cipher) => {
                let mut iv = [0u8; 12];
                rand::RngCore::fill_bytes(&mut rand::thread_rng(), &mut iv);
                return fast::seal_encrypt0(cipher, &key.kid, &iv, payload);
            }
            Material::Hmac256(secret) => {
                let protected = HeaderBuilder::new()
                    .algorithm(iana::Algorithm::HMAC_256_256)
                    .key_id(key.kid.clone())
                    .build();
                CoseMac0Builder::new()
                    .protected(protected)
                    .payload(payload.to_vec())
                    .try_create_tag(&[], |data| {
                        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret)
                            .map_err(|_| "an unusable HMAC key".to_owned())?;
                        mac.update(data);
                        Ok::<_, String>(mac.finalize().into_bytes().to_vec())
                    })?
                    .build()
                    .to_tagged_vec()
            }
            Material::Ed25519 { signing, .. } => {
                let signing = signing
                    .as_ref()
                    .ok_or("this EdDSA key has no seed: it only verifies")?;
                let protected = HeaderBuilder::new()
                    .algorithm(iana::Algorithm::EdDSA)
                    .key_id(key.kid.clone())
                    .build();
                CoseSign1Builder::new()
                    .protected(protected)
                    .payload(payload.to_vec())
                    .create_signature(&[], |data| signing.sign(data).to_bytes().to_vec())
                    .build()
                    .to_tagged_vec()
            }
        };
        encoded.map_err(|e| e.to_string())
    }
}

/// What identifies a message for the replay check: a hash of its seal,
/// its key and its nonce (Encrypt0), tag (Mac0) or signature (Sign1).
fn replay_id(seal: Seal, kid: &[u8], id: &[u8]) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update([seal.tag()]);
    hash.update((kid.len() as u64).to_be_bytes());
    hash.update(kid);
    hash.update(id);
    hash.finalize().into()
}

/// Where seen messages are kept.
enum Store {
    /// In this process: a replay sent to another process is not seen.
    Local(Mutex<Seen>),
    /// In Redis, shared by every process that names it.
    #[cfg(feature = "redis")]
    Redis(RedisStore),
}

#[cfg(feature = "redis")]
struct RedisStore {
    client: redis::Client,
    connection: tokio::sync::OnceCell<redis::aio::ConnectionManager>,
}

#[cfg(feature = "redis")]
impl RedisStore {
    /// `SET key 1 NX PX window`: atomic across processes; a key that
    /// exists is a replay. An unreachable store fails closed (503).
    async fn remember(&self, id: [u8; 32], window: Duration) -> Result<(), Rejection> {
        let unreachable = |e: redis::RedisError| {
            tracing::error!(error = %e, "the COSE replay store (Redis) is unreachable");
            Rejection::invalid(
                StatusCode::SERVICE_UNAVAILABLE,
                "the replay store is unreachable; try again later",
            )
        };
        let connection = self
            .connection
            .get_or_try_init(|| {
                // Bounded: a store that is away is a 503 within a second,
                // not after the client's default minutes of retries.
                let config = redis::aio::ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(Duration::from_millis(500)))
                    .set_response_timeout(Some(Duration::from_millis(500)))
                    .set_number_of_retries(1)
                    .set_max_delay(Duration::from_millis(100));
                redis::aio::ConnectionManager::new_with_config(self.client.clone(), config)
            })
            .await
            .map_err(unreachable)?;
        let mut connection = connection.clone();
        let key: String = std::iter::once("tern:cose:".to_owned())
            .chain(id.iter().map(|b| format!("{b:02x}")))
            .collect();
        let millis = u64::try_from(window.as_millis()).unwrap_or(u64::MAX).max(1);
        let set: Option<String> = redis::cmd("SET")
            .arg(&key)
            .arg(1)
            .arg("NX")
            .arg("PX")
            .arg(millis)
            .query_async(&mut connection)
            .await
            .map_err(unreachable)?;
        match set {
            Some(_) => Ok(()),
            None => Err(refused(format!(
                "this COSE message was already received (replay window {} s, shared store)",
                window.as_secs()
            ))),
        }
    }
}

/// Whether `bytes` could be a COSE message (for tests and clients).
pub fn is_cose(bytes: &[u8]) -> bool {
    matches!(bytes.first(), Some(0xd0..=0xd2))
        && coset::cbor::value::Value::from_slice(bytes).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keyring() -> Keyring {
        let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        let settings = serde_json::json!({
            "keys": [
                format!("k1:A256GCM:{}", b64(&[7; 32])),
                format!("m1:HMAC256:{}", b64(&[9; 32])),
                format!("s1:EdDSA:{}", b64(&[3; 32])),
            ],
        });
        serde_json::from_value(settings).expect("a keyring")
    }

    #[tokio::test]
    async fn each_seal_opens_once() {
        let ring = keyring();
        for (seal, kid) in [
            (Seal::Encrypt0, "k1"),
            (Seal::Mac0, "m1"),
            (Seal::Sign1, "s1"),
        ] {
            let sealed = ring
                .seal(seal, kid.as_bytes(), b"\xa1\x61a\x01")
                .expect("sealed");
            assert!(is_cose(&sealed));
            let opened = ring.open(&sealed).await.expect("opened");
            assert_eq!(opened.payload, b"\xa1\x61a\x01");
            assert_eq!((opened.seal, opened.kid.as_slice()), (seal, kid.as_bytes()));
            // The same message again: a replay.
            let again = ring.open(&sealed).await.expect_err("a replay");
            assert!(again.to_string().contains("already received"), "{again}");
            // One byte changed anywhere after the tag: refused, never opened.
            for i in [sealed.len() / 2, sealed.len() - 1] {
                let mut tampered = sealed.clone();
                tampered[i] ^= 0x01;
                assert!(ring.open(&tampered).await.is_err(), "{seal:?} byte {i}");
            }
        }
    }

    #[test]
    fn keys_are_checked_when_loaded_and_never_printed() {
        let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        for (entry, error) in [
            (
                format!("k1:A256GCM:{}", b64(&[1; 16])),
                "needs a key of 32 bytes (this one has 16)",
            ),
            ("k1:A256GCM:not base64!".to_owned(), "is not base64"),
            (
                format!("k1:RSA:{}", b64(&[1; 32])),
                "unknown algorithm `RSA`",
            ),
            ("nocolons".to_owned(), "write it `kid:ALG:base64`"),
        ] {
            let settings = serde_json::json!({ "keys": [entry] });
            let e = serde_json::from_value::<Keyring>(settings)
                .expect_err(&entry)
                .to_string();
            assert!(e.contains(error), "{e}");
            assert!(
                !e.contains(&b64(&[1; 32])) && !e.contains(&b64(&[1; 16])),
                "{e}"
            );
        }
        let ring = keyring();
        let shown = format!("{ring:?}");
        assert!(
            shown.contains("k1:Encrypt0") && !shown.contains(&b64(&[7; 32])),
            "{shown}"
        );
    }
}
