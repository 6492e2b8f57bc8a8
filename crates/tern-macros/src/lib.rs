//! Procedural macros of the Tern web framework, used through `tern`
//! (`tern::handler`, behind `tern`'s default feature `macros`).
//!
//! [`macro@handler`] turns a handler mistake, which the compiler otherwise
//! reports as one generic "is not a Tern handler", into an error that names
//! the argument or return type at fault and what to do:
//!
//! ```
//! use tern::{App, Json, extract::{Path, State}, routing::post};
//!
//! #[derive(Clone)]
//! struct Db;
//!
//! #[tern::handler]
//! async fn rename(State(_db): State<Db>, Path(id): Path<u64>, Json(name): Json<String>) -> String {
//!     format!("user {id} is now {name}")
//! }
//!
//! let app = App::with_state(Db).route("/users/{id:u64}", post(rename));
//! # let _ = app.build().unwrap();
//! ```

use proc_macro::TokenStream;

// Behind the `contract` feature (tern-contract turns it on): its pattern
// rules check a regular expression at compile time with regex-syntax,
// which a plain `tern` build should not compile.
#[cfg(feature = "contract")]
mod contract;
mod handler;
mod migrations;
mod model;
mod row;

/// Checks a handler at its definition, so that a mistake is reported at
/// the argument or return type at fault rather than where the handler is
/// routed.
///
/// The function is emitted unchanged; the checks are hidden items that
/// generate no code in the binary. What each mistake reports:
///
/// | mistake | the error points at | and says |
/// |---|---|---|
/// | a plain `fn` | `fn` | write `async fn` |
/// | a body extractor (`Json`, `Form`, `String`, `Bytes`, `Multipart`, `Request`) before the last argument | its type | move it last |
/// | two body extractors | the second | the body is read once: keep one |
/// | an argument that is not an extractor | its type | which types are extractors, how to write one |
/// | a return type that is not a response | the type | which types are responses |
/// | a future that is not `Send` (an `Rc` or a `std::sync::MutexGuard` held across `.await`) | the function, the value and the `.await` | which value is held across which `.await` |
///
/// # State
/// Extractors are checked against the app's state type: by default the
/// `T` of an argument typed `State<T>`, else `()`. When the handler takes
/// `State<Part>` of a part of a larger state (through `FromRef`), or an
/// extractor of your own that needs the app's state, name the state:
///
/// ```
/// use tern::{App, extract::{FromRef, State}, routing::get};
///
/// #[derive(Clone)]
/// struct AppState { greeting: Greeting }
/// #[derive(Clone)]
/// struct Greeting(&'static str);
///
/// impl FromRef<AppState> for Greeting {
///     fn from_ref(state: &AppState) -> Self { state.greeting.clone() }
/// }
///
/// #[tern::handler(state = AppState)]
/// async fn hello(State(Greeting(text)): State<Greeting>) -> &'static str {
///     text
/// }
///
/// let app = App::with_state(AppState { greeting: Greeting("hi") }).route("/", get(hello));
/// # let _ = app.build().unwrap();
/// ```
///
/// # Limits
/// - Free functions only. A method taking `self` is refused (a handler's
///   arguments are extractors). An associated function in an `impl` block
///   cannot carry the attribute: its checks cannot name it, and the
///   compiler reports "`const` items in this context need a name" at the
///   attribute.
/// - A generic handler (type parameters, a `where` clause, `impl Trait`
///   arguments) gets the checks that need no types (`async`, body
///   extractors); the others run when a route names its types, with the
///   generic "is not a Tern handler" error.
/// - The generated code names the crate `::tern`: the attribute does not
///   work when `tern` is renamed in `Cargo.toml`.
/// - Body extractors are recognised by the last segment of their path; a
///   type alias of one is checked by the trait bounds only.
#[proc_macro_attribute]
pub fn handler(attr: TokenStream, item: TokenStream) -> TokenStream {
    let args = match syn::parse::<handler::Args>(attr) {
        Ok(args) => args,
        Err(error) => return handler::with_error(&error, item.into()).into(),
    };
    match syn::parse::<syn::ItemFn>(item.clone()) {
        Ok(function) => handler::expand(&args, &function).into(),
        Err(error) => handler::with_error(&error, item.into()).into(),
    }
}

/// Makes a struct (named fields) or a unit enum a schema contract: serde
/// (de)serialization, validation of the rules written on its fields, and
/// its JSON Schema. Used through `tern_contract::contract`; see the
/// `tern-contract` crate for the rules (feature `contract`).
#[cfg(feature = "contract")]
#[proc_macro_attribute]
pub fn contract(attr: TokenStream, item: TokenStream) -> TokenStream {
    match contract::expand(attr.into(), item.clone().into()) {
        Ok(tokens) => tokens.into(),
        Err(error) => {
            // The item as written (so that its uses still resolve), and
            // the error.
            let error = error.to_compile_error();
            let item = contract::without_rules(item.into());
            quote::quote!(#error #item).into()
        }
    }
}

/// Embeds a directory's migration files; see `tern_data::migrations!`.
#[proc_macro]
pub fn migrations(input: TokenStream) -> TokenStream {
    match migrations::expand(input.into()) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Maps a struct to a table; see `tern_data::Model`.
#[proc_macro_derive(Model, attributes(model))]
pub fn derive_model(input: TokenStream) -> TokenStream {
    match model::expand(input.into()) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// Reads a struct from a query's row by column name; see `tern_data::Row`.
#[proc_macro_derive(Row, attributes(row))]
pub fn derive_row(input: TokenStream) -> TokenStream {
    match row::expand(input.into()) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}
