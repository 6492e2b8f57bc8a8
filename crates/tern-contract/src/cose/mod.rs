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

// One file per step: the keys, opening, the replay check, sealing; and
// the fast path for the common `COSE_Encrypt0`.
mod fast;
mod keyring;
mod open;
mod replay;
mod seal;

use coset::CborSerializable;
use http::StatusCode;
use tern_core::extract::Rejection;

pub use keyring::Keyring;
pub use open::Opened;

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

fn malformed(detail: impl Into<String>) -> Rejection {
    Rejection::invalid(StatusCode::BAD_REQUEST, detail)
}

fn refused(detail: impl Into<String>) -> Rejection {
    Rejection::invalid(StatusCode::UNAUTHORIZED, detail)
}

/// Whether `bytes` could be a COSE message (for tests and clients).
pub fn is_cose(bytes: &[u8]) -> bool {
    matches!(bytes.first(), Some(0xd0..=0xd2))
        && coset::cbor::value::Value::from_slice(bytes).is_ok()
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;

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
