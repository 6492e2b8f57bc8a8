//! The rules of a field, as written in `#[contract(...)]`: parsed into
//! [`Rule`]s (every field's mistakes reported at once, an unknown rule
//! with the closest known one).

use proc_macro2::Span;
use syn::{meta::ParseNestedMeta, spanned::Spanned, Attribute, Expr, LitStr};

use super::combine;

/// One rule of a field, as written in `#[contract(...)]`.
pub(super) enum Rule {
    Length {
        span: Span,
        min: Option<Expr>,
        max: Option<Expr>,
    },
    Range {
        span: Span,
        min: Option<Expr>,
        max: Option<Expr>,
    },
    Pattern {
        span: Span,
        source: LitStr,
    },
    Format {
        span: Span,
        name: &'static str,
    },
    Each {
        span: Span,
        rules: Vec<Rule>,
    },
    Custom {
        span: Span,
        check: syn::Path,
    },
}

const RULES: &str = "length, range, pattern, email, uri, uuid, date_time, each, custom";

/// Removes the field's `#[contract(...)]` attributes; their rules.
pub(super) fn take_rules(attrs: &mut Vec<Attribute>) -> syn::Result<Vec<Rule>> {
    let mut rules = Vec::new();
    let mut error: Option<syn::Error> = None;
    attrs.retain(|attr| {
        if !attr.path().is_ident("contract") {
            return true;
        }
        if let Err(e) = attr.parse_nested_meta(|meta| {
            rules.push(parse_rule(&meta)?);
            Ok(())
        }) {
            combine(&mut error, e);
        }
        false
    });
    match error {
        Some(e) => Err(e),
        None => Ok(rules),
    }
}

fn parse_rule(meta: &ParseNestedMeta<'_>) -> syn::Result<Rule> {
    let span = meta.path.span();
    let Some(name) = meta.path.get_ident().map(ToString::to_string) else {
        return Err(meta.error(format!("unknown contract rule; the rules are {RULES}")));
    };
    match name.as_str() {
        "length" | "range" => {
            let (mut min, mut max) = (None, None);
            meta.parse_nested_meta(|bound| {
                if bound.path.is_ident("min") {
                    min = Some(bound.value()?.parse::<Expr>()?);
                } else if bound.path.is_ident("max") {
                    max = Some(bound.value()?.parse::<Expr>()?);
                } else {
                    return Err(bound.error(format!("`{name}` takes `min = ..` and `max = ..`")));
                }
                Ok(())
            })?;
            if min.is_none() && max.is_none() {
                return Err(meta.error(format!(
                    "`{name}` needs a bound: `{name}(min = 1, max = 80)`"
                )));
            }
            Ok(if name == "length" {
                Rule::Length { span, min, max }
            } else {
                Rule::Range { span, min, max }
            })
        }
        "pattern" => {
            let source: LitStr = meta.value()?.parse()?;
            if let Err(e) = regex_syntax::Parser::new().parse(&source.value()) {
                return Err(syn::Error::new_spanned(
                    &source,
                    format!("this pattern is not a valid regular expression: {e}"),
                ));
            }
            Ok(Rule::Pattern { span, source })
        }
        "email" | "uri" | "uuid" | "date_time" => Ok(Rule::Format {
            span,
            name: match name.as_str() {
                "email" => "email",
                "uri" => "uri",
                "uuid" => "uuid",
                _ => "date_time",
            },
        }),
        "each" => {
            let mut rules = Vec::new();
            meta.parse_nested_meta(|inner| {
                rules.push(parse_rule(&inner)?);
                Ok(())
            })?;
            Ok(Rule::Each { span, rules })
        }
        "custom" => {
            let check: syn::Path = meta.value()?.parse()?;
            Ok(Rule::Custom { span, check })
        }
        other => {
            let hint = RULES
                .split(", ")
                .find(|r| close(other, r))
                .map(|r| format!("did you mean `{r}`? "))
                .unwrap_or_default();
            Err(meta.error(format!(
                "unknown contract rule `{other}`; {hint}the rules are {RULES}"
            )))
        }
    }
}

/// A likely typo: one edit apart, or the same letters swapped.
fn close(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()] <= 2
}
