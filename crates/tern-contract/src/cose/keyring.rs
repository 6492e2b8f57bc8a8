//! The keyring: keys by key id, parsed from the app's settings (errors
//! name the entry, never the key), and how it prints (ids only).

use std::{fmt, time::Duration};

use aes_gcm::{aead::KeyInit, Aes256Gcm};
use base64::Engine as _;
use ed25519_dalek::{SigningKey, VerifyingKey};
use serde::{Deserialize, Deserializer};
use tern::settings::Secret;

use super::{
    replay::{store, Store},
    Seal,
};

pub(super) enum Material {
    Aes256Gcm(Box<Aes256Gcm>),
    Hmac256(Vec<u8>),
    Ed25519 {
        verifying: VerifyingKey,
        signing: Option<Box<SigningKey>>,
    },
}

pub(super) struct Key {
    pub(super) kid: Vec<u8>,
    pub(super) material: Material,
}

impl Key {
    pub(super) fn seal(&self) -> Seal {
        match self.material {
            Material::Aes256Gcm(_) => Seal::Encrypt0,
            Material::Hmac256(_) => Seal::Mac0,
            Material::Ed25519 { .. } => Seal::Sign1,
        }
    }

    pub(super) fn kid(&self) -> String {
        String::from_utf8_lossy(&self.kid).into_owned()
    }
}

/// The keys COSE messages are opened and sealed with, by key id, and the
/// messages seen within the replay window. Loaded as the app's settings
/// (`App::settings::<Keyring>("cose")`); see the [module](super).
pub struct Keyring {
    pub(super) keys: Vec<Key>,
    pub(super) window: Duration,
    pub(super) capacity: usize,
    pub(super) store: Store,
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
