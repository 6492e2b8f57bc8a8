//! Field keys are process-wide (issue 26, ambient state): a second app
//! in the same process may install only keys that continue the
//! installed ones; other keys stop its start, naming the variable. Its
//! own test binary: the keyring is the process's.
#![allow(clippy::unwrap_used, missing_docs)]

use base64::Engine as _;
use tern::{App, Config};
use tern_data::FieldKeys;

fn key(byte: u8) -> String {
    base64::engine::general_purpose::STANDARD.encode([byte; 32])
}

/// Builds an app that loads `FIELD_ENCRYPTION_KEY` (or none).
fn start(keys: Option<String>) -> Result<(), String> {
    let settings: Vec<(&str, String)> = keys
        .into_iter()
        .map(|k| ("FIELD_ENCRYPTION_KEY", k))
        .collect();
    App::new()
        .settings::<FieldKeys>("field_encryption")
        .build_with(Config::from_settings(settings).unwrap())
        .map(drop)
        .map_err(|e| e.to_string())
}

#[test]
fn a_second_app_cannot_install_other_field_keys() {
    let k1 = format!("k1:{}", key(1));
    start(Some(k1.clone())).unwrap();
    // The same keys again: a second build of the app, one of its
    // commands.
    start(Some(k1.clone())).unwrap();

    // Another app's keys: the start fails, naming the variable, and the
    // installed keys stay.
    let table = [
        ("another key", format!("x1:{}", key(9))),
        ("the same id, other bytes", format!("k1:{}", key(7))),
        (
            "other keys, more than one",
            format!("x1:{},k9:{}", key(9), key(8)),
        ),
    ];
    for (case, keys) in &table {
        let err = start(Some(keys.clone())).unwrap_err();
        assert!(err.contains("FIELD_ENCRYPTION_KEY"), "{case}: {err}");
        assert!(err.contains("`k1`"), "{case}: {err}");
    }
    // `k1` still encrypts: a rotation from it is accepted.
    start(Some(format!("k2:{},k1:{}", key(2), key(1)))).unwrap();
    // Then `k2` is the one a successor must hold.
    let err = start(Some(k1.clone())).unwrap_err();
    assert!(err.contains("`k2`"), "{err}");
    start(Some(format!("k2:{}", key(2)))).unwrap();

    // An app without keys leaves the process without keys (closed: no
    // app can write encrypted fields), after which any keys install.
    start(None).unwrap();
    start(Some(format!("x1:{}", key(9)))).unwrap();
}
