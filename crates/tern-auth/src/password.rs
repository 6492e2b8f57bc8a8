//! Password hashes: Argon2id at OWASP's minimum (19 MiB, 2 passes, 1
//! lane), bounded input, and bounded memory: a fixed set of hashers,
//! one per core, each reusing the 19 MiB of one hash (see
//! [`concurrency`]); beyond them a queue with a deadline, then `503`.
//!
//! The accounts use them for `tern_users`; an app that keeps passwords
//! of its own (or takes logins its own way) uses the same functions:
//! [`hash`] a new password, [`verify`] one against a stored hash (and
//! [`rehash`] it when its parameters are out of date), [`verify_nobody`]
//! for an unknown account so that it takes as long as a wrong password,
//! or [`authenticate`] a username or an email against the accounts'
//! users. Hashing runs on the hashers' threads, never on the async
//! runtime's; the pepper (`PASSWORD_PEPPER`) comes with [`Passwords`].
//!
//! ```
//! # #[tokio::main] async fn main() -> Result<(), tern_auth::AuthError> {
//! use tern_auth::{password, Passwords};
//!
//! let passwords = Passwords::default(); // the app's: `service.settings::<Passwords>()`
//! let stored = password::hash(&passwords, "correct horse battery").await?;
//! assert!(stored.starts_with("$argon2id$"));
//!
//! let verdict = password::verify(&passwords, "correct horse battery", &stored).await?;
//! assert!(verdict.matches());
//! if let Some(fresh) = password::rehash(&passwords, "correct horse battery", verdict).await? {
//!     // Store `fresh` in place of `stored`: made with today's parameters.
//!     # let _ = fresh;
//! }
//! assert!(!password::verify(&passwords, "wrong", &stored).await?.matches());
//! # Ok(()) }
//! ```

use std::sync::{Arc, OnceLock};

use argon2::{
    password_hash::{Output, ParamsString, PasswordHash, SaltString},
    Algorithm, Argon2, Block, KeyId, Params, ParamsBuilder, Version,
};
use subtle::ConstantTimeEq as _;

use crate::{hasher_pool, AuthError, Passwords};

pub use crate::users::authenticate;

/// The longest password accepted, in bytes: checked before hashing, so a
/// long one cannot make hashing cost more.
pub const MAX_PASSWORD_BYTES: usize = 1024;
/// The shortest new password, in characters (NIST SP 800-63B's minimum).
pub const MIN_PASSWORD_CHARS: usize = 8;

/// Argon2id's memory in KiB, passes, lanes: OWASP's current minimum.
const M_COST: u32 = 19 * 1024;
const T_COST: u32 = 2;
const P_COST: u32 = 1;
/// The memory of one hash at today's parameters, in 1 KiB blocks: what
/// each hasher keeps.
pub(crate) const BLOCKS: usize = M_COST as usize;

/// How many passwords this process hashes at once: one per core (as
/// `std::thread::available_parallelism` counts them, so a container's
/// CPU quota counts). Each hasher keeps the 19 MiB of one Argon2id hash
/// from its first hash on and reuses it, so password hashing holds at
/// most `concurrency() x 19 MiB` however many logins arrive; logins
/// beyond the hashers wait in a queue (32 per hasher, 3 s at most) and
/// past it get `503` with `Retry-After`.
///
/// ```
/// // On a 2-core machine: 2 hashers, at most 38 MiB for hashing.
/// assert!(tern_auth::password::concurrency() >= 1);
/// ```
pub fn concurrency() -> usize {
    hasher_pool::pool().map_or(0, hasher_pool::Pool::hashers)
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

/// The PHC string of `password` with `salt`, hashed in `memory` (at
/// least [`BLOCKS`] blocks): the string argon2's `hash_password` makes.
fn hash_in(
    memory: &mut [Block],
    password: &[u8],
    salt: &SaltString,
    pepper: Option<&[u8]>,
) -> Result<String, AuthError> {
    let fail = |e: &dyn std::fmt::Display| AuthError::Internal(format!("argon2: {e}"));
    let argon2 = hasher(pepper)?;
    let mut salt_bytes = [0u8; 64];
    let salt_bytes = salt.decode_b64(&mut salt_bytes).map_err(|e| fail(&e))?;
    let mut out = [0u8; Params::DEFAULT_OUTPUT_LEN];
    argon2
        .hash_password_into_with_memory(password, salt_bytes, &mut out, memory)
        .map_err(|e| fail(&e))?;
    let phc = PasswordHash {
        algorithm: Algorithm::Argon2id.ident(),
        version: Some(Version::V0x13.into()),
        params: ParamsString::try_from(argon2.params()).map_err(|e| fail(&e))?,
        salt: Some(salt.as_salt()),
        hash: Some(Output::new(&out).map_err(|e| fail(&e))?),
    };
    Ok(phc.to_string())
}

/// The PHC string of `password`.
pub(crate) async fn hash_with(
    password: &str,
    pepper: Option<Arc<[u8]>>,
) -> Result<String, AuthError> {
    bounded(password)?;
    let password = password.to_owned();
    hasher_pool::pool()?
        .run(move |memory| {
            let salt = SaltString::generate(&mut rand::rngs::OsRng);
            hash_in(memory, password.as_bytes(), &salt, pepper.as_deref())
        })
        .await?
}

/// What [`verify`] found: whether the password matches, and whether
/// its hash should be replaced by one made with today's parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    /// The password is right.
    pub(crate) ok: bool,
    /// The hash uses other parameters than today's: rehash it now that
    /// the password is known.
    pub(crate) rehash: bool,
}

/// Whether `password` hashes to `parsed` (with its algorithm, version,
/// parameters and salt, and `secret`), computed in `memory`: what
/// argon2's `verify_password` answers, with the comparison in constant
/// time. A hash that is not one argon2 can make matches nothing. A hash
/// that needs more memory than `memory` (stronger parameters than
/// today's, from an older configuration) is computed in memory of its
/// own, for this hash only.
fn matches_in(
    memory: &mut [Block],
    password: &[u8],
    parsed: &PasswordHash<'_>,
    secret: Option<&[u8]>,
) -> Result<bool, AuthError> {
    let (Some(salt), Some(expected)) = (&parsed.salt, &parsed.hash) else {
        return Ok(false);
    };
    let Ok(algorithm) = Algorithm::try_from(parsed.algorithm) else {
        return Ok(false);
    };
    let version = match parsed.version.map(Version::try_from) {
        None => Version::default(),
        Some(Ok(v)) => v,
        Some(Err(_)) => return Ok(false),
    };
    let Ok(params) = Params::try_from(parsed) else {
        return Ok(false);
    };
    let argon2 = match secret {
        Some(secret) => Argon2::new_with_secret(secret, algorithm, version, params)
            .map_err(|e| AuthError::Internal(format!("argon2 pepper: {e}")))?,
        None => Argon2::new(algorithm, version, params),
    };
    let mut salt_bytes = [0u8; 64];
    let Ok(salt_bytes) = salt.decode_b64(&mut salt_bytes) else {
        return Ok(false);
    };
    let mut out = [0u8; Output::MAX_LENGTH];
    let Some(out) = out.get_mut(..expected.len()) else {
        return Ok(false);
    };
    let needed = argon2.params().block_count();
    let made = match memory.get_mut(..needed) {
        Some(memory) => argon2.hash_password_into_with_memory(password, salt_bytes, out, memory),
        None => argon2.hash_password_into(password, salt_bytes, out),
    };
    Ok(made.is_ok() && bool::from(out.ct_eq(expected.as_bytes())))
}

impl Verdict {
    /// The password is the one the hash was made from.
    pub fn matches(&self) -> bool {
        self.ok
    }

    /// The password matches, and its hash was made with other parameters
    /// than today's (weaker or stronger Argon2 costs, another algorithm,
    /// without the pepper now set): hash the password again and store
    /// the new hash ([`rehash`] does it). Never true for a wrong password.
    pub fn needs_rehash(&self) -> bool {
        self.ok && self.rehash
    }
}

/// Checks `password` against `phc` (the comparison is in constant time).
pub(crate) async fn verify_with(
    password: &str,
    phc: &str,
    pepper: Option<Arc<[u8]>>,
) -> Result<Verdict, AuthError> {
    bounded(password)?;
    let Ok(parsed) = PasswordHash::new(phc) else {
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
    let current = parsed.algorithm.as_str() == "argon2id"
        && with_pepper == pepper.is_some()
        && Params::try_from(&parsed)
            .is_ok_and(|p| p.m_cost() == M_COST && p.t_cost() == T_COST && p.p_cost() == P_COST);
    let (password, phc) = (password.to_owned(), phc.to_owned());
    let ok = hasher_pool::pool()?
        .run(move |memory| {
            let parsed =
                PasswordHash::new(&phc).map_err(|e| AuthError::Internal(format!("argon2: {e}")))?;
            let used = if with_pepper { pepper.as_deref() } else { None };
            matches_in(memory, password.as_bytes(), &parsed, used)
        })
        .await??;
    Ok(Verdict {
        ok,
        rehash: ok && !current,
    })
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

/// The PHC string (`$argon2id$v=19$m=19456,t=2,p=1$...`) of a new
/// `password`, with today's parameters and the pepper of `passwords` if
/// one is set: what to store. The password's rules are checked first
/// (at least [`MIN_PASSWORD_CHARS`] characters, at most
/// [`MAX_PASSWORD_BYTES`] bytes: `422`); `503` when the hashers are
/// busy past their queue.
///
/// ```
/// # #[tokio::main] async fn main() -> Result<(), tern_auth::AuthError> {
/// let passwords = tern_auth::Passwords::default();
/// let stored = tern_auth::password::hash(&passwords, "correct horse battery").await?;
/// assert!(stored.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"));
/// assert!(tern_auth::password::hash(&passwords, "short").await.is_err());
/// # Ok(()) }
/// ```
pub async fn hash(passwords: &Passwords, password: &str) -> Result<String, AuthError> {
    acceptable(password)?;
    hash_with(password, passwords.pepper()).await
}

/// Checks `password` against the stored hash `phc`, in constant time:
/// whether it matches, and whether the hash needs a rehash
/// ([`Verdict::needs_rehash`]: other parameters than today's). A stored
/// string that is not an Argon2 hash matches nothing; a password over
/// [`MAX_PASSWORD_BYTES`] is refused before hashing (`422`); a hash made
/// with a pepper while `passwords` has none is an error (not a wrong
/// password), naming `PASSWORD_PEPPER`.
///
/// ```
/// # #[tokio::main] async fn main() -> Result<(), tern_auth::AuthError> {
/// let passwords = tern_auth::Passwords::default();
/// let stored = tern_auth::password::hash(&passwords, "correct horse battery").await?;
/// let verdict = tern_auth::password::verify(&passwords, "correct horse battery", &stored).await?;
/// assert!(verdict.matches() && !verdict.needs_rehash());
/// # Ok(()) }
/// ```
pub async fn verify(
    passwords: &Passwords,
    password: &str,
    phc: &str,
) -> Result<Verdict, AuthError> {
    verify_with(password, phc, passwords.pepper()).await
}

/// Rehash on login: when `verdict` (of [`verify`] for this `password`)
/// says the stored hash is out of date, the password's hash with
/// today's parameters and pepper, to store in its place; `None` when
/// the hash is current or the password did not match.
///
/// ```
/// # #[tokio::main] async fn main() -> Result<(), tern_auth::AuthError> {
/// # let passwords = tern_auth::Passwords::default();
/// # let stored = tern_auth::password::hash(&passwords, "correct horse battery").await?;
/// let verdict = tern_auth::password::verify(&passwords, "correct horse battery", &stored).await?;
/// if let Some(fresh) = tern_auth::password::rehash(&passwords, "correct horse battery", verdict).await? {
///     // UPDATE ... SET password_hash = fresh
///     # let _ = fresh;
/// }
/// # Ok(()) }
/// ```
pub async fn rehash(
    passwords: &Passwords,
    password: &str,
    verdict: Verdict,
) -> Result<Option<String>, AuthError> {
    if !verdict.needs_rehash() {
        return Ok(None);
    }
    hash_with(password, passwords.pepper()).await.map(Some)
}

/// For a login whose account does not exist: checks `password` against
/// a hash no password matches, with today's parameters, so that the
/// answer comes as late as a wrong password's (no user enumeration by
/// timing). Answer the same error as for a wrong password afterwards.
///
/// ```
/// # #[tokio::main] async fn main() -> Result<(), tern_auth::AuthError> {
/// let passwords = tern_auth::Passwords::default();
/// tern_auth::password::verify_nobody(&passwords, "a guess").await?;
/// # Ok(()) }
/// ```
pub async fn verify_nobody(passwords: &Passwords, password: &str) -> Result<(), AuthError> {
    verify_with(password, decoy(), passwords.pepper())
        .await
        .map(|_| ())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use argon2::{PasswordHasher as _, PasswordVerifier as _};

    #[tokio::test]
    async fn hashes_verify_and_old_parameters_ask_for_a_rehash() {
        let h = hash_with("correct horse", None).await.unwrap();
        assert!(h.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{h}");
        let v = verify_with("correct horse", &h, None).await.unwrap();
        assert_eq!(
            v,
            Verdict {
                ok: true,
                rehash: false
            }
        );
        assert!(!verify_with("wrong horse", &h, None).await.unwrap().ok);
        // With a pepper, only with the pepper.
        let pepper: Arc<[u8]> = Arc::from(&b"a pepper of sixteen+"[..]);
        let hp = hash_with("correct horse", Some(pepper.clone()))
            .await
            .unwrap();
        assert!(
            hp.starts_with("$argon2id$v=19$m=19456,t=2,p=1,keyid=cGVwcGVy$"),
            "{hp}"
        );
        let v = verify_with("correct horse", &hp, Some(pepper.clone()))
            .await
            .unwrap();
        assert!(v.ok && !v.rehash);
        let other: Arc<[u8]> = Arc::from(&b"another pepper of 16"[..]);
        assert!(
            !verify_with("correct horse", &hp, Some(other))
                .await
                .unwrap()
                .ok
        );
        // Without it: an error, never a plain "wrong password".
        let err = verify_with("correct horse", &hp, None).await.unwrap_err();
        assert!(err.to_string().contains("PASSWORD_PEPPER"), "{err}");
        // A hash from before the pepper verifies and asks for a rehash.
        let v = verify_with("correct horse", &h, Some(pepper))
            .await
            .unwrap();
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
        let v = verify_with("correct horse", &weak, None).await.unwrap();
        assert_eq!(
            v,
            Verdict {
                ok: true,
                rehash: true
            }
        );
        // The decoy parses, has today's parameters, and matches nothing.
        let v = verify_with("correct horse", decoy(), None).await.unwrap();
        assert_eq!(
            v,
            Verdict {
                ok: false,
                rehash: false
            }
        );
        assert!(PasswordHash::new(decoy()).is_ok());
        // Garbage in the table is a wrong password, not an error.
        assert!(!verify_with("x", "not a hash", None).await.unwrap().ok);
    }

    #[tokio::test]
    async fn oversized_passwords_are_refused_before_hashing() {
        let long = "x".repeat(MAX_PASSWORD_BYTES + 1);
        assert!(matches!(
            hash_with(&long, None).await,
            Err(AuthError::Password(_))
        ));
        assert!(matches!(
            verify_with(&long, "$argon2id$", None).await,
            Err(AuthError::Password(_))
        ));
        assert!(acceptable("short").is_err());
        assert!(acceptable("long enough").is_ok());
    }

    /// The hashers' hashes are argon2's own: the same PHC string for the
    /// same salt, with and without a pepper, and each verifies the
    /// other's (the reference is argon2's `hash_password` and
    /// `verify_password`, which allocate their memory per hash).
    #[test]
    fn hashes_in_reused_memory_are_argon2s() {
        let mut memory = vec![Block::new(); BLOCKS];
        let pepper: &[u8] = b"a pepper of sixteen+";
        for secret in [None, Some(pepper)] {
            for password in ["", "correct horse", "\u{e9}t\u{e9} \u{1f600}"] {
                let salt = SaltString::generate(&mut rand::rngs::OsRng);
                let ours = hash_in(&mut memory, password.as_bytes(), &salt, secret).unwrap();
                let theirs = hasher(secret)
                    .unwrap()
                    .hash_password(password.as_bytes(), &salt)
                    .unwrap()
                    .to_string();
                assert_eq!(ours, theirs);
                let parsed = PasswordHash::new(&theirs).unwrap();
                assert!(matches_in(&mut memory, password.as_bytes(), &parsed, secret).unwrap());
                assert!(!matches_in(&mut memory, b"other", &parsed, secret).unwrap());
                hasher(secret)
                    .unwrap()
                    .verify_password(password.as_bytes(), &PasswordHash::new(&ours).unwrap())
                    .unwrap();
            }
        }
        // Other parameters, versions and algorithms, weaker and stronger
        // than today's (more memory than a hasher keeps: memory of its
        // own), agree with argon2 too.
        let cases = [
            (Algorithm::Argon2id, Version::V0x13, 8192, 1, 1),
            (Algorithm::Argon2id, Version::V0x13, 2 * M_COST, 1, 1),
            (Algorithm::Argon2id, Version::V0x10, 4096, 3, 2),
            (Algorithm::Argon2i, Version::V0x13, 4096, 2, 1),
            (Algorithm::Argon2d, Version::V0x13, 4096, 2, 1),
        ];
        for (algorithm, version, m, t, p) in cases {
            let params = Params::new(m, t, p, None).unwrap();
            let salt = SaltString::generate(&mut rand::rngs::OsRng);
            let phc = Argon2::new(algorithm, version, params)
                .hash_password(b"correct horse", &salt)
                .unwrap()
                .to_string();
            let parsed = PasswordHash::new(&phc).unwrap();
            assert!(
                matches_in(&mut memory, b"correct horse", &parsed, None).unwrap(),
                "{phc}"
            );
            assert!(!matches_in(&mut memory, b"wrong horse", &parsed, None).unwrap());
        }
        // Not argon2, or no hash in it: matches nothing.
        for phc in [
            "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0",
            "$scrypt$ln=16,r=8,p=1$aM15713r3Xsvxbi31lqr1Q$nFNh2CVHVjNldFVKDHDlm4CbdRSCdEBsjjJxD+iCs5E",
        ] {
            let parsed = PasswordHash::new(phc).unwrap();
            assert!(!matches_in(&mut memory, b"x", &parsed, None).unwrap(), "{phc}");
        }
        assert_eq!(memory.len(), BLOCKS);
    }
}
