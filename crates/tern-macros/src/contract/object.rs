//! A struct's expansion: each field's check (in `validate_into` and in
//! the lenient read) and its schema, then the `FieldType` and `Contract`
//! impls.

use proc_macro2::TokenStream;
use quote::quote;
use syn::Attribute;

use super::{
    checks::{schema_rule, validate_rule},
    combine,
    lenient::{lenient_read, read_fn, LenientField},
    named_schema,
    rules::take_rules,
    serde_attrs::{apply_field_rule, has_serde_word, serde_string, serde_strings},
};

/// The impls of the struct `name` with `fields`; takes each field's
/// `#[contract(...)]` attributes off, and adds the serde attributes of
/// the lenient integer read.
pub(super) fn expand(
    name: &syn::Ident,
    fields: &mut syn::FieldsNamed,
    rename_all: Option<&str>,
    container_default: bool,
) -> syn::Result<TokenStream> {
    let name_str = name.to_string();
    let mut validate = Vec::new();
    let mut schema = Vec::new();
    let mut lenient: Vec<LenientField> = Vec::new();
    let mut errors: Option<syn::Error> = None;
    for field in &mut fields.named {
        let rules = match take_rules(&mut field.attrs) {
            Ok(rules) => rules,
            Err(e) => {
                // Every field's mistakes at once.
                combine(&mut errors, e);
                continue;
            }
        };
        if has_serde_word(&field.attrs, "skip") {
            continue;
        }
        let Some(ident) = field.ident.clone() else {
            continue;
        };
        let wire = match serde_string(&field.attrs, "rename")? {
            Some(name) => name,
            None => apply_field_rule(rename_all, &ident.to_string()),
        };
        let ty = &field.ty;
        read_integers_leniently(&mut field.attrs, ty);
        let default = container_default || has_serde_word(&field.attrs, "default");
        let checks: Vec<TokenStream> = rules.iter().map(|r| validate_rule(r, ty)).collect();
        validate.push(quote! {
            {
                let value = &self.#ident;
                let at = &at.field(#wire);
                #(#checks)*
                ::tern_contract::FieldType::validate_nested(value, at, errors);
            }
        });
        if !has_serde_word(&field.attrs, "skip_deserializing") {
            lenient.push(LenientField {
                index: lenient.len(),
                wire: wire.clone(),
                aliases: serde_strings(&field.attrs, "alias")?,
                ty: ty.clone(),
                read: read_fn(&field.attrs, ty)?,
                own_read: serde_string(&field.attrs, "deserialize_with")?.is_none()
                    && serde_string(&field.attrs, "with")?.is_none(),
                checks,
                default,
            });
        }
        let ty_tokens = quote!(#ty);
        let keywords = rules.iter().map(|r| schema_rule(r, &ty_tokens));
        schema.push(quote! {
            {
                #[allow(unused_mut)]
                let mut s = <#ty as ::tern_contract::FieldType>::schema(defs);
                #({ let s = &mut s; #keywords })*
                properties.insert(::std::string::String::from(#wire), s);
                if !<#ty as ::tern_contract::FieldType>::OPTIONAL && !#default {
                    required.push(#wire);
                }
            }
        });
    }
    if let Some(errors) = errors {
        return Err(errors);
    }
    let collect = lenient_read(&name_str, &lenient);
    let schema_fn = named_schema(
        &name_str,
        quote! {
            |defs| {
                <Self as ::tern_contract::Contract>::object_schema(defs)
            }
        },
    );
    Ok(quote! {
        impl ::tern_contract::FieldType for #name {
            #schema_fn

            fn validate_nested(
                &self,
                at: &::tern_contract::Pointer<'_>,
                errors: &mut ::tern_contract::Violations,
            ) {
                ::tern_contract::Contract::validate_into(self, at, errors);
            }

            const __NESTED: bool = true;

            fn __collect_value(
                value: &::tern_contract::__private::serde_json::Value,
                at: &::tern_contract::Pointer<'_>,
                errors: &mut ::tern_contract::Violations,
            ) -> bool {
                ::tern_contract::__private::shape::nested::<Self>(value, at, errors)
            }
        }

        impl ::tern_contract::Contract for #name {
            const NAME: &'static str = #name_str;

            #[allow(unused_variables)]
            fn validate_into(
                &self,
                at: &::tern_contract::Pointer<'_>,
                errors: &mut ::tern_contract::Violations,
            ) {
                use ::tern_contract::__private::rules;
                #(#validate)*
            }

            #[allow(unused_mut)]
            fn object_schema(
                defs: &mut ::tern_contract::Definitions,
            ) -> ::tern_contract::__private::serde_json::Value {
                use ::tern_contract::__private::rules;
                let mut properties = ::tern_contract::__private::serde_json::Map::new();
                let mut required: ::std::vec::Vec<&'static str> = ::std::vec::Vec::new();
                #(#schema)*
                ::tern_contract::__private::schema::object(properties, required)
            }

            #collect
        }
    })
}

/// JSON Schema's `integer` takes `507.0`; serde's integers do not: an
/// integer field (or an `Option` of one) is read leniently, unless the
/// field says how it is read.
fn read_integers_leniently(attrs: &mut Vec<Attribute>, ty: &syn::Type) {
    if has_serde_word(attrs, "deserialize_with") || has_serde_word(attrs, "with") {
        return;
    }
    match integer_kind(ty) {
        Some(IntegerKind::Plain) => attrs.push(syn::parse_quote!(
            #[serde(deserialize_with = "::tern_contract::__private::integer::deserialize")]
        )),
        Some(IntegerKind::Optional) => {
            attrs.push(syn::parse_quote!(
                #[serde(deserialize_with = "::tern_contract::__private::integer::option")]
            ));
            if !has_serde_word(attrs, "default") {
                attrs.push(syn::parse_quote!(#[serde(default)]));
            }
        }
        None => {}
    }
}

enum IntegerKind {
    Plain,
    Optional,
}

/// Whether `ty` is a primitive integer or an `Option` of one.
fn integer_kind(ty: &syn::Type) -> Option<IntegerKind> {
    const INTEGERS: [&str; 8] = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"];
    let syn::Type::Path(path) = ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    if path.qself.is_none()
        && path.path.segments.len() == 1
        && INTEGERS.contains(&last.ident.to_string().as_str())
    {
        return Some(IntegerKind::Plain);
    }
    if last.ident == "Option" {
        if let syn::PathArguments::AngleBracketed(args) = &last.arguments {
            if let Some(syn::GenericArgument::Type(inner)) = args.args.first() {
                if matches!(integer_kind(inner), Some(IntegerKind::Plain)) {
                    return Some(IntegerKind::Optional);
                }
            }
        }
    }
    None
}
