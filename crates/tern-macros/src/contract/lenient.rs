//! `Contract::__collect`, the error path's read: every field read on its
//! own, so that one request's problems are all reported at once.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::{spanned::Spanned, Attribute};

use super::serde_attrs::serde_string;

/// A field as the lenient read (the error path: every shape error at
/// once) sees it.
pub(super) struct LenientField {
    pub(super) index: usize,
    pub(super) wire: String,
    pub(super) aliases: Vec<String>,
    pub(super) ty: syn::Type,
    /// How the field's value is read: its `deserialize_with`, its
    /// `with`'s `deserialize`, or the type's own `Deserialize`.
    pub(super) read: TokenStream,
    /// Whether `read` is the type's own `Deserialize`: then a value that
    /// fails is walked as the type (the contracts inside it list every
    /// problem), else only the read's message is reported.
    pub(super) own_read: bool,
    pub(super) checks: Vec<TokenStream>,
    pub(super) default: bool,
}

/// How the field with `attrs` of type `ty` is read, as serde's derive
/// reads it.
pub(super) fn read_fn(attrs: &[Attribute], ty: &syn::Type) -> syn::Result<TokenStream> {
    if let Some(path) = serde_string(attrs, "deserialize_with")? {
        let path: syn::ExprPath = syn::parse_str(&path)?;
        return Ok(quote!(#path));
    }
    if let Some(module) = serde_string(attrs, "with")? {
        let path: syn::ExprPath = syn::parse_str(&format!("{module}::deserialize"))?;
        return Ok(quote!(#path));
    }
    // At the field's type: a type that cannot be read is reported there.
    Ok(
        quote_spanned!(ty.span()=> <#ty as ::tern_contract::__private::serde::Deserialize>::deserialize),
    )
}

/// `Contract::__collect` for a struct: a visitor of the value's map that
/// reads each field on its own (a failing field does not stop the
/// others), then reports each absent required field, each value of the
/// wrong type, each unknown key, and the rules of the fields that read.
pub(super) fn lenient_read(name_str: &str, fields: &[LenientField]) -> TokenStream {
    let serde = quote!(::tern_contract::__private::serde);
    let shape = quote!(::tern_contract::__private::shape);
    let value_ty = quote!(::tern_contract::__private::serde_json::Value);
    let wires: Vec<&String> = fields.iter().map(|f| &f.wire).collect();
    let newtypes = fields.iter().map(|f| {
        let newtype = format_ident!("__TernField{}", f.index);
        let (ty, read) = (&f.ty, &f.read);
        quote! {
            struct #newtype(#ty);
            impl<'de> #serde::Deserialize<'de> for #newtype {
                fn deserialize<__D: #serde::Deserializer<'de>>(
                    d: __D,
                ) -> ::std::result::Result<Self, __D::Error> {
                    #read(d).map(#newtype)
                }
            }
        }
    });
    let slots: Vec<syn::Ident> = fields
        .iter()
        .map(|f| format_ident!("__field{}", f.index))
        .collect();
    let newtype_names: Vec<syn::Ident> = fields
        .iter()
        .map(|f| format_ident!("__TernField{}", f.index))
        .collect();
    let arms = fields
        .iter()
        .zip(&slots)
        .zip(&newtype_names)
        .map(|((f, slot), newtype)| {
            let (wire, aliases) = (&f.wire, &f.aliases);
            quote! {
                #wire #(| #aliases)* => {
                    let #shape::Captured(read) = map.next_value::<#shape::Captured<#newtype>>()?;
                    if #slot.is_none() {
                        #slot = ::std::option::Option::Some(
                            read.map_err(|message| (message, whole.and_then(|w| w.get(&key)))),
                        );
                    }
                }
            }
        });
    let reports = fields
        .iter()
        .zip(&slots)
        .zip(&newtype_names)
        .map(|((f, slot), newtype)| {
            let (wire, ty, checks, default) = (&f.wire, &f.ty, &f.checks, f.default);
            // A field holding contracts (`owner: Person`, `items:
            // Vec<Item>`) lists every problem inside its value, walked as
            // JSON (bodies; a query has no such tree): the error path
            // only, one more pass per level of failing nesting.
            let nested = if f.own_read {
                quote! {
                    <#ty as ::tern_contract::FieldType>::__NESTED
                        && sub.is_some_and(|sub| {
                            <#ty as ::tern_contract::FieldType>::__collect_value(
                                sub,
                                &at.field(#wire),
                                errors,
                            )
                        })
                }
            } else {
                quote!(false)
            };
            quote! {
                match #slot {
                    ::std::option::Option::None => {
                        if !(<#ty as ::tern_contract::FieldType>::OPTIONAL || #default) {
                            #shape::missing(at, #wire, errors);
                        }
                    }
                    ::std::option::Option::Some(::std::result::Result::Ok(#newtype(v))) => {
                        let value = &v;
                        let at = &at.field(#wire);
                        #(#checks)*
                        ::tern_contract::FieldType::validate_nested(value, at, errors);
                    }
                    ::std::option::Option::Some(::std::result::Result::Err((message, sub))) => {
                        if !(#nested) {
                            #shape::invalid::<#newtype>(at, #wire, &message, sub, errors);
                        }
                    }
                }
            }
        });
    let slot_types = newtype_names.iter().map(|newtype| {
        quote!(::std::option::Option<
            ::std::result::Result<#newtype, (::std::string::String, ::std::option::Option<&'a #value_ty>)>,
        >)
    });
    quote! {
        fn __collect<'de, __D: #serde::Deserializer<'de>>(
            de: __D,
            whole: ::std::option::Option<&#value_ty>,
            at: &::tern_contract::Pointer<'_>,
            errors: &mut ::tern_contract::Violations,
        ) -> ::std::result::Result<bool, __D::Error> {
            const FIELDS: &[&str] = &[#(#wires),*];
            #(#newtypes)*
            struct Lenient<'a, 'p> {
                whole: ::std::option::Option<&'a #value_ty>,
                at: &'a ::tern_contract::Pointer<'p>,
                errors: &'a mut ::tern_contract::Violations,
            }
            impl<'de, 'a, 'p> #serde::de::Visitor<'de> for Lenient<'a, 'p> {
                type Value = ();

                fn expecting(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                    f.write_str(::std::concat!("an object (", #name_str, ")"))
                }

                #[allow(unreachable_patterns, unused_variables)]
                fn visit_map<__A: #serde::de::MapAccess<'de>>(
                    self,
                    mut map: __A,
                ) -> ::std::result::Result<(), __A::Error> {
                    use ::tern_contract::__private::rules;
                    let Lenient { whole, at, errors } = self;
                    #(let mut #slots: #slot_types = ::std::option::Option::None;)*
                    let mut unknown: ::std::vec::Vec<::std::string::String> = ::std::vec::Vec::new();
                    while let ::std::option::Option::Some(key) =
                        map.next_key::<::std::string::String>()?
                    {
                        match key.as_str() {
                            #(#arms)*
                            _ => {
                                map.next_value::<#serde::de::IgnoredAny>()?;
                                unknown.push(key);
                            }
                        }
                    }
                    #(#reports)*
                    for key in &unknown {
                        #shape::unknown(at, key, FIELDS, errors);
                    }
                    ::std::result::Result::Ok(())
                }
            }
            de.deserialize_struct(#name_str, FIELDS, Lenient { whole, at, errors })
                .map(|()| true)
        }
    }
}
