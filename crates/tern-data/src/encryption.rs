//! Encrypted fields: `Encrypted<T>` columns stored as AES-256-GCM
//! ciphertext under a key id, with keys from `FIELD_ENCRYPTION_KEY`.
//!
//! ```text
//! FIELD_ENCRYPTION_KEY=k2:<base64 of 32 bytes>,k1:<base64 of 32 bytes>
//! ```
//!
//! The first key encrypts; every key listed decrypts, so a key is rotated
//! by putting the new one first and keeping the old ones until
//! [`reencrypt`] has rewritten the rows. Each value is stored as
//! `1 | kid length | kid | 12-byte nonce | ciphertext and tag`, with a
//! fresh random nonce. It fails closed: without keys a write of an
//! encrypted field is an error (and a production app that loads
//! [`FieldKeys`] refuses to start without them); an unknown key id, a
//! tampered or truncated value is an error, never garbage or the stored
//! bytes.
//!
//! The keys are process-wide (sqlx encodes a value without context):
//! loading [`FieldKeys`] as settings installs them. Two apps in one
//! process therefore share one keyring, so the second may only install
//! keys that still read what the first writes (see [`FieldKeys`]).

use std::{
    fmt,
    sync::{Arc, RwLock},
};

use aes_gcm::{
    aead::{Aead, KeyInit},
    Aes256Gcm, Nonce,
};
use base64::Engine as _;
use rand::RngCore as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sqlx::{
    encode::IsNull, error::BoxDynError, postgres::PgValueRef, sqlite::SqliteValueRef, Decode,
    Encode, Postgres, Sqlite, Type,
};

use crate::{model::Model, DataError, Pool};

/// The field keys: loaded as settings under the prefix `field_encryption`
/// (`App::settings::<FieldKeys>("field_encryption")`, the variable
/// `FIELD_ENCRYPTION_KEY`), which installs them for the process.
///
/// # One keyring per process
///
/// A value is encrypted where sqlx encodes it, which knows nothing of the
/// app, so the keys are the process's, not an app's: every app in a
/// process encrypts with the keys installed last. That is why installing
/// is checked. While keys are installed, an app may install only keys
/// that hold the installed encrypting key (same id, same bytes): the same
/// keys again (the app built twice, a command of the app), or a rotation
/// (`k2` first, `k1` kept), so that what was written stays readable. Any
/// other keys (a second app with keys of its own) stop that app's start
/// with an error naming `FIELD_ENCRYPTION_KEY`, rather than let one app
/// write with the other's key. An app without keys (development) leaves
/// the process without keys: writes of encrypted fields then fail, in
/// every app, which is closed, not open.
///
/// ```
/// use tern::{App, Config};
/// use tern_data::FieldKeys;
///
/// let key = |b: u8| base64::Engine::encode(&base64::engine::general_purpose::STANDARD, [b; 32]);
/// let app = |keys: String| {
///     App::new()
///         .settings::<FieldKeys>("field_encryption")
///         .build_with(Config::from_settings([("FIELD_ENCRYPTION_KEY", keys)]).unwrap())
/// };
/// assert!(app(format!("k1:{}", key(1))).is_ok());
/// // A rotation: the new key first, the installed one kept.
/// assert!(app(format!("k2:{},k1:{}", key(2), key(1))).is_ok());
/// // Another app's keys, in the same process: refused at start.
/// let err = app(format!("x1:{}", key(9))).err().unwrap();
/// assert!(err.to_string().contains("FIELD_ENCRYPTION_KEY"), "{err}");
/// ```
pub struct FieldKeys {
    keys: Vec<(String, Aes256Gcm)>,
    /// The bytes of each key, by position, to tell whether another
    /// keyring holds the same key (the ciphers do not give them back).
    secrets: Vec<[u8; 32]>,
}

impl fmt::Debug for FieldKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ids: Vec<&str> = self.keys.iter().map(|(kid, _)| kid.as_str()).collect();
        f.debug_struct("FieldKeys").field("ids", &ids).finish()
    }
}

// Process-wide because `Encrypted<T>` is encrypted in sqlx's `Encode`,
// which gets no app, request or pool to find keys in. It is the field
// keys' only home; `FieldKeys::install` is the only writer, and refuses
// keys that would not read what the installed ones write (see "One
// keyring per process" on `FieldKeys`).
static KEYS: RwLock<Option<Arc<FieldKeys>>> = RwLock::new(None);

impl FieldKeys {
    /// Keys from `kid:base64,kid:base64` (the first encrypts).
    pub fn parse(text: &str) -> Result<FieldKeys, String> {
        let mut keys = Vec::new();
        let mut secrets = Vec::new();
        for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let (kid, key) = entry
                .split_once(':')
                .ok_or("each key is `id:base64-of-32-bytes`")?;
            if kid.is_empty()
                || kid.len() > 32
                || !kid
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            {
                return Err("a key id is 1 to 32 letters, digits, `-` or `_`".to_owned());
            }
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(key.trim())
                .map_err(|_| format!("the key `{kid}` is not base64"))?;
            let cipher = Aes256Gcm::new_from_slice(&bytes)
                .map_err(|_| format!("the key `{kid}` must be 32 bytes (it is {})", bytes.len()))?;
            if keys.iter().any(|(k, _)| k == kid) {
                return Err(format!("the key id `{kid}` is given twice"));
            }
            let mut secret = [0u8; 32];
            secret.copy_from_slice(&bytes);
            keys.push((kid.to_owned(), cipher));
            secrets.push(secret);
        }
        if keys.is_empty() {
            return Err("no key: give `id:base64-of-32-bytes`".to_owned());
        }
        Ok(FieldKeys { keys, secrets })
    }

    /// Makes these the process's keys; an error when other keys are
    /// installed that these do not continue (see [one keyring per
    /// process](FieldKeys#one-keyring-per-process)).
    pub fn install(self) -> Result<Arc<FieldKeys>, String> {
        let keys = Arc::new(self);
        // A poisoned lock still holds a keyring: check it all the same.
        let mut slot = KEYS
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(installed) = slot.as_ref() {
            if let (Some((kid, _)), Some(secret)) =
                (installed.keys.first(), installed.secrets.first())
            {
                let continues = keys.keys.is_empty()
                    || keys
                        .keys
                        .iter()
                        .zip(&keys.secrets)
                        .any(|((k, _), s)| k == kid && s == secret);
                if !continues {
                    return Err(format!(
                        "FIELD_ENCRYPTION_KEY: this process already has field keys, installed by \
                         another app, that encrypt with `{kid}`, and these keys do not hold it; \
                         field keys are process-wide (a value is encrypted where the database \
                         driver encodes it), so two apps in one process must share them: give \
                         this app the same FIELD_ENCRYPTION_KEY, or run it in its own process"
                    ));
                }
            }
        }
        *slot = Some(Arc::clone(&keys));
        Ok(keys)
    }

    /// The key id that encrypts (`None` without keys).
    pub fn current(&self) -> Option<&str> {
        self.keys.first().map(|(kid, _)| kid.as_str())
    }

    fn encrypt(&self, plain: &[u8]) -> Result<Vec<u8>, String> {
        let (kid, cipher) = self.keys.first().ok_or("no field encryption key")?;
        let mut nonce = [0u8; 12];
        rand::thread_rng().fill_bytes(&mut nonce);
        let sealed = cipher
            .encrypt(Nonce::from_slice(&nonce), plain)
            .map_err(|_| "encryption failed".to_owned())?;
        let mut out = Vec::with_capacity(2 + kid.len() + 12 + sealed.len());
        out.push(1);
        out.push(kid.len() as u8);
        out.extend_from_slice(kid.as_bytes());
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    fn decrypt(&self, stored: &[u8]) -> Result<Vec<u8>, String> {
        let bad = || "an encrypted value is malformed or truncated".to_owned();
        let (&version, rest) = stored.split_first().ok_or_else(bad)?;
        if version != 1 {
            return Err(bad());
        }
        let (&len, rest) = rest.split_first().ok_or_else(bad)?;
        let len = usize::from(len);
        if rest.len() < len + 12 + 16 {
            return Err(bad());
        }
        let (kid, rest) = rest.split_at(len);
        let (nonce, sealed) = rest.split_at(12);
        let cipher = self
            .keys
            .iter()
            .find(|(k, _)| k.as_bytes() == kid)
            .map(|(_, c)| c)
            .ok_or_else(|| {
                format!(
                    "an encrypted value names the key `{}`, which FIELD_ENCRYPTION_KEY does not hold",
                    String::from_utf8_lossy(kid)
                )
            })?;
        cipher
            .decrypt(Nonce::from_slice(nonce), sealed)
            .map_err(|_| "an encrypted value does not verify (tampered, or another key)".to_owned())
    }

    /// The key id a stored value was encrypted with.
    pub fn key_id(stored: &[u8]) -> Option<&str> {
        let len = usize::from(*stored.get(1)?);
        std::str::from_utf8(stored.get(2..2 + len)?).ok()
    }
}

fn installed() -> Result<Arc<FieldKeys>, String> {
    KEYS.read()
        .ok()
        .and_then(|k| k.clone())
        .filter(|k| !k.keys.is_empty())
        .ok_or_else(|| {
            "no field encryption key: set FIELD_ENCRYPTION_KEY and load it with \
             App::settings::<FieldKeys>(\"field_encryption\")"
                .to_owned()
        })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    #[serde(default)]
    key: Option<tern::settings::Secret>,
}

impl<'de> Deserialize<'de> for FieldKeys {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Raw::deserialize(d)?;
        match raw.key {
            Some(text) => {
                let keys = FieldKeys::parse(text.expose()).map_err(serde::de::Error::custom)?;
                let installed = keys.install().map_err(serde::de::Error::custom)?;
                Ok(FieldKeys {
                    keys: installed.keys.clone(),
                    secrets: installed.secrets.clone(),
                })
            }
            None if tern::settings::loading_for_production() => Err(serde::de::Error::custom(
                "FIELD_ENCRYPTION_KEY is not set: production needs it for encrypted fields",
            )),
            // Development without keys: none are installed, so encrypted
            // fields cannot be written (nor read).
            None => {
                let none = || FieldKeys {
                    keys: Vec::new(),
                    secrets: Vec::new(),
                };
                none().install().map_err(serde::de::Error::custom)?;
                Ok(none())
            }
        }
    }
}

/// What [`Encrypted`] can hold: a value that becomes bytes and back.
pub trait Plaintext: Sized {
    /// The bytes.
    fn to_bytes(&self) -> Vec<u8>;
    /// The value, from bytes; `None` when they are not one.
    fn from_bytes(bytes: Vec<u8>) -> Option<Self>;
}

impl Plaintext for String {
    fn to_bytes(&self) -> Vec<u8> {
        self.as_bytes().to_vec()
    }
    fn from_bytes(bytes: Vec<u8>) -> Option<Self> {
        String::from_utf8(bytes).ok()
    }
}

impl Plaintext for Vec<u8> {
    fn to_bytes(&self) -> Vec<u8> {
        self.clone()
    }
    fn from_bytes(bytes: Vec<u8>) -> Option<Self> {
        Some(bytes)
    }
}

/// A model field stored encrypted (a `BLOB` in SQLite, `BYTEA` in
/// PostgreSQL); in memory and in JSON, the plain value. Its `Debug`
/// does not show it.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Encrypted<T>(pub T);

impl<T> fmt::Debug for Encrypted<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Encrypted(***)")
    }
}

impl<T: Serialize> Serialize for Encrypted<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Encrypted<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(d).map(Encrypted)
    }
}

impl<T: Plaintext> Encrypted<T> {
    fn seal(&self) -> Result<Vec<u8>, BoxDynError> {
        Ok(installed()?.encrypt(&self.0.to_bytes())?)
    }

    fn open(stored: Vec<u8>) -> Result<Self, BoxDynError> {
        let plain = installed()?.decrypt(&stored)?;
        T::from_bytes(plain)
            .map(Encrypted)
            .ok_or_else(|| "an encrypted value is not of its field's type".into())
    }
}

macro_rules! encrypted_for {
    ($db:ty, $value:ty) => {
        impl<T> Type<$db> for Encrypted<T> {
            fn type_info() -> <$db as sqlx::Database>::TypeInfo {
                <Vec<u8> as Type<$db>>::type_info()
            }
            fn compatible(ty: &<$db as sqlx::Database>::TypeInfo) -> bool {
                <Vec<u8> as Type<$db>>::compatible(ty)
            }
        }

        impl<'q, T: Plaintext> Encode<'q, $db> for Encrypted<T> {
            fn encode_by_ref(
                &self,
                buf: &mut <$db as sqlx::Database>::ArgumentBuffer,
            ) -> Result<IsNull, BoxDynError> {
                <Vec<u8> as Encode<'q, $db>>::encode(self.seal()?, buf)
            }
        }

        impl<'r, T: Plaintext> Decode<'r, $db> for Encrypted<T> {
            fn decode(value: $value) -> Result<Self, BoxDynError> {
                Encrypted::open(<Vec<u8> as Decode<'r, $db>>::decode(value)?)
            }
        }
    };
}

encrypted_for!(Sqlite, SqliteValueRef<'r>);
encrypted_for!(Postgres, PgValueRef<'r>);

/// Rewrites every row of `M` (each encrypted field with the current key),
/// in pages of 200 by key: the command that finishes a key rotation.
/// Returns how many rows it wrote.
pub async fn reencrypt<M: Model>(pool: &Pool) -> Result<u64, DataError> {
    let mut written = 0;
    let mut page = 1;
    loop {
        let list = crate::model::List {
            slice: crate::list::Slice::Page {
                page,
                per_page: 200,
            },
            ..Default::default()
        };
        let rows = M::list(pool, &list).await?;
        for row in &rows.items {
            row.update(pool).await?;
            written += 1;
        }
        if u64::from(page) * 200 >= rows.total {
            return Ok(written);
        }
        page += 1;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn key(byte: u8) -> String {
        base64::engine::general_purpose::STANDARD.encode([byte; 32])
    }

    #[test]
    fn values_round_trip_and_every_change_is_refused() {
        let keys = FieldKeys::parse(&format!("k2:{},k1:{}", key(2), key(1))).unwrap();
        let sealed = keys.encrypt(b"secret").unwrap();
        assert_eq!(FieldKeys::key_id(&sealed), Some("k2"));
        assert_eq!(keys.decrypt(&sealed).unwrap(), b"secret");
        // Two encryptions differ (fresh nonces).
        assert_ne!(keys.encrypt(b"secret").unwrap(), sealed);
        // Every truncation and every flipped bit is an error.
        for cut in 0..sealed.len() {
            assert!(keys.decrypt(&sealed[..cut]).is_err(), "cut at {cut}");
        }
        for i in 0..sealed.len() {
            let mut bad = sealed.clone();
            bad[i] ^= 0x01;
            assert!(keys.decrypt(&bad).is_err(), "bit flipped at {i}");
        }
        // An old key still decrypts; an unknown one is named.
        let old = FieldKeys::parse(&format!("k1:{}", key(1))).unwrap();
        assert_eq!(keys.decrypt(&old.encrypt(b"x").unwrap()).unwrap(), b"x");
        let err = old.decrypt(&sealed).unwrap_err();
        assert!(err.contains("`k2`"), "{err}");
    }

    #[test]
    fn bad_keys_are_refused_with_a_reason() {
        for (text, says) in [
            ("", "no key"),
            ("k1", "id:base64"),
            ("k1:!!", "not base64"),
            ("k1:AAAA", "32 bytes"),
            (&format!("k1:{},k1:{}", key(1), key(2)), "twice"),
            (&format!("k 1:{}", key(1)), "key id"),
        ] {
            let err = FieldKeys::parse(text).unwrap_err();
            assert!(err.contains(says), "{text}: {err}");
        }
    }
}
