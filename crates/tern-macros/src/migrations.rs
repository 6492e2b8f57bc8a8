//! `tern_data::migrations!("dir")`: the `.sql` files of a directory,
//! embedded with `include_str!` (so an edit rebuilds the crate).

use proc_macro2::TokenStream;
use quote::quote;
use syn::LitStr;

pub(crate) fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let dir: LitStr = syn::parse2(input)?;
    let root = std::env::var("CARGO_MANIFEST_DIR").map_err(|_| {
        syn::Error::new(
            dir.span(),
            "CARGO_MANIFEST_DIR is not set: build with cargo",
        )
    })?;
    let path = std::path::Path::new(&root).join(dir.value());
    let entries = std::fs::read_dir(&path).map_err(|e| {
        syn::Error::new(
            dir.span(),
            format!(
                "cannot read the migrations directory `{}`: {e}",
                path.display()
            ),
        )
    })?;
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| syn::Error::new(dir.span(), e.to_string()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".sql") && entry.path().is_file() {
            files.push((name, entry.path().to_string_lossy().into_owned()));
        }
    }
    if files.is_empty() {
        return Err(syn::Error::new(
            dir.span(),
            format!("`{}` holds no `.sql` files", path.display()),
        ));
    }
    files.sort();
    let items = files
        .iter()
        .map(|(name, full)| quote!((#name, ::core::include_str!(#full))));
    Ok(quote!(::tern_data::Migrations::new(&[#(#items),*])))
}
