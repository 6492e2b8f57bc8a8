//! `find_by_<field>` for `#[model(unique)]` columns.

use proc_macro2::TokenStream;
use quote::quote;

use super::{last_segment, option_inner, Field};

/// `find_by_<field>`, `find_by_<field>_opt` and their `_in` forms for a
/// `#[model(unique)]` field: the main forms take anything that is a
/// `Conn` (a `&Pool`, a `&Db`, the request's transaction) as `get` does,
/// the `_in` forms a `&mut Transaction` as `get_in` does.
pub(super) fn finders(f: &Field, vis: &syn::Visibility, select_all: &str) -> TokenStream {
    let plain = f.ident.to_string();
    let plain = plain.strip_prefix("r#").unwrap_or(&plain).to_owned();
    let span = f.ident.span();
    let name = |suffix: &str| syn::Ident::new(&format!("find_by_{plain}{suffix}"), span);
    let (find, find_opt, find_in, find_opt_in) =
        (name(""), name("_opt"), name("_in"), name("_opt_in"));
    // The value's name is the field's, unless it would clash with the
    // other names of the body.
    let value = if matches!(plain.as_str(), "on" | "tx" | "conn" | "SQL") {
        syn::Ident::new("value", span)
    } else {
        f.ident.clone()
    };
    let inner = option_inner(&f.ty).unwrap_or(&f.ty);
    let param = if last_segment(inner).as_deref() == Some("String") {
        quote!(&str)
    } else {
        quote!(&#inner)
    };
    let column = &f.column;
    let sql = format!("{select_all} WHERE \"{column}\" = $1");
    let sqlite_value = if f.date_time {
        quote!(::tern_data::model::AsSqliteTime::as_sqlite_time(#value))
    } else {
        quote!(#value)
    };
    let doc = format!(
        "The row whose `{column}` is the given value (`#[model(unique)]`), on \
         the pool or in a transaction (`Conn`); `DataError`'s `404` when there is none."
    );
    let doc_opt = format!("The row whose `{column}` is the given value, if there is one.");
    let doc_in = format!("`{find}` inside the request's transaction.");
    let doc_opt_in = format!("`{find_opt}` inside the request's transaction.");
    let pool = quote!(::tern_data::Pool);
    let tx = quote!(::tern_data::Transaction);
    let conn = quote!(::tern_data::Conn);
    let error = quote!(::tern_data::DataError);
    let query = quote!(::tern_data::sqlx::query_as(SQL));
    let body = |fetch: TokenStream| {
        quote! {
            const SQL: &str = #sql;
            ::core::result::Result::Ok(match ::core::convert::Into::<#conn<'c>>::into(on) {
                #conn::Pool(#pool::Sqlite(conn)) => #query.bind(#sqlite_value).#fetch(conn).await?,
                #conn::Pool(#pool::Postgres(conn)) => #query.bind(#value).#fetch(conn).await?,
                #conn::Tx(#tx::Sqlite(conn)) => #query.bind(#sqlite_value).#fetch(&mut **conn).await?,
                #conn::Tx(#tx::Postgres(conn)) => #query.bind(#value).#fetch(&mut **conn).await?,
            })
        }
    };
    let one = body(quote!(fetch_one));
    let optional = body(quote!(fetch_optional));
    quote! {
        #[doc = #doc]
        #[allow(dead_code, unreachable_pub)]
        #vis async fn #find<'c>(
            on: impl ::core::convert::Into<#conn<'c>>,
            #value: #param,
        ) -> ::core::result::Result<Self, #error> {
            #one
        }

        #[doc = #doc_opt]
        #[allow(dead_code, unreachable_pub)]
        #vis async fn #find_opt<'c>(
            on: impl ::core::convert::Into<#conn<'c>>,
            #value: #param,
        ) -> ::core::result::Result<::core::option::Option<Self>, #error> {
            #optional
        }

        #[doc = #doc_in]
        #[allow(dead_code, unreachable_pub)]
        #vis async fn #find_in(
            tx: &mut #tx,
            #value: #param,
        ) -> ::core::result::Result<Self, #error> {
            Self::#find(tx, #value).await
        }

        #[doc = #doc_opt_in]
        #[allow(dead_code, unreachable_pub)]
        #vis async fn #find_opt_in(
            tx: &mut #tx,
            #value: #param,
        ) -> ::core::result::Result<::core::option::Option<Self>, #error> {
            Self::#find_opt(tx, #value).await
        }
    }
}
