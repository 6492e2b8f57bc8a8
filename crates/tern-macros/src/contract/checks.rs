//! What each rule becomes in the generated code: its check in
//! `Contract::validate_into` (and the lenient read) and its keywords in
//! the field's JSON Schema.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::Expr;

use super::rules::Rule;

fn option(expr: Option<&Expr>) -> TokenStream {
    match expr {
        Some(e) => quote!(::std::option::Option::Some(#e)),
        None => quote!(::std::option::Option::None),
    }
}

/// The check of `rule` on `value` (a `&T` in scope), with `at` and
/// `errors` in scope. The call carries the rule's span, so that a rule on
/// a type it does not apply to is reported at the rule.
pub(super) fn validate_rule(rule: &Rule, ty: &syn::Type) -> TokenStream {
    let _ = ty;
    match rule {
        Rule::Length { span, min, max } => {
            let (min, max) = (option(min.as_ref()), option(max.as_ref()));
            quote_spanned!(*span=> rules::length(value, #min, #max, at, errors);)
        }
        Rule::Range { span, min, max } => {
            let (min, max) = (option(min.as_ref()), option(max.as_ref()));
            quote_spanned!(*span=> rules::range(value, #min, #max, at, errors);)
        }
        // `RE` is a static per pattern rule (one per expansion site): the
        // regex compiled once, on first use, from the literal checked at
        // compile time. Shared by every app, request and thread, which is
        // safe: it is immutable once set, the same for everyone (a
        // function of the literal only), and `OnceLock` makes the first
        // set race-free.
        Rule::Pattern { span, source } => quote_spanned! {*span=>
            {
                static RE: ::tern_contract::__private::OnceLock<::tern_contract::__private::rules::Pattern> =
                    ::tern_contract::__private::OnceLock::new();
                rules::pattern(value, &RE, #source, at, errors);
            }
        },
        Rule::Format { span, name } => {
            let format = format_ident!("{}", name.to_uppercase());
            quote_spanned!(*span=> rules::format(value, &rules::#format, at, errors);)
        }
        Rule::Each { span, rules } => {
            let inner = rules.iter().map(|r| validate_rule(r, ty));
            quote_spanned! {*span=>
                rules::each(value, at, errors, |value, at, errors| {
                    #(#inner)*
                });
            }
        }
        Rule::Custom { span, check } => {
            let rule = check
                .segments
                .last()
                .map(|s| s.ident.to_string())
                .unwrap_or_default();
            quote_spanned! {*span=>
                {
                    const RULE: &str = #rule;
                    rules::custom(value, #check, RULE, at, errors);
                }
            }
        }
    }
}

/// The schema keywords of `rule` on `s` (a `&mut Value` in scope), for a
/// field of type `ty`.
pub(super) fn schema_rule(rule: &Rule, ty: &TokenStream) -> TokenStream {
    match rule {
        Rule::Length { span, min, max } => {
            let (min, max) = (option(min.as_ref()), option(max.as_ref()));
            quote_spanned!(*span=> rules::length_schema::<#ty>(s, #min, #max);)
        }
        Rule::Range { span, min, max } => {
            let json = |e: Option<&Expr>| match e {
                Some(e) => quote!(::std::option::Option::Some(
                    ::tern_contract::__private::serde_json::json!(#e)
                )),
                None => quote!(::std::option::Option::None),
            };
            let (min, max) = (json(min.as_ref()), json(max.as_ref()));
            quote_spanned!(*span=> rules::range_schema(s, #min, #max);)
        }
        Rule::Pattern { span, source } => {
            quote_spanned!(*span=> rules::pattern_schema(s, #source);)
        }
        Rule::Format { span, name } => {
            let format = format_ident!("{}", name.to_uppercase());
            quote_spanned!(*span=> rules::format_schema(s, &rules::#format);)
        }
        Rule::Each { span, rules } => {
            let item = quote!(<#ty as ::tern_contract::__private::rules::Items>::Item);
            let inner = rules.iter().map(|r| schema_rule(r, &item));
            quote_spanned! {*span=>
                rules::each_schema(s, |s| { #({ let s = &mut *s; #inner })* });
            }
        }
        Rule::Custom { .. } => quote!(),
    }
}
