//! `#[derive(Model)]`: a struct mapped to a table, its metadata and its
//! statements written as constants at compile time.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{spanned::Spanned, Data, DeriveInput, Fields, LitStr, Type};

mod fields;
mod finders;

use fields::fields_impl;
use finders::finders;

/// One field, as `#[model(...)]` and its type describe it.
struct Field {
    ident: syn::Ident,
    ty: Type,
    column: String,
    label: String,
    kind: &'static str,
    nullable: bool,
    primary_key: bool,
    default: bool,
    searchable: bool,
    sortable: bool,
    listed: bool,
    encrypted: bool,
    read_only: bool,
    /// `#[model(unique)]`: the migration's unique index, declared; the
    /// model gets `find_by_<field>` finders.
    unique: bool,
    /// An `OffsetDateTime` (or `Option` of one): bound on SQLite as
    /// fixed-width UTC text, so that its order is the time order.
    date_time: bool,
    /// `#[model(max_length = 500)]`, text only.
    max_length: Option<u32>,
    /// `#[model(choices("draft", "published"))]`, text only.
    choices: Vec<String>,
    /// `#[model(references = "table")]`.
    references: Option<String>,
    /// `#[model(widget = "textarea")]`: the `Widget` variant.
    widget: &'static str,
}

const FIELD_WORDS: &str = "primary_key, column = \"..\", label = \"..\", default, searchable, sortable, listed, read_only, unique, max_length = N, choices(\"..\", ..), references = \"table\", widget = \"textarea|email|url|password\"";

pub(crate) fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let input: DeriveInput = syn::parse2(input)?;
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &input.generics,
            "a model cannot be generic: it is one table",
        ));
    }
    let name = &input.ident;
    let mut table = format!("{}s", snake(&name.to_string()));
    let mut singular = snake(&name.to_string()).replace('_', " ");
    let mut plural: Option<String> = None;
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("model")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("table") {
                let lit: LitStr = meta.value()?.parse()?;
                table = identifier(&lit)?;
                Ok(())
            } else if meta.path.is_ident("name") {
                singular = words(&meta.value()?.parse()?)?;
                Ok(())
            } else if meta.path.is_ident("plural") {
                plural = Some(words(&meta.value()?.parse()?)?);
                Ok(())
            } else {
                Err(meta.error(
                    "a model takes `#[model(table = \"...\", name = \"...\", plural = \"...\")]`",
                ))
            }
        })?;
    }
    let plural = plural.unwrap_or_else(|| format!("{singular}s"));
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new_spanned(
            name,
            "a model is a struct with named fields",
        ));
    };
    let Fields::Named(named) = &data.fields else {
        return Err(syn::Error::new_spanned(
            name,
            "a model is a struct with named fields",
        ));
    };
    let mut fields = Vec::new();
    for f in &named.named {
        fields.push(field(f)?);
    }
    let keys: Vec<&Field> = fields.iter().filter(|f| f.primary_key).collect();
    let key = match keys.as_slice() {
        [key] => *key,
        [] => {
            return Err(syn::Error::new_spanned(
                name,
                "a model needs `#[model(primary_key)]` on one field",
            ))
        }
        [_, second, ..] => {
            return Err(syn::Error::new(
                second.ident.span(),
                "a model has one `#[model(primary_key)]`",
            ))
        }
    };
    if key.date_time {
        return Err(syn::Error::new(
            key.ident.span(),
            "a date-time cannot be a model's primary key: SQLite compares the key as text",
        ));
    }
    for f in &fields {
        if f.encrypted && (f.searchable || f.sortable) {
            return Err(syn::Error::new(
                f.ident.span(),
                "an encrypted column cannot be searched or sorted: the database sees only ciphertext",
            ));
        }
        if f.unique && f.encrypted {
            return Err(syn::Error::new(
                f.ident.span(),
                "`unique` cannot go on an encrypted column: each value is sealed with a random nonce, so no lookup can find it",
            ));
        }
        if f.unique && f.primary_key {
            return Err(syn::Error::new(
                f.ident.span(),
                "`unique` is implied by `primary_key`: find a row by its key with `get`",
            ));
        }
        if f.searchable && f.kind != "Text" {
            return Err(syn::Error::new(
                f.ident.span(),
                "`searchable` applies to text columns (`String`, `Option<String>`)",
            ));
        }
        if (f.max_length.is_some() || !f.choices.is_empty()) && f.kind != "Text" {
            return Err(syn::Error::new(
                f.ident.span(),
                "`max_length` and `choices` apply to text columns (`String`, `Option<String>`)",
            ));
        }
        if f.references.is_some() && f.encrypted {
            return Err(syn::Error::new(
                f.ident.span(),
                "an encrypted column cannot reference another table: the database sees only ciphertext",
            ));
        }
    }
    let any_listed = fields.iter().any(|f| f.listed);
    let quoted = |f: &Field| format!("\"{}\"", f.column);
    let all: Vec<String> = fields.iter().map(quoted).collect();
    let all = all.join(", ");
    let key_col = quoted(key);
    let select_all = format!("SELECT {all} FROM \"{table}\"");
    let select_one = format!("{select_all} WHERE {key_col} = $1");
    let inserted: Vec<&Field> = fields
        .iter()
        .filter(|f| !f.primary_key && !f.default)
        .collect();
    let insert = if inserted.is_empty() {
        format!("INSERT INTO \"{table}\" DEFAULT VALUES RETURNING {all}")
    } else {
        let cols: Vec<String> = inserted.iter().map(|f| quoted(f)).collect();
        let marks: Vec<String> = (1..=inserted.len()).map(|i| format!("${i}")).collect();
        format!(
            "INSERT INTO \"{table}\" ({}) VALUES ({}) RETURNING {all}",
            cols.join(", "),
            marks.join(", ")
        )
    };
    let updated: Vec<&Field> = fields
        .iter()
        .filter(|f| !f.primary_key && !f.read_only)
        .collect();
    let update = if updated.is_empty() {
        format!("UPDATE \"{table}\" SET {key_col} = {key_col} WHERE {key_col} = $1 RETURNING {all}")
    } else {
        let sets: Vec<String> = updated
            .iter()
            .enumerate()
            .map(|(i, f)| format!("{} = ${}", quoted(f), i + 1))
            .collect();
        format!(
            "UPDATE \"{table}\" SET {} WHERE {key_col} = ${} RETURNING {all}",
            sets.join(", "),
            updated.len() + 1
        )
    };
    let delete = format!("DELETE FROM \"{table}\" WHERE {key_col} = $1");

    let columns = fields.iter().map(|f| {
        let Field {
            column,
            label,
            nullable,
            primary_key,
            default,
            searchable,
            sortable,
            listed,
            encrypted,
            read_only,
            unique,
            choices,
            ..
        } = f;
        let kind = syn::Ident::new(f.kind, f.ident.span());
        let widget = syn::Ident::new(f.widget, f.ident.span());
        let max_length = match f.max_length {
            Some(n) => quote!(::core::option::Option::Some(#n)),
            None => quote!(::core::option::Option::None),
        };
        let references = match &f.references {
            Some(t) => quote!(::core::option::Option::Some(#t)),
            None => quote!(::core::option::Option::None),
        };
        let has_default = *default || *primary_key;
        let listed = *listed || !any_listed;
        let read_only = *read_only || *primary_key;
        quote! {
            ::tern_data::model::Column {
                name: #column,
                label: #label,
                kind: ::tern_data::model::Kind::#kind,
                nullable: #nullable,
                primary_key: #primary_key,
                has_default: #has_default,
                searchable: #searchable,
                sortable: #sortable,
                listed: #listed,
                encrypted: #encrypted,
                read_only: #read_only,
                unique: #unique,
                max_length: #max_length,
                choices: &[#(#choices),*],
                references: #references,
                widget: ::tern_data::model::Widget::#widget,
            }
        }
    });
    // By position, not by name: every statement selects the columns in
    // field order, and a name costs a lookup per column per row.
    let gets: Vec<TokenStream> = fields
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let ident = &f.ident;
            quote!(#ident: ::tern_data::sqlx::Row::try_get(row, #i)?)
        })
        .collect();
    let bind = |f: &Field| {
        let ident = &f.ident;
        quote!(.bind(&self.#ident))
    };
    let bind_sqlite = |f: &Field| {
        let ident = &f.ident;
        if f.date_time {
            quote!(.bind(::tern_data::model::AsSqliteTime::as_sqlite_time(&self.#ident)))
        } else {
            quote!(.bind(&self.#ident))
        }
    };
    let insert_binds: Vec<TokenStream> = inserted.iter().map(|f| bind(f)).collect();
    let insert_binds_sqlite: Vec<TokenStream> = inserted.iter().map(|f| bind_sqlite(f)).collect();
    let update_binds: Vec<TokenStream> = updated
        .iter()
        .map(|f| bind(f))
        .chain(std::iter::once(bind(key)))
        .collect();
    let update_binds_sqlite: Vec<TokenStream> = updated
        .iter()
        .map(|f| bind_sqlite(f))
        .chain(std::iter::once(bind_sqlite(key)))
        .collect();
    let key_ident = &key.ident;
    // Text fields are checked for NUL (both backends answer the same
    // 422), `max_length` and `choices` before a write.
    let text_checks: Vec<TokenStream> = fields
        .iter()
        .enumerate()
        .filter(|(_, f)| f.kind == "Text")
        .map(|(i, f)| {
            let ident = &f.ident;
            let column = quote!(&<Self as ::tern_data::Model>::COLUMNS[#i]);
            if f.nullable {
                quote!(if let ::core::option::Option::Some(v) = &self.#ident {
                    ::tern_data::fields::check_text_value(#column, v)?;
                })
            } else {
                quote!(::tern_data::fields::check_text_value(#column, &self.#ident)?;)
            }
        })
        .collect();
    let fields_impl = fields_impl(name, &fields, key);
    let finders: Vec<TokenStream> = fields
        .iter()
        .filter(|f| f.unique)
        .map(|f| finders(f, &input.vis, &select_all))
        .collect();
    let key_ty = &key.ty;
    let sqlite_row = quote!(::tern_data::sqlx::sqlite::SqliteRow);
    let pg_row = quote!(::tern_data::sqlx::postgres::PgRow);
    let finders = if finders.is_empty() {
        TokenStream::new()
    } else {
        quote!(impl #name { #(#finders)* })
    };
    Ok(quote! {
        #finders

        #fields_impl

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

        impl ::tern_data::Model for #name {
            type Key = #key_ty;
            const TABLE: &'static str = #table;
            const NAME: &'static str = #singular;
            const PLURAL: &'static str = #plural;
            const COLUMNS: &'static [::tern_data::model::Column] = &[#(#columns),*];
            const SELECT_ONE: &'static str = #select_one;
            const SELECT_ALL: &'static str = #select_all;
            const INSERT: &'static str = #insert;
            const UPDATE: &'static str = #update;
            const DELETE: &'static str = #delete;

            fn key(&self) -> #key_ty {
                ::core::clone::Clone::clone(&self.#key_ident)
            }

            fn check_values(&self) -> ::core::result::Result<(), ::tern_data::DataError> {
                #(#text_checks)*
                ::core::result::Result::Ok(())
            }

            fn bind_insert<'q>(
                &'q self,
                q: ::tern_data::sqlx::query::QueryAs<'q, ::tern_data::sqlx::Sqlite, Self, ::tern_data::model::SqliteArgs>,
            ) -> ::tern_data::sqlx::query::QueryAs<'q, ::tern_data::sqlx::Sqlite, Self, ::tern_data::model::SqliteArgs> {
                q #(#insert_binds_sqlite)*
            }

            fn bind_insert_pg<'q>(
                &'q self,
                q: ::tern_data::sqlx::query::QueryAs<'q, ::tern_data::sqlx::Postgres, Self, ::tern_data::model::PgArgs>,
            ) -> ::tern_data::sqlx::query::QueryAs<'q, ::tern_data::sqlx::Postgres, Self, ::tern_data::model::PgArgs> {
                q #(#insert_binds)*
            }

            fn bind_update<'q>(
                &'q self,
                q: ::tern_data::sqlx::query::QueryAs<'q, ::tern_data::sqlx::Sqlite, Self, ::tern_data::model::SqliteArgs>,
            ) -> ::tern_data::sqlx::query::QueryAs<'q, ::tern_data::sqlx::Sqlite, Self, ::tern_data::model::SqliteArgs> {
                q #(#update_binds_sqlite)*
            }

            fn bind_update_pg<'q>(
                &'q self,
                q: ::tern_data::sqlx::query::QueryAs<'q, ::tern_data::sqlx::Postgres, Self, ::tern_data::model::PgArgs>,
            ) -> ::tern_data::sqlx::query::QueryAs<'q, ::tern_data::sqlx::Postgres, Self, ::tern_data::model::PgArgs> {
                q #(#update_binds)*
            }
        }
    })
}

fn field(f: &syn::Field) -> syn::Result<Field> {
    let ident = f
        .ident
        .clone()
        .ok_or_else(|| syn::Error::new(f.span(), "a model's fields are named"))?;
    let plain = ident.to_string();
    let plain = plain.strip_prefix("r#").unwrap_or(&plain).to_owned();
    let (nullable, inner) = match option_inner(&f.ty) {
        Some(inner) => (true, inner),
        None => (false, &f.ty),
    };
    let last = last_segment(inner);
    let encrypted = last.as_deref() == Some("Encrypted");
    let kind = match last.as_deref() {
        Some("i16" | "i32" | "i64") => "Integer",
        Some("f32" | "f64") => "Real",
        Some("String") => "Text",
        Some("bool") => "Bool",
        Some("Encrypted") => "Bytes",
        Some("Vec") => "Bytes",
        Some("OffsetDateTime") => "DateTime",
        _ => "Other",
    };
    let mut out = Field {
        ident: ident.clone(),
        ty: f.ty.clone(),
        column: plain.clone(),
        label: label(&plain),
        kind,
        nullable,
        primary_key: false,
        default: false,
        searchable: false,
        sortable: false,
        listed: false,
        encrypted,
        read_only: false,
        unique: false,
        date_time: last.as_deref() == Some("OffsetDateTime"),
        max_length: None,
        choices: Vec::new(),
        references: None,
        widget: "Default",
    };
    for attr in f.attrs.iter().filter(|a| a.path().is_ident("model")) {
        attr.parse_nested_meta(|meta| {
            let word = |w: &str| meta.path.is_ident(w);
            if word("primary_key") {
                out.primary_key = true;
            } else if word("default") {
                out.default = true;
            } else if word("searchable") {
                out.searchable = true;
            } else if word("sortable") {
                out.sortable = true;
            } else if word("listed") {
                out.listed = true;
            } else if word("read_only") {
                out.read_only = true;
            } else if word("unique") {
                out.unique = true;
            } else if word("column") {
                out.column = identifier(&meta.value()?.parse()?)?;
            } else if word("label") {
                let lit: LitStr = meta.value()?.parse()?;
                out.label = lit.value();
            } else if word("max_length") {
                let lit: syn::LitInt = meta.value()?.parse()?;
                let n: u32 = lit.base10_parse()?;
                if n == 0 {
                    return Err(syn::Error::new(lit.span(), "`max_length` is at least 1"));
                }
                out.max_length = Some(n);
            } else if word("choices") {
                let content;
                syn::parenthesized!(content in meta.input);
                let lits = content
                    .parse_terminated(<LitStr as syn::parse::Parse>::parse, syn::Token![,])?;
                out.choices = lits.iter().map(LitStr::value).collect();
                if out.choices.is_empty() {
                    return Err(meta.error("`choices(\"a\", \"b\")` names at least one value"));
                }
            } else if word("references") {
                out.references = Some(identifier(&meta.value()?.parse()?)?);
            } else if word("widget") {
                let lit: LitStr = meta.value()?.parse()?;
                out.widget = match lit.value().as_str() {
                    "default" => "Default",
                    "textarea" => "TextArea",
                    "email" => "Email",
                    "url" => "Url",
                    "password" => "Password",
                    _ => return Err(syn::Error::new(
                        lit.span(),
                        "a widget is \"textarea\", \"email\", \"url\", \"password\" or \"default\"",
                    )),
                };
            } else {
                return Err(meta.error(format!(
                    "unknown model attribute; a field takes {FIELD_WORDS}"
                )));
            }
            Ok(())
        })?;
    }
    Ok(out)
}

/// A table or column name: letters, digits and `_`, so that quoting it
/// is all it takes.
fn identifier(lit: &LitStr) -> syn::Result<String> {
    let v = lit.value();
    let ok = !v.is_empty()
        && v.len() <= 63
        && !v.as_bytes()[0].is_ascii_digit()
        && v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if ok {
        Ok(v)
    } else {
        Err(syn::Error::new(
            lit.span(),
            "a table or column name is letters, digits and `_` (not starting with a digit, at most 63)",
        ))
    }
}

/// A model's name for people: any text but empty or control characters.
fn words(lit: &LitStr) -> syn::Result<String> {
    let v = lit.value();
    if v.trim().is_empty() || v.chars().any(char::is_control) {
        return Err(syn::Error::new(
            lit.span(),
            "a model's name is words, not empty, without control characters",
        ));
    }
    Ok(v)
}

fn option_inner(ty: &Type) -> Option<&Type> {
    let Type::Path(p) = ty else { return None };
    let seg = p.path.segments.last()?;
    if seg.ident != "Option" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &seg.arguments else {
        return None;
    };
    match args.args.first()? {
        syn::GenericArgument::Type(t) => Some(t),
        _ => None,
    }
}

fn last_segment(ty: &Type) -> Option<String> {
    let Type::Path(p) = ty else { return None };
    p.path.segments.last().map(|s| s.ident.to_string())
}

/// `NoteTag` -> `note_tag`.
fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `created_at` -> `Created at`.
fn label(name: &str) -> String {
    let words = name.replace('_', " ");
    let mut chars = words.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => words,
    }
}

#[cfg(test)]
mod tests;
