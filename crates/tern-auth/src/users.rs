//! Users: who they are, and their password hashes.

use std::{net::IpAddr, sync::Arc};

use serde::Serialize;
use tern_data::{query, with_pool, Conn, Pool};

use crate::{password, throttle, Accounts, AuthError, Passwords};

/// A logged-in user, as handlers see one (an extractor: `401` without a
/// session; `Option<User>` for pages that work either way).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct User {
    /// The user's id.
    pub id: i64,
    /// The user's name, as given when the account was made (compared
    /// without regard to case: `Ada` logs in as `ada`).
    pub username: String,
    /// The user's email address, if the account has one (as given,
    /// trimmed; compared without regard to case).
    pub email: Option<String>,
    /// Whether the user is staff (the admin's, and [`Staff`](crate::Staff)'s).
    pub is_staff: bool,
    /// Whether the user is a superuser: every right in the admin, with
    /// no permission rows (a superuser is staff too).
    pub is_superuser: bool,
}

/// The longest username, in characters.
pub const MAX_USERNAME_CHARS: usize = 150;
/// The longest email address, in characters (RFC 5321's limit on a
/// path, 256 octets, less its angle brackets).
pub const MAX_EMAIL_CHARS: usize = 254;

/// A username as stored, and its key: trimmed, 1 to 150 characters, no
/// control characters; kept as given, and compared by its key, the
/// lower case form (Unicode's, as Rust's `str::to_lowercase`), which
/// the `tern_users_username_ci` index keeps unique.
pub(crate) fn normalize(username: &str) -> Result<(String, String), AuthError> {
    let name = username.trim();
    let n = name.chars().count();
    if n == 0 || n > MAX_USERNAME_CHARS || name.chars().any(char::is_control) {
        return Err(AuthError::BadRequest(format!(
            "a username has 1 to {MAX_USERNAME_CHARS} characters, none of them control characters"
        )));
    }
    Ok((name.to_owned(), key(name)))
}

/// What a username or an email is compared by.
fn key(name: &str) -> String {
    name.trim().to_lowercase()
}

/// An email address as stored, and its key: trimmed, with an `@` that
/// has something on each side, no spaces or control characters, at
/// most [`MAX_EMAIL_CHARS`]; kept as given, compared (and unique) by
/// its lower case form. Deliverability is the app's to check (send a
/// link).
pub(crate) fn normalize_email(email: &str) -> Result<(String, String), AuthError> {
    let email = email.trim();
    let well_formed = email
        .rsplit_once('@')
        .is_some_and(|(local, domain)| !local.is_empty() && !domain.is_empty())
        && email.chars().count() <= MAX_EMAIL_CHARS
        && !email.chars().any(|c| c.is_control() || c.is_whitespace());
    if !well_formed {
        return Err(AuthError::BadRequest(format!(
            "`{}` is not an email address: one looks like `name@example.com` (at most \
             {MAX_EMAIL_CHARS} characters, no spaces)",
            email.chars().take(MAX_EMAIL_CHARS).collect::<String>()
        )));
    }
    Ok((email.to_owned(), key(email)))
}

pub(crate) fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

impl Passwords {
    pub(crate) fn pepper(&self) -> Option<Arc<[u8]>> {
        self.pepper
            .as_ref()
            .map(|p| Arc::from(p.expose().as_bytes()))
    }
}

/// Checks, before serving, that the accounts' password hashes can be
/// verified: an error naming `PASSWORD_PEPPER` when some were made with a
/// pepper and none is set (every one of those users would be refused at
/// login). Call it after the migrations, at every start; once a pepper
/// is in use it is required, in production as elsewhere.
///
/// Setting a pepper later needs no step: hashes made without one still
/// verify and are rehashed with it at each user's next login.
pub async fn check_pepper(pool: &Pool, passwords: &Passwords) -> Result<(), AuthError> {
    if passwords.pepper.is_some() {
        return Ok(());
    }
    // `keyid=cGVwcGVy`: the base64 of `password::PEPPER_KEYID`.
    let sql = "SELECT COUNT(*) FROM tern_users WHERE password_hash LIKE '%,keyid=cGVwcGVy$%'";
    let peppered: i64 = with_pool!(pool, p => {
        tern_data::sqlx::query_scalar(sql).fetch_one(p).await?
    });
    if peppered > 0 {
        return Err(AuthError::Internal(format!(
            "PASSWORD_PEPPER is not set, but {peppered} account(s) have passwords hashed \
             with a pepper: none of them could log in. Set PASSWORD_PEPPER to the pepper \
             they were hashed with"
        )));
    }
    Ok(())
}

/// Creates a user with `password` (its rules checked, hashed with
/// Argon2id); `409` when the name is taken (in any case: `Ada` and
/// `ada` are one name). The name is kept as given. For an email, use
/// [`NewUser`].
pub async fn create_user(
    pool: &Pool,
    passwords: &Passwords,
    username: &str,
    password: &str,
    staff: bool,
) -> Result<User, AuthError> {
    NewUser::new(username, password)
        .staff(staff)
        .create(pool, passwords)
        .await
}

/// A user to create: a username and a password, optionally an email
/// address and staff rights; [`create_user`] with more to say.
///
/// The username is kept as given and compared without regard to case
/// (`Ada` logs in as `ada`, and no one else can take `ADA`); so is the
/// email, once trimmed (unique too: `409` when another account has it).
///
/// ```no_run
/// # async fn make(db: &tern_data::Database, passwords: &tern_auth::Passwords) -> Result<(), tern_auth::AuthError> {
/// use tern_auth::NewUser;
///
/// let user = NewUser::new("Ada", "correct horse battery")
///     .email("ada@example.com")
///     .create(db.pool(), passwords)
///     .await?;
/// assert_eq!(user.username, "Ada");
/// assert_eq!(user.email.as_deref(), Some("ada@example.com"));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct NewUser<'a> {
    username: &'a str,
    password: &'a str,
    email: Option<&'a str>,
    staff: bool,
    superuser: bool,
}

impl std::fmt::Debug for NewUser<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewUser")
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .field("email", &self.email)
            .field("staff", &self.staff)
            .field("superuser", &self.superuser)
            .finish()
    }
}

impl<'a> NewUser<'a> {
    /// A user named `username` (trimmed, kept as given) with `password`:
    /// no email, not staff.
    pub fn new(username: &'a str, password: &'a str) -> Self {
        NewUser {
            username,
            password,
            email: None,
            staff: false,
            superuser: false,
        }
    }

    /// The user's email address: trimmed, kept as given, unique without
    /// regard to case; one without an `@` is refused (`400`).
    pub fn email(mut self, email: &'a str) -> Self {
        self.email = Some(email);
        self
    }

    /// Whether the user is staff.
    pub fn staff(mut self, staff: bool) -> Self {
        self.staff = staff;
        self
    }

    /// Whether the user is a superuser (every right in the admin); `true`
    /// makes the user staff too, whatever [`staff`](Self::staff) says.
    pub fn superuser(mut self, superuser: bool) -> Self {
        self.superuser = superuser;
        self
    }

    /// Creates the user: `400` for a malformed name or email, `422` for
    /// a password that breaks the rules (checked before hashing), `409`
    /// when the name or the email is taken.
    pub async fn create<'c>(
        self,
        on: impl Into<Conn<'c>>,
        passwords: &Passwords,
    ) -> Result<User, AuthError> {
        let (username, username_key) = normalize(self.username)?;
        let email = self.email.map(normalize_email).transpose()?;
        password::acceptable(self.password)?;
        let hash = password::hash_with(self.password, passwords.pepper()).await?;
        let (email, email_key) = email.unzip();
        let staff = self.staff || self.superuser;
        let sql = "INSERT INTO tern_users \
                   (username, username_key, email, email_key, password_hash, is_staff, \
                   is_superuser, is_active, created_at) \
                   VALUES ($1, $2, $3, $4, $5, $6, $7, TRUE, $8) RETURNING id";
        let id: i64 = query(sql)
            .bind(&username)
            .bind(&username_key)
            .bind(email.clone())
            .bind(email_key)
            .bind(hash)
            .bind(staff)
            .bind(self.superuser)
            .bind(now())
            .scalar(on)
            .await?;
        Ok(User {
            id,
            username,
            email,
            is_staff: staff,
            is_superuser: self.superuser,
        })
    }
}

/// Sets a user's password (its rules checked) and ends every session of
/// the user.
pub async fn set_password<'c>(
    on: impl Into<Conn<'c>>,
    accounts: &Accounts,
    passwords: &Passwords,
    user_id: i64,
    password: &str,
) -> Result<(), AuthError> {
    password::acceptable(password)?;
    let hash = password::hash_with(password, passwords.pepper()).await?;
    let mut on = on.into();
    store_hash(&mut on, user_id, &hash).await?;
    crate::session::delete_all(on, accounts, user_id).await
}

pub(crate) async fn store_hash<'c>(
    on: impl Into<Conn<'c>>,
    user_id: i64,
    hash: &str,
) -> Result<(), AuthError> {
    let sql = "UPDATE tern_users SET password_hash = $1 WHERE id = $2";
    query(sql).bind(hash).bind(user_id).execute(on).await?;
    Ok(())
}

/// The user whose username or email is `login` (either without regard
/// to case), if `password` is theirs and the account is active: the
/// accounts' own login, for an app that takes credentials its own way
/// (a JSON API's `POST /users/login`). A hash made with older
/// parameters is replaced at once by one with today's
/// ([`password::rehash`](crate::password::rehash)).
///
/// Every failure is [`AuthError::BadCredentials`], and takes as long:
/// an unknown login is checked against a decoy hash with today's
/// parameters, as a wrong password is checked against the user's. A
/// username that is also another account's email finds the account
/// with that username. No throttle here: the app counts attempts (the
/// built-in `POST /auth/login` does, per account and address).
///
/// ```no_run
/// # async fn login(db: &tern_data::Database, passwords: &tern_auth::Passwords) -> Result<(), tern_auth::AuthError> {
/// let user = tern_auth::password::authenticate(db.pool(), passwords, "ADA@example.com", "correct horse battery").await?;
/// println!("{} logged in", user.username);
/// # Ok(()) }
/// ```
pub async fn authenticate(
    pool: &Pool,
    passwords: &Passwords,
    login: &str,
    password: &str,
) -> Result<User, AuthError> {
    authenticate_by(pool, passwords, login, password, true).await
}

/// [`authenticate`], by username alone unless `by_email`: the built-in
/// login and password change stay by username (their throttle counts by
/// the name given, so a second name for the account would double it).
pub(crate) async fn authenticate_by(
    pool: &Pool,
    passwords: &Passwords,
    login: &str,
    password: &str,
    by_email: bool,
) -> Result<User, AuthError> {
    password::bounded(password)?;
    let found = lookup(pool, login, by_email).await?;
    check(pool, passwords, found, password).await
}

/// An account as a login finds it: id, username, email, password hash,
/// staff, superuser, active.
type Found = (i64, String, Option<String>, String, bool, bool, bool);

/// The account whose username (or, `by_email`, email) is `login`
/// without regard to case; `None` for none, and for a login too long or
/// empty to be either.
async fn lookup(pool: &Pool, login: &str, by_email: bool) -> Result<Option<Found>, AuthError> {
    let login = key(login);
    let n = login.chars().count();
    if n == 0 || n > MAX_USERNAME_CHARS.max(MAX_EMAIL_CHARS) {
        return Ok(None);
    }
    // The username first: adding emails never takes a login from a name.
    let sql = if by_email {
        "SELECT id, username, email, password_hash, is_staff, is_superuser, is_active \
         FROM tern_users WHERE username_key = $1 OR email_key = $1 \
         ORDER BY CASE WHEN username_key = $1 THEN 0 ELSE 1 END LIMIT 1"
    } else {
        "SELECT id, username, email, password_hash, is_staff, is_superuser, is_active \
         FROM tern_users WHERE username_key = $1"
    };
    let row: Option<Found> = with_pool!(pool, p => {
        tern_data::sqlx::query_as(sql).bind(&login).fetch_optional(p).await?
    });
    Ok(row)
}

/// `password` against the account found: its user, or
/// [`AuthError::BadCredentials`] in the same time for no account (a
/// decoy hash), a wrong password and an inactive account. Rehashes a
/// hash made with older parameters.
async fn check(
    pool: &Pool,
    passwords: &Passwords,
    found: Option<Found>,
    password: &str,
) -> Result<User, AuthError> {
    let pepper = passwords.pepper();
    let Some((id, username, email, hash, is_staff, is_superuser, active)) = found else {
        let _ = password::verify_with(password, password::decoy(), pepper).await?;
        return Err(AuthError::BadCredentials);
    };
    let verdict = password::verify_with(password, &hash, pepper.clone()).await?;
    if !verdict.ok || !active {
        return Err(AuthError::BadCredentials);
    }
    if verdict.rehash {
        let fresh = password::hash_with(password, pepper).await?;
        store_hash(pool, id, &fresh).await?;
    }
    Ok(User {
        id,
        username,
        email,
        is_staff,
        is_superuser,
    })
}

/// A login by username or email, behind the login throttle: the
/// accounts' own `POST /auth/login` for an app that answers logins its
/// own way (a JSON API's `POST /users/login`), with no session made (make
/// a token: [`NewToken`](crate::NewToken)).
///
/// As [`authenticate`] (one [`AuthError::BadCredentials`] for every
/// failure, in the same time), after counting the attempt: at most
/// `AUTH_LOGIN_FAILURES` attempts per account and `client_ip` within
/// `AUTH_LOGIN_WINDOW`, then `429` ([`AuthError::Throttled`], with
/// `Retry-After`); a success forgets the count. The count is kept on
/// the account the login finds (else on the login as given), so its
/// name, its email and the built-in `POST /auth/login` share one budget:
/// an attacker gets no more guesses by switching between them.
///
/// ```no_run
/// # async fn handler(db: &tern_data::Database, accounts: &tern_auth::Accounts, passwords: &tern_auth::Passwords, ip: std::net::IpAddr) -> Result<(), tern_auth::AuthError> {
/// let user = tern_auth::login(db.pool(), accounts, passwords, ip, "ada@example.com", "correct horse battery").await?;
/// let token = tern_auth::NewToken::new(&user, "web").create(db.pool(), accounts).await?;
/// # Ok(()) }
/// ```
pub async fn login(
    pool: &Pool,
    accounts: &Accounts,
    passwords: &Passwords,
    client_ip: IpAddr,
    login: &str,
    password: &str,
) -> Result<User, AuthError> {
    password::bounded(password)?;
    let found = lookup(pool, login, true).await?;
    // The built-in login counts by the username's key: the same one.
    let counted = found.as_ref().map_or_else(|| key(login), |f| key(&f.1));
    throttle::attempt(pool, accounts, &counted, client_ip).await?;
    let user = check(pool, passwords, found, password).await?;
    throttle::succeeded(pool, accounts, &counted, client_ip).await?;
    Ok(user)
}

/// The active user named `username` (without regard to case), if any:
/// `Ok(None)` for no such user, an inactive one, or a name that cannot
/// be one.
pub async fn find_user(pool: &Pool, username: &str) -> Result<Option<User>, AuthError> {
    let Ok((_, username_key)) = normalize(username) else {
        return Ok(None);
    };
    let sql = "SELECT id, username, email, is_staff, is_superuser FROM tern_users \
               WHERE username_key = $1 AND is_active";
    let row: Option<(i64, String, Option<String>, bool, bool)> = with_pool!(pool, p => {
        tern_data::sqlx::query_as(sql).bind(&username_key).fetch_optional(p).await?
    });
    Ok(
        row.map(|(id, username, email, is_staff, is_superuser)| User {
            id,
            username,
            email,
            is_staff,
            is_superuser,
        }),
    )
}

/// A change to a user's name, email or rights (a password has
/// [`set_password`]): only what is set changes.
///
/// The new values are checked as [`NewUser`]'s (`400` when malformed)
/// and must be free: `409` when another account has the name or the
/// email in any case; the user's own (`Ada` for `ada`) is no conflict.
/// `404` when there is no user `id`. Making a user a superuser makes
/// them staff; taking staff away takes superuser away too.
/// Deactivating a user ([`active(false)`](Self::active)) ends their
/// sessions in the database store (an inactive user's sessions and API
/// tokens are refused at once in any case; deleting them keeps a later
/// reactivation from bringing them back).
///
/// With the database store, sessions see the change at once; with
/// `AUTH_STORE=redis` a session keeps its user as at login (name,
/// staff, superuser, active): end the user's sessions
/// ([`end_all_sessions`](crate::end_all_sessions)) after such a change.
///
/// ```no_run
/// # async fn rename(db: &tern_data::Database, user: tern_auth::User) -> Result<(), tern_auth::AuthError> {
/// let user = tern_auth::UserChange::new(user.id)
///     .username("Ada")
///     .email("ada@example.org")
///     .staff(true)
///     .apply(db.pool())
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct UserChange<'a> {
    id: i64,
    username: Option<&'a str>,
    email: Option<&'a str>,
    staff: Option<bool>,
    superuser: Option<bool>,
    active: Option<bool>,
}

impl<'a> UserChange<'a> {
    /// A change to user `id`: nothing yet.
    pub fn new(id: i64) -> Self {
        UserChange {
            id,
            username: None,
            email: None,
            staff: None,
            superuser: None,
            active: None,
        }
    }

    /// A new username (trimmed, kept as given).
    pub fn username(mut self, username: &'a str) -> Self {
        self.username = Some(username);
        self
    }

    /// A new email address (trimmed, kept as given).
    pub fn email(mut self, email: &'a str) -> Self {
        self.email = Some(email);
        self
    }

    /// Whether the user is staff; `false` also ends superuser rights
    /// (unless [`superuser(true)`](Self::superuser) is in the same change).
    pub fn staff(mut self, staff: bool) -> Self {
        self.staff = Some(staff);
        self
    }

    /// Whether the user is a superuser; `true` also makes the user staff.
    pub fn superuser(mut self, superuser: bool) -> Self {
        self.superuser = Some(superuser);
        self
    }

    /// Whether the account is active: an inactive one cannot log in, and
    /// its sessions and API tokens are refused (`false` deletes its
    /// sessions in the database store).
    pub fn active(mut self, active: bool) -> Self {
        self.active = Some(active);
        self
    }

    /// Makes the change: the user as it is now, on the pool or in the
    /// request's transaction (`Conn`).
    ///
    /// With the Redis session store (`AUTH_STORE=redis`) a session keeps
    /// the name and flags it was made with: after taking a right away
    /// (staff, superuser), or after a rename, end the user's sessions
    /// ([`end_all_sessions`](crate::end_all_sessions)) for it to count at
    /// once, as the admin's users page does. The database store reads
    /// them afresh on every request.
    pub async fn apply<'c>(self, on: impl Into<Conn<'c>>) -> Result<User, AuthError> {
        let mut on = on.into();
        let (username, username_key) = self.username.map(normalize).transpose()?.unzip();
        let (email, email_key) = self.email.map(normalize_email).transpose()?.unzip();
        // Superuser implies staff (and wins over `staff(false)` in the
        // same change); no staff means no superuser.
        let (staff, superuser) = match (self.staff, self.superuser) {
            (_, Some(true)) => (Some(true), Some(true)),
            (Some(false), _) => (Some(false), Some(false)),
            other => other,
        };
        let sql = "UPDATE tern_users SET \
                   username = COALESCE($1, username), username_key = COALESCE($2, username_key), \
                   email = COALESCE($3, email), email_key = COALESCE($4, email_key), \
                   is_staff = COALESCE($5, is_staff), is_superuser = COALESCE($6, is_superuser), \
                   is_active = COALESCE($7, is_active) \
                   WHERE id = $8 RETURNING id, username, email, is_staff, is_superuser";
        let row: Option<(i64, String, Option<String>, bool, bool)> = query(sql)
            .bind(username)
            .bind(username_key)
            .bind(email)
            .bind(email_key)
            .bind(staff)
            .bind(superuser)
            .bind(self.active)
            .bind(self.id)
            .fetch_optional(&mut on)
            .await?;
        let Some((id, username, email, is_staff, is_superuser)) = row else {
            return Err(AuthError::NotFound(format!("there is no user {}", self.id)));
        };
        if self.active == Some(false) {
            let sql = "DELETE FROM tern_sessions WHERE user_id = $1";
            query(sql).bind(id).execute(&mut on).await?;
        }
        Ok(User {
            id,
            username,
            email,
            is_staff,
            is_superuser,
        })
    }
}
