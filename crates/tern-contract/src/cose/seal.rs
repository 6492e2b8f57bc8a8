//! Sealing: a payload as a tagged COSE message, and the answer to a
//! message in the same seal it came in.

use coset::{iana, CoseMac0Builder, CoseSign1Builder, HeaderBuilder, TaggedCborSerializable};
use ed25519_dalek::Signer;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::{fast, keyring::Material, Keyring, Seal};

impl Keyring {
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
