//! The common `COSE_Encrypt0` read and written directly, without coset's
//! generic CBOR value tree (about 25,000 instructions to open and 11,000
//! to seal a small message, where AES-GCM itself is a few hundred).
//!
//! Only one shape is read here: the tag 16, a definite array of three, a
//! protected header of at most `alg` (1) and `kid` (4), an unprotected
//! header of at most `iv` (5) and `kid`, a definite byte string of
//! ciphertext, and nothing after it. Every other message goes to coset,
//! which stays the reference: the tests check that, on every message this
//! module reads, both give the same answer, and that what it writes is
//! byte for byte what coset writes.

use aes_gcm::{
    aead::{Aead, Payload},
    Aes256Gcm, Nonce,
};

/// A `COSE_Encrypt0` of the common shape, borrowed from its bytes.
pub(super) struct Encrypt0<'a> {
    /// The protected header as sent: the bytes its AAD covers.
    pub(super) protected: &'a [u8],
    pub(super) alg: Option<i64>,
    /// The protected `kid`, else the unprotected one.
    pub(super) kid: &'a [u8],
    pub(super) iv: &'a [u8],
    pub(super) ciphertext: &'a [u8],
}

/// A CBOR head: major type and argument; `None` for an indefinite length
/// or a reserved form.
fn head(bytes: &mut &[u8]) -> Option<(u8, u64)> {
    let (&first, rest) = bytes.split_first()?;
    let (major, info) = (first >> 5, first & 0x1f);
    let (arg, rest) = match info {
        0..=23 => (u64::from(info), rest),
        24 => (u64::from(*rest.first()?), rest.get(1..)?),
        25 => (
            u64::from(u16::from_be_bytes(rest.get(..2)?.try_into().ok()?)),
            rest.get(2..)?,
        ),
        26 => (
            u64::from(u32::from_be_bytes(rest.get(..4)?.try_into().ok()?)),
            rest.get(4..)?,
        ),
        27 => (
            u64::from_be_bytes(rest.get(..8)?.try_into().ok()?),
            rest.get(8..)?,
        ),
        _ => return None,
    };
    *bytes = rest;
    Some((major, arg))
}

fn bstr<'a>(bytes: &mut &'a [u8]) -> Option<&'a [u8]> {
    let (major, len) = head(bytes)?;
    if major != 2 {
        return None;
    }
    let len = usize::try_from(len).ok()?;
    let (value, rest) = (bytes.get(..len)?, bytes.get(len..)?);
    *bytes = rest;
    Some(value)
}

/// A small integer label or value (major types 0 and 1).
fn int(bytes: &mut &[u8]) -> Option<i64> {
    match head(bytes)? {
        (0, n) => i64::try_from(n).ok(),
        (1, n) => i64::try_from(n).ok().map(|n| -1 - n),
        _ => None,
    }
}

/// A header map of the labels `allowed`: `(alg, kid, iv)`. A label twice,
/// or another label, is not the common shape.
fn header<'a>(bytes: &mut &'a [u8], allowed: &[i64]) -> Option<(Option<i64>, &'a [u8], &'a [u8])> {
    let (major, n) = head(bytes)?;
    if major != 5 || n > 3 {
        return None;
    }
    let (mut alg, mut kid, mut iv) = (None, None, None);
    for _ in 0..n {
        let label = int(bytes)?;
        if !allowed.contains(&label) {
            return None;
        }
        let seen = match label {
            1 => alg.replace(int(bytes)?).is_some(),
            4 => kid.replace(bstr(bytes)?).is_some(),
            5 => iv.replace(bstr(bytes)?).is_some(),
            _ => return None,
        };
        if seen {
            return None;
        }
    }
    Some((alg, kid.unwrap_or_default(), iv.unwrap_or_default()))
}

/// The message, if it has the common shape.
pub(super) fn parse_encrypt0(bytes: &[u8]) -> Option<Encrypt0<'_>> {
    let mut rest = bytes;
    if head(&mut rest)? != (6, 16) || head(&mut rest)? != (4, 3) {
        return None;
    }
    let protected = bstr(&mut rest)?;
    let (alg, protected_kid, protected_iv) = if protected.is_empty() {
        (None, &[][..], &[][..])
    } else {
        let mut p = protected;
        let parsed = header(&mut p, &[1, 4])?;
        if !p.is_empty() {
            return None;
        }
        parsed
    };
    let (unprotected_alg, unprotected_kid, iv) = header(&mut rest, &[4, 5])?;
    let ciphertext = bstr(&mut rest)?;
    if !rest.is_empty() || unprotected_alg.is_some() || !protected_iv.is_empty() {
        return None;
    }
    // A `kid` in both headers: coset decides which wins (the protected
    // one) and whether the message is well formed; leave it to coset.
    if !protected_kid.is_empty() && !unprotected_kid.is_empty() {
        return None;
    }
    Some(Encrypt0 {
        protected,
        alg,
        kid: if protected_kid.is_empty() {
            unprotected_kid
        } else {
            protected_kid
        },
        iv,
        ciphertext,
    })
}

fn push_head(out: &mut Vec<u8>, major: u8, n: usize) {
    let major = major << 5;
    match n {
        0..=23 => out.push(major | n as u8),
        24..=0xff => out.extend_from_slice(&[major | 24, n as u8]),
        0x100..=0xffff => {
            out.push(major | 25);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        _ => {
            out.push(major | 26);
            out.extend_from_slice(&(n as u32).to_be_bytes());
        }
    }
}

fn push_bstr(out: &mut Vec<u8>, bytes: &[u8]) {
    push_head(out, 2, bytes.len());
    out.extend_from_slice(bytes);
}

/// RFC 9052's `Enc_structure` for a `COSE_Encrypt0` without external
/// AAD: `["Encrypt0", protected, h'']`.
pub(super) fn enc_structure(protected: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + protected.len());
    out.extend_from_slice(b"\x83\x68Encrypt0");
    push_bstr(&mut out, protected);
    out.push(0x40);
    out
}

/// A tagged `COSE_Encrypt0` of `payload`: protected `{1: 3 (A256GCM),
/// 4: kid}`, unprotected `{5: iv}`, as coset writes it.
pub(super) fn seal_encrypt0(
    cipher: &Aes256Gcm,
    kid: &[u8],
    iv: &[u8; 12],
    payload: &[u8],
) -> Result<Vec<u8>, String> {
    let mut protected = Vec::with_capacity(8 + kid.len());
    protected.extend_from_slice(&[0xa2, 0x01, 0x03, 0x04]);
    push_bstr(&mut protected, kid);
    let aad = enc_structure(&protected);
    let ciphertext = cipher
        .encrypt(
            Nonce::from_slice(iv),
            Payload {
                msg: payload,
                aad: &aad,
            },
        )
        .map_err(|_| "AES-256-GCM failed".to_owned())?;
    let mut out = Vec::with_capacity(32 + protected.len() + ciphertext.len());
    out.extend_from_slice(&[0xd0, 0x83]);
    push_bstr(&mut out, &protected);
    out.extend_from_slice(&[0xa1, 0x05]);
    push_bstr(&mut out, iv);
    push_bstr(&mut out, &ciphertext);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use aes_gcm::KeyInit;
    use coset::{iana, CoseEncrypt0, CoseEncrypt0Builder, HeaderBuilder, TaggedCborSerializable};

    use super::*;

    /// What a reader got from a message: kid, alg, iv, plaintext.
    type Read = (Vec<u8>, Option<i64>, Vec<u8>, Vec<u8>);

    fn cipher() -> Aes256Gcm {
        Aes256Gcm::new_from_slice(&[7; 32]).expect("a key")
    }

    /// What coset writes for the same message.
    fn coset_seal(kid: &[u8], iv: &[u8; 12], payload: &[u8]) -> Vec<u8> {
        let cipher = cipher();
        CoseEncrypt0Builder::new()
            .protected(
                HeaderBuilder::new()
                    .algorithm(iana::Algorithm::A256GCM)
                    .key_id(kid.to_vec())
                    .build(),
            )
            .unprotected(HeaderBuilder::new().iv(iv.to_vec()).build())
            .create_ciphertext(payload, &[], |plain, aad| {
                cipher
                    .encrypt(Nonce::from_slice(iv), Payload { msg: plain, aad })
                    .expect("encrypted")
            })
            .build()
            .to_tagged_vec()
            .expect("encoded")
    }

    /// What coset reads from `bytes`: kid, alg, iv and the plaintext.
    fn coset_open(bytes: &[u8]) -> Option<Read> {
        let m = CoseEncrypt0::from_tagged_slice(bytes).ok()?;
        let kid = if m.protected.header.key_id.is_empty() {
            m.unprotected.key_id.clone()
        } else {
            m.protected.header.key_id.clone()
        };
        let alg = match &m.protected.header.alg {
            Some(coset::RegisteredLabelWithPrivate::Assigned(a)) => Some(*a as i64),
            _ => None,
        };
        let iv = m.unprotected.iv.clone();
        let plain = m
            .decrypt_ciphertext(
                &[],
                || (),
                |ct, aad| {
                    if iv.len() != 12 {
                        return Err(());
                    }
                    cipher()
                        .decrypt(Nonce::from_slice(&iv), Payload { msg: ct, aad })
                        .map_err(|_| ())
                },
            )
            .ok()?;
        Some((kid, alg, iv, plain))
    }

    fn fast_open(bytes: &[u8]) -> Option<Option<Read>> {
        let m = parse_encrypt0(bytes)?;
        let plain = if m.iv.len() == 12 {
            cipher()
                .decrypt(
                    Nonce::from_slice(m.iv),
                    Payload {
                        msg: m.ciphertext,
                        aad: &enc_structure(m.protected),
                    },
                )
                .ok()
        } else {
            None
        };
        Some(plain.map(|p| (m.kid.to_vec(), m.alg, m.iv.to_vec(), p)))
    }

    #[test]
    fn writes_what_coset_writes() {
        for (kid, payload) in [
            (&b"k1"[..], &b"\xa1\x61a\x01"[..]),
            (b"a-longer-key-id-of-30-bytes-xx", &[0x42; 300][..]),
            (b"k", &[][..]),
            (&[0x61; 70][..], &[0x13; 70_000][..]),
        ] {
            let iv = [9u8; 12];
            let ours = seal_encrypt0(&cipher(), kid, &iv, payload).expect("sealed");
            assert_eq!(
                ours,
                coset_seal(kid, &iv, payload),
                "kid {} bytes",
                kid.len()
            );
        }
    }

    /// Every message this module reads, coset reads the same; mutations
    /// of valid messages (each byte changed, cut, extended) included.
    #[test]
    fn reads_what_coset_reads() {
        let iv = [3u8; 12];
        let mut messages = vec![
            coset_seal(b"k1", &iv, b"\xa1\x61a\x01"),
            coset_seal(b"key-2", &iv, &[0x55; 40]),
        ];
        // The kid in the unprotected header; an empty protected header.
        let cipher = cipher();
        let unprotected_kid = CoseEncrypt0Builder::new()
            .protected(
                HeaderBuilder::new()
                    .algorithm(iana::Algorithm::A256GCM)
                    .build(),
            )
            .unprotected(
                HeaderBuilder::new()
                    .iv(iv.to_vec())
                    .key_id(b"k1".to_vec())
                    .build(),
            )
            .create_ciphertext(b"x", &[], |p, aad| {
                cipher
                    .encrypt(Nonce::from_slice(&iv), Payload { msg: p, aad })
                    .expect("encrypted")
            })
            .build()
            .to_tagged_vec()
            .expect("encoded");
        messages.push(unprotected_kid);
        let base = messages.clone();
        for m in &base {
            for i in 0..m.len() {
                for delta in [1u8, 0x80, 0xff] {
                    let mut x = m.clone();
                    x[i] ^= delta;
                    messages.push(x);
                }
                messages.push(m[..i].to_vec());
            }
            let mut longer = m.clone();
            longer.push(0);
            messages.push(longer);
        }
        let mut read = 0;
        for m in &messages {
            if let Some(fast) = fast_open(m) {
                read += 1;
                let reference = coset_open(m);
                // coset may refuse what it cannot parse; what both read,
                // they read alike, and a message only one of them opens
                // does not exist.
                if let (Some(f), Some(r)) = (&fast, &reference) {
                    assert_eq!(f, r, "{m:02x?}");
                }
                assert_eq!(fast.is_some(), reference.is_some(), "{m:02x?}");
            }
        }
        assert!(
            read > messages.len() / 2,
            "the fast path read {read} of {}",
            messages.len()
        );
    }

    #[test]
    fn other_shapes_are_left_to_coset() {
        let iv = [3u8; 12];
        let m = coset_seal(b"k1", &iv, b"x");
        assert!(parse_encrypt0(&m).is_some());
        // Untagged, a Mac0 tag, trailing bytes, an indefinite array.
        assert!(parse_encrypt0(&m[1..]).is_none());
        let mut mac = m.clone();
        mac[0] = 0xd1;
        assert!(parse_encrypt0(&mac).is_none());
        let mut longer = m.clone();
        longer.push(0xf6);
        assert!(parse_encrypt0(&longer).is_none());
        let mut indefinite = m.clone();
        indefinite[1] = 0x9f;
        assert!(parse_encrypt0(&indefinite).is_none());
    }
}
