//! `Fields` for the model: a row as form text and back.

use proc_macro2::TokenStream;
use quote::quote;

use super::Field;

/// `Fields` for the model: each field through its type's `FormValue`.
pub(super) fn fields_impl(name: &syn::Ident, fields: &[Field], key: &Field) -> TokenStream {
    let fv = quote!(::tern_data::fields::FormValue);
    let input = quote!(::tern_data::fields::Input);
    let key_ty = &key.ty;
    let key_ident = &key.ident;
    let idents: Vec<&syn::Ident> = fields.iter().map(|f| &f.ident).collect();
    let tys: Vec<&syn::Type> = fields.iter().map(|f| &f.ty).collect();
    // Each value in a local of its own (`value_0`, ..): a field's name
    // never becomes a binding, so none can shadow `input`, `errors`, ..
    let locals: Vec<syn::Ident> = (0..fields.len())
        .map(|i| quote::format_ident!("value_{}", i))
        .collect();
    let reads = fields.iter().enumerate().map(|(i, f)| {
        let ident = &f.ident;
        let ty = &f.ty;
        let given = quote::format_ident!("given_{}", i);
        let local = &locals[i];
        quote! {
            let #given = input(&<Self as ::tern_data::Model>::COLUMNS[#i]);
            let #local: #ty = match #given {
                #input::Keep => match base {
                    ::core::option::Option::Some(b) => ::core::clone::Clone::clone(&b.#ident),
                    ::core::option::Option::None => <#ty as #fv>::placeholder(),
                },
                given => ::tern_data::fields::read::<#ty>(
                    &<Self as ::tern_data::Model>::COLUMNS[#i],
                    given,
                    &mut errors,
                ),
            };
        }
    });
    // The text checks of `check_values`, for the text given, on fields
    // that have no error yet.
    let checks = fields
        .iter()
        .enumerate()
        .filter(|(_, f)| f.kind == "Text")
        .map(|(i, f)| {
            let local = &locals[i];
            let given = quote::format_ident!("given_{}", i);
            let value = if f.nullable {
                quote!(#local.as_deref())
            } else {
                quote!(::core::option::Option::Some(#local.as_str()))
            };
            quote! {
                if !::core::matches!(#given, #input::Keep) {
                    let column = &<Self as ::tern_data::Model>::COLUMNS[#i];
                    if let ::core::option::Option::Some(text) = #value {
                        if !errors.iter().any(|(c, _)| *c == column.name) {
                            if let ::core::result::Result::Err(e) = ::tern_data::fields::check_text(column, text) {
                                errors.push((column.name, e));
                            }
                        }
                    }
                }
            }
        });
    quote! {
        impl ::tern_data::fields::Fields for #name {
            const TYPED: &'static [bool] = &[#(<#tys as #fv>::TYPED),*];

            fn parse_key(text: &str) -> ::core::option::Option<#key_ty> {
                <#key_ty as #fv>::parse(text).ok()
            }

            fn key_text(&self) -> ::std::string::String {
                <#key_ty as #fv>::show(&self.#key_ident).form_text()
            }

            fn values(&self) -> ::std::vec::Vec<::tern_data::fields::FieldValue> {
                ::std::vec![#(#fv::show(&self.#idents)),*]
            }

            fn from_form<'a>(
                input: &dyn ::core::ops::Fn(&'static ::tern_data::model::Column) -> #input<'a>,
                base: ::core::option::Option<&Self>,
            ) -> ::core::result::Result<Self, ::std::vec::Vec<(&'static str, ::std::string::String)>> {
                let mut errors: ::std::vec::Vec<(&'static str, ::std::string::String)> = ::std::vec::Vec::new();
                #(#reads)*
                #(#checks)*
                if errors.is_empty() {
                    ::core::result::Result::Ok(#name { #(#idents: #locals),* })
                } else {
                    // In the columns' order, as the form shows them.
                    errors.sort_by_key(|(name, _)| {
                        <Self as ::tern_data::Model>::COLUMNS.iter().position(|c| c.name == *name)
                    });
                    ::core::result::Result::Err(errors)
                }
            }
        }
    }
}
