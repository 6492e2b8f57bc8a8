//! The `routes` command: a table of every route.

use crate::AppService;

/// The routes of `app` as a table: method, pattern, name, handler (its
/// full path), middleware (the route's own layers, outermost first), then the app's
/// layers, which wrap every route.
pub(crate) fn table(app: &AppService) -> String {
    let mut rows: Vec<[String; 5]> = vec![[
        "METHOD".into(),
        "PATTERN".into(),
        "NAME".into(),
        "HANDLER".into(),
        "MIDDLEWARE".into(),
    ]];
    for route in app.routes() {
        let pattern = match &route.host {
            Some(host) => format!("{host}{}", route.path),
            None => route.path.clone(),
        };
        for method in &route.methods {
            let middleware: Vec<String> = method.middleware.iter().map(|m| short(m)).collect();
            rows.push([
                method.method.clone(),
                pattern.clone(),
                route.name.clone().unwrap_or_else(|| "-".into()),
                handler(method.handler),
                if middleware.is_empty() {
                    "-".into()
                } else {
                    middleware.join(" > ")
                },
            ]);
        }
    }
    let mut widths = [0usize; 5];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in &rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i == 4 {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<width$}  ", width = widths[i]));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    let app_layers: Vec<String> = app.middleware().iter().map(|m| short(m)).collect();
    out.push_str(&format!(
        "\n{} routes; around every request: {}\n",
        rows.len() - 1,
        if app_layers.is_empty() {
            "no app layers".to_owned()
        } else {
            app_layers.join(" > ")
        }
    ));
    out
}

/// A type name without its module paths: `tern::middleware::FromFnLayer<
/// my_app::auth>` is `FromFnLayer<auth>`; a closure keeps the item it is
/// in (`main::{{closure}}`).
pub(crate) fn short(name: &str) -> String {
    shorten(name, false)
}

/// A handler's name: its full item path, so two `list`s in two modules
/// are told apart, with the paths inside its generic arguments dropped as
/// [`short`] does: `my_app::articles::list<my_app::Db>` is
/// `my_app::articles::list<Db>`.
pub(crate) fn handler(name: &str) -> String {
    shorten(name, true)
}

/// Drops the module paths of `name`'s segments; with `keep_outer`, those
/// outside any `<..>`, `(..)` or `[..]` (the item itself) keep theirs.
fn shorten(name: &str, keep_outer: bool) -> String {
    let mut out = String::with_capacity(name.len());
    let mut segment = String::new();
    let mut depth = 0usize;
    let flush = |segment: &mut String, out: &mut String, depth: usize| {
        if keep_outer && depth == 0 {
            out.push_str(segment);
            segment.clear();
            return;
        }
        let parts: Vec<&str> = segment.split("::").collect();
        let keep = match parts.as_slice() {
            [.., item, last] if last.starts_with("{{") => format!("{item}::{last}"),
            [.., last] => (*last).to_owned(),
            [] => String::new(),
        };
        out.push_str(&keep);
        segment.clear();
    };
    for c in name.chars() {
        match c {
            '<' | '(' | '[' => {
                flush(&mut segment, &mut out, depth);
                out.push(c);
                depth += 1;
            }
            // The `>` of a function type's `->` closes nothing.
            '>' if segment.ends_with('-') => {
                flush(&mut segment, &mut out, depth);
                out.push(c);
            }
            '>' | ')' | ']' => {
                flush(&mut segment, &mut out, depth);
                out.push(c);
                depth = depth.saturating_sub(1);
            }
            ',' | '&' | ';' | ' ' => {
                flush(&mut segment, &mut out, depth);
                out.push(c);
            }
            _ => segment.push(c),
        }
    }
    flush(&mut segment, &mut out, depth);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn type_names_lose_their_paths() {
        assert_eq!(
            super::short("tern::middleware::FromFnLayer<my_app::auth::check, (tern::Request,)>"),
            "FromFnLayer<check, (Request,)>"
        );
        assert_eq!(
            super::short("showcase::main::{{closure}}"),
            "main::{{closure}}"
        );
        assert_eq!(super::short("showcase::site::home"), "home");
    }

    #[test]
    fn handler_names_keep_their_paths_but_not_their_arguments() {
        assert_eq!(
            super::handler("realworld::articles::list"),
            "realworld::articles::list"
        );
        assert_eq!(
            super::handler("my_app::users::show<my_app::db::Pg, alloc::vec::Vec<u8>>"),
            "my_app::users::show<Pg, Vec<u8>>"
        );
        assert_eq!(
            super::handler("showcase::main::{{closure}}"),
            "showcase::main::{{closure}}"
        );
        assert_eq!(
            super::handler("my_app::wrap<fn() -> my_app::Page>::{{closure}}"),
            "my_app::wrap<fn() -> Page>::{{closure}}"
        );
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod table_tests {
    use crate::{middleware::from_fn, routing::get, App, Request, Response};

    async fn show() -> &'static str {
        "a user"
    }

    async fn audit(req: Request, next: crate::middleware::Next) -> Response {
        next.run(req).await
    }

    #[test]
    fn the_table_lists_methods_names_handlers_and_layers() {
        let app = App::new()
            .named_route("user", "/users/{id:u64}", get(show).post(show))
            .scope("/admin", |s| {
                s.route("/", get(show)).route_layer(from_fn(audit))
            })
            .layer(tower_http::cors::CorsLayer::permissive())
            .build()
            .unwrap();
        let table = super::table(&app);
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[0].starts_with("METHOD"), "{table}");
        assert!(
            lines
                .iter()
                .any(|l| l.split_whitespace().collect::<Vec<_>>()
                    == [
                        "GET",
                        "/users/{id:u64}",
                        "user",
                        "tern::command::routes::table_tests::show",
                        "-"
                    ]),
            "{table}"
        );
        assert!(lines.iter().any(|l| l.starts_with("POST")), "{table}");
        let admin = lines.iter().find(|l| l.contains("/admin")).unwrap();
        assert!(admin.contains("FromFnLayer<audit"), "{table}");
        assert!(lines.iter().any(|l| l.contains("/health")), "{table}");
        assert!(table.contains("around every request: CorsLayer"), "{table}");
    }

    mod articles {
        pub(super) async fn list() -> &'static str {
            "articles"
        }
    }

    mod profiles {
        pub(super) async fn list() -> &'static str {
            "profiles"
        }
    }

    #[test]
    fn handlers_of_one_name_in_two_modules_are_told_apart() {
        let app = App::new()
            .route("/articles", get(articles::list))
            .route("/profiles", get(profiles::list))
            .build()
            .unwrap();
        let table = super::table(&app);
        let handler = |pattern: &str| -> String {
            table
                .lines()
                .map(|l| l.split_whitespace().collect::<Vec<_>>())
                .find(|cells| cells.get(1) == Some(&pattern))
                .unwrap_or_else(|| panic!("no {pattern} in:\n{table}"))[3]
                .to_owned()
        };
        assert_eq!(
            handler("/articles"),
            "tern::command::routes::table_tests::articles::list",
            "{table}"
        );
        assert_eq!(
            handler("/profiles"),
            "tern::command::routes::table_tests::profiles::list",
            "{table}"
        );
    }
}
