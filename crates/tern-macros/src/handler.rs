//! `#[handler]`: one check per mistake, each spanned at the argument or
//! return type at fault.
//!
//! Mistakes that are plain syntax (not `async`, a body extractor out of
//! place, two body extractors) are `compile_error!`s with the whole message.
//! Mistakes that need types (an argument that is not an extractor, a return
//! type that is not a response, a future that is not `Send`) are trait
//! bounds that the compiler checks, placed so that its error points at the
//! type and prints the `on_unimplemented` message of the trait.

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::{
    parse::{Parse, ParseStream},
    spanned::Spanned,
    FnArg, GenericArgument, ItemFn, PatType, PathArguments, PathSegment, ReturnType, Token, Type,
    TypeParamBound,
};

/// The most arguments a handler can take (`Handler` is implemented up to
/// this arity).
const MAX_ARGS: usize = 16;

/// Extractors that read the body, by the last segment of their path, also
/// inside `Option<..>` and `Result<.., _>` (which read what they wrap). A
/// type alias or another wrapper of one of them is not recognised; the
/// trait checks still catch it, with a less direct message.
const BODY_EXTRACTORS: &[&str] = &["Json", "Form", "String", "Bytes", "Multipart", "Request"];

/// The attribute's arguments: nothing, or `state = Type`.
pub(crate) struct Args {
    state: Option<Type>,
}

impl Parse for Args {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let mut state = None;
        while !input.is_empty() {
            let key: syn::Ident = input.parse()?;
            if key != "state" {
                return Err(syn::Error::new(
                    key.span(),
                    format!(
                        "unknown argument `{key}`: `#[tern::handler]` takes nothing, or \
                         `state = AppState` (the type of the app's state)"
                    ),
                ));
            }
            if state.is_some() {
                return Err(syn::Error::new(key.span(), "`state` is given twice"));
            }
            input.parse::<Token![=]>()?;
            state = Some(input.parse()?);
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(Args { state })
    }
}

/// The function, unchanged, followed by its checks.
pub(crate) fn expand(args: &Args, item: &ItemFn) -> TokenStream {
    let mut errors = Vec::new();
    let checks = checks(args, item, &mut errors);
    // A `#[cfg]` below the attribute removes the function later; the
    // checks and errors must go with it.
    let cfgs: Vec<_> = item
        .attrs
        .iter()
        .filter(|attr| attr.path().is_ident("cfg"))
        .collect();
    let errors = errors.iter().map(|error| {
        let error = error.to_compile_error();
        quote!(#(#cfgs)* #error)
    });
    let checks = (!checks.is_empty()).then(|| quote!(#(#cfgs)* #checks));
    quote! {
        #item
        #(#errors)*
        #checks
    }
}

fn checks(args: &Args, item: &ItemFn, errors: &mut Vec<syn::Error>) -> TokenStream {
    let sig = &item.sig;
    let name = &sig.ident;

    if let Some(receiver) = sig.receiver() {
        errors.push(syn::Error::new_spanned(
            receiver,
            format!(
                "a handler cannot take `self`: every argument of a handler is an extractor. \
                 Make `{name}` a free `async fn`, outside the `impl` block"
            ),
        ));
        return TokenStream::new();
    }

    let typed: Vec<&PatType> = sig
        .inputs
        .iter()
        .filter_map(|arg| match arg {
            FnArg::Typed(arg) => Some(arg),
            FnArg::Receiver(_) => None,
        })
        .collect();

    if typed.len() > MAX_ARGS {
        errors.push(syn::Error::new_spanned(
            &sig.inputs,
            format!(
                "a handler takes at most {MAX_ARGS} arguments and `{name}` takes {}: group \
                 some of them in a type of your own that implements `FromRequestParts`",
                typed.len()
            ),
        ));
    }

    let is_async = sig.asyncness.is_some();
    let future_output = if is_async {
        None
    } else {
        match &sig.output {
            ReturnType::Type(_, ty) if mentions_future(ty.to_token_stream()) => {
                Some(impl_future_output(ty))
            }
            _ => {
                errors.push(syn::Error::new_spanned(
                    sig.fn_token,
                    format!(
                        "`{name}` is not an `async fn`, and a handler must be one: write \
                         `async fn {name}(..)` (or return `impl Future<Output = ..> + Send`)"
                    ),
                ));
                return TokenStream::new();
            }
        }
    };

    let skip = check_bodies(&typed, errors);

    // A generic handler is checked when a route instantiates it; its
    // argument types cannot be named here.
    let is_generic = !sig.generics.params.is_empty()
        || sig.generics.where_clause.is_some()
        || typed
            .iter()
            .any(|arg| mentions_impl(arg.ty.to_token_stream()));
    if is_generic {
        return TokenStream::new();
    }

    let state = args
        .state
        .clone()
        .or_else(|| typed.iter().find_map(|arg| state_type(&arg.ty)))
        .unwrap_or_else(|| syn::parse_quote!(()));

    let mut checks = Vec::new();
    for (i, arg) in typed.iter().enumerate() {
        if !skip[i] {
            checks.push(extractor_check(
                name,
                i,
                &arg.ty,
                &state,
                i + 1 == typed.len(),
            ));
        }
    }

    let returned = match (&sig.output, future_output) {
        (_, Some(output)) => output,
        (ReturnType::Type(_, ty), None) => Some((**ty).clone()),
        (ReturnType::Default, None) => None,
    };
    if let Some(ty) = returned.filter(|ty| !mentions_impl(ty.to_token_stream())) {
        let span = ty.span();
        let check = format_ident!("{}_must_return_a_response", name, span = span);
        checks.push(quote_spanned! {span=>
            {
                fn #check<T: ::tern::__private::IntoResponse>() {}
                #check::<#ty>();
            }
        });
    }

    checks.push(send_check(name, &typed));

    quote! {
        #[allow(unused, non_snake_case, clippy::all, clippy::pedantic, clippy::nursery)]
        const _: () = {
            fn __tern_handler_checks() {
                #(#checks)*
            }
        };
    }
}

/// Reports body extractors out of place or read twice; returns the
/// arguments whose extractor check would only repeat that error.
fn check_bodies(typed: &[&PatType], errors: &mut Vec<syn::Error>) -> Vec<bool> {
    let mut skip = vec![false; typed.len()];
    let last = typed.len().saturating_sub(1);
    let bodies: Vec<(usize, &Type, &str)> = typed
        .iter()
        .enumerate()
        .filter_map(|(i, arg)| body_extractor(&arg.ty).map(|kind| (i, &*arg.ty, kind)))
        .collect();
    match bodies.as_slice() {
        [] => {}
        [(i, ty, kind)] => {
            if *i != last {
                let what = if *kind == "Request" {
                    format!("`{}` takes the whole request, body included", show(ty))
                } else {
                    format!("`{}` reads the request body", show(ty))
                };
                errors.push(syn::Error::new_spanned(
                    ty,
                    format!(
                        "{what}, so it must be the last argument: move it after `{}`",
                        show(&typed[last].ty)
                    ),
                ));
                skip[*i] = true;
            }
        }
        [(first, first_ty, _), rest @ ..] => {
            // Its `FromRequestParts` check would say it is not an extractor.
            skip[*first] = *first != last;
            for (i, ty, _) in rest {
                errors.push(syn::Error::new_spanned(
                    ty,
                    format!(
                        "`{}` reads the request body, but `{}` already reads it, and a body \
                         can be read only once: keep one of them, as the last argument",
                        show(ty),
                        show(first_ty)
                    ),
                ));
                skip[*i] = true;
            }
        }
    }
    skip
}

/// `ty` must implement `FromRequestParts<S>`, or `FromRequest<S, M>` for
/// some `M` when it is the last argument. The check's name is in the
/// error ("required by a bound in `show_argument_2_must_be_an_extractor`"),
/// and unique, so that the compiler prints it without a path.
fn extractor_check(
    name: &syn::Ident,
    index: usize,
    ty: &Type,
    state: &Type,
    last: bool,
) -> TokenStream {
    let span = ty.span();
    let check = format_ident!(
        "{}_argument_{}_must_be_an_extractor",
        name,
        index + 1,
        span = span
    );
    // `State<T>` reads the head wherever it is: checked as such, a state
    // it cannot come from is reported as the missing `FromRef` it is.
    // Likewise an `Option` or `Result` of a head extractor: checked as
    // `FromRequest` it would have two candidate impls and the compiler
    // would name neither, while as `FromRequestParts` it names what is
    // missing (`Path<u64>: OptionalFromRequestParts`).
    let reads_head = last_segment(ty).is_some_and(|segment| {
        segment.ident == "State"
            || ((segment.ident == "Option" || segment.ident == "Result")
                && body_extractor(ty).is_none())
    });
    if last && !reads_head {
        quote_spanned! {span=>
            {
                fn #check<T: ::tern::__private::FromRequest<#state, M>, M>() {}
                #check::<#ty, _>();
            }
        }
    } else {
        quote_spanned! {span=>
            {
                fn #check<T: ::tern::__private::FromRequestParts<#state>>() {}
                #check::<#ty>();
            }
        }
    }
}

/// Calls the handler with arguments of its types and hands the future to
/// a function that needs `Send`, so that the compiler names the value
/// held across an `.await`. The function's name is in that error.
fn send_check(name: &syn::Ident, typed: &[&PatType]) -> TokenStream {
    let must_be_send = format_ident!("{}_future_must_be_send", name, span = name.span());
    let params: Vec<_> = (0..typed.len())
        .map(|i| format_ident!("__arg{}", i, span = name.span()))
        .collect();
    let types = typed.iter().map(|arg| &arg.ty);
    quote_spanned! {name.span()=>
        {
            fn #must_be_send<F: ::core::marker::Send>(_: F) {}
            let _ = |#(#params: #types),*| #must_be_send(#name(#(#params),*));
        }
    }
}

fn last_segment(ty: &Type) -> Option<&PathSegment> {
    match ty {
        Type::Path(path) if path.qself.is_none() => path.path.segments.last(),
        Type::Paren(inner) => last_segment(&inner.elem),
        Type::Group(inner) => last_segment(&inner.elem),
        _ => None,
    }
}

fn body_extractor(ty: &Type) -> Option<&'static str> {
    let segment = last_segment(ty)?;
    if segment.ident == "Option" || segment.ident == "Result" {
        let PathArguments::AngleBracketed(args) = &segment.arguments else {
            return None;
        };
        return match args.args.first() {
            Some(GenericArgument::Type(inner)) => body_extractor(inner),
            _ => None,
        };
    }
    BODY_EXTRACTORS
        .iter()
        .copied()
        .find(|kind| segment.ident == kind)
}

/// `T` of an argument typed `State<T>`.
fn state_type(ty: &Type) -> Option<Type> {
    let segment = last_segment(ty)?;
    if segment.ident != "State" {
        return None;
    }
    match &segment.arguments {
        PathArguments::AngleBracketed(args) if args.args.len() == 1 => match args.args.first() {
            Some(GenericArgument::Type(ty)) => Some(ty.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// The `Output` of an `impl Future<Output = T>` return type; `None` when
/// the future is of another shape (boxed, an alias) and its output cannot
/// be read here.
fn impl_future_output(ty: &Type) -> Option<Type> {
    let Type::ImplTrait(bounds) = ty else {
        return None;
    };
    bounds.bounds.iter().find_map(|bound| {
        let TypeParamBound::Trait(bound) = bound else {
            return None;
        };
        let segment = bound.path.segments.last()?;
        let PathArguments::AngleBracketed(args) = &segment.arguments else {
            return None;
        };
        args.args.iter().find_map(|arg| match arg {
            GenericArgument::AssocType(assoc) if assoc.ident == "Output" => Some(assoc.ty.clone()),
            _ => None,
        })
    })
}

fn mentions_future(tokens: TokenStream) -> bool {
    tokens.into_iter().any(|tt| match tt {
        TokenTree::Ident(ident) => ident.to_string().ends_with("Future"),
        TokenTree::Group(group) => mentions_future(group.stream()),
        _ => false,
    })
}

fn mentions_impl(tokens: TokenStream) -> bool {
    tokens.into_iter().any(|tt| match tt {
        TokenTree::Ident(ident) => ident == "impl",
        TokenTree::Group(group) => mentions_impl(group.stream()),
        _ => false,
    })
}

/// A type as a person writes it (`Json<Value>`, not `Json < Value >`).
fn show(ty: &Type) -> String {
    let mut out = String::new();
    write_tokens(&mut out, ty.to_token_stream());
    out.replace(", >", ">").trim().to_owned()
}

fn write_tokens(out: &mut String, tokens: TokenStream) {
    let mut after_word = false;
    let mut tokens = tokens.into_iter().peekable();
    while let Some(tt) = tokens.next() {
        match tt {
            TokenTree::Ident(_) | TokenTree::Literal(_) => {
                if after_word {
                    out.push(' ');
                }
                out.push_str(&tt.to_string());
                after_word = true;
            }
            TokenTree::Punct(punct) => {
                match punct.as_char() {
                    c @ (',' | ';') => {
                        out.push(c);
                        out.push(' ');
                    }
                    c @ ('=' | '+') => {
                        out.push(' ');
                        out.push(c);
                        out.push(' ');
                    }
                    '-' if matches!(tokens.peek(), Some(TokenTree::Punct(p)) if p.as_char() == '>') =>
                    {
                        tokens.next();
                        out.push_str(" -> ");
                    }
                    c => out.push(c),
                }
                after_word = false;
            }
            TokenTree::Group(group) => {
                let (open, close) = match group.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::Brace => ("{", "}"),
                    Delimiter::None => ("", ""),
                };
                out.push_str(open);
                write_tokens(out, group.stream());
                out.push_str(close);
                after_word = group.delimiter() == Delimiter::None;
            }
        }
    }
}

/// An error (bad arguments, input that is not a function) with the input
/// kept, so that the rest of the crate still compiles against it.
pub(crate) fn with_error(error: &syn::Error, input: TokenStream) -> TokenStream {
    let error = error.to_compile_error();
    quote! {
        #error
        #input
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_types_as_written() {
        let cases = [
            ("Json < Value >", "Json<Value>"),
            (
                "tern :: Json<serde_json::Value>",
                "tern::Json<serde_json::Value>",
            ),
            ("HashMap<String, u8>", "HashMap<String, u8>"),
            ("&'static str", "&'static str"),
            ("&mut Vec<u8>", "&mut Vec<u8>"),
            ("(StatusCode, String)", "(StatusCode, String)"),
            ("[u8; 4]", "[u8; 4]"),
            (
                "Box<dyn Fn(u8) -> u8 + Send>",
                "Box<dyn Fn(u8) -> u8 + Send>",
            ),
            (
                "Option<Form<Vec<(String, u8),>>>",
                "Option<Form<Vec<(String, u8)>>>",
            ),
        ];
        for (input, want) in cases {
            let ty: Type = syn::parse_str(input).expect(input);
            assert_eq!(show(&ty), want, "{input}");
        }
    }

    #[test]
    fn finds_body_extractors_by_last_segment() {
        let cases = [
            ("Json<Value>", Some("Json")),
            ("tern::extract::Form<Login>", Some("Form")),
            ("String", Some("String")),
            ("tern::Request", Some("Request")),
            ("Path<u64>", None),
            ("Option<Json<Value>>", Some("Json")),
            ("Result<Form<Login>, Rejection>", Some("Form")),
            ("Option<Query<Page>>", None),
            ("Option<String>", Some("String")),
            ("<T as Trait>::Json", None),
        ];
        for (input, want) in cases {
            let ty: Type = syn::parse_str(input).expect(input);
            assert_eq!(body_extractor(&ty), want, "{input}");
        }
    }

    #[test]
    fn reads_the_output_of_impl_future() {
        let ty: Type = syn::parse_str("impl Future<Output = Json<u8>> + Send").expect("type");
        let output = impl_future_output(&ty).expect("an output");
        assert_eq!(show(&output), "Json<u8>");
        let boxed: Type = syn::parse_str("BoxFuture<'static, String>").expect("type");
        assert!(impl_future_output(&boxed).is_none());
    }

    #[test]
    fn state_comes_from_a_state_argument() {
        let ty: Type = syn::parse_str("tern::extract::State<AppState>").expect("type");
        let state = state_type(&ty).expect("a state");
        assert_eq!(show(&state), "AppState");
        let ty: Type = syn::parse_str("Path<u64>").expect("type");
        assert!(state_type(&ty).is_none());
    }

    #[test]
    fn finds_impl_and_future_in_nested_types() {
        let ty: Type = syn::parse_str("Result<impl IntoResponse, Problem>").expect("type");
        assert!(mentions_impl(ty.to_token_stream()));
        let ty: Type = syn::parse_str("Pin<Box<dyn Future<Output = ()> + Send>>").expect("type");
        assert!(mentions_future(ty.to_token_stream()));
        assert!(!mentions_future(quote!(String)));
    }

    #[test]
    fn checks_and_errors_follow_the_cfg_of_the_function() {
        let item: ItemFn = syn::parse_quote! {
            #[cfg(feature = "admin")]
            async fn h(Json(a): Json<A>, p: Path<u8>) {}
        };
        let out = expand(&Args { state: None }, &item).to_string();
        let cfg = "# [cfg (feature = \"admin\")]";
        assert_eq!(out.matches(cfg).count(), 3, "{out}");
        assert!(
            out.contains(&format!("{cfg} :: core :: compile_error !")),
            "{out}"
        );
        assert!(out.contains(&format!("{cfg} # [allow")), "{out}");

        let item: ItemFn = syn::parse_quote!(
            #[cfg(test)]
            fn h() {}
        );
        let out = expand(&Args { state: None }, &item).to_string();
        assert_eq!(out.matches("# [cfg (test)]").count(), 2, "{out}");
    }

    #[test]
    fn expands_every_check_of_an_async_fn() {
        let item: ItemFn = syn::parse_quote!(
            async fn h(x: Foo) -> Bar {}
        );
        let out = expand(&Args { state: None }, &item).to_string();
        assert!(out.contains("h_future_must_be_send"), "{out}");
        assert!(out.contains("h_must_return_a_response"), "{out}");
        assert!(out.contains("h_argument_1_must_be_an_extractor"), "{out}");
        assert!(!out.contains("compile_error"), "{out}");
    }
}
