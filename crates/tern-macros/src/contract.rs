//! `#[contract]`: a struct's rules, written once, give serde, validation
//! and JSON Schema.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::{
    meta::ParseNestedMeta, spanned::Spanned, Attribute, Data, DeriveInput, Expr, Fields, LitStr,
};

/// One rule of a field, as written in `#[contract(...)]`.
enum Rule {
    Length {
        span: Span,
        min: Option<Expr>,
        max: Option<Expr>,
    },
    Range {
        span: Span,
        min: Option<Expr>,
        max: Option<Expr>,
    },
    Pattern {
        span: Span,
        source: LitStr,
    },
    Format {
        span: Span,
        name: &'static str,
    },
    Each {
        span: Span,
        rules: Vec<Rule>,
    },
    Custom {
        span: Span,
        check: syn::Path,
    },
}

const RULES: &str = "length, range, pattern, email, uri, uuid, date_time, each, custom";

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
    let name_str = name.to_string();
    let impls = match &mut input.data {
        Data::Struct(data) => {
            let Fields::Named(fields) = &mut data.fields else {
                return Err(syn::Error::new_spanned(
                    &input.ident,
                    "`#[contract]` applies to a struct with named fields or an enum of unit variants",
                ));
            };
            let mut validate = Vec::new();
            let mut schema = Vec::new();
            let mut lenient: Vec<LenientField> = Vec::new();
            let mut errors: Option<syn::Error> = None;
            for field in &mut fields.named {
                let rules = match take_rules(&mut field.attrs) {
                    Ok(rules) => rules,
                    Err(e) => {
                        // Every field's mistakes at once.
                        match &mut errors {
                            Some(first) => first.combine(e),
                            None => errors = Some(e),
                        }
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
                    None => apply_field_rule(rename_all.as_deref(), &ident.to_string()),
                };
                let ty = &field.ty;
                // JSON Schema's `integer` takes `507.0`; serde's integers
                // do not: read integer fields leniently (unless the field
                // says how it is read).
                if !has_serde_word(&field.attrs, "deserialize_with")
                    && !has_serde_word(&field.attrs, "with")
                {
                    match integer_kind(ty) {
                        Some(IntegerKind::Plain) => field.attrs.push(syn::parse_quote!(
                            #[serde(deserialize_with = "::tern_contract::__private::integer::deserialize")]
                        )),
                        Some(IntegerKind::Optional) => {
                            field.attrs.push(syn::parse_quote!(
                                #[serde(deserialize_with = "::tern_contract::__private::integer::option")]
                            ));
                            if !has_serde_word(&field.attrs, "default") {
                                field.attrs.push(syn::parse_quote!(#[serde(default)]));
                            }
                        }
                        None => {}
                    }
                }
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
            quote! {
                impl ::tern_contract::FieldType for #name {
                    fn schema(
                        defs: &mut ::tern_contract::Definitions,
                    ) -> ::tern_contract::__private::serde_json::Value {
                        defs.reference(#name_str, |defs| {
                            <Self as ::tern_contract::Contract>::object_schema(defs)
                        })
                    }

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
            }
        }
        Data::Enum(data) => {
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
                    None => apply_variant_rule(rename_all.as_deref(), &variant.ident.to_string()),
                };
                values.push(wire);
            }
            quote! {
                impl ::tern_contract::FieldType for #name {
                    fn schema(
                        defs: &mut ::tern_contract::Definitions,
                    ) -> ::tern_contract::__private::serde_json::Value {
                        defs.reference(#name_str, |_| {
                            ::tern_contract::__private::serde_json::json!({
                                "type": "string",
                                "enum": [#(#values),*],
                            })
                        })
                    }
                }
            }
        }
        Data::Union(_) => {
            return Err(syn::Error::new_spanned(
                &input.ident,
                "`#[contract]` applies to a struct with named fields or an enum of unit variants",
            ))
        }
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

/// A field as the lenient read (the error path: every shape error at
/// once) sees it.
struct LenientField {
    index: usize,
    wire: String,
    aliases: Vec<String>,
    ty: syn::Type,
    /// How the field's value is read: its `deserialize_with`, its
    /// `with`'s `deserialize`, or the type's own `Deserialize`.
    read: TokenStream,
    /// Whether `read` is the type's own `Deserialize`: then a value that
    /// fails is walked as the type (the contracts inside it list every
    /// problem), else only the read's message is reported.
    own_read: bool,
    checks: Vec<TokenStream>,
    default: bool,
}

/// How the field with `attrs` of type `ty` is read, as serde's derive
/// reads it.
fn read_fn(attrs: &[Attribute], ty: &syn::Type) -> syn::Result<TokenStream> {
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
fn lenient_read(name_str: &str, fields: &[LenientField]) -> TokenStream {
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

/// Every string value of `#[serde(key = "...")]` (`alias` may repeat);
/// other keys, and a `key(...)` form, are skipped.
fn serde_strings(attrs: &[Attribute], key: &str) -> syn::Result<Vec<String>> {
    let mut found = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident(key) {
                if let Ok(value) = meta.value() {
                    let lit: LitStr = value.parse()?;
                    found.push(lit.value());
                }
            } else if let Ok(value) = meta.value() {
                // Another `key = value`: skip its value.
                let _: Expr = value.parse()?;
            } else if meta.input.peek(syn::token::Paren) {
                let _ = meta.parse_nested_meta(|_| Ok(()));
            }
            Ok(())
        })?;
    }
    Ok(found)
}

/// Removes the field's `#[contract(...)]` attributes; their rules.
fn take_rules(attrs: &mut Vec<Attribute>) -> syn::Result<Vec<Rule>> {
    let mut rules = Vec::new();
    let mut error: Option<syn::Error> = None;
    attrs.retain(|attr| {
        if !attr.path().is_ident("contract") {
            return true;
        }
        if let Err(e) = attr.parse_nested_meta(|meta| {
            rules.push(parse_rule(&meta)?);
            Ok(())
        }) {
            match &mut error {
                Some(first) => first.combine(e),
                None => error = Some(e),
            }
        }
        false
    });
    match error {
        Some(e) => Err(e),
        None => Ok(rules),
    }
}

fn parse_rule(meta: &ParseNestedMeta<'_>) -> syn::Result<Rule> {
    let span = meta.path.span();
    let Some(name) = meta.path.get_ident().map(ToString::to_string) else {
        return Err(meta.error(format!("unknown contract rule; the rules are {RULES}")));
    };
    match name.as_str() {
        "length" | "range" => {
            let (mut min, mut max) = (None, None);
            meta.parse_nested_meta(|bound| {
                if bound.path.is_ident("min") {
                    min = Some(bound.value()?.parse::<Expr>()?);
                } else if bound.path.is_ident("max") {
                    max = Some(bound.value()?.parse::<Expr>()?);
                } else {
                    return Err(bound.error(format!("`{name}` takes `min = ..` and `max = ..`")));
                }
                Ok(())
            })?;
            if min.is_none() && max.is_none() {
                return Err(meta.error(format!(
                    "`{name}` needs a bound: `{name}(min = 1, max = 80)`"
                )));
            }
            Ok(if name == "length" {
                Rule::Length { span, min, max }
            } else {
                Rule::Range { span, min, max }
            })
        }
        "pattern" => {
            let source: LitStr = meta.value()?.parse()?;
            if let Err(e) = regex_syntax::Parser::new().parse(&source.value()) {
                return Err(syn::Error::new_spanned(
                    &source,
                    format!("this pattern is not a valid regular expression: {e}"),
                ));
            }
            Ok(Rule::Pattern { span, source })
        }
        "email" | "uri" | "uuid" | "date_time" => Ok(Rule::Format {
            span,
            name: match name.as_str() {
                "email" => "email",
                "uri" => "uri",
                "uuid" => "uuid",
                _ => "date_time",
            },
        }),
        "each" => {
            let mut rules = Vec::new();
            meta.parse_nested_meta(|inner| {
                rules.push(parse_rule(&inner)?);
                Ok(())
            })?;
            Ok(Rule::Each { span, rules })
        }
        "custom" => {
            let check: syn::Path = meta.value()?.parse()?;
            Ok(Rule::Custom { span, check })
        }
        other => {
            let hint = RULES
                .split(", ")
                .find(|r| close(other, r))
                .map(|r| format!("did you mean `{r}`? "))
                .unwrap_or_default();
            Err(meta.error(format!(
                "unknown contract rule `{other}`; {hint}the rules are {RULES}"
            )))
        }
    }
}

/// A likely typo: one edit apart, or the same letters swapped.
fn close(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()] <= 2
}

fn option(expr: Option<&Expr>) -> TokenStream {
    match expr {
        Some(e) => quote!(::std::option::Option::Some(#e)),
        None => quote!(::std::option::Option::None),
    }
}

/// The check of `rule` on `value` (a `&T` in scope), with `at` and
/// `errors` in scope. The call carries the rule's span, so that a rule on
/// a type it does not apply to is reported at the rule.
fn validate_rule(rule: &Rule, ty: &syn::Type) -> TokenStream {
    let _ = ty;
    match rule {
        Rule::Length { span, min, max } => {
            let (min, max) = (option(min.as_ref()), option(max.as_ref()));
            quote_spanned!(*span=> rules::length(value, #min, #max, at, errors);)
        }
        Rule::Range { span, min, max } => {
            let (min, max) = (option(min.as_ref()), option(max.as_ref()));
            quote_spanned!(*span=> rules::range(value, #min, #max, at, errors);)
        }
        // `RE` is a static per pattern rule (one per expansion site): the
        // regex compiled once, on first use, from the literal checked at
        // compile time. Shared by every app, request and thread, which is
        // safe: it is immutable once set, the same for everyone (a
        // function of the literal only), and `OnceLock` makes the first
        // set race-free.
        Rule::Pattern { span, source } => quote_spanned! {*span=>
            {
                static RE: ::tern_contract::__private::OnceLock<::tern_contract::__private::rules::Pattern> =
                    ::tern_contract::__private::OnceLock::new();
                rules::pattern(value, &RE, #source, at, errors);
            }
        },
        Rule::Format { span, name } => {
            let format = format_ident!("{}", name.to_uppercase());
            quote_spanned!(*span=> rules::format(value, &rules::#format, at, errors);)
        }
        Rule::Each { span, rules } => {
            let inner = rules.iter().map(|r| validate_rule(r, ty));
            quote_spanned! {*span=>
                rules::each(value, at, errors, |value, at, errors| {
                    #(#inner)*
                });
            }
        }
        Rule::Custom { span, check } => {
            let rule = check
                .segments
                .last()
                .map(|s| s.ident.to_string())
                .unwrap_or_default();
            quote_spanned! {*span=>
                {
                    const RULE: &str = #rule;
                    rules::custom(value, #check, RULE, at, errors);
                }
            }
        }
    }
}

/// The schema keywords of `rule` on `s` (a `&mut Value` in scope), for a
/// field of type `ty`.
fn schema_rule(rule: &Rule, ty: &TokenStream) -> TokenStream {
    match rule {
        Rule::Length { span, min, max } => {
            let (min, max) = (option(min.as_ref()), option(max.as_ref()));
            quote_spanned!(*span=> rules::length_schema::<#ty>(s, #min, #max);)
        }
        Rule::Range { span, min, max } => {
            let json = |e: Option<&Expr>| match e {
                Some(e) => quote!(::std::option::Option::Some(
                    ::tern_contract::__private::serde_json::json!(#e)
                )),
                None => quote!(::std::option::Option::None),
            };
            let (min, max) = (json(min.as_ref()), json(max.as_ref()));
            quote_spanned!(*span=> rules::range_schema(s, #min, #max);)
        }
        Rule::Pattern { span, source } => {
            quote_spanned!(*span=> rules::pattern_schema(s, #source);)
        }
        Rule::Format { span, name } => {
            let format = format_ident!("{}", name.to_uppercase());
            quote_spanned!(*span=> rules::format_schema(s, &rules::#format);)
        }
        Rule::Each { span, rules } => {
            let item = quote!(<#ty as ::tern_contract::__private::rules::Items>::Item);
            let inner = rules.iter().map(|r| schema_rule(r, &item));
            quote_spanned! {*span=>
                rules::each_schema(s, |s| { #({ let s = &mut *s; #inner })* });
            }
        }
        Rule::Custom { .. } => quote!(),
    }
}

/// `#[serde(rename_all = "...")]` of the container.
fn rename_all(attrs: &[Attribute]) -> syn::Result<Option<String>> {
    serde_string(attrs, "rename_all")
}

/// The string value of `#[serde(key = "...")]`, if given (the last
/// one, as serde reads it).
fn serde_string(attrs: &[Attribute], key: &str) -> syn::Result<Option<String>> {
    Ok(serde_strings(attrs, key)?.pop())
}

/// Whether `#[serde(word)]` (or `#[serde(word = ..)]`) is given.
fn has_serde_word(attrs: &[Attribute], word: &str) -> bool {
    let mut found = false;
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident(word) {
                found = true;
            }
            if let Ok(value) = meta.value() {
                let _: Expr = value.parse()?;
            } else if meta.input.peek(syn::token::Paren) {
                let _ = meta.parse_nested_meta(|_| Ok(()));
            }
            Ok(())
        });
    }
    found
}

/// serde's `rename_all` on a field name (snake_case in Rust).
fn apply_field_rule(rule: Option<&str>, field: &str) -> String {
    match rule {
        Some("lowercase") | Some("snake_case") | None => field.to_owned(),
        Some("UPPERCASE") | Some("SCREAMING_SNAKE_CASE") => field.to_ascii_uppercase(),
        Some("PascalCase") => pascal(field),
        Some("camelCase") => {
            let p = pascal(field);
            let mut chars = p.chars();
            match chars.next() {
                Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                None => p,
            }
        }
        Some("kebab-case") => field.replace('_', "-"),
        Some("SCREAMING-KEBAB-CASE") => field.replace('_', "-").to_ascii_uppercase(),
        Some(_) => field.to_owned(),
    }
}

/// serde's `rename_all` on a variant name (PascalCase in Rust).
fn apply_variant_rule(rule: Option<&str>, variant: &str) -> String {
    let snake = || {
        let mut out = String::new();
        for (i, c) in variant.char_indices() {
            if i > 0 && c.is_uppercase() {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        }
        out
    };
    match rule {
        None | Some("PascalCase") => variant.to_owned(),
        Some("lowercase") => variant.to_ascii_lowercase(),
        Some("UPPERCASE") => variant.to_ascii_uppercase(),
        Some("camelCase") => {
            let mut chars = variant.chars();
            match chars.next() {
                Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                None => String::new(),
            }
        }
        Some("snake_case") => snake(),
        Some("SCREAMING_SNAKE_CASE") => snake().to_ascii_uppercase(),
        Some("kebab-case") => snake().replace('_', "-"),
        Some("SCREAMING-KEBAB-CASE") => snake().replace('_', "-").to_ascii_uppercase(),
        Some(_) => variant.to_owned(),
    }
}

fn pascal(snake: &str) -> String {
    snake
        .split('_')
        .map(|part| {
            let mut chars = part.chars();
            match chars.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
                None => String::new(),
            }
        })
        .collect()
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
