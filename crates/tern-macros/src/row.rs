//! `#[derive(Row)]`: a struct read from a query's row by column name, on
//! both databases, for queries a model does not write (joins, counts).

use proc_macro2::TokenStream;
use quote::quote;
use syn::{spanned::Spanned, Data, DeriveInput, Fields, LitStr};

pub(crate) fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let input: DeriveInput = syn::parse2(input)?;
    let name = &input.ident;
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &input.generics,
            "a row struct cannot be generic: its fields are the query's columns",
        ));
    }
    if let Some(attr) = input.attrs.iter().find(|a| a.path().is_ident("row")) {
        return Err(syn::Error::new_spanned(
            attr,
            "`#[row(...)]` goes on a field: `#[row(rename = \"column\")]` or `#[row(flatten)]`",
        ));
    }
    let named = match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(named) => named,
            _ => {
                return Err(syn::Error::new_spanned(
                    name,
                    "a row is a struct with named fields (one per column)",
                ))
            }
        },
        _ => {
            return Err(syn::Error::new_spanned(
                name,
                "a row is a struct with named fields (one per column)",
            ))
        }
    };
    let mut gets = Vec::new();
    for f in &named.named {
        let ident = f
            .ident
            .as_ref()
            .ok_or_else(|| syn::Error::new(f.span(), "a row's fields are named"))?;
        let plain = ident.to_string();
        let mut column = plain.strip_prefix("r#").unwrap_or(&plain).to_owned();
        let mut flatten = false;
        let mut renamed = false;
        for attr in f.attrs.iter().filter(|a| a.path().is_ident("row")) {
            attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("rename") {
                    let lit: LitStr = meta.value()?.parse()?;
                    if lit.value().is_empty() {
                        return Err(syn::Error::new(lit.span(), "a column name is not empty"));
                    }
                    column = lit.value();
                    renamed = true;
                    Ok(())
                } else if meta.path.is_ident("flatten") {
                    flatten = true;
                    Ok(())
                } else {
                    Err(meta.error(
                        "a row's field takes `#[row(rename = \"column\")]` or `#[row(flatten)]`",
                    ))
                }
            })?;
        }
        if flatten && renamed {
            return Err(syn::Error::new_spanned(
                ident,
                "a flattened field reads its own columns: `rename` goes on its fields",
            ));
        }
        let ty = &f.ty;
        gets.push(if flatten {
            // Another row type (`#[derive(Row)]`) read from the same
            // columns: an article's author, say.
            quote!(#ident: <#ty as ::tern_data::sqlx::FromRow<'r, _>>::from_row(row)?)
        } else {
            quote!(#ident: ::tern_data::sqlx::Row::try_get(row, #column)?)
        });
    }
    let sqlite_row = quote!(::tern_data::sqlx::sqlite::SqliteRow);
    let pg_row = quote!(::tern_data::sqlx::postgres::PgRow);
    Ok(quote! {
        impl<'r> ::tern_data::sqlx::FromRow<'r, #sqlite_row> for #name {
            fn from_row(row: &'r #sqlite_row) -> ::core::result::Result<Self, ::tern_data::sqlx::Error> {
                ::core::result::Result::Ok(#name { #(#gets),* })
            }
        }

        impl<'r> ::tern_data::sqlx::FromRow<'r, #pg_row> for #name {
            fn from_row(row: &'r #pg_row) -> ::core::result::Result<Self, ::tern_data::sqlx::Error> {
                ::core::result::Result::Ok(#name { #(#gets),* })
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use quote::quote;

    use super::expand;

    fn error(input: proc_macro2::TokenStream) -> String {
        match expand(input) {
            Ok(tokens) => panic!("expanded: {tokens}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn reads_columns_by_name_or_rename() {
        let out = expand(quote! {
            struct Comment { body: String, #[row(rename = "username")] author: String, r#type: i32 }
        })
        .map(|t| t.to_string())
        .unwrap_or_else(|e| panic!("{e}"));
        for column in ["\"body\"", "\"username\"", "\"type\""] {
            assert!(out.contains(column), "{column} in {out}");
        }
        assert!(!out.contains("\"author\""), "{out}");
        assert!(
            out.contains(":: tern_data :: sqlx :: sqlite :: SqliteRow"),
            "{out}"
        );
        assert!(
            out.contains(":: tern_data :: sqlx :: postgres :: PgRow"),
            "{out}"
        );
        // Every sqlx path goes through tern-data: the app has no sqlx.
        assert_eq!(
            out.matches(":: sqlx ::").count(),
            out.matches(":: tern_data :: sqlx ::").count(),
            "{out}"
        );
    }

    #[test]
    fn a_flattened_field_reads_its_own_row() {
        let out = expand(quote! {
            struct Article { title: String, #[row(flatten)] author: Profile }
        })
        .map(|t| t.to_string())
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            out.contains("< Profile as :: tern_data :: sqlx :: FromRow <"),
            "{out}"
        );
        assert!(!out.contains("\"author\""), "{out}");
        let e = error(quote! {
            struct A { #[row(flatten, rename = "x")] author: Profile }
        });
        assert!(e.contains("flattened"), "{e}");
    }

    #[test]
    fn refuses_what_is_not_a_row() {
        for (input, expected) in [
            (
                quote!(
                    struct P(i64);
                ),
                "named fields",
            ),
            (
                quote!(
                    enum E {
                        A,
                    }
                ),
                "named fields",
            ),
            (
                quote!(
                    struct G<T> {
                        t: T,
                    }
                ),
                "cannot be generic",
            ),
            (
                quote!(
                    #[row(rename = "x")]
                    struct S {
                        a: i64,
                    }
                ),
                "goes on a field",
            ),
            (
                quote!(
                    struct S {
                        #[row(name = "x")]
                        a: i64,
                    }
                ),
                "rename",
            ),
            (
                quote!(
                    struct S {
                        #[row(rename = "")]
                        a: i64,
                    }
                ),
                "not empty",
            ),
        ] {
            let e = error(input.clone());
            assert!(e.contains(expected), "{input}: {e}");
        }
    }
}
