//! serde's attributes, read as serde's derive reads them: the names a
//! field or variant has on the wire, and the words (`default`, `skip`,
//! `with`) that change how it is read.

use syn::{meta::ParseNestedMeta, Attribute, Expr, LitStr};

/// `#[serde(rename_all = "...")]` of the container.
pub(super) fn rename_all(attrs: &[Attribute]) -> syn::Result<Option<String>> {
    serde_string(attrs, "rename_all")
}

/// The string value of `#[serde(key = "...")]`, if given (the last
/// one, as serde reads it).
pub(super) fn serde_string(attrs: &[Attribute], key: &str) -> syn::Result<Option<String>> {
    Ok(serde_strings(attrs, key)?.pop())
}

/// Whether `#[serde(word)]` (or `#[serde(word = ..)]`) is given.
pub(super) fn has_serde_word(attrs: &[Attribute], word: &str) -> bool {
    let mut found = false;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident(word) {
                found = true;
            }
            skip_value(&meta)
        });
    }
    found
}

/// Every string value of `#[serde(key = "...")]` (`alias` may repeat);
/// other keys, and a `key(...)` form, are skipped.
pub(super) fn serde_strings(attrs: &[Attribute], key: &str) -> syn::Result<Vec<String>> {
    let mut found = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident(key) {
                if let Ok(value) = meta.value() {
                    let lit: LitStr = value.parse()?;
                    found.push(lit.value());
                }
            } else {
                skip_value(&meta)?;
            }
            Ok(())
        })?;
    }
    Ok(found)
}

/// Skips what follows a serde key this reader does not want: its
/// `= value`, or its `(...)`.
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if let Ok(value) = meta.value() {
        let _: Expr = value.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let _ = meta.parse_nested_meta(|_| Ok(()));
    }
    Ok(())
}

/// serde's `rename_all` on a field name (snake_case in Rust).
pub(super) fn apply_field_rule(rule: Option<&str>, field: &str) -> String {
    match rule {
        Some("lowercase") | Some("snake_case") | None => field.to_owned(),
        Some("UPPERCASE") | Some("SCREAMING_SNAKE_CASE") => field.to_ascii_uppercase(),
        Some("PascalCase") => pascal(field),
        Some("camelCase") => with_first(&pascal(field), char::to_ascii_lowercase),
        Some("kebab-case") => field.replace('_', "-"),
        Some("SCREAMING-KEBAB-CASE") => field.replace('_', "-").to_ascii_uppercase(),
        Some(_) => field.to_owned(),
    }
}

/// serde's `rename_all` on a variant name (PascalCase in Rust).
pub(super) fn apply_variant_rule(rule: Option<&str>, variant: &str) -> String {
    let snake = || {
        let mut out = String::new();
        for (i, c) in variant.char_indices() {
            if i > 0 && c.is_uppercase() {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        }
        out
    };
    match rule {
        None | Some("PascalCase") => variant.to_owned(),
        Some("lowercase") => variant.to_ascii_lowercase(),
        Some("UPPERCASE") => variant.to_ascii_uppercase(),
        Some("camelCase") => with_first(variant, char::to_ascii_lowercase),
        Some("snake_case") => snake(),
        Some("SCREAMING_SNAKE_CASE") => snake().to_ascii_uppercase(),
        Some("kebab-case") => snake().replace('_', "-"),
        Some("SCREAMING-KEBAB-CASE") => snake().replace('_', "-").to_ascii_uppercase(),
        Some(_) => variant.to_owned(),
    }
}

fn pascal(snake: &str) -> String {
    snake
        .split('_')
        .map(|part| with_first(part, char::to_ascii_uppercase))
        .collect()
}

/// `word` with its first letter changed by `case`.
fn with_first(word: &str, case: fn(&char) -> char) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => case(&first).to_string() + chars.as_str(),
        None => String::new(),
    }
}
