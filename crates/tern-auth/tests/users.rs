//! Users and the public password API, on SQLite and PostgreSQL: names
//! kept as given and compared without regard to case, optional unique
//! emails, `authenticate` by username or email, one failure for a wrong
//! password and an unknown login, rehash on login, migration 0002 over
//! rows made under 0001, `find_user` and `UserChange` (issue 28);
//! superusers, and `UserChange`'s rights and deactivation (issue 29).
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::{Duration, Instant};

use argon2::{password_hash::SaltString, Algorithm, Argon2, Params, PasswordHasher as _, Version};
use tern_auth::{create_user, find_user, password, AuthError, NewUser, Passwords, UserChange};
use tern_data::{sqlx, testing::fresh, with_pool, Backend, Database, Migrations};

const PASSWORD: &str = "correct horse battery";

/// A database of `backend` with the accounts' tables, or `None` (skipped)
/// for PostgreSQL without `POSTGRES_URL`.
async fn database(backend: Backend) -> Option<Database> {
    let url = fresh(backend).await?;
    let db = Database::from_url(&url).unwrap();
    db.migrate(&tern_auth::MIGRATIONS).await.unwrap();
    Some(db)
}

async fn stored_hash(db: &Database, id: i64) -> String {
    let sql = "SELECT password_hash FROM tern_users WHERE id = $1";
    with_pool!(db.pool(), p => {
        sqlx::query_scalar(sql).bind(id).fetch_one(p).await.unwrap()
    })
}

fn conflict(result: Result<tern_auth::User, AuthError>) -> bool {
    matches!(result, Err(AuthError::Data(e)) if e.status() == 409)
}

#[tokio::test]
async fn names_are_kept_as_given_and_compared_without_case() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(db) = database(backend).await else {
            continue;
        };
        let passwords = Passwords::default();
        let pool = db.pool();
        let alice = create_user(pool, &passwords, "  Alice ", PASSWORD, false)
            .await
            .unwrap();
        assert_eq!(alice.username, "Alice", "{backend:?}");
        assert_eq!(alice.email, None);
        // Taken in any case, with or without an email.
        for other in ["alice", "ALICE", " aLiCe"] {
            let again = create_user(pool, &passwords, other, PASSWORD, false).await;
            assert!(conflict(again), "{backend:?}: {other}");
        }
        let again = NewUser::new("alice", PASSWORD)
            .email("someone@example.com")
            .create(pool, &passwords)
            .await;
        assert!(conflict(again), "{backend:?}");
        // Logs in by any case; the name answered is the stored one.
        for login in ["alice", "Alice", "ALICE", " alice "] {
            let user = password::authenticate(pool, &passwords, login, PASSWORD)
                .await
                .unwrap_or_else(|e| panic!("{backend:?}: {login}: {e}"));
            assert_eq!((user.id, user.username.as_str()), (alice.id, "Alice"));
        }
        // Not only ASCII: Unicode's lower case, the same on both databases.
        create_user(pool, &passwords, "Ærø", PASSWORD, false)
            .await
            .unwrap();
        assert!(conflict(
            create_user(pool, &passwords, "ærø", PASSWORD, false).await
        ));
        let user = password::authenticate(pool, &passwords, "ÆRØ", PASSWORD)
            .await
            .unwrap();
        assert_eq!(user.username, "Ærø");
    }
}

#[tokio::test]
async fn an_email_is_optional_unique_and_logs_in() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(db) = database(backend).await else {
            continue;
        };
        let passwords = Passwords::default();
        let pool = db.pool();
        let ada = NewUser::new("ada", PASSWORD)
            .email("  Ada.Lovelace@Example.com ")
            .staff(true)
            .create(pool, &passwords)
            .await
            .unwrap();
        assert_eq!(ada.email.as_deref(), Some("Ada.Lovelace@Example.com"));
        assert!(ada.is_staff);
        // Several accounts without one.
        create_user(pool, &passwords, "bob", PASSWORD, false)
            .await
            .unwrap();
        create_user(pool, &passwords, "carol", PASSWORD, false)
            .await
            .unwrap();
        // Unique without regard to case.
        let taken = NewUser::new("dave", PASSWORD)
            .email("ada.lovelace@example.COM")
            .create(pool, &passwords)
            .await;
        assert!(conflict(taken), "{backend:?}");
        // Malformed: refused before anything is stored, with a clear error.
        for bad in [
            "ada.example.com",
            "@example.com",
            "ada@",
            "a da@example.com",
            "",
        ] {
            let err = NewUser::new("erin", PASSWORD)
                .email(bad)
                .create(pool, &passwords)
                .await
                .unwrap_err();
            assert!(matches!(err, AuthError::BadRequest(_)), "{bad}: {err}");
            assert!(err.to_string().contains("not an email address"), "{err}");
        }
        create_user(pool, &passwords, "erin", PASSWORD, false)
            .await
            .unwrap();
        // By email, in any case, trimmed.
        for login in ["ada.lovelace@example.com", " ADA.LOVELACE@EXAMPLE.COM"] {
            let user = password::authenticate(pool, &passwords, login, PASSWORD)
                .await
                .unwrap_or_else(|e| panic!("{backend:?}: {login}: {e}"));
            assert_eq!(user, ada);
        }
        // A username that is another account's email finds the username.
        let named = create_user(
            pool,
            &passwords,
            "Ada.Lovelace@example.com",
            "another password",
            false,
        )
        .await
        .unwrap();
        let user = password::authenticate(
            pool,
            &passwords,
            "ada.lovelace@example.com",
            "another password",
        )
        .await
        .unwrap();
        assert_eq!(user.id, named.id);
        assert!(matches!(
            password::authenticate(pool, &passwords, "ada.lovelace@example.com", PASSWORD).await,
            Err(AuthError::BadCredentials)
        ));
    }
}

#[tokio::test]
async fn a_wrong_password_and_an_unknown_login_fail_alike() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(db) = database(backend).await else {
            continue;
        };
        let passwords = Passwords::default();
        let pool = db.pool();
        NewUser::new("alice", PASSWORD)
            .email("alice@example.com")
            .create(pool, &passwords)
            .await
            .unwrap();
        // Warm the hashers (their memory is allocated at the first hash).
        let passwords = &passwords;
        password::verify_nobody(passwords, "warm").await.unwrap();
        let attempt = |login: &'static str, password: &'static str| async move {
            let start = Instant::now();
            let err = password::authenticate(pool, passwords, login, password)
                .await
                .unwrap_err();
            (err, start.elapsed())
        };
        let mut wrong = Duration::MAX;
        let mut unknown = Duration::MAX;
        for _ in 0..3 {
            for (login, pw, known) in [
                ("alice", "a wrong password", true),
                ("alice@example.com", "a wrong password", true),
                ("nobody", PASSWORD, false),
                ("nobody@example.com", PASSWORD, false),
            ] {
                let (err, took) = attempt(login, pw).await;
                assert!(matches!(err, AuthError::BadCredentials), "{login}: {err}");
                assert_eq!(err.to_string(), "wrong username or password");
                let best = if known { &mut wrong } else { &mut unknown };
                *best = (*best).min(took);
            }
        }
        // An unknown login is hashed too (against the decoy): not a
        // fraction of a wrong password's time.
        assert!(
            unknown * 3 >= wrong,
            "{backend:?}: unknown {unknown:?}, wrong password {wrong:?}"
        );
        // An inactive account: the same answer, even with its password.
        let sql = "UPDATE tern_users SET is_active = FALSE WHERE username_key = 'alice'";
        with_pool!(pool, p => { sqlx::query(sql).execute(p).await.unwrap().rows_affected() });
        let err = password::authenticate(pool, passwords, "alice", PASSWORD)
            .await
            .unwrap_err();
        assert!(matches!(err, AuthError::BadCredentials), "{err}");
    }
}

/// A hash made with weaker parameters than today's: `verify` flags it,
/// `rehash` makes a new one, and `authenticate` stores the new one.
#[tokio::test]
async fn weaker_hashes_are_flagged_and_rehashed_at_login() {
    let weak = |pw: &str| {
        let salt = SaltString::generate(&mut rand::rngs::OsRng);
        Argon2::new(
            Algorithm::Argon2id,
            Version::V0x13,
            Params::new(8192, 1, 1, None).unwrap(),
        )
        .hash_password(pw.as_bytes(), &salt)
        .unwrap()
        .to_string()
    };
    let passwords = Passwords::default();
    let old = weak(PASSWORD);
    let verdict = password::verify(&passwords, PASSWORD, &old).await.unwrap();
    assert!(verdict.matches() && verdict.needs_rehash());
    let fresh = password::rehash(&passwords, PASSWORD, verdict)
        .await
        .unwrap()
        .unwrap();
    assert!(
        fresh.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
        "{fresh}"
    );
    let again = password::verify(&passwords, PASSWORD, &fresh)
        .await
        .unwrap();
    assert!(again.matches() && !again.needs_rehash());
    assert_eq!(
        password::rehash(&passwords, PASSWORD, again).await.unwrap(),
        None
    );
    // A wrong password never asks for a rehash.
    let wrong = password::verify(&passwords, "wrong", &old).await.unwrap();
    assert!(!wrong.matches() && !wrong.needs_rehash());
    assert_eq!(
        password::rehash(&passwords, "wrong", wrong).await.unwrap(),
        None
    );
    // New passwords follow the rules.
    assert!(matches!(
        password::hash(&passwords, "short").await,
        Err(AuthError::Password(_))
    ));

    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(db) = database(backend).await else {
            continue;
        };
        let pool = db.pool();
        let user = NewUser::new("Alice", PASSWORD)
            .email("alice@example.com")
            .create(pool, &passwords)
            .await
            .unwrap();
        let sql = "UPDATE tern_users SET password_hash = $1 WHERE id = $2";
        let old = weak(PASSWORD);
        with_pool!(pool, p => {
            sqlx::query(sql).bind(&old).bind(user.id).execute(p).await.unwrap().rows_affected()
        });
        // A wrong password leaves it.
        password::authenticate(pool, &passwords, "alice", "wrong password")
            .await
            .unwrap_err();
        assert_eq!(stored_hash(&db, user.id).await, old);
        // The right one, by email, replaces it.
        password::authenticate(pool, &passwords, "Alice@Example.com", PASSWORD)
            .await
            .unwrap();
        let now = stored_hash(&db, user.id).await;
        assert!(
            now.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
            "{backend:?}: {now}"
        );
        assert!(password::verify(&passwords, PASSWORD, &now)
            .await
            .unwrap()
            .matches());
    }
}

#[tokio::test]
async fn users_are_found_by_name_in_any_case() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(db) = database(backend).await else {
            continue;
        };
        let passwords = Passwords::default();
        let pool = db.pool();
        let ada = NewUser::new("Ada", PASSWORD)
            .email("ada@example.com")
            .create(pool, &passwords)
            .await
            .unwrap();
        for name in ["Ada", "ada", " ADA "] {
            let found = find_user(pool, name).await.unwrap();
            assert_eq!(found.as_ref(), Some(&ada), "{backend:?}: {name}");
        }
        // Not by email; unknown and impossible names are none.
        for name in ["ada@example.com", "bob", "", "   ", &"a".repeat(151)] {
            assert_eq!(find_user(pool, name).await.unwrap(), None, "{name}");
        }
        // An inactive account is not found.
        let sql = "UPDATE tern_users SET is_active = FALSE WHERE id = $1";
        with_pool!(pool, p => { sqlx::query(sql).bind(ada.id).execute(p).await.unwrap().rows_affected() });
        assert_eq!(find_user(pool, "ada").await.unwrap(), None);
    }
}

#[tokio::test]
async fn a_user_changes_name_and_email_and_conflicts_are_409() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(db) = database(backend).await else {
            continue;
        };
        let passwords = Passwords::default();
        let pool = db.pool();
        let ada = NewUser::new("ada", PASSWORD)
            .email("ada@example.com")
            .create(pool, &passwords)
            .await
            .unwrap();
        let bob = NewUser::new("Bob", PASSWORD)
            .email("bob@example.com")
            .create(pool, &passwords)
            .await
            .unwrap();
        // Nothing to change: the user as is.
        assert_eq!(UserChange::new(ada.id).apply(pool).await.unwrap(), ada);
        // A rename: kept as given (trimmed), logs in by it, the old name
        // is free.
        let renamed = UserChange::new(ada.id)
            .username(" Ada Lovelace ")
            .apply(pool)
            .await
            .unwrap();
        assert_eq!(renamed.username, "Ada Lovelace", "{backend:?}");
        assert_eq!(renamed.email.as_deref(), Some("ada@example.com"));
        let user = password::authenticate(pool, &passwords, "ada lovelace", PASSWORD)
            .await
            .unwrap();
        assert_eq!(user.id, ada.id);
        assert_eq!(find_user(pool, "ada").await.unwrap(), None);
        // Its own name and email, in another case: no conflict.
        let same = UserChange::new(ada.id)
            .username("ADA LOVELACE")
            .email("ADA@example.com")
            .apply(pool)
            .await
            .unwrap();
        assert_eq!(
            (same.username.as_str(), same.email.as_deref()),
            ("ADA LOVELACE", Some("ADA@example.com"))
        );
        // A new email logs in; the old one does not.
        let moved = UserChange::new(ada.id)
            .email("lovelace@example.org")
            .apply(pool)
            .await
            .unwrap();
        assert_eq!(moved.email.as_deref(), Some("lovelace@example.org"));
        assert_eq!(moved.username, "ADA LOVELACE");
        let by_email = password::authenticate(pool, &passwords, "Lovelace@Example.org", PASSWORD)
            .await
            .unwrap();
        assert_eq!(by_email.id, ada.id);
        assert!(matches!(
            password::authenticate(pool, &passwords, "ada@example.com", PASSWORD).await,
            Err(AuthError::BadCredentials)
        ));
        // Another user's name or email, in any case: 409, and nothing
        // changes (not even the other field of the change).
        for change in [
            UserChange::new(ada.id).username("bob"),
            UserChange::new(ada.id).username(" BOB "),
            UserChange::new(ada.id).email("Bob@Example.com"),
            UserChange::new(ada.id)
                .username("Ada Two")
                .email("bob@example.com"),
        ] {
            let shown = format!("{change:?}");
            assert!(conflict(change.apply(pool).await), "{backend:?}: {shown}");
        }
        assert_eq!(
            find_user(pool, "ada lovelace").await.unwrap(),
            Some(moved.clone())
        );
        assert_eq!(find_user(pool, "bob").await.unwrap(), Some(bob));
        // Malformed: 400; no such user: 404.
        for change in [
            UserChange::new(ada.id).username("  "),
            UserChange::new(ada.id).email("not an email"),
        ] {
            let err = change.apply(pool).await.unwrap_err();
            assert!(matches!(err, AuthError::BadRequest(_)), "{err:?}");
        }
        let err = UserChange::new(ada.id + 1000)
            .username("ghost")
            .apply(pool)
            .await
            .unwrap_err();
        assert!(matches!(err, AuthError::NotFound(_)), "{err:?}");
        assert_eq!(tern::IntoResponse::into_response(err).status(), 404);
        assert_eq!(find_user(pool, "ada lovelace").await.unwrap(), Some(moved));
    }
}

/// Migration 0001 alone, as apps ran it before 0002 existed (the same
/// files, so the same checksums).
static FIRST: Migrations = Migrations::new(&[
    (
        "0001_accounts.sqlite.sql",
        include_str!("../migrations/0001_accounts.sqlite.sql"),
    ),
    (
        "0001_accounts.postgres.sql",
        include_str!("../migrations/0001_accounts.postgres.sql"),
    ),
])
.with_table("_tern_auth_migrations");

#[tokio::test]
async fn migration_0002_keeps_accounts_made_under_0001() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(url) = fresh(backend).await else {
            continue;
        };
        let db = Database::from_url(&url).unwrap();
        db.migrate(&FIRST).await.unwrap();
        let passwords = Passwords::default();
        // As 0001's `create_user` stored them: lower case.
        let hash = password::hash(&passwords, PASSWORD).await.unwrap();
        let sql =
            "INSERT INTO tern_users (username, password_hash, is_staff, is_active, created_at) \
                   VALUES ($1, $2, $3, TRUE, 0) RETURNING id";
        let mut ids = Vec::new();
        for (name, staff) in [("ada", true), ("bob", false)] {
            let id: i64 = with_pool!(db.pool(), p => {
                sqlx::query_scalar(sql).bind(name).bind(&hash).bind(staff).fetch_one(p).await.unwrap()
            });
            ids.push(id);
        }
        db.migrate(&tern_auth::MIGRATIONS).await.unwrap();
        let pool = db.pool();
        for (login, id) in [("ada", ids[0]), ("Ada", ids[0]), ("BOB", ids[1])] {
            let user = password::authenticate(pool, &passwords, login, PASSWORD)
                .await
                .unwrap_or_else(|e| panic!("{backend:?}: {login}: {e}"));
            assert_eq!(user.id, id);
            assert_eq!(user.email, None);
            // 0004: staff made before superusers keep every right.
            assert_eq!(user.is_superuser, id == ids[0], "{backend:?}: {login}");
        }
        // Their names stay taken in any case; new accounts and emails work.
        assert!(conflict(
            create_user(pool, &passwords, "ADA", PASSWORD, false).await
        ));
        let carol = NewUser::new("Carol", PASSWORD)
            .email("carol@example.com")
            .create(pool, &passwords)
            .await
            .unwrap();
        let user = password::authenticate(pool, &passwords, "CAROL@example.com", PASSWORD)
            .await
            .unwrap();
        assert_eq!(user, carol);
    }
}

#[tokio::test]
async fn superusers_are_staff_and_rights_change() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let Some(db) = database(backend).await else {
            continue;
        };
        let passwords = Passwords::default();
        let pool = db.pool();
        // A superuser is staff, whatever `staff` says.
        let root = NewUser::new("root", PASSWORD)
            .staff(false)
            .superuser(true)
            .create(pool, &passwords)
            .await
            .unwrap();
        assert!(root.is_staff && root.is_superuser, "{backend:?}");
        let found = password::authenticate(pool, &passwords, "root", PASSWORD)
            .await
            .unwrap();
        assert_eq!(found, root, "{backend:?}");
        assert_eq!(find_user(pool, "ROOT").await.unwrap(), Some(root.clone()));
        let staff = NewUser::new("sam", PASSWORD)
            .staff(true)
            .create(pool, &passwords)
            .await
            .unwrap();
        assert!(staff.is_staff && !staff.is_superuser, "{backend:?}");
        let plain = create_user(pool, &passwords, "pat", PASSWORD, false)
            .await
            .unwrap();
        assert!(!plain.is_staff && !plain.is_superuser);

        // Superuser implies staff; no staff means no superuser.
        let up = UserChange::new(plain.id)
            .superuser(true)
            .apply(pool)
            .await
            .unwrap();
        assert!(up.is_staff && up.is_superuser, "{backend:?}");
        let down = UserChange::new(plain.id)
            .staff(false)
            .apply(pool)
            .await
            .unwrap();
        assert!(!down.is_staff && !down.is_superuser, "{backend:?}");
        let staff_only = UserChange::new(plain.id)
            .staff(true)
            .apply(pool)
            .await
            .unwrap();
        assert!(staff_only.is_staff && !staff_only.is_superuser);
        // Both in one change: superuser wins (and is staff).
        let both = UserChange::new(plain.id)
            .staff(false)
            .superuser(true)
            .apply(pool)
            .await
            .unwrap();
        assert!(both.is_staff && both.is_superuser, "{backend:?}");
        let staff_only = UserChange::new(plain.id)
            .superuser(false)
            .apply(pool)
            .await
            .unwrap();
        assert!(staff_only.is_staff && !staff_only.is_superuser);
        let demoted = UserChange::new(root.id)
            .superuser(false)
            .apply(pool)
            .await
            .unwrap();
        assert!(demoted.is_staff && !demoted.is_superuser, "{backend:?}");
        // A change of rights alone leaves the name and email.
        assert_eq!(demoted.username, "root");
        let found = password::authenticate(pool, &passwords, "pat", PASSWORD)
            .await
            .unwrap();
        assert_eq!(found, staff_only);

        // Deactivating: no login, not found, sessions deleted.
        let sql = "INSERT INTO tern_sessions (id_hash, user_id, csrf, created_at, last_seen) \
                   VALUES ($1, $2, 'c', 0, 0)";
        with_pool!(pool, p => {
            sqlx::query(sql).bind("h1").bind(staff.id).execute(p).await.unwrap();
            sqlx::query(sql).bind("h2").bind(plain.id).execute(p).await.unwrap();
        });
        UserChange::new(staff.id)
            .active(false)
            .apply(pool)
            .await
            .unwrap();
        let refused = password::authenticate(pool, &passwords, "sam", PASSWORD).await;
        assert!(
            matches!(refused, Err(AuthError::BadCredentials)),
            "{backend:?}: {refused:?}"
        );
        assert_eq!(find_user(pool, "sam").await.unwrap(), None);
        let sql = "SELECT user_id FROM tern_sessions ORDER BY user_id";
        let left: Vec<i64> = with_pool!(pool, p => {
            sqlx::query_scalar(sql).fetch_all(p).await.unwrap()
        });
        assert_eq!(
            left,
            vec![plain.id],
            "{backend:?}: only the other user's session stays"
        );
        // Active again: logs in, with no old session back.
        UserChange::new(staff.id)
            .active(true)
            .apply(pool)
            .await
            .unwrap();
        let back = password::authenticate(pool, &passwords, "sam", PASSWORD)
            .await
            .unwrap();
        assert_eq!(back, staff);

        // No such user: 404, whatever the change.
        let missing = UserChange::new(999_999).active(false).apply(pool).await;
        assert!(
            matches!(missing, Err(AuthError::NotFound(_))),
            "{backend:?}: {missing:?}"
        );
    }
}
