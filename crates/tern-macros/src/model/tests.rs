//! The derive's expansion, and its refusals.

use quote::quote;

use super::expand;

fn expanded(input: proc_macro2::TokenStream) -> String {
    expand(input)
        .map(|t| t.to_string())
        .unwrap_or_else(|e| panic!("{e}"))
}

fn error(input: proc_macro2::TokenStream) -> String {
    match expand(input) {
        Ok(tokens) => panic!("expanded: {tokens}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_unique_field_gets_finders_with_the_struct_visibility() {
    let out = expanded(quote! {
        pub struct User {
            #[model(primary_key)] id: i64,
            #[model(unique)] email: String,
            #[model(unique)] r#ref: Option<i64>,
            #[model(unique)] at: Option<OffsetDateTime>,
            name: String,
        }
    });
    for finder in [
        "pub async fn find_by_email < 'c > (on : impl :: core :: convert :: Into < :: tern_data :: Conn < 'c >> , email : & str ,)",
        "pub async fn find_by_email_opt < 'c > (on",
        "pub async fn find_by_email_in (tx : & mut :: tern_data :: Transaction , email : & str ,)",
        "pub async fn find_by_email_opt_in (tx",
        "Self :: find_by_email (tx , email) . await",
        "Self :: find_by_email_opt (tx , email) . await",
        "pub async fn find_by_ref < 'c > (on : impl :: core :: convert :: Into < :: tern_data :: Conn < 'c >> , r#ref : & i64 ,)",
        "find_by_at < 'c > (on : impl :: core :: convert :: Into < :: tern_data :: Conn < 'c >> , at : & OffsetDateTime ,)",
        ":: tern_data :: Conn :: Tx (:: tern_data :: Transaction :: Postgres (conn)) =>",
        r#""SELECT \"id\", \"email\", \"ref\", \"at\", \"name\" FROM \"users\" WHERE \"email\" = $1""#,
        "as_sqlite_time (at)",
        "unique : true",
    ] {
        assert!(out.contains(finder), "{finder} in {out}");
    }
    assert!(!out.contains("find_by_name"), "{out}");
    assert!(!out.contains("find_by_id"), "{out}");
    assert_eq!(out.matches("unique : true").count(), 3, "{out}");
    // Without `unique`, no finders and no inherent impl.
    let out = expanded(quote! {
        struct Note { #[model(primary_key)] id: i64, title: String }
    });
    assert!(!out.contains("find_by_"), "{out}");
    assert!(out.contains("unique : false"), "{out}");
    // A field named like the body's own bindings takes `value`.
    for field in ["on", "tx", "conn"] {
        let ident = quote::format_ident!("{field}");
        let out = expanded(quote! {
            struct Link { #[model(primary_key)] id: i64, #[model(unique)] #ident: String }
        });
        assert!(out.contains(", value : & str ,)"), "{field}: {out}");
        assert!(out.contains(". bind (value)"), "{field}: {out}");
    }
}

#[test]
fn unique_is_refused_on_an_encrypted_field_and_on_the_key() {
    let e = error(quote! {
        struct Patient {
            #[model(primary_key)] id: i64,
            #[model(unique)] ssn: tern_data::Encrypted<String>,
        }
    });
    assert!(
        e.contains("`unique` cannot go on an encrypted column"),
        "{e}"
    );
    let e = error(quote! {
        struct Patient {
            #[model(unique)] ssn: Option<Encrypted<String>>,
            #[model(primary_key)] id: i64,
        }
    });
    assert!(e.contains("`unique`"), "{e}");
    let e = error(quote! {
        struct Note { #[model(primary_key, unique)] id: i64 }
    });
    assert!(e.contains("`unique` is implied by `primary_key`"), "{e}");
    let e = error(quote! {
        struct Note { #[model(primary_key)] id: i64, #[model(uniq)] t: String }
    });
    assert!(e.contains("read_only, unique"), "{e}");
}

#[test]
fn admin_metadata_is_generated_and_bad_combinations_are_refused() {
    let out = expanded(quote! {
        #[model(table = "posts", name = "blog post", plural = "blog posts")]
        struct Post {
            #[model(primary_key)] id: i64,
            #[model(max_length = 100, widget = "textarea")] title: String,
            #[model(choices("draft", "published"))] status: Option<String>,
            #[model(references = "tern_users")] author_id: i64,
            at: Option<OffsetDateTime>,
            public_id: Uuid,
        }
    });
    for part in [
        "const NAME : & 'static str = \"blog post\"",
        "const PLURAL : & 'static str = \"blog posts\"",
        "max_length : :: core :: option :: Option :: Some (100u32)",
        "widget : :: tern_data :: model :: Widget :: TextArea",
        "choices : & [\"draft\" , \"published\"]",
        "references : :: core :: option :: Option :: Some (\"tern_users\")",
        "impl :: tern_data :: fields :: Fields for Post",
        "kind : :: tern_data :: model :: Kind :: DateTime",
        "kind : :: tern_data :: model :: Kind :: Other",
        "check_text_value (& < Self as :: tern_data :: Model > :: COLUMNS [1usize] , & self . title)",
    ] {
        assert!(out.contains(part), "{part} in {out}");
    }
    // Field names never become bindings of `from_form`.
    let out = expanded(quote! {
        struct Clash { #[model(primary_key)] id: i64, input: String, errors: Option<String>, column: String, base: i64 }
    });
    assert!(
        out.contains("Clash { id : value_0 , input : value_1 , errors : value_2 , column : value_3 , base : value_4 }"),
        "{out}"
    );
    // Defaults: the struct's name in words, and `s`.
    let out = expanded(quote! {
        struct NoteTag { #[model(primary_key)] id: i64 }
    });
    assert!(
        out.contains("const NAME : & 'static str = \"note tag\""),
        "{out}"
    );
    assert!(
        out.contains("const PLURAL : & 'static str = \"note tags\""),
        "{out}"
    );
    assert!(
        out.contains("widget : :: tern_data :: model :: Widget :: Default"),
        "{out}"
    );
    for (input, says) in [
        (
            quote! { struct P { #[model(primary_key)] id: i64, #[model(max_length = 5)] n: i64 } },
            "`max_length` and `choices` apply to text columns",
        ),
        (
            quote! { struct P { #[model(primary_key)] id: i64, #[model(choices("a"))] s: Encrypted<String> } },
            "`max_length` and `choices` apply to text columns",
        ),
        (
            quote! { struct P { #[model(primary_key)] id: i64, #[model(references = "users")] u: Encrypted<String> } },
            "an encrypted column cannot reference another table",
        ),
        (
            quote! { struct P { #[model(primary_key)] id: i64, #[model(max_length = 0)] s: String } },
            "`max_length` is at least 1",
        ),
        (
            quote! { struct P { #[model(primary_key)] id: i64, #[model(choices())] s: String } },
            "names at least one value",
        ),
        (
            quote! { struct P { #[model(primary_key)] id: i64, #[model(widget = "slider")] s: String } },
            "a widget is",
        ),
        (
            quote! { struct P { #[model(primary_key)] id: i64, #[model(references = "a b")] s: i64 } },
            "letters, digits and `_`",
        ),
        (
            quote! { #[model(name = "")] struct P { #[model(primary_key)] id: i64 } },
            "a model's name is words",
        ),
        (
            quote! { #[model(title = "x")] struct P { #[model(primary_key)] id: i64 } },
            "name = ",
        ),
    ] {
        let e = error(input.clone());
        assert!(e.contains(says), "{input}: {e}");
    }
}
