//! Opening a message: its key, its algorithm, its tag, signature or
//! ciphertext, then the replay check.

use aes_gcm::{
    aead::{Aead, Payload},
    Aes256Gcm, Nonce,
};
use coset::{iana, CoseEncrypt0, CoseMac0, CoseSign1, TaggedCborSerializable};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use tern_core::extract::Rejection;

use super::{
    fast,
    keyring::{Key, Material},
    malformed, refused,
    replay::replay_id,
    Keyring, Seal,
};

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
    /// generic CBOR value (see [`fast`](super::fast)); the same checks as coset's path.
    fn open_encrypt0_fast(&self, m: &fast::Encrypt0<'_>) -> Result<(Opened, [u8; 32]), Rejection> {
        let key = self.key_for(Seal::Encrypt0, m.kid, m.alg, &[iana::Algorithm::A256GCM])?;
        let cipher = aes_cipher(key, m.iv)?;
        let aad = fast::enc_structure(m.protected);
        let payload = aes_decrypt(cipher, m.iv, m.ciphertext, &aad)?;
        Ok(opened(Seal::Encrypt0, key, m.iv, payload))
    }

    fn open_encrypt0(&self, m: &CoseEncrypt0) -> Result<(Opened, [u8; 32]), Rejection> {
        let (kid, alg) = Self::named(&m.protected.header, &m.unprotected);
        let key = self.key_for(Seal::Encrypt0, kid, alg, &[iana::Algorithm::A256GCM])?;
        let iv = if m.unprotected.iv.is_empty() {
            &m.protected.header.iv
        } else {
            &m.unprotected.iv
        };
        let cipher = aes_cipher(key, iv)?;
        // coset builds the `Enc_structure` (the additional data).
        let payload = m.decrypt_ciphertext(
            &[],
            || malformed("the COSE_Encrypt0 has no ciphertext"),
            |ct, aad| aes_decrypt(cipher, iv, ct, aad),
        )?;
        Ok(opened(Seal::Encrypt0, key, iv, payload))
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
        let payload = m.payload.clone().unwrap_or_default();
        Ok(opened(Seal::Mac0, key, &m.tag, payload))
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
        Ok(opened(Seal::Sign1, key, &m.signature, payload))
    }
}

// The steps of opening a `COSE_Encrypt0`, shared by both parsers (the
// fast one and coset's).

/// `key`'s AES-256-GCM cipher, for a message with this `iv`.
fn aes_cipher<'k>(key: &'k Key, iv: &[u8]) -> Result<&'k Aes256Gcm, Rejection> {
    let Material::Aes256Gcm(cipher) = &key.material else {
        return Err(refused("the key is not an AES-256-GCM key"));
    };
    if iv.len() != 12 {
        return Err(malformed(
            "a COSE_Encrypt0 with AES-256-GCM needs a 12-byte IV",
        ));
    }
    Ok(cipher)
}

fn aes_decrypt(
    cipher: &Aes256Gcm,
    iv: &[u8],
    ciphertext: &[u8],
    aad: &[u8],
) -> Result<Vec<u8>, Rejection> {
    let payload = Payload {
        msg: ciphertext,
        aad,
    };
    cipher
        .decrypt(Nonce::from_slice(iv), payload)
        .map_err(|_| refused("the COSE_Encrypt0 does not decrypt: tampered, or another key"))
}

/// The opened message and its replay id: what makes each message unique
/// (the IV of a `COSE_Encrypt0`, the tag of a `COSE_Mac0`, the signature
/// of a `COSE_Sign1`) under its key.
fn opened(seal: Seal, key: &Key, unique: &[u8], payload: Vec<u8>) -> (Opened, [u8; 32]) {
    let opened = Opened {
        payload,
        seal,
        kid: key.kid.clone(),
    };
    (opened, replay_id(seal, &key.kid, unique))
}
