//! `tern.toml`: Tern's settings at the top of the file, in any spelling
//! of their names (`addr`, `tern_addr`, `TERN_ADDR`), read as the
//! variables they name; the tables (`[bookmarks]`) are the app's own
//! settings. An unknown key is refused with the closest known one.

use std::{collections::BTreeMap, path::Path};

use super::{
    load::{KNOWN, UNPREFIXED},
    ConfigError, FileTables,
};

/// The setting a `tern.toml` key names, in any case: `addr`, `tern_addr`
/// and `TERN_ADDR` are `TERN_ADDR`; `secret_key` is `SECRET_KEY`.
/// `TERN_CONFIG` names the file and means nothing inside it.
fn file_setting(key: &str) -> Option<String> {
    let upper = key.to_ascii_uppercase();
    let name = if KNOWN.contains(&upper.as_str()) || UNPREFIXED.contains(&upper.as_str()) {
        upper
    } else {
        format!("TERN_{upper}")
    };
    let known = KNOWN.contains(&name.as_str()) || UNPREFIXED.contains(&name.as_str());
    (known && name != "TERN_CONFIG").then_some(name)
}

/// The known key nearest to `key` (at most 3 edits, and fewer than a
/// third of its length), written in `key`'s style: lower or upper case,
/// with or without `TERN_`.
fn closest_file_key(key: &str) -> Option<String> {
    let upper = key.to_ascii_uppercase();
    let (prefixed, short) = match upper.strip_prefix("TERN_") {
        Some(short) => (true, short),
        None => (false, upper.as_str()),
    };
    let (best_prefixed, best, distance) = KNOWN
        .iter()
        .filter(|n| **n != "TERN_CONFIG")
        .map(|n| (true, &n["TERN_".len()..]))
        .chain(UNPREFIXED.iter().map(|n| (false, *n)))
        .map(|(p, candidate)| (p, candidate, edit_distance(short, candidate)))
        .min_by_key(|(_, _, d)| *d)?;
    if distance > 3 || distance * 3 >= best.len() {
        return None;
    }
    let written = if best_prefixed && prefixed {
        format!("TERN_{best}")
    } else {
        best.to_owned()
    };
    Some(if key.bytes().any(|b| b.is_ascii_lowercase()) {
        written.to_ascii_lowercase()
    } else {
        written
    })
}

/// Levenshtein distance (insertions, deletions, substitutions), in bytes.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b = b.as_bytes();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.bytes().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

/// Reads a `tern.toml`: Tern's settings, and the tables (`[bookmarks]`)
/// that hold the app's own settings.
pub(super) fn read_toml(
    path: &Path,
    setting: &str,
) -> Result<(BTreeMap<String, String>, FileTables), ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError::new(setting, format!("cannot read {}: {e}", path.display())))?;
    let table: toml::Table = text.parse().map_err(|e| {
        ConfigError::new(
            setting,
            format!("{} is not valid TOML: {e}", path.display()),
        )
    })?;
    let mut out = BTreeMap::new();
    // Setting → the key that set it, to refuse a second key for it.
    let mut keys: BTreeMap<String, String> = BTreeMap::new();
    let mut tables = FileTables {
        path: path.to_owned(),
        tables: BTreeMap::new(),
    };
    for (key, value) in table {
        // A table that is not one of Tern's settings holds the app's own
        // settings; the app checks its name when it is built.
        let value = match value {
            toml::Value::Table(t) if file_setting(&key).is_none() => {
                tables.tables.insert(key, t);
                continue;
            }
            value => value,
        };
        // An unknown key is a typo (or a setting of another tool): ignoring
        // it would leave the setting at its default without a word.
        let Some(name) = file_setting(&key) else {
            let hint = match closest_file_key(&key) {
                Some(known) => format!("did you mean `{known}`?"),
                None => format!(
                    "the keys are the settings of docs/configuration.md, in lower case \
                     without `TERN_` if you like: {}",
                    KNOWN
                        .iter()
                        .filter(|n| **n != "TERN_CONFIG")
                        .map(|n| n["TERN_".len()..].to_ascii_lowercase())
                        .chain(UNPREFIXED.iter().map(|n| n.to_ascii_lowercase()))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            return Err(ConfigError::new(
                setting,
                format!("unknown key `{key}` in {}; {hint}", path.display()),
            ));
        };
        let value = match value {
            toml::Value::String(s) => s,
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            toml::Value::Array(items) => items
                .iter()
                .map(|i| {
                    i.as_str()
                        .map(str::to_owned)
                        .unwrap_or_else(|| i.to_string())
                })
                .collect::<Vec<_>>()
                .join(","),
            other => {
                return Err(ConfigError::new(
                    &name,
                    format!(
                        "in {}: `{other}` is not a string, number, boolean or list",
                        path.display()
                    ),
                ))
            }
        };
        if let Some(first) = keys.insert(name.clone(), key.clone()) {
            return Err(ConfigError::new(
                &name,
                format!(
                    "is set twice in {}, by `{first}` and by `{key}`",
                    path.display()
                ),
            ));
        }
        out.insert(name, value);
    }
    Ok((out, tables))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Config, RuntimeMode};

    #[test]
    fn toml_file() {
        let dir = std::env::temp_dir().join(format!("tern-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("tmp");
        let path = dir.join("tern.toml");
        std::fs::write(
            &path,
            "addr = \"0.0.0.0:8080\"\nworkers = 3\nALLOWED_HOSTS = [\"a.com\", \".b.com\"]\n",
        )
        .expect("write");
        let c = Config::from_settings(&read_toml(&path, "TERN_CONFIG").expect("toml").0)
            .expect("config");
        assert_eq!(c.addr.port(), 8080);
        assert_eq!(c.workers, 3);
        assert_eq!(c.allowed_hosts.len(), 2);
    }

    /// Writes `text` to a file of its own and reads it as `tern.toml`.
    fn toml_text(name: &str, text: &str) -> Result<Config, ConfigError> {
        let dir = std::env::temp_dir().join(format!("tern-config-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("tmp");
        let path = dir.join("tern.toml");
        std::fs::write(&path, text).expect("write");
        let result = read_toml(&path, "tern.toml").and_then(|(s, _)| Config::from_settings(&s));
        let _ = std::fs::remove_dir_all(&dir);
        result
    }

    #[test]
    fn toml_keys_in_every_spelling_load() {
        let c = toml_text(
            "spellings",
            "access_log = true\nmax_body_bytes = 10\nTERN_WORKERS = 2\ntern_runtime = \"per-core\"\n\
             reuse_port = true\nsecret_key = \"q7Vv2l1Xb9kP0sYz4TgH8mN3cR6wE5uJ\"\n\
             TRUSTED_PROXIES = [\"10.0.0.0/8\"]\n",
        )
        .expect("a correct file loads");
        assert!(c.access_log);
        assert_eq!(c.limits.max_body_bytes, 10);
        assert_eq!(c.workers, 2);
        assert_eq!(c.runtime, RuntimeMode::PerCore);
        assert!(c.reuse_port);
        assert!(c.secret_key.is_some());
        assert_eq!(c.trusted_proxies.len(), 1);
    }

    #[test]
    fn toml_unknown_keys_are_refused_naming_the_closest() {
        for (text, message) in [
            ("acces_log = true\n", "unknown key `acces_log` in "),
            ("acces_log = true\n", "did you mean `access_log`?"),
            ("max_body_byts = 10\n", "did you mean `max_body_bytes`?"),
            (
                "ALOWED_HOSTS = \"a.com\"\n",
                "did you mean `ALLOWED_HOSTS`?",
            ),
            ("TERN_WORKRES = 2\n", "did you mean `TERN_WORKERS`?"),
            ("tern_secret_key = \"x\"\n", "did you mean `secret_key`?"),
            // Nothing close: the known keys are listed.
            ("colour = \"blue\"\n", "the keys are the settings"),
            ("config = \"other.toml\"\n", "unknown key `config`"),
        ] {
            let err = toml_text("unknown", text).expect_err(text);
            assert_eq!(err.setting(), "tern.toml", "{text}");
            assert!(err.to_string().contains(message), "{text}: {err}");
        }
        // Two spellings of one setting: which one wins would be a guess.
        let err = toml_text(
            "twice",
            "addr = \"127.0.0.1:1\"\nTERN_ADDR = \"127.0.0.1:2\"\n",
        )
        .expect_err("twice");
        assert_eq!(err.setting(), "TERN_ADDR");
        assert!(err.to_string().contains("set twice"), "{err}");
        // A known key with a value of the wrong kind names the setting.
        let err = toml_text("kind", "workers = 1.5\n").expect_err("float");
        assert_eq!(err.setting(), "TERN_WORKERS");
    }

    #[test]
    fn edit_distances() {
        for (a, b, d) in [
            ("", "", 0),
            ("abc", "", 3),
            ("", "abc", 3),
            ("ACCES_LOG", "ACCESS_LOG", 1),
            ("kitten", "sitting", 3),
            ("WORKRES", "WORKERS", 2),
        ] {
            assert_eq!(edit_distance(a, b), d, "{a} {b}");
            assert_eq!(edit_distance(b, a), d, "{b} {a}");
        }
    }
}
