//! Password hashes: Argon2id at OWASP's minimum (19 MiB, 2 passes, 1
//! lane), bounded input, a bounded number of hashes at once.

use std::sync::{Arc, OnceLock};

use argon2::{
    password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString},
    Algorithm, Argon2, KeyId, Params, ParamsBuilder, Version,
};
use tokio::sync::Semaphore;

use crate::AuthError;

/// The longest password accepted, in bytes: checked before hashing, so a
/// long one cannot make hashing cost more.
pub const MAX_PASSWORD_BYTES: usize = 1024;
/// The shortest new password, in characters (NIST SP 800-63B's minimum).
pub const MIN_PASSWORD_CHARS: usize = 8;

/// Argon2id's memory in KiB, passes, lanes: OWASP's current minimum.
const M_COST: u32 = 19 * 1024;
const T_COST: u32 = 2;
const P_COST: u32 = 1;

/// Hashes at once: each takes 19 MiB and a core for tens of
/// milliseconds, so a burst of logins waits here rather than exhausting
/// memory.
fn permits() -> &'static Semaphore {
    static PERMITS: OnceLock<Semaphore> = OnceLock::new();
    PERMITS.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Semaphore::new(cores * 2)
    })
}

/// The key id written into the parameters of a hash made with a pepper
/// (`keyid=cGVwcGVy` in the PHC string; it does not enter the hash): a
/// server started without the pepper finds such hashes and refuses to
/// start ([`crate::check_pepper`]), and hashes made before a pepper was
/// set still verify without it and are rehashed with it at login.
pub(crate) const PEPPER_KEYID: &[u8] = b"pepper";

/// Whether the PHC string `phc` was made with a pepper.
pub(crate) fn peppered(parsed: &PasswordHash<'_>) -> bool {
    Params::try_from(parsed).is_ok_and(|p| p.keyid() == PEPPER_KEYID)
}

fn hasher(pepper: Option<&[u8]>) -> Result<Argon2<'_>, AuthError> {
    let mut params = ParamsBuilder::new();
    params.m_cost(M_COST).t_cost(T_COST).p_cost(P_COST);
    if pepper.is_some() {
        let keyid = KeyId::new(PEPPER_KEYID)
            .map_err(|e| AuthError::Internal(format!("argon2 key id: {e}")))?;
        params.keyid(keyid);
    }
    let params = params
        .build()
        .map_err(|e| AuthError::Internal(format!("argon2 parameters: {e}")))?;
    match pepper {
        Some(secret) => {
            Argon2::new_with_secret(secret, Algorithm::Argon2id, Version::V0x13, params)
                .map_err(|e| AuthError::Internal(format!("argon2 pepper: {e}")))
        }
        None => Ok(Argon2::new(Algorithm::Argon2id, Version::V0x13, params)),
    }
}

/// Refuses a password longer than [`MAX_PASSWORD_BYTES`] (before any
/// hashing).
pub(crate) fn bounded(password: &str) -> Result<(), AuthError> {
    if password.len() > MAX_PASSWORD_BYTES {
        return Err(AuthError::Password(format!(
            "a password is at most {MAX_PASSWORD_BYTES} bytes"
        )));
    }
    Ok(())
}

/// Checks a new password's rules.
pub(crate) fn acceptable(password: &str) -> Result<(), AuthError> {
    bounded(password)?;
    if password.chars().count() < MIN_PASSWORD_CHARS {
        return Err(AuthError::Password(format!(
            "a password has at least {MIN_PASSWORD_CHARS} characters"
        )));
    }
    Ok(())
}

/// The PHC string of `password`.
pub(crate) async fn hash(password: &str, pepper: Option<Arc<[u8]>>) -> Result<String, AuthError> {
    bounded(password)?;
    let _permit = permits()
        .acquire()
        .await
        .map_err(|e| AuthError::Internal(e.to_string()))?;
    let password = password.to_owned();
    tokio::task::spawn_blocking(move || {
        let salt = SaltString::generate(&mut rand::rngs::OsRng);
        hasher(pepper.as_deref())?
            .hash_password(password.as_bytes(), &salt)
            .map(|h| h.to_string())
            .map_err(|e| AuthError::Internal(format!("argon2: {e}")))
    })
    .await
    .map_err(|e| AuthError::Internal(e.to_string()))?
}

/// What a verification found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Verdict {
    /// The password is right.
    pub(crate) ok: bool,
    /// The hash uses other parameters than today's: rehash it now that
    /// the password is known.
    pub(crate) rehash: bool,
}

/// Checks `password` against `phc` (argon2's comparison is in constant
/// time).
pub(crate) async fn verify(
    password: &str,
    phc: &str,
    pepper: Option<Arc<[u8]>>,
) -> Result<Verdict, AuthError> {
    bounded(password)?;
    let _permit = permits()
        .acquire()
        .await
        .map_err(|e| AuthError::Internal(e.to_string()))?;
    let (password, phc) = (password.to_owned(), phc.to_owned());
    tokio::task::spawn_blocking(move || {
        let Ok(parsed) = PasswordHash::new(&phc) else {
            return Ok(Verdict {
                ok: false,
                rehash: false,
            });
        };
        // A hash made without a pepper verifies without it (it was made
        // before the pepper was set) and is rehashed with it.
        let with_pepper = peppered(&parsed);
        if with_pepper && pepper.is_none() {
            return Err(AuthError::Internal(
                "a password hash was made with PASSWORD_PEPPER, which is not set".to_owned(),
            ));
        }
        let used = if with_pepper { pepper.as_deref() } else { None };
        let ok = hasher(used)?
            .verify_password(password.as_bytes(), &parsed)
            .is_ok();
        let current = parsed.algorithm.as_str() == "argon2id"
            && with_pepper == pepper.is_some()
            && Params::try_from(&parsed).is_ok_and(|p| {
                p.m_cost() == M_COST && p.t_cost() == T_COST && p.p_cost() == P_COST
            });
        Ok(Verdict {
            ok,
            rehash: ok && !current,
        })
    })
    .await
    .map_err(|e| AuthError::Internal(e.to_string()))?
}

/// A hash no password matches, with today's parameters, verified against
/// for unknown users so that they take as long as a wrong password (made
/// from random bytes, not by hashing: the first unknown user costs no
/// more than the next).
pub(crate) fn decoy() -> &'static str {
    static DECOY: OnceLock<String> = OnceLock::new();
    DECOY.get_or_init(|| {
        use base64::Engine as _;
        use rand::RngCore as _;
        let (mut salt, mut output) = ([0u8; 16], [0u8; 32]);
        rand::thread_rng().fill_bytes(&mut salt);
        rand::thread_rng().fill_bytes(&mut output);
        let b64 = base64::engine::general_purpose::STANDARD_NO_PAD;
        format!(
            "$argon2id$v=19$m={M_COST},t={T_COST},p={P_COST}${}${}",
            b64.encode(salt),
            b64.encode(output)
        )
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn hashes_verify_and_old_parameters_ask_for_a_rehash() {
        let h = hash("correct horse", None).await.unwrap();
        assert!(h.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{h}");
        let v = verify("correct horse", &h, None).await.unwrap();
        assert_eq!(
            v,
            Verdict {
                ok: true,
                rehash: false
            }
        );
        assert!(!verify("wrong horse", &h, None).await.unwrap().ok);
        // With a pepper, only with the pepper.
        let pepper: Arc<[u8]> = Arc::from(&b"a pepper of sixteen+"[..]);
        let hp = hash("correct horse", Some(pepper.clone())).await.unwrap();
        assert!(
            hp.starts_with("$argon2id$v=19$m=19456,t=2,p=1,keyid=cGVwcGVy$"),
            "{hp}"
        );
        let v = verify("correct horse", &hp, Some(pepper.clone()))
            .await
            .unwrap();
        assert!(v.ok && !v.rehash);
        let other: Arc<[u8]> = Arc::from(&b"another pepper of 16"[..]);
        assert!(!verify("correct horse", &hp, Some(other)).await.unwrap().ok);
        // Without it: an error, never a plain "wrong password".
        let err = verify("correct horse", &hp, None).await.unwrap_err();
        assert!(err.to_string().contains("PASSWORD_PEPPER"), "{err}");
        // A hash from before the pepper verifies and asks for a rehash.
        let v = verify("correct horse", &h, Some(pepper)).await.unwrap();
        assert!(v.ok && v.rehash);
        // A hash with weaker parameters verifies and asks for a rehash.
        let salt = SaltString::generate(&mut rand::rngs::OsRng);
        let weak = Argon2::new(
            Algorithm::Argon2id,
            Version::V0x13,
            Params::new(8192, 1, 1, None).unwrap(),
        )
        .hash_password(b"correct horse", &salt)
        .unwrap()
        .to_string();
        let v = verify("correct horse", &weak, None).await.unwrap();
        assert_eq!(
            v,
            Verdict {
                ok: true,
                rehash: true
            }
        );
        // The decoy parses, has today's parameters, and matches nothing.
        let v = verify("correct horse", decoy(), None).await.unwrap();
        assert_eq!(
            v,
            Verdict {
                ok: false,
                rehash: false
            }
        );
        assert!(PasswordHash::new(decoy()).is_ok());
        // Garbage in the table is a wrong password, not an error.
        assert!(!verify("x", "not a hash", None).await.unwrap().ok);
    }

    #[tokio::test]
    async fn oversized_passwords_are_refused_before_hashing() {
        let long = "x".repeat(MAX_PASSWORD_BYTES + 1);
        assert!(matches!(
            hash(&long, None).await,
            Err(AuthError::Password(_))
        ));
        assert!(matches!(
            verify(&long, "$argon2id$", None).await,
            Err(AuthError::Password(_))
        ));
        assert!(acceptable("short").is_err());
        assert!(acceptable("long enough").is_ok());
    }
}
