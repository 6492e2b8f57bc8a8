//! `#[contract]`: a struct's rules, written once, give serde, validation
//! and JSON Schema.
//!
//! What lives where:
//! - here: [`expand`], the entry (refuses what cannot be a contract,
//!   adds serde's derives, expands by the item's kind), the unit enum's
//!   expansion (a string with a fixed set of values), and
//!   [`without_rules`], the item kept as written when the expansion fails;
//! - `object`: a struct's expansion: each field's check and schema, the
//!   `FieldType` and `Contract` impls;
//! - `lenient`: `Contract::__collect`, the error path's read that reports
//!   every problem of a request at once;
//! - `rules`: the `#[contract(...)]` rules of a field, parsed;
//! - `checks`: what each rule becomes: its check and its schema keywords;
//! - `serde_attrs`: serde's attributes, read as serde reads them (wire
//!   names, `rename_all`, `default`, `skip`, `with`).

mod checks;
mod lenient;
mod object;
mod rules;
mod serde_attrs;

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Attribute, Data, DataEnum, DeriveInput, Fields};

use serde_attrs::{apply_variant_rule, has_serde_word, rename_all, serde_string};

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    if !attr.is_empty() {
        return Err(syn::Error::new_spanned(
            attr,
            "`#[contract]` takes no arguments; rules go on the fields: `#[contract(length(max = 80))]`",
        ));
    }
    let mut input: DeriveInput = syn::parse2(item)?;
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &input.generics,
            "a contract cannot be generic (its schema has one name); use a concrete type",
        ));
    }
    let serde = quote!(::tern_contract::__private::serde);
    let derive = quote! {
        #[derive(#serde::Serialize, #serde::Deserialize)]
        #[serde(crate = "::tern_contract::__private::serde")]
    };
    let rename_all = rename_all(&input.attrs)?;
    let container_default = has_serde_word(&input.attrs, "default");
    let name = input.ident.clone();
    let impls = match &mut input.data {
        Data::Struct(data) => {
            let Fields::Named(fields) = &mut data.fields else {
                return Err(neither_kind(&input.ident));
            };
            object::expand(&name, fields, rename_all.as_deref(), container_default)?
        }
        Data::Enum(data) => unit_enum(&name, data, rename_all.as_deref())?,
        Data::Union(_) => return Err(neither_kind(&input.ident)),
    };
    let strict = if matches!(input.data, Data::Struct(_)) {
        // What the schema's `additionalProperties: false` says.
        quote!(#[serde(deny_unknown_fields)])
    } else {
        quote!()
    };
    Ok(quote! {
        #derive
        #strict
        #input
        #impls
    })
}

/// The error for an item that is neither kind a contract can be.
fn neither_kind(ident: &syn::Ident) -> syn::Error {
    syn::Error::new_spanned(
        ident,
        "`#[contract]` applies to a struct with named fields or an enum of unit variants",
    )
}

/// A unit enum's `FieldType`: a string schema with one value per variant,
/// by its wire name.
fn unit_enum(
    name: &syn::Ident,
    data: &DataEnum,
    rename_all: Option<&str>,
) -> syn::Result<TokenStream> {
    let mut values = Vec::new();
    for variant in &data.variants {
        if !matches!(variant.fields, Fields::Unit) {
            return Err(syn::Error::new_spanned(
                variant,
                "a contract enum has unit variants only (it is a string with a fixed set of values)",
            ));
        }
        let wire = match serde_string(&variant.attrs, "rename")? {
            Some(name) => name,
            None => apply_variant_rule(rename_all, &variant.ident.to_string()),
        };
        values.push(wire);
    }
    let schema = named_schema(
        &name.to_string(),
        quote! {
            |_| {
                ::tern_contract::__private::serde_json::json!({
                    "type": "string",
                    "enum": [#(#values),*],
                })
            }
        },
    );
    Ok(quote! {
        impl ::tern_contract::FieldType for #name {
            #schema
        }
    })
}

/// `FieldType::schema` of a contract type: a reference to its schema
/// under its name in the definitions, which `build` (a closure taking
/// the definitions) makes on first use.
fn named_schema(name_str: &str, build: TokenStream) -> TokenStream {
    quote! {
        fn schema(
            defs: &mut ::tern_contract::Definitions,
        ) -> ::tern_contract::__private::serde_json::Value {
            defs.reference(#name_str, #build)
        }
    }
}

/// Keeps every error, the first one first: all of an item's mistakes are
/// reported at once.
fn combine(errors: &mut Option<syn::Error>, error: syn::Error) {
    match errors {
        Some(first) => first.combine(error),
        None => *errors = Some(error),
    }
}

/// The item as written without its `#[contract(...)]` field attributes,
/// so that an error in them is reported once, not again as an unknown
/// attribute.
pub(crate) fn without_rules(item: TokenStream) -> TokenStream {
    let Ok(mut input) = syn::parse2::<DeriveInput>(item.clone()) else {
        return item;
    };
    let strip = |attrs: &mut Vec<Attribute>| attrs.retain(|a| !a.path().is_ident("contract"));
    match &mut input.data {
        Data::Struct(data) => data.fields.iter_mut().for_each(|f| strip(&mut f.attrs)),
        Data::Enum(data) => data.variants.iter_mut().for_each(|v| strip(&mut v.attrs)),
        Data::Union(_) => {}
    }
    quote!(#input)
}
